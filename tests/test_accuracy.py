"""Accuracy of the kernels: mpmath on edge sets, NumPy/SciPy on 10^6 random values, Boost.Math's
validation data.

Bounds (max error in ULPs of the result's dtype):
sqrt 0.5 (correctly rounded), cube_root 1, erfinv 1 in float32 and 2 in float64.
"""
import os

import numpy as np
import pytest
import scipy.special

from pylucid import ufuncs
from reference import mp_value, ulp_error_array, ulp_error_mp

BOUND = {
    ("sqrt", np.float32): 0.5, ("sqrt", np.float64): 0.5,
    ("cube_root", np.float32): 1.0, ("cube_root", np.float64): 1.0,
    ("erfinv", np.float32): 1.0, ("erfinv", np.float64): 2.0,
}
DTYPES = [np.float32, np.float64]


def powers_of_two(dtype):
    info = np.finfo(dtype)
    return [np.ldexp(dtype(1), k) for k in range(info.minexp - info.nmant, info.maxexp)]


def edge_inputs(op, dtype):
    info = np.finfo(dtype)
    tiny_sub = np.nextafter(dtype(0), dtype(1))
    common = [tiny_sub, 3 * tiny_sub, info.smallest_normal - tiny_sub, info.smallest_normal,
              np.nextafter(info.smallest_normal, dtype(1)), dtype(1), dtype(2), dtype(0.1)]
    if op == "erfinv":
        one_minus = [np.nextafter(dtype(1), dtype(0)), dtype(1) - dtype(2) ** -info.nmant,
                     dtype(1) - dtype(2) ** -(info.nmant + 1), dtype(0.5), dtype(0.9999),
                     dtype(1e-5), dtype(0.75)]
        xs = common[:6] + one_minus + [dtype(2.0) ** -k for k in range(1, info.nmant + 2)]
        xs = [x for x in xs if x < 1]
    else:
        xs = common + [info.max, np.nextafter(info.max, dtype(0)), dtype(27), dtype(1e30)]
        xs += powers_of_two(dtype)[::7]
    xs = np.array(xs, dtype=dtype)
    return xs if op == "sqrt" else np.concatenate([xs, -xs])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["sqrt", "cube_root", "erfinv"])
def test_edge_values_within_bound_against_mpmath(op, dtype):
    xs = edge_inputs(op, dtype)
    ys = getattr(ufuncs, op)(xs)
    errors = [ulp_error_mp(op, x, y) for x, y in zip(xs, ys)]
    worst = int(np.argmax(errors))
    assert errors[worst] <= BOUND[op, dtype], (xs[worst], ys[worst], errors[worst])


