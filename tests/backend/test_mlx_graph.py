"""The graph layer on MLX arrays: Tensor(device="gpu"), .to(), backward, create_graph, grad,
autocast. Runs on MLX's GPU when present, else on MLX's CPU device (mlx[cpu] in CI): the
``mlx_device`` fixture (conftest.py) chooses. References are closed forms in float64.
"""
import subprocess
import sys

import numpy as np
import pytest
from scipy import special

mx = pytest.importorskip("mlx.core")

import pylucid  # noqa: E402
from pylucid import amp, ops, ufuncs  # noqa: E402
from pylucid.backend import get_backend  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.filterwarnings("ignore::RuntimeWarning"),
              pytest.mark.usefixtures("mlx_device")]

X = np.float32([0.25, 1.0, 4.0, 9.0])


def gpu_tensor(x=X, **kw):
    return pylucid.Tensor(mx.array(x), device="gpu", **kw)


def test_tensor_holds_mlx_array():
    t = gpu_tensor(requires_grad=True)
    assert isinstance(t.data, mx.array) and t.device == "gpu" and t.dtype == mx.float32
    assert pylucid.Tensor([1.0, 2.0], device="gpu").dtype == mx.float32  # MLX's default float


@pytest.mark.parametrize("op, grad", [
    ("sqrt", lambda y: 1 / (2 * y)),
    ("cube_root", lambda y: 1 / (3 * y * y)),
    ("erfinv", lambda y: np.sqrt(np.pi) / 2 * np.exp(y * y)),
])
def test_backward_matches_closed_form(op, grad):
    x = np.float32([0.1, 0.3, 0.5, 0.9]) if op == "erfinv" else X
    t = gpu_tensor(x, requires_grad=True)
    y = getattr(t, op)()
    assert isinstance(y.data, mx.array)
    y.sum().backward()
    assert isinstance(t.grad.data, mx.array)
    y_ref = getattr(ufuncs, op)(x.astype(np.float64))
    np.testing.assert_allclose(np.array(t.grad.data), grad(y_ref), rtol=1e-6)


def test_second_and_third_derivatives_cube_root():
    t = gpu_tensor(np.float32([1.0, 8.0, -27.0]), requires_grad=True)
    y = t.cube_root()
    (g1,) = pylucid.grad(y.sum(), t, create_graph=True)
    (g2,) = pylucid.grad(g1.sum(), t, create_graph=True)
    (g3,) = pylucid.grad(g2.sum(), t)
    x = np.float64([1.0, 8.0, -27.0])
    a = np.abs(x)
    np.testing.assert_allclose(np.array(g1.data), a ** (-2 / 3) / 3, rtol=1e-5)
    np.testing.assert_allclose(np.array(g2.data), -2 / 9 * np.sign(x) * a ** (-5 / 3), rtol=1e-5)
    np.testing.assert_allclose(np.array(g3.data), 10 / 27 * a ** (-8 / 3), rtol=1e-5)


def test_grad_accumulates_and_frees():
    t = gpu_tensor(requires_grad=True)
    y = t.sqrt().sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(np.array(t.grad.data), 2 / (2 * np.sqrt(X)), rtol=1e-6)
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_ops_on_mlx_arrays_return_mlx_arrays():
    y = pylucid.ops.cube_root(mx.array(np.float32([-8.0, 27.0])))
    assert isinstance(y, mx.array)
    np.testing.assert_array_equal(np.array(y), [-2.0, 3.0])


def test_float64_on_gpu_raises_not_downcasts():
    from pylucid.backend import mlx as B
    if B.platform() == "cpu":
        pytest.skip("MLX's CPU device runs float64")
    t = pylucid.Tensor(np.float64([1.0, 4.0]), device="gpu")
    with pytest.raises(TypeError, match="float64"):
        t.sqrt()


def test_to_moves_between_devices_and_is_differentiable():
    c = pylucid.Tensor(X, requires_grad=True)
    g = c.to("gpu")
    assert isinstance(g.data, mx.array) and g.device == "gpu"
    back = g.sqrt().to("cpu")
    assert isinstance(back.data, np.ndarray)
    back.sum().backward()
    assert isinstance(c.grad.data, np.ndarray)  # the gradient comes back to the leaf's device
    np.testing.assert_allclose(c.grad.data, 1 / (2 * np.sqrt(X)), rtol=1e-6)


def test_astype_and_leaf_dtype():
    t = gpu_tensor(requires_grad=True)
    h = t.astype("float16")
    assert h.dtype == mx.float16
    h.sqrt().sum().backward()
    assert t.grad.dtype == mx.float32


@pytest.mark.parametrize("op, expected", [
    ("sqrt", "float16"), ("erfinv", "float16"), ("cube_root", "float32")])
def test_autocast_on_mlx(op, expected):
    t = gpu_tensor(np.float32([0.25, 0.5]), requires_grad=True)
    with pylucid.autocast("float16"):
        y = getattr(t, op)()
    assert y.dtype == getattr(mx, expected)
    y.sum().backward()
    assert t.grad.dtype == mx.float32


