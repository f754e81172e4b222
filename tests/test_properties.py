"""Property-based tests (Hypothesis): any shape (0-d to 5-d, empty), any strides (negative,
zero-stride broadcast, non-contiguous), any dtype, out= aliasing or overlapping the input, and
values drawn from all floats give the reference's results element-wise.

References are independent of pylucid: ``np.sqrt`` (bit-exact), ``np.cbrt`` in long double
(cbrtl), ``scipy.special.erfinv`` in float64, and the backward formulas in float64 / long
double."""
import numpy as np
import pytest
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from pylucid import ufuncs

LD = np.longdouble
FLOAT_DTYPES = [np.float16, np.float32, np.float64]
OTHER_DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64]
SCIPY_ERFINV_F64_ULPS = 2.5  # SciPy's own float64 error (measured against mpmath: ~2.3)
BOUND = {"sqrt": 0.5, "cube_root": 1.0, "erfinv": 1.0}
BACKWARD_BOUND = {"sqrt_backward": 1.0, "cube_root_backward": 3.0, "erfinv_backward": 3.0}

SETTINGS = settings(max_examples=60, deadline=None)


def _spec(op, x, ref):
    """The documented special values, written over a reference computed elsewhere."""
    xr = x.astype(ref.dtype)
    if op == "erfinv":
        ref[np.abs(x) > 1] = np.nan
        np.copyto(ref, np.copysign(np.inf, xr), where=np.abs(x) == 1)
    np.copyto(ref, xr, where=x == 0)  # signed zeros for every op
    if op == "cube_root":
        np.copyto(ref, xr, where=np.isinf(x))
    ref[np.isnan(x)] = np.nan
    return ref


def reference(op, xr):
    """High-precision reference for ``xr`` (already in the result dtype)."""
    with np.errstate(all="ignore"):
        if op == "sqrt":
            return np.array(np.sqrt(xr))
        if op == "cube_root":
            return _spec(op, xr, np.array(np.cbrt(xr.astype(LD))))
        return _spec(op, xr, np.array(scipy.special.erfinv(xr.astype(np.float64))))


def ulp_errors(y, ref, dtype):
    """|y - ref| in ULPs of ``dtype``; 0 where y equals the rounded reference (infinities,
    zeros); infinities count as the power of two just past the largest finite value."""
    info = np.finfo(dtype)
    with np.errstate(all="ignore"):
        r = np.asarray(ref, LD)
        big = LD(2.0) ** (info.maxexp)
        yl = np.where(np.isinf(y), np.copysign(big, y.astype(LD)), y.astype(LD))
        rl = np.where(np.isinf(r), np.copysign(big, r), r)
        e = np.frexp(np.abs(rl))[1].astype(np.int64) - 1
        ulp = np.ldexp(LD(1), np.maximum(e, info.minexp) - info.nmant)
        err = np.abs(yl - rl) / ulp
    same = (y == np.asarray(ref).astype(dtype)) | (np.isnan(y) & np.isnan(r))
    return np.where(same, 0, err).astype(np.float64)


def check(op, x, y, tol=None):
    x, y = np.asarray(x), np.asarray(y)
    with np.errstate(all="ignore"):
        assert y.dtype == np.sqrt(x).dtype  # NumPy's type resolution: the e, f or d loop
    xr = x.astype(y.dtype)
    ref = reference(op, xr)
    if op == "sqrt":  # exactly NumPy's
        np.testing.assert_array_equal(y, ref)
        np.testing.assert_array_equal(np.signbit(y), np.signbit(ref))
        return
    rounded = ref.astype(y.dtype)
    np.testing.assert_array_equal(np.isnan(y), np.isnan(rounded))
    special = np.isinf(ref) | (ref == 0)
    np.testing.assert_array_equal(y[special], rounded[special])
    np.testing.assert_array_equal(np.signbit(y[special]), np.signbit(rounded[special]))
    if tol is None:
        tol = BOUND[op]
        if op == "erfinv" and y.dtype == np.float64:
            tol = 2 + SCIPY_ERFINV_F64_ULPS
    err = ulp_errors(y, ref, y.dtype)
    assert err.max(initial=0) <= tol + 1e-6, (x.ravel()[np.argmax(err)], err.max())


