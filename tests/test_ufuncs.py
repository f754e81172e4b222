"""The ufuncs behave as NumPy ufuncs: loops, docs, broadcasting, out=, where=, dtype=,
strides, 0-d and empty inputs, error state, bad input and concurrent calls."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.special

import pylucid
from pylucid import ufuncs

UNARY = {"sqrt": np.sqrt, "cube_root": np.cbrt, "erfinv": scipy.special.erfinv}
BACKWARD = {
    "sqrt_backward": lambda g, y: g / (2 * y),
    "cube_root_backward": lambda g, y: g / (3 * y * y),
    "erfinv_backward": lambda g, y: np.sqrt(np.pi) / 2 * np.exp(y * y) * g,
}
ALL = list(UNARY) + list(BACKWARD)


def inputs(name, shape=(50,), dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.05, 0.95, shape).astype(dtype)
    return (x,) if name in UNARY else (rng.standard_normal(shape).astype(dtype), x)


def reference(name, *args):
    f = UNARY.get(name) or BACKWARD[name]
    return f(*[np.asarray(a, dtype=np.float64) for a in args])


@pytest.mark.parametrize("name", ALL)
def test_is_a_documented_numpy_ufunc_with_half_float_double_loops(name):
    f = getattr(ufuncs, name)
    assert isinstance(f, np.ufunc)
    assert f.__name__ == name
    assert f.nout == 1 and f.nin == (1 if name in UNARY else 2)
    assert f.types == ([f"{c}->{c}" for c in "efd"] if f.nin == 1 else
                       [f"{c}{c}->{c}" for c in "efd"])
    assert f.__doc__.startswith(name + "(") and "Parameters" in f.__doc__ and "Examples" in f.__doc__


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("dtype, rtol", [(np.float32, 2e-6), (np.float64, 1e-14)])
def test_values_match_numpy_and_scipy(name, dtype, rtol):
    args = inputs(name, dtype=dtype)
    y = getattr(ufuncs, name)(*args)
    assert y.dtype == dtype
    np.testing.assert_allclose(y, reference(name, *args), rtol=rtol)


@pytest.mark.parametrize("name", ALL)
def test_broadcasting(name):
    f = getattr(ufuncs, name)
    if f.nin == 1:
        x = inputs(name, (4, 1, 3))[0]
        assert f(x).shape == (4, 1, 3)
        return
    g, y = inputs(name, (4, 1, 3))[0], inputs(name, (5, 1))[1]
    out = f(g, y)
    assert out.shape == (4, 5, 3)
    np.testing.assert_allclose(out, reference(name, g, y), rtol=1e-14)


@pytest.mark.parametrize("name", ALL)
def test_out_where_dtype(name):
    f = getattr(ufuncs, name)
    args = inputs(name, (10,))
    out = np.full(10, -7.0)
    assert f(*args, out=out) is out
    np.testing.assert_allclose(out, reference(name, *args), rtol=1e-14)
    where = np.arange(10) % 2 == 0
    out = np.full(10, -7.0)
    f(*args, out=out, where=where)
    np.testing.assert_allclose(out[where], reference(name, *args)[where], rtol=1e-14)
    assert np.all(out[~where] == -7.0)
    assert f(*args, dtype=np.float32).dtype == np.float32
    # in place: out aliases the input
    a = [arg.copy() for arg in args]
    f(*a, out=a[0])
    np.testing.assert_allclose(a[0], reference(name, *args), rtol=1e-14)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_strided_and_reversed_views_match_contiguous(name, dtype):
    f = getattr(ufuncs, name)
    args = inputs(name, (3000, 3), dtype=dtype)
    views = [a[::-2, 1] for a in args]
    np.testing.assert_array_equal(f(*views), f(*[np.ascontiguousarray(v) for v in views]))
    # strided output too
    out = np.zeros((1500, 2), dtype)
    f(*views, out=out[:, 0])
    np.testing.assert_array_equal(out[:, 0], f(*views))


@pytest.mark.parametrize("name", ALL)
def test_zero_d_scalars_and_empty(name):
    f = getattr(ufuncs, name)
    args = [a[0] for a in inputs(name, (1,))]
    r = f(*args)
    assert np.isscalar(r) and isinstance(r, np.float64)
    r = f(*[np.array(a) for a in args])
    assert np.isscalar(r) or r.shape == ()
    py = f(*[float(a) for a in args])
    assert isinstance(py, np.float64) and py == r
    assert f(*[np.empty((0, 3), np.float32)] * f.nin).shape == (0, 3)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int16, np.int32,
                                   np.int64, np.uint64])
@pytest.mark.parametrize("name", ["sqrt", "cube_root", "erfinv"])
def test_integer_and_bool_inputs_resolve_like_np_sqrt(name, dtype):
    x = np.array([0, 1], dtype=dtype)
    y = getattr(ufuncs, name)(x)
    assert y.dtype == np.sqrt(x).dtype
    np.testing.assert_allclose(y.astype(np.float64), reference(name, x.astype(np.float64)),
                               rtol=1e-3)


def test_error_state_as_np_sqrt():
    with pytest.warns(RuntimeWarning, match="invalid value encountered in sqrt"):
        ufuncs.sqrt(np.array([-1.0]))
    with np.errstate(invalid="raise"), pytest.raises(FloatingPointError):
        ufuncs.sqrt(np.array([-1.0, 4.0], np.float32))
    # the big threaded path reports the workers' flags too
    big = np.ones(1 << 20)
    big[-1] = -1
    with np.errstate(invalid="raise"), pytest.raises(FloatingPointError):
        ufuncs.sqrt(big)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_cube_root_and_erfinv_never_set_floating_point_errors(dtype):
    info = np.finfo(dtype)
    x = np.array([0, -0.0, 1, -1, 2, -2, np.inf, -np.inf, np.nan, info.max, -info.max,
                  info.smallest_subnormal, -info.smallest_subnormal, info.smallest_normal,
                  np.nextafter(dtype(1), dtype(0)), 0.5], dtype=dtype)
    x = np.tile(x, 100)  # long enough for the vector paths
    with np.errstate(all="raise", under="ignore"):
        ufuncs.cube_root(x)
        ufuncs.erfinv(x)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("bad", [
    np.array([1 + 2j]), np.array([1.0], dtype=object), np.array(["1.0"]), np.array([b"1"]),
    np.array(["2024-01-01"], dtype="datetime64[D]"), np.array([1], dtype="timedelta64[s]"),
])
def test_unsupported_dtypes_raise_type_error_naming_the_op(name, bad):
    f = getattr(ufuncs, name)
    with pytest.raises(TypeError, match=name):
        f(*[bad] * f.nin)


@pytest.mark.parametrize("name", ALL)
def test_bad_out_raises_as_numpy_and_leaves_the_buffer_alone(name):
    f = getattr(ufuncs, name)
    args = inputs(name, (4,))
    wrong_shape = np.full(5, -7.0)
    with pytest.raises(ValueError):
        f(*args, out=wrong_shape)
    unsafe = np.full(4, -7, dtype=np.int64)
    with pytest.raises(TypeError):
        f(*args, out=unsafe)
    readonly = np.full(4, -7.0)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        f(*args, out=readonly)
    assert np.all(wrong_shape == -7.0) and np.all(unsafe == -7) and np.all(readonly == -7.0)


@pytest.mark.parametrize("name", ALL)
def test_four_threads_give_the_serial_results(name):
    f = getattr(ufuncs, name)
    jobs = [inputs(name, (n,), dtype, seed) for seed, (n, dtype) in enumerate(
        [(10, np.float32), (100_000, np.float64), (300_000, np.float32), (7, np.float64)] * 4)]
    serial = [f(*args) for args in jobs]
    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(lambda args: f(*args), jobs))
    for a, b in zip(serial, threaded):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_results_do_not_depend_on_the_thread_count(name, dtype):
    f = getattr(ufuncs, name)
    args = inputs(name, (1_000_003,), dtype)
    before = pylucid.get_num_threads()
    try:
        results = []
        for n in (1, 2, 3, 8):
            pylucid.set_num_threads(n)
            results.append(f(*args))
    finally:
        pylucid.set_num_threads(before)
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True])
def test_set_num_threads_rejects_bad_counts(bad):
    with pytest.raises(ValueError, match="set_num_threads"):
        pylucid.set_num_threads(bad)


@pytest.mark.parametrize("variable, value", [("PYLUCID_ISA", "avx9"),
                                             ("PYLUCID_NUM_THREADS", "many")])
def test_a_misspelt_environment_setting_fails_the_import(variable, value):
    import os
    import subprocess
    import sys
    env = dict(os.environ, **{variable: value})
    run = subprocess.run([sys.executable, "-c", "import pylucid"], env=env,
                         capture_output=True, text=True)
    assert run.returncode != 0 and variable in run.stderr and value in run.stderr