def test_autocast_values_round_once():
    x = np.float32([0.3, 1.7, 5.0])
    t = gpu_tensor(x, requires_grad=True)
    with pylucid.autocast("float16"):
        y = t.sqrt()
    assert y.dtype == mx.float16 and type(y.grad_fn.next[0]).__name__ == "CastBackward"
    want = np.sqrt(x.astype(np.float16).astype(np.float64)).astype(np.float16)
    np.testing.assert_array_equal(np.array(y.data), want)


# ------------------------------------------------------------------ one backend interface

def test_both_backends_have_one_interface():
    def interface(be):
        return {n for n in dir(type(be)) if not n.startswith("_")}

    cpu, gpu = get_backend("cpu"), get_backend("gpu")
    assert interface(cpu) == interface(gpu)
    assert gpu.is_floating(mx.bfloat16) and gpu.is_floating(mx.float16)
    assert not gpu.is_floating(mx.int32)
    gpu.check_dtype("op", mx.int32)
    with pytest.raises(TypeError, match="op: unsupported dtype"):
        gpu.check_dtype("op", mx.complex64)


@pytest.mark.parametrize("spec, want", [
    ("float16", "float16"), (np.float16, "float16"), (np.dtype(np.float32), "float32"),
    ("bfloat16", "bfloat16"), (mx.bfloat16, "bfloat16")])
def test_dtypes_map_through_the_backend(spec, want):
    t = gpu_tensor(requires_grad=True)
    c = t.astype(spec)
    assert c.dtype == getattr(mx, want)
    c.sum().backward()
    assert t.grad.dtype == mx.float32
    assert pylucid.Tensor(X, dtype=spec, device="gpu").dtype == getattr(mx, want)


def test_tensor_function_copies_and_keeps_float64_when_asked():
    a = mx.array(X)
    t = pylucid.tensor(a, device="gpu")
    assert t.data is not a and np.array_equal(np.array(t.data), X)
    assert pylucid.tensor([0.1], dtype="float64", device="gpu").numpy()[0] == 0.1


# ------------------------------------------------------------------ .to()

@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_to_round_trip_gradients_reach_the_gpu_leaf(dtype):
    """gpu leaf -> cpu op -> gpu op: the gradient comes back to the leaf's device and dtype."""
    x = np.float32([1.0, 8.0, 0.5])
    t = pylucid.Tensor(x, dtype=dtype, device="gpu", requires_grad=True)
    c = t.to("cpu")
    assert isinstance(c.data, np.ndarray) and c.dtype.name == dtype  # ml_dtypes on NumPy's side
    y = c.cube_root().to("gpu").sqrt()
    assert y.device == "gpu" and y.dtype == getattr(mx, dtype)
    y.sum().backward()
    assert isinstance(t.grad.data, mx.array) and t.grad.dtype == getattr(mx, dtype)
    xd = np.array(t.data.astype(mx.float32), np.float64)               # x as rounded to dtype
    want = 1 / (6 * xd ** (5 / 6))                                     # d/dx sqrt(cbrt(x))
    rtol = {"float16": 4e-3, "bfloat16": 3e-2, "float32": 1e-6}[dtype]
    np.testing.assert_allclose(np.array(t.grad.data.astype(mx.float32)), want, rtol=rtol)


def test_to_carries_higher_derivatives_across_devices():
    x = np.float32([0.5, 2.0, 9.0])
    t = gpu_tensor(x, requires_grad=True)
    y = t.to("cpu").sqrt().to("gpu")
    (g1,) = pylucid.grad(y.sum(), t, create_graph=True)
    (g2,) = pylucid.grad(g1.sum(), t, create_graph=True)
    (g3,) = pylucid.grad(g2.sum(), t)
    x = x.astype(np.float64)
    for g, want in ((g1, 0.5 * x ** -0.5), (g2, -0.25 * x ** -1.5), (g3, 0.375 * x ** -2.5)):
        assert isinstance(g.data, mx.array) and g.dtype == mx.float32
        np.testing.assert_allclose(np.array(g.data), want, rtol=2e-6)


def test_to_same_device_no_grad_and_bad_device():
    t = gpu_tensor(requires_grad=True)
    assert t.to("gpu") is t
    with pylucid.no_grad():
        c = t.to("cpu")
    assert c.grad_fn is None and not c.requires_grad
    with pytest.raises(ValueError, match="unknown device"):
        t.to("tpu")


# ------------------------------------------------------------------ operands

def test_mixing_devices_raises():
    with pytest.raises(RuntimeError, match="one device.*'gpu' and 'cpu'"):
        gpu_tensor() * pylucid.Tensor(X)