def float_elements(dtype):
    w = np.finfo(dtype).bits
    return st.one_of(st.floats(width=w, allow_nan=True, allow_infinity=True,
                               allow_subnormal=True),
                     st.floats(-1, 1, width=w, allow_subnormal=True))


shapes = hnp.array_shapes(min_dims=0, max_dims=5, min_side=0, max_side=4)


@st.composite
def float_arrays(draw, dtypes=FLOAT_DTYPES, shape=shapes):
    dtype = draw(st.sampled_from(dtypes))
    return draw(hnp.arrays(dtype, shape, elements=float_elements(dtype)))


@st.composite
def views(draw, dtypes=FLOAT_DTYPES):
    """A view with unusual strides: negative steps, slices, transposes or a zero-stride
    broadcast of a smaller array."""
    base = draw(float_arrays(dtypes, hnp.array_shapes(min_dims=1, max_dims=4, min_side=1,
                                                      max_side=6)))
    kind = draw(st.sampled_from(["reverse", "slice", "transpose", "broadcast"]))
    if kind == "reverse":
        return base[(slice(None, None, -1),) * base.ndim]
    if kind == "slice":
        steps = draw(st.lists(st.sampled_from([-3, -2, -1, 1, 2, 3]), min_size=base.ndim,
                              max_size=base.ndim))
        return base[tuple(slice(None, None, s) for s in steps)]
    if kind == "transpose":
        return base.T
    extra = draw(st.lists(st.integers(0, 3), min_size=1, max_size=2))
    return np.broadcast_to(base, tuple(extra) + base.shape)


OPS = ["sqrt", "cube_root", "erfinv"]


@pytest.mark.parametrize("op", OPS)
@SETTINGS
@given(x=float_arrays())
def test_any_shape_and_value(op, x):
    check(op, x, getattr(ufuncs, op)(x))


@pytest.mark.parametrize("op", OPS)
@SETTINGS
@given(x=views())
def test_any_strides(op, x):
    y = getattr(ufuncs, op)(x)
    check(op, x, y)
    np.testing.assert_array_equal(y, getattr(ufuncs, op)(np.ascontiguousarray(x)))


@pytest.mark.parametrize("op", OPS)
@SETTINGS
@given(x=st.sampled_from(OTHER_DTYPES).flatmap(lambda d: hnp.arrays(d, shapes)))
def test_integer_and_bool_inputs(op, x):
    check(op, x, getattr(ufuncs, op)(x))


@pytest.mark.parametrize("op", OPS)
@SETTINGS
@given(x=float_arrays(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5)))
def test_out_aliasing_the_input_is_in_place(op, x):
    original = x.copy()
    expected = getattr(ufuncs, op)(original)
    r = getattr(ufuncs, op)(x, out=x)
    assert r is x
    np.testing.assert_array_equal(x, expected)
    check(op, original, x)


@pytest.mark.parametrize("op", OPS)
@SETTINGS
@given(data=st.data(), dtype=st.sampled_from(FLOAT_DTYPES), n=st.integers(1, 40),
       shift=st.integers(-20, 20), step=st.sampled_from([1, 2, -1]))
def test_partially_overlapping_out_gives_the_copy_result(op, data, dtype, n, shift, step):
    size = 2 * (n + 20) * 2 + 3
    buf = data.draw(hnp.arrays(dtype, size, elements=float_elements(dtype)))
    start = size // 2
    x = buf[start:start + step * n:step] if step > 0 else buf[start:start + step * n:step]
    o = buf[start + shift:start + shift + n]
    assert x.shape == o.shape == (n,)
    expected = getattr(ufuncs, op)(x.copy())
    getattr(ufuncs, op)(x, out=o)
    np.testing.assert_array_equal(o, expected)


