"""Bad input, end to end: every public function with every wrong kind of argument raises a
clear error (the exception type NumPy / PyTorch would raise) whose message names the function
or op and the problem. One table; nothing is written to a caller's buffer on error."""
import numpy as np
import pytest

import pylucid
from pylucid import Tensor, ops, tensor, ufuncs
from pylucid.backend import get_backend

UNSUPPORTED = "unsupported dtype"


def _x():
    return np.full(3, 0.5)


def _readonly():
    a = np.full(3, -7.0)
    a.flags.writeable = False
    return a


def _t():
    return Tensor(np.full(3, 0.5), requires_grad=True)


def _sq(x):
    return pylucid.sqrt(x)


CASES = [
    # --- the functional API: pylucid.sqrt / cube_root / cbrt / erfinv and pylucid.ops.*
    *[(f"{name}({label})", lambda f=f, a=a: f(a), TypeError, rf"pylucid\.{op}: {UNSUPPORTED} {dt}")
      for name, f, op in [("pylucid.sqrt", pylucid.sqrt, "sqrt"),
                          ("pylucid.cube_root", pylucid.cube_root, "cube_root"),
                          ("pylucid.cbrt", pylucid.cbrt, "cube_root"),
                          ("pylucid.erfinv", pylucid.erfinv, "erfinv"),
                          ("ops.sqrt", ops.sqrt, "sqrt")]
      for label, a, dt in [("None", None, "object"), ("strings", ["a", "b"], "<U1"),
                           ("complex", 1 + 2j, "complex128"),
                           ("complex array", np.array([1j], np.complex64), "complex64"),
                           ("bytes", np.array([b"1"]), "|S1"),
                           ("datetime", np.array(["2024-01-01"], "datetime64[D]"),
                            r"datetime64\[D\]")]],
    ("ops.sqrt(out wrong shape)", lambda: ops.sqrt(_x(), out=np.ones(4)), ValueError,
     "could not be broadcast"),
    ("ops.cube_root(out int)", lambda: ops.cube_root(_x(), out=np.ones(3, np.int64)), TypeError,
     "Cannot cast ufunc 'cube_root' output"),
    ("ops.erfinv(out read-only)", lambda: ops.erfinv(_x(), out=_readonly()), ValueError,
     "read-only"),
    ("ops.sqrt(out list)", lambda: ops.sqrt(_x(), out=[0.0] * 3), TypeError, "ArrayType"),
    ("ops.sqrt(Tensor, out=)", lambda: ops.sqrt(_t(), out=np.ones(3)), TypeError,
     r"pylucid\.sqrt: out= is not supported for Tensor"),
    ("ops.erfinv(Tensor complex)", lambda: ops.erfinv(np.ones(2, np.complex128), out=np.ones(2)),
     TypeError, rf"pylucid\.erfinv: {UNSUPPORTED} complex128"),
    # --- the raw ufuncs (NumPy's own messages, naming the ufunc)
    *[(f"ufuncs.{name}({label})", lambda f=getattr(ufuncs, name), a=a: f(*[a] * f.nin),
       TypeError, name)
      for name in ufuncs.__all__
      for label, a in [("None", None), ("strings", ["a"]), ("complex", np.array([1j])),
                       ("object", np.array([1.0], object))]],
    ("ufuncs.sqrt(out wrong shape)", lambda: ufuncs.sqrt(_x(), out=np.ones(4)), ValueError,
     "could not be broadcast"),
    ("ufuncs.erfinv(out read-only)", lambda: ufuncs.erfinv(_x(), out=_readonly()), ValueError,
     "read-only"),
    ("ufuncs.cube_root(out float32, dtype int)",
     lambda: ufuncs.cube_root(_x(), out=np.ones(3, np.int32)), TypeError, "cube_root"),
    ("ufuncs.sqrt_backward(shapes)", lambda: ufuncs.sqrt_backward(np.ones(3), np.ones(4)),
     ValueError, "could not be broadcast"),
    ("ufuncs.erfinv_backward(out read-only)",
     lambda: ufuncs.erfinv_backward(_x(), _x(), out=_readonly()), ValueError, "read-only"),
    # --- Tensor(...) and tensor()
    ("Tensor(None)", lambda: Tensor(None), TypeError, rf"pylucid\.Tensor: {UNSUPPORTED} object"),
    ("Tensor(strings)", lambda: Tensor(["a", "b"]), TypeError,
     rf"pylucid\.Tensor: {UNSUPPORTED} <U1"),
    ("Tensor(complex)", lambda: Tensor([1j]), TypeError,
     rf"pylucid\.Tensor: {UNSUPPORTED} complex128"),
    ("Tensor(device='tpu')", lambda: Tensor([1.0], device="tpu"), ValueError,
     r"pylucid\.Tensor: unknown device 'tpu'; expected one of 'cpu', 'gpu'"),
    ("Tensor(device='cuda')", lambda: Tensor([1.0], device="cuda"), ValueError,
     r"pylucid\.Tensor: unknown device 'cuda'"),
    ("Tensor(device=None)", lambda: Tensor([1.0], device=None), ValueError,
     r"pylucid\.Tensor: unknown device None"),
    ("Tensor(dtype='float17')", lambda: Tensor([1.0], dtype="float17"), TypeError,
     r"pylucid\.Tensor: unknown or unsupported dtype 'float17'"),
    ("Tensor(dtype='complex64')", lambda: Tensor([1.0], dtype="complex64"), TypeError,
     rf"pylucid\.Tensor: {UNSUPPORTED} complex64"),
    ("Tensor(int, requires_grad)", lambda: Tensor([1], requires_grad=True), RuntimeError,
     "only floating-point tensors can require gradients, got dtype int64"),
    ("tensor(None)", lambda: tensor(None), TypeError, f"{UNSUPPORTED} object"),
    ("tensor(strings)", lambda: tensor(["x"]), TypeError, f"{UNSUPPORTED} <U1"),
    ("tensor(dtype='floaty')", lambda: tensor([1.0], dtype="floaty"), TypeError,
     r"pylucid\.tensor: unknown or unsupported dtype 'floaty'"),
    ("tensor(device='gpu0')", lambda: tensor([1.0], device="gpu0"), ValueError,
     r"pylucid\.tensor: unknown device 'gpu0'"),
    ("Tensor.to('tpu')", lambda: _t().to("tpu"), ValueError, r"Tensor\.to: unknown device 'tpu'"),
    ("Tensor.to(None)", lambda: _t().to(None), ValueError, r"Tensor\.to: unknown device None"),
    ("Tensor.to('float32')", lambda: _t().to("float32"), ValueError,
     r"Tensor\.to: unknown device 'float32'"),
    ("Tensor.astype('float17')", lambda: _t().astype("float17"), TypeError,
     r"Tensor\.astype: unknown or unsupported dtype 'float17'"),
    ("Tensor.requires_grad_(int)", lambda: Tensor([1]).requires_grad_(), RuntimeError,
     "only floating-point tensors can require gradients"),
    ("Tensor + strings", lambda: _t() + "a", TypeError, "add"),
    ("Tensor + other device", lambda: _t() + Tensor([1.0, 2, 3], device="gpu"), RuntimeError,
     "expected both tensors on one device"),
    # --- backward and grad
    ("backward(non-scalar)", lambda: _sq(_t()).backward(), RuntimeError,
     "grad can be implicitly created only for scalar outputs"),
    ("backward(gradient shape)", lambda: _sq(_t()).backward(np.ones(4)), RuntimeError,
     r"mismatch in shape: gradient has shape \(4,\), output has \(3,\)"),
    ("backward(gradient strings)", lambda: _sq(_t()).backward(["a", "b", "c"]), TypeError,
     f"backward: gradient: {UNSUPPORTED} <U1"),
    ("backward(gradient complex)", lambda: _sq(_t()).backward(np.ones(3) * 1j), TypeError,
     f"backward: gradient: {UNSUPPORTED} complex128"),
    ("backward(no grad)", lambda: Tensor([1.0]).backward(), RuntimeError,
     "does not require grad and has no grad_fn"),
    ("backward twice", lambda: [y.backward() for y in [_sq(_t()).sum()] * 2], RuntimeError,
     "backward through the graph a second time"),
    ("grad(outputs=None)", lambda: pylucid.grad(None, _t()), TypeError,
     "grad: outputs must be Tensors, got NoneType"),
    ("grad(outputs=strings)", lambda: pylucid.grad(["a"], _t()), TypeError,
     "grad: outputs must be Tensors, got str"),
    ("grad(inputs=None)", lambda: pylucid.grad(_sq(_t()).sum(), None), TypeError,
     "grad: inputs must be Tensors, got NoneType"),
    ("grad(inputs=ndarray)", lambda: pylucid.grad(_sq(_t()).sum(), np.ones(3)), TypeError,
     "grad: inputs must be Tensors, got ndarray"),
    ("grad(grad_outputs shape)", lambda: (lambda t: pylucid.grad(_sq(t), t, np.ones(4)))(_t()),
     RuntimeError, "mismatch in shape"),
    ("grad(grad_outputs strings)",
     lambda: (lambda t: pylucid.grad(_sq(t), t, np.array(["a"] * 3)))(_t()), TypeError,
     f"grad: gradient: {UNSUPPORTED} <U1"),
    ("grad(grad_outputs count)", lambda: (lambda t: pylucid.grad(_sq(t), t, [1, 2]))(_t()),
     ValueError, "got 2 grad_outputs for 1 outputs"),
    ("grad(unused input)", lambda: pylucid.grad(_sq(_t()).sum(), _t()), RuntimeError,
     "not have been used in the graph"),
    ("grad(input without grad)", lambda: pylucid.grad(_sq(_t()).sum(), Tensor([1.0])),
     RuntimeError, "does not require grad"),
    # --- autocast
    *[(f"autocast({d!r})", lambda d=d: pylucid.autocast(d), ValueError,
       f"autocast dtype must be 'float16' or 'bfloat16', got {d!r}".replace("[", r"\[")
       .replace("]", r"\]"))
      for d in ["float32", "float64", "int8", None, 3, ["float16"], "fp16"]],
    # --- gradcheck / gradgradcheck
    *[(f"{name}({label})", lambda f=f, kw=kw: f(_sq, [np.full(2, 0.5)], **kw), exc,
       f"{name}: {msg}")
      for name, f in [("gradcheck", pylucid.gradcheck), ("gradgradcheck", pylucid.gradgradcheck)]
      for label, kw, exc, msg in [
          ("eps<0", {"eps": -1e-6}, ValueError, "eps must be positive, got -1e-06"),
          ("eps=0", {"eps": 0}, ValueError, "eps must be positive, got 0"),
          ("eps=nan", {"eps": float("nan")}, ValueError, "eps must be positive, got nan"),
          ("eps str", {"eps": "a"}, TypeError, "eps must be a real number, got 'a'"),
          ("atol<0", {"atol": -1}, ValueError, "atol and rtol must be non-negative"),
          ("rtol<0", {"rtol": -0.1}, ValueError, "atol and rtol must be non-negative"),
          ("rtol None", {"rtol": None}, TypeError, "rtol must be a real number, got None"),
          ("atol complex", {"atol": 1j}, TypeError, "atol must be a real number")]],
    *[(f"{name}(inputs={label})", lambda f=f, a=a: f(_sq, a), TypeError,
       f"{name}: inputs must be real floating-point Tensors or array-likes, got {got}")
      for name, f in [("gradcheck", pylucid.gradcheck), ("gradgradcheck", pylucid.gradgradcheck)]
      for label, a, got in [("None", None, "NoneType of dtype object"),
                            ("strings", ["a", "b"], "str of dtype <U1"),
                            ("complex", [np.ones(2) * 1j], "ndarray of dtype complex128")]],
    ("gradcheck(fn=None)", lambda: pylucid.gradcheck(None, [np.ones(2)]), TypeError,
     "gradcheck: fn must be callable, got NoneType"),
    ("gradgradcheck(fn=str)", lambda: pylucid.gradgradcheck("sqrt", [np.ones(2)]), TypeError,
     "gradgradcheck: fn must be callable, got str"),
    ("gradcheck(no input requires grad)",
     lambda: pylucid.gradcheck(_sq, [Tensor([0.5])]), ValueError,
     "gradcheck: no input requires grad"),
    # --- threads, backends, schemas
    *[(f"set_num_threads({n!r})", lambda n=n: pylucid.set_num_threads(n), ValueError,
       "set_num_threads: n must be an integer >= 1")
      for n in [None, "a", 0, -1, 1.5, True, [2]]],
    *[(f"get_backend({d!r})", lambda d=d: get_backend(d), ValueError,
       "unknown device .*; expected one of 'cpu', 'gpu'")
      for d in [None, "tpu", "cuda", "CPU", ["cpu"], 0]],
    ("ops.schema('tan')", lambda: ops.schema("tan"), KeyError, "no op named 'tan'"),
    ("ops.schema(None)", lambda: ops.schema(None), KeyError, "no op named None"),
]


@pytest.mark.parametrize("call, exc, match", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises_a_clear_error(call, exc, match):
    before = pylucid.get_num_threads()
    try:
        with np.errstate(all="ignore"), pytest.raises(exc, match=match):
            call()
    finally:
        assert pylucid.get_num_threads() == before


def test_nothing_is_written_to_out_on_error():
    for f in (ops.sqrt, ops.cube_root, ops.erfinv):
        out = np.full(2, -7.0)
        with pytest.raises(TypeError):
            f(np.ones(2, np.complex128), out=out)
        with pytest.raises(TypeError):
            f(["a", "b"], out=out)
        assert np.all(out == -7.0)


def test_ids_are_unique():
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids))