def test_array_operands():
    t = gpu_tensor(requires_grad=True)
    a = mx.array(np.float32([2.0, 2.0, 2.0, 2.0]))
    for y in (t * a, np.float32([2, 2, 2, 2]) * t, 2.0 * t):  # ndarray on the left: MLX's too
        assert isinstance(y.data, mx.array) and y.dtype == mx.float32 and y.grad_fn is not None
    # Documented: MLX's operators raise on a Tensor on their right and have no hook to defer.
    with pytest.raises(ValueError):
        a * t


# ------------------------------------------------------------------ autocast tables

F = ("float16", "bfloat16", "float32")
P = pylucid.AmpPolicy
TABLE = {  # policy -> input dtype -> compute dtype; "amp": the autocast dtype
    P.Promote: {"float16": "float16", "bfloat16": "bfloat16", "float32": "amp"},
    P.ForceFP32: {"float16": "float32", "bfloat16": "float32", "float32": "float32"},
    P.KeepInput: {"float16": "float16", "bfloat16": "bfloat16", "float32": "float32"},
}
OP_POLICY = {"sqrt": P.Promote, "erfinv": P.Promote, "cube_root": P.ForceFP32}


def _want(policy, dt, amp_name):
    w = TABLE[policy][dt]
    return getattr(mx, amp_name if w == "amp" else w)


@pytest.mark.parametrize("amp_name", ["float16", "bfloat16"])
@pytest.mark.parametrize("dt", F)
@pytest.mark.parametrize("policy", list(P))
def test_compute_dtype_takes_mlx_dtypes(policy, dt, amp_name):
    assert amp.compute_dtype(policy, getattr(mx, dt), amp_name) == _want(policy, dt, amp_name)


@pytest.mark.parametrize("amp_name", ["float16", "bfloat16"])
@pytest.mark.parametrize("dt", F)
@pytest.mark.parametrize("op", list(OP_POLICY))
def test_autocast_on_raw_mlx_arrays_and_tensors(op, dt, amp_name):
    x = mx.array(np.float32([0.25, 0.5]), dtype=getattr(mx, dt))
    want = _want(OP_POLICY[op], dt, amp_name)
    with pylucid.autocast(amp_name):
        y = getattr(ops, op)(x)
        assert isinstance(y, mx.array) and y.dtype == want
        t = pylucid.Tensor(x, device="gpu", requires_grad=True)
        yt = getattr(ops, op)(t)
        assert yt.dtype == want
    assert getattr(ops, op)(x).dtype == x.dtype                         # outside: as the input
    yt.sum().backward()                                                 # the cast is recorded
    assert t.grad.dtype == x.dtype


def test_autocast_entered_before_mlx_loads():
    """A thread inside autocast sees the dtypes of a backend loaded after it entered."""
    code = (
        "import numpy as np, pylucid, mlx.core as mx\n"
        "with pylucid.autocast('float16'):\n"
        "    t = pylucid.Tensor(np.float32([4.0]), device='gpu')\n"
        "    assert t.sqrt().dtype == mx.float16, t.sqrt().dtype\n"
        "    assert pylucid.sqrt(mx.array([4.0])).dtype == mx.float16\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ------------------------------------------------------------------ CPU and MLX agree

def _closed_forms(op, x):
    """d^n/dx^n of op at x, n = 1..3, in float64."""
    if op == "sqrt":
        return [0.5 * x ** -0.5, -0.25 * x ** -1.5, 0.375 * x ** -2.5]
    if op == "cube_root":
        a, s = np.abs(x), np.sign(x)
        return [a ** (-2 / 3) / 3, -2 / 9 * s * a ** (-5 / 3), 10 / 27 * a ** (-8 / 3)]
    y = special.erfinv(x)
    d1 = np.sqrt(np.pi) / 2 * np.exp(y * y)
    return [d1, 2 * y * d1 ** 2, 2 * d1 ** 3 * (1 + 4 * y * y)]


DOMAIN = {"sqrt": [0.01, 0.3, 1.0, 2.5, 17.0, 1e4],
          "cube_root": [-27.0, -0.7, 0.02, 1.0, 8.0, 1e3],
          "erfinv": [-0.95, -0.5, -1e-3, 0.1, 0.7, 0.99]}


def _derivative(op, x, order, device):
    t = pylucid.Tensor(x, device=device, requires_grad=True)
    y = getattr(t, op)()
    for k in range(order):
        (y,) = pylucid.grad(y.sum(), t, create_graph=k < order - 1)
    return y.numpy()


@pytest.mark.parametrize("order", [1, 2, 3])
@pytest.mark.parametrize("op", list(DOMAIN))
def test_cpu_and_mlx_gradients_agree_with_closed_forms(op, order):
    x = np.float32(DOMAIN[op])
    want = _closed_forms(op, x.astype(np.float64))[order - 1]
    cpu = _derivative(op, x, order, "cpu")
    gpu = _derivative(op, x, order, "gpu")
    assert cpu.dtype == gpu.dtype == np.float32
    np.testing.assert_allclose(cpu, want, rtol=2e-5)
    np.testing.assert_allclose(gpu, want, rtol=2e-5)
    np.testing.assert_allclose(gpu, cpu, rtol=2e-5)