# ----------------------------------------------------------------------------- backward

BACKWARD = {
    "sqrt_backward": ("sqrt", lambda g, y: g / (2 * y)),
    "cube_root_backward": ("cube_root", lambda g, y: g / (3 * (y * y))),
    "erfinv_backward": ("erfinv", None),
}


def backward_reference(name, g, y):
    """float64 for float16/32 inputs, long double for float64 (exp(y^2) with y^2 split)."""
    wide = np.float64 if y.dtype != np.float64 else LD
    gw, yw = g.astype(wide), y.astype(wide)
    with np.errstate(all="ignore"):
        if name != "erfinv_backward":
            return BACKWARD[name][1](gw, yw)
        if wide is np.float64:
            return np.sqrt(np.pi) / 2 * np.exp(yw * yw) * gw
        yh = np.where(np.isfinite(y), y.astype(np.float32), y).astype(np.float64)
        lo = np.where(np.isfinite(y), y - yh, 0).astype(LD)
        yh = yh.astype(LD)
        return (LD("0.886226925452758013649083741670572591") * np.exp(yh * yh)
                * np.where(np.isfinite(yh), np.exp(2 * yh * lo + lo * lo), 1) * gw)


@st.composite
def backward_args(draw):
    """(g, y): y in the forward's range (the op's reference on any x), shapes broadcast."""
    name = draw(st.sampled_from(list(BACKWARD)))
    dtype = draw(st.sampled_from(FLOAT_DTYPES))
    shapes_ = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4,
                                                     max_side=4)).input_shapes
    g = draw(hnp.arrays(dtype, shapes_[0], elements=float_elements(dtype)))
    x = draw(hnp.arrays(dtype, shapes_[1], elements=float_elements(dtype)))
    y = np.asarray(reference(BACKWARD[name][0], x)).astype(dtype)
    return name, g, y


@SETTINGS
@given(args=backward_args())
def test_backward_ufuncs_any_value_and_shape(args):
    name, g, y = args
    out = np.asarray(getattr(ufuncs, name)(g, y))
    assert out.dtype == y.dtype
    ref = backward_reference(name, g, y)
    with np.errstate(all="ignore"):
        rounded = np.asarray(ref).astype(y.dtype)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(rounded))
    err = ulp_errors(out, ref, y.dtype)
    assert err.max(initial=0) <= BACKWARD_BOUND[name] + 1e-6, (
        np.broadcast_arrays(g, y)[0].ravel()[np.argmax(err)],
        np.broadcast_arrays(g, y)[1].ravel()[np.argmax(err)], err.max())
    zero = np.asarray(ref) == 0  # exact zeros keep the sign of g / (±y)
    np.testing.assert_array_equal(np.signbit(out[zero]), np.signbit(rounded[zero]))


@SETTINGS
@given(args=backward_args(), kind=st.sampled_from(["g", "y"]))
def test_backward_out_aliasing_an_input(args, kind):
    name, g, y = args
    g, y = (np.array(a) for a in np.broadcast_arrays(g, y))
    expected = getattr(ufuncs, name)(g, y)
    target = g if kind == "g" else y
    getattr(ufuncs, name)(g, y, out=target)
    np.testing.assert_array_equal(target, expected)


@SETTINGS
@given(args=backward_args())
def test_backward_strided_views_match_contiguous(args):
    name, g, y = args
    g, y = (np.array(a) for a in np.broadcast_arrays(g, y))
    if g.ndim == 0:
        return
    gv, yv = g[..., ::-1], y[..., ::-1]
    np.testing.assert_array_equal(getattr(ufuncs, name)(gv, yv),
                                  getattr(ufuncs, name)(np.ascontiguousarray(gv),
                                                        np.ascontiguousarray(yv)))