@pytest.mark.parametrize("dtype", DTYPES)
def test_cube_root_is_exact_on_perfect_cubes(dtype):
    # c with at most a third of the mantissa bits has an exactly representable cube.
    info = np.finfo(dtype)
    rng = np.random.default_rng(3)
    bits = (info.nmant + 1) // 3
    mant = rng.integers(1 << (bits - 1), 1 << bits, 2000).astype(dtype)
    exps = rng.integers((info.minexp - info.nmant) // 3 + bits, info.maxexp // 3 - bits, 2000)
    c = np.ldexp(mant, exps - bits).astype(dtype)
    c = np.concatenate([c, -c, [dtype(2), dtype(3), dtype(-2)]])
    cubes = c * c * c
    # keep the cubes that are representable (not rounded into the subnormal range)
    wide = c.astype(np.longdouble)
    exact = cubes.astype(np.longdouble) == wide * wide * wide
    assert exact.mean() > 0.9
    c, cubes = c[exact], cubes[exact]
    np.testing.assert_array_equal(ufuncs.cube_root(cubes), c)
    # every power of two whose cube root is a power of two, subnormals included
    p = np.array(powers_of_two(dtype))
    k = np.log2(p).astype(int)
    cubes_of_two = p[k % 3 == 0]
    np.testing.assert_array_equal(ufuncs.cube_root(cubes_of_two),
                                  np.ldexp(dtype(1), k[k % 3 == 0] // 3).astype(dtype))


def test_cube_root_of_small_integer_cubes_is_exact():
    n = np.arange(-200, 201)
    for dtype in DTYPES:
        np.testing.assert_array_equal(ufuncs.cube_root((n ** 3).astype(dtype)), n.astype(dtype))
    assert ufuncs.cube_root(-8.0) == -2.0
    assert ufuncs.cube_root(27.0) == 3.0  # glibc's cbrt gives 3.0000000000000004


def random_values(op, dtype, n=10**6):
    rng = np.random.default_rng(0)
    if op == "erfinv":
        return rng.uniform(-1, 1, n).astype(dtype)
    # every exponent, both signs (sqrt of negatives is tested with the edges)
    info = np.finfo(dtype)
    x = np.ldexp(rng.uniform(1, 2, n), rng.integers(info.minexp, info.maxexp, n)).astype(dtype)
    return np.abs(x) if op == "sqrt" else x * rng.choice([-1, 1], n).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sqrt_matches_numpy_bit_for_bit(dtype):
    x = random_values("sqrt", dtype)
    np.testing.assert_array_equal(ufuncs.sqrt(x), np.sqrt(x))


@pytest.mark.parametrize("dtype", DTYPES)
def test_cube_root_within_one_ulp_of_numpy_reference(dtype):
    x = random_values("cube_root", dtype)
    # the reference is computed in a wider type (libm's cbrt/cbrtl), then errors are
    # measured in the result's ULPs
    wide = np.float64 if dtype == np.float32 else np.longdouble
    ref = np.cbrt(x.astype(wide))
    assert ulp_error_array(ufuncs.cube_root(x), ref).max() <= 1.0


@pytest.mark.parametrize("dtype", DTYPES)
def test_erfinv_matches_scipy(dtype):
    x = random_values("erfinv", dtype)
    y = ufuncs.erfinv(x)
    if dtype == np.float32:
        # SciPy in float64, rounded errors measured in float32 ULPs
        err = ulp_error_array(y, scipy.special.erfinv(x.astype(np.float64)))
        assert err.max() <= 1.0
    else:
        # SciPy's own float64 error is a few ULP: allow the sum of both bounds here,
        # and check the worst points against mpmath.
        err = ulp_error_array(y, scipy.special.erfinv(x).astype(np.longdouble))
        assert err.max() <= 4.0
        for i in np.argsort(err)[-20:]:
            assert ulp_error_mp("erfinv", x[i], y[i]) <= 2.0, x[i]


@pytest.mark.parametrize("dtype", DTYPES)
def test_random_sample_within_bound_against_mpmath(dtype):
    rng = np.random.default_rng(7)
    for op in ("sqrt", "cube_root", "erfinv"):
        x = random_values(op, dtype, 10**6)[rng.integers(0, 10**6, 300)]
        y = getattr(ufuncs, op)(x)
        worst = max(ulp_error_mp(op, a, b) for a, b in zip(x, y))
        assert worst <= BOUND[op, dtype], op


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("op, x, expected", [
    ("sqrt", 0.0, 0.0), ("sqrt", -0.0, -0.0), ("sqrt", np.inf, np.inf),
    ("sqrt", -1.0, np.nan), ("sqrt", -np.inf, np.nan), ("sqrt", np.nan, np.nan),
    ("cube_root", 0.0, 0.0), ("cube_root", -0.0, -0.0), ("cube_root", np.inf, np.inf),
    ("cube_root", -np.inf, -np.inf), ("cube_root", np.nan, np.nan),
    ("cube_root", -8.0, -2.0), ("cube_root", 27.0, 3.0),
    ("erfinv", 0.0, 0.0), ("erfinv", -0.0, -0.0), ("erfinv", 1.0, np.inf),
    ("erfinv", -1.0, -np.inf), ("erfinv", 1.5, np.nan), ("erfinv", -2.0, np.nan),
    ("erfinv", np.inf, np.nan), ("erfinv", -np.inf, np.nan), ("erfinv", np.nan, np.nan),
])
def test_special_values(op, x, expected, dtype):
    with np.errstate(invalid="ignore"):
        y = getattr(ufuncs, op)(np.array([x], dtype=dtype))
    assert y.dtype == dtype
    np.testing.assert_array_equal(y, np.array([expected], dtype=dtype))
    assert np.signbit(y[0]) == np.signbit(expected) or np.isnan(expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_erfinv_of_tiny_values_is_x_times_half_sqrt_pi(dtype):
    info = np.finfo(dtype)
    x = np.ldexp(dtype(1), np.arange(info.minexp - info.nmant, info.minexp + 40)).astype(dtype)
    x = np.concatenate([x, -x])
    ref = np.array([mp_value("erfinv", v) for v in x])
    expected = np.array([float(r) for r in ref]).astype(dtype)  # rounded once from mpmath
    y = ufuncs.erfinv(x)
    assert np.all(y != 0)
    # subnormal results may differ by one step of the subnormal grid
    np.testing.assert_array_max_ulp(y, expected, maxulp=1)


@pytest.mark.parametrize("op", ["sqrt", "cube_root", "erfinv"])
def test_float16_is_computed_in_float32_and_rounded_once(op):
    x = np.arange(-65504, 65504, 7, dtype=np.float16)
    x = np.unique(np.concatenate([x, np.float16(np.linspace(-1, 1, 4001))]))
    with np.errstate(invalid="ignore"):
        y = getattr(ufuncs, op)(x)
        expected = getattr(ufuncs, op)(x.astype(np.float32)).astype(np.float16)
        reference = {"sqrt": np.sqrt, "cube_root": np.cbrt,
                     "erfinv": scipy.special.erfinv}[op](x.astype(np.float64))
    assert y.dtype == np.float16
    np.testing.assert_array_equal(y, expected)
    finite = np.isfinite(reference)
    np.testing.assert_array_max_ulp(y[finite], reference[finite].astype(np.float16), maxulp=1)


def boost_data(name):
    """A table of Boost.Math's validation data, as SciPy ships it for its own tests (columns as
    in Boost's file, values rounded to float64); skipped where the SciPy install has none."""
    path = os.path.join(os.path.dirname(scipy.special.__file__), "tests", "data", "boost.npz")
    if not os.path.exists(path):
        pytest.skip("this SciPy install ships no Boost test data")
    with np.load(path) as tables:
        return tables[name]


def assert_within_bound_of_rounded(op, x, ref):
    """op(x) within op's float64 bound of ref, plus the half ULP of ref's own rounding."""
    err = ulp_error_array(getattr(ufuncs, op)(x), ref.astype(np.longdouble))
    assert err.max() <= BOUND[op, np.float64] + 0.5


def test_float64_against_boost_validation_data():
    x, ref = boost_data("erf_inv_data_ipp-erf_inv_data").T
    assert_within_bound_of_rounded("erfinv", x, ref)
    # erfc_inv(q) = erfinv(1 - q), where 1 - q is exact (Sterbenz: q in [1/2, 2])
    q, ref = boost_data("erfc_inv_data_ipp-erfc_inv_data").T
    exact = (q >= 0.5) & (q <= 2.0)
    assert exact.sum() > 20
    assert_within_bound_of_rounded("erfinv", 1 - q[exact], ref[exact])
    y, x = boost_data("cbrt_data_ipp-cbrt_data").T  # columns: cbrt(x), x
    assert_within_bound_of_rounded("cube_root", x, y)
    assert_within_bound_of_rounded("cube_root", -x, -y)
