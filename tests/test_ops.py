"""The functional API pylucid.ops: return types, Tensors, bad input, out=."""
import datetime

import numpy as np
import pytest
from scipy import special

import pylucid as pl
from pylucid import ops

# op -> an independent reference (NumPy / SciPy) and a valid input range
OPS = {
    "sqrt": (ops.sqrt, np.sqrt, (0.0, 9.0)),
    "cube_root": (ops.cube_root, np.cbrt, (-9.0, 9.0)),
    "erfinv": (ops.erfinv, special.erfinv, (-0.99, 0.99)),
}
NAMES = list(OPS)


def test_public_names():
    assert pl.sqrt is ops.sqrt and pl.cube_root is ops.cube_root and pl.erfinv is ops.erfinv
    assert pl.cbrt is pl.cube_root
    for name in ["Tensor", "tensor", "grad", "no_grad", "enable_grad", "is_grad_enabled",
                 "OpSchema", "AmpPolicy", "autocast", "gradcheck", "gradgradcheck",
                 "GradcheckError", "ufuncs", "__version__"]:
        assert hasattr(pl, name)
    assert set(pl.__all__) <= set(dir(pl))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_match_reference(name, dtype):
    op, ref, (lo, hi) = OPS[name]
    x = np.linspace(lo, hi, 257).astype(dtype)
    y = op(x)
    assert type(y) is np.ndarray and y.dtype == dtype
    np.testing.assert_allclose(y, ref(x.astype(np.float64)), rtol=4 * np.finfo(dtype).eps,
                               atol=np.finfo(dtype).tiny)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("x", [0.25, 1, True, [0.25, 0.5], [[1, 0]], np.float32(0.25),
                               np.array(0.25), np.array([0.5], np.float16),
                               np.arange(3, dtype=np.int8), np.array([0.5], ">f8"),
                               np.ones((3, 4))[:, ::2], np.zeros((0, 2))])
def test_returns_what_the_ufunc_returns(name, x):
    op, _, _ = OPS[name]
    ufunc = getattr(pl.ufuncs, name)
    got, want = op(x), ufunc(x)
    assert type(got) is type(want)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", NAMES)
def test_tensor_in_tensor_out(name):
    op, ref, _ = OPS[name]
    x = pl.Tensor(np.array([0.25, 0.5]), requires_grad=True)
    y = op(x)
    assert isinstance(y, pl.Tensor) and y.grad_fn is not None
    np.testing.assert_allclose(y.numpy(), ref(x.numpy()), rtol=1e-15)
    assert getattr(x, name)().grad_fn is not None         # the method form
    assert op(pl.Tensor(np.array([0.25]))).grad_fn is None  # input does not require grad
    with pl.no_grad():
        assert op(x).grad_fn is None
    with pytest.raises(TypeError, match="out="):
        op(x, out=np.empty(2))


def test_input_is_positional_only():
    with pytest.raises(TypeError):
        ops.sqrt(x=np.ones(1))


BAD = [
    (np.array([1 + 1j]), "complex128"),
    (1j, "complex128"),
    (np.array([1.0], np.complex64), "complex64"),
    (np.array([1.0], object), "object"),
    (np.array(["a"]), "<U1"),
    ("a", "<U1"),
    (np.array([b"a"]), "|S1"),
    (np.array(["2020-01-01"], "datetime64[D]"), "datetime64[D]"),
    (np.array([1], "timedelta64[s]"), "timedelta64[s]"),
    (np.datetime64("2020-01-01"), "datetime64[D]"),
    (datetime.timedelta(1), "object"),  # NumPy reads it as an object
    ([1, None], "object"),
]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("x, dtype_name", BAD)
def test_bad_dtypes_raise_type_error_naming_op_and_dtype(name, x, dtype_name):
    op = OPS[name][0]
    out = np.full(1, 7.0)
    with pytest.raises(TypeError) as info:
        op(x, out=out)
    msg = str(info.value)
    assert f"pylucid.{name}" in msg and dtype_name in msg
    assert "expected a real floating, integer or bool array" in msg
    assert out[0] == 7.0


@pytest.mark.parametrize("name", NAMES)
def test_out_works_like_the_ufunc(name):
    op, ref, _ = OPS[name]
    x = np.array([0.25, 0.5])
    out = np.empty(2)
    assert op(x, out=out) is out
    np.testing.assert_allclose(out, ref(x), rtol=1e-15)
    out32 = np.empty(2, np.float32)                 # same_kind: allowed, as np.sqrt
    op(x, out=out32)
    np.testing.assert_allclose(out32, ref(x), rtol=1e-6)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("x", [np.array([0.25, 0.5]), np.array([0.25, 0.5], np.float32),
                               [0.25, 0.5], np.array([1, 0])])
def test_bad_out_raises_like_numpy_and_writes_nothing(name, x):
    op = OPS[name][0]
    for out in [np.full(3, 7.0), np.full(1, 7.0)]:           # wrong shape
        with pytest.raises(ValueError):
            np.sqrt(x, out=out)
        with pytest.raises(ValueError):
            op(x, out=out)
        assert (out == 7.0).all()
    out = np.full(2, 7, dtype=np.int64)                     # unsafe dtype
    with pytest.raises(TypeError, match="Cannot cast"):   # NumPy's UFuncTypeError
        op(x, out=out)
    assert (out == 7).all()
    out = np.full(2, 7.0)
    out.flags.writeable = False                             # read-only
    with pytest.raises(ValueError, match="read-only"):
        op(x, out=out)
    assert (out == 7.0).all()


def test_bfloat16_arrays_keep_their_dtype():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = np.array([4.0, 2.0], ml_dtypes.bfloat16)
    y = ops.sqrt(x)
    assert y.dtype == x.dtype
    np.testing.assert_array_equal(y, np.sqrt(x.astype(np.float64)).astype(ml_dtypes.bfloat16))
    out = np.empty(2, ml_dtypes.bfloat16)
    assert ops.cube_root(x, out=out) is out
    with pytest.raises(ValueError):
        ops.sqrt(x, out=np.empty(3, ml_dtypes.bfloat16))


def test_longdouble_is_rejected_by_name():
    x = np.array([1.0], np.longdouble)
    if x.dtype.itemsize <= 8:
        pytest.skip("longdouble is double here")
    with pytest.raises(TypeError, match="pylucid.sqrt: unsupported dtype float128"):
        ops.sqrt(x)
