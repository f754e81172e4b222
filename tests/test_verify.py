"""pylucid.verify on small samples, and its references checked against mpmath."""
import mpmath
import numpy as np
import pytest

from pylucid import verify


@pytest.fixture(scope="module")
def f32_sample():
    return verify.verify_f32(sample=200_000, seed=1, workers=1, progress=False)


def test_float32_sample_is_within_the_bounds_and_has_no_special_mismatch(f32_sample):
    assert set(f32_sample) == set(verify.OPS)
    for op, r in f32_sample.items():
        assert r["n"] == 200_000 + len(verify.SPECIAL32)
        assert r["max_err"] <= verify.BOUND[np.float32][op], (op, r)
        assert r["n_special_bad"] == 0, r["special_bad"]
    assert f32_sample["sqrt"]["n_off"] == 0  # correctly rounded


def test_float32_table_is_markdown(f32_sample):
    text = verify.table(f32_sample, np.float32, "float32")
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert len(rows) == 1 + 3 and "max ULP error" in rows[0]
    assert "0x" in rows[1]


def test_float64_sample_and_backward_sample():
    r = verify.verify_f64(n=30_000, seed=2, workers=1, progress=False, chunk=10_000)
    for op, res in r.items():
        assert res["max_err"] <= verify.BOUND[np.float64][op], (op, res)
        assert res["n_special_bad"] == 0, res["special_bad"]
    b = verify.verify_backward(n32=20_000, n64=5_000, seed=3, workers=1, progress=False)
    assert len(b) == 6
    for key, res in b.items():
        assert res["n_special_bad"] == 0, (key, res["special_bad"])
        assert res["max_err"] < 4, (key, res)


def test_the_command_line_runs_and_reports(capsys):
    rc = verify.main(["--ops", "cube_root", "--sample", "5000", "--f64", "2000",
                      "--workers", "1", "--no-progress"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "| cube_root | float32 |" in out and "| cube_root | float64 |" in out
    assert "Reference (long double) vs mpmath" in out


def test_special_value_mismatches_are_detected():
    bits = np.array([0x80000000, 0x3F800000, 0xBF800000, 0x40000000, 0x3F000000], np.uint32)
    x = bits.view(np.float32)
    good = np.array([-0.0, np.inf, -np.inf, np.nan, 0.47693628], np.float32)
    bad = np.array([0.0, 3.9, np.inf, 1.0, 0.47693628], np.float32)  # every class wrong
    ref = verify._ref_hi("erfinv", x.astype(np.float64))
    cr, ref, _ = verify._settle("erfinv", x.astype(np.float64), ref, np.float32)
    assert verify._compare(bits, good, cr, ref, np.float32)["n_special_bad"] == 0
    assert verify._compare(bits, bad, cr, ref, np.float32)["n_special_bad"] == 4


def _mp_ulps(op, x, ref):
    """|ref - op(x)| in float64 ULPs with op(x) from mpmath at 160 bits."""
    with mpmath.workprec(160):
        v = verify._mp_value(op, x)
        return float(abs(verify.ld_to_mpf(ref) - v) /
                     verify.ld_to_mpf(verify._ulp(verify.LD(ref), np.float64)))


def erfinv_reference_points():
    rng = np.random.default_rng(5)
    k = np.unique(np.floor(np.exp(rng.uniform(0, np.log(2.0**40), 600))))
    near_one = np.concatenate([1 - k * 2.0**-53, 1 - 2.0 ** -np.arange(1, 54)])
    tiny = np.concatenate([[5e-324, 2.2250738585072014e-308, 1e-300, 2.0**-60, 1e-10],
                           np.ldexp(rng.uniform(0.5, 1, 300), rng.integers(-1074, -20, 300))])
    middle = rng.uniform(0, 1, 1000)
    x = np.concatenate([near_one, tiny, middle, [0.5, np.nextafter(0.5, 1), 2.0**-24, 2.0**-23]])
    return np.concatenate([x, -x[::3]])


def test_erfinv_long_double_reference_is_within_a_hundredth_ulp_of_mpmath():
    x = erfinv_reference_points()
    assert len(x) > 2000
    ref = verify.erfinv_ld(x)
    errs = [_mp_ulps("erfinv", xi, ri) for xi, ri in zip(x, ref)]
    assert max(errs) <= 0.01, x[int(np.argmax(errs))]


@pytest.mark.parametrize("op", ["sqrt", "cube_root"])
def test_long_double_sqrt_cbrt_references_are_within_a_hundredth_ulp_of_mpmath(op):
    x = verify.f64_sample(op, 2000, np.random.default_rng(6))
    x = x[np.isfinite(x) & (x != 0) & ((x > 0) | (op == "cube_root"))]
    ref = verify.ref64(op, x)
    assert max(_mp_ulps(op, xi, ri) for xi, ri in zip(x, ref)) <= 0.01


def test_float32_reference_settles_near_midpoints_correctly():
    # SciPy-based float32 references rounded once agree with mpmath rounded once
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.uniform(-1, 1, 300), 1 - rng.integers(1, 1 << 20, 100) * 2.0**-24])
    x = x.astype(np.float32)
    ref = verify._ref_hi("erfinv", x.astype(np.float64))
    cr, _, _ = verify._settle("erfinv", x.astype(np.float64), ref, np.float32)
    with mpmath.workprec(120):
        exact = [verify._mp_round(verify._mp_value("erfinv", xi), ci, np.float32)
                 for xi, ci in zip(x, cr)]
    np.testing.assert_array_equal(cr, np.array(exact, np.float32))


def test_backward_float64_reference_against_mpmath():
    errs = verify.backward_reference_check(n=600, seed=4)
    assert max(errs.values()) <= 0.01, errs
