"""Threads: 8 Python threads hammering forward and backward (ufuncs and the graph layer) at
once give the serial bits; the kernels' own threads are deterministic for float16 and strided
inputs too (tests/test_ufuncs.py covers float32/float64 contiguous and 4 threads); every
kernel instruction set (PYLUCID_ISA) stays within the accuracy bounds."""
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.special

import pylucid
from pylucid import ufuncs

SQRT_PI_2 = {np.float64: np.sqrt(np.pi) / 2,
             np.longdouble: np.longdouble("0.886226925452758013649083741670572591")}
FORWARD = ["sqrt", "cube_root", "erfinv"]
BACKWARD = ["sqrt_backward", "cube_root_backward", "erfinv_backward"]
SIZES = [1, 7, 1000, 65_537, 300_000]
DTYPES = [np.float16, np.float32, np.float64, np.int32]


def _job(i):
    rng = np.random.default_rng(i)
    name = (FORWARD + BACKWARD)[i % 6]
    n = SIZES[i % len(SIZES)]
    dt = DTYPES[(i // 6) % len(DTYPES)]
    if dt == np.int32 and name in BACKWARD:
        dt = np.float32
    x = (rng.integers(0, 5, n) if dt == np.int32 else rng.uniform(-1.1, 1.1, n)).astype(dt)
    if name in BACKWARD:
        return name, (rng.standard_normal(n).astype(dt), np.abs(x) + dt(0.1))
    return name, (x,)


def _run(job):
    name, args = job
    return getattr(ufuncs, name)(*args)


def _graph(i):
    """Tensor forward + backward through all three ops; returns the leaf's gradient."""
    rng = np.random.default_rng(100 + i)
    dt = [np.float32, np.float64][i % 2]
    n = [10, 300_000, 1000][i % 3]
    t = pylucid.Tensor(rng.uniform(0.1, 0.9, n).astype(dt), requires_grad=True)
    y = (t.sqrt() + t.cube_root() * 2 + t.erfinv()).sum()
    y.backward()
    return np.concatenate([t.grad.numpy().astype(np.float64), [float(y.item())]])


def test_eight_threads_forward_and_backward_give_the_serial_bits():
    jobs = [_job(i) for i in range(48)]
    serial = [_run(j) for j in jobs]
    with np.errstate(invalid="ignore"):
        for order in (slice(None), slice(None, None, -1)):  # two schedules
            with ThreadPoolExecutor(8) as pool:
                threaded = list(pool.map(_run, jobs[order]))[order]
            for a, b in zip(serial, threaded):
                assert a.dtype == b.dtype
                np.testing.assert_array_equal(a, b)


def test_eight_threads_of_graph_forward_backward_give_the_serial_bits():
    serial = [_graph(i) for i in range(16)]
    with ThreadPoolExecutor(8) as pool:
        threaded = list(pool.map(_graph, range(16)))
    for a, b in zip(serial, threaded):
        np.testing.assert_array_equal(a, b)


def test_threads_and_kernel_threads_together():
    """Python threads while the kernels themselves use several threads."""
    before = pylucid.get_num_threads()
    try:
        jobs = [_job(i) for i in range(24)]
        pylucid.set_num_threads(1)
        serial = [_run(j) for j in jobs]
        pylucid.set_num_threads(3)
        with np.errstate(invalid="ignore"), ThreadPoolExecutor(8) as pool:
            threaded = list(pool.map(_run, jobs))
    finally:
        pylucid.set_num_threads(before)
    for a, b in zip(serial, threaded):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", FORWARD + BACKWARD)
@pytest.mark.parametrize("layout", ["float16", "strided"])
def test_kernel_thread_count_does_not_change_the_bits(name, layout):
    rng = np.random.default_rng(1)
    n = 700_001
    nargs = 1 + (name in BACKWARD)
    if layout == "float16":
        args = [rng.uniform(0.05, 0.95, n).astype(np.float16) for _ in range(nargs)]
    else:
        args = [rng.uniform(0.05, 0.95, 2 * n)[::-2] for _ in range(nargs)]
    before = pylucid.get_num_threads()
    try:
        results = []
        for k in (1, 2, 3, 8):
            pylucid.set_num_threads(k)
            results.append(getattr(ufuncs, name)(*args))
    finally:
        pylucid.set_num_threads(before)
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])


# ------------------------------------------------------------------ instruction sets

_CHILD = r"""
import json, sys
import numpy as np
from pylucid import _kernels, ufuncs
d = np.load(sys.argv[1])
out = {k: getattr(ufuncs, k.split(':')[0])(*[d[a] for a in k.split(':')[1].split(',')])
       for k in json.loads(sys.argv[2])}
np.savez(sys.argv[3], simd=np.array(_kernels.simd_level()), **out)
"""


def _isa_inputs():
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 1 << 32, 400_000, dtype=np.uint64).astype(np.uint32)
    x32 = np.concatenate([bits.view(np.float32),
                          rng.uniform(-1, 1, 200_000).astype(np.float32),
                          np.array([0, -0.0, 1, -1, np.inf, -np.inf, np.nan, 8, -27,
                                    1 - 2.0**-24, 1e-45], np.float32)])
    x64 = np.concatenate([rng.uniform(-1, 1, 200_000),
                          np.ldexp(rng.uniform(-1, 1, 200_000), rng.integers(-1074, 1024, 200_000)),
                          1 - rng.integers(1, 1 << 30, 5000) * 2.0**-53,
                          np.array([0, -0.0, 1, -1, np.inf, -np.inf, np.nan, 8, -27, 5e-324])])
    return {"x32": x32, "x64": x64,
            "g32": rng.standard_normal(x32.size).astype(np.float32),
            "g64": rng.standard_normal(x64.size)}


def _ulps(y, ref, dtype):
    info = np.finfo(dtype)
    with np.errstate(all="ignore"):
        e = np.frexp(np.abs(ref))[1].astype(np.int64) - 1
        ulp = np.ldexp(ref.dtype.type(1), np.maximum(e, info.minexp) - info.nmant)
        err = (np.abs(y.astype(ref.dtype) - ref) / ulp).astype(np.float64)
    fin = np.isfinite(ref) & np.isfinite(y)
    return np.where(fin, err, 0)


def _check_specials(y, ref, dtype):
    rounded = ref.astype(dtype)
    np.testing.assert_array_equal(np.isnan(y), np.isnan(rounded))
    sp = np.isinf(rounded) | (ref == 0)
    np.testing.assert_array_equal(y[sp], rounded[sp])
    np.testing.assert_array_equal(np.signbit(y[sp]), np.signbit(rounded[sp]))


@pytest.fixture(scope="module")
def isa_results(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("isa")
    data = _isa_inputs()
    np.savez(tmp / "in.npz", **data)
    keys = [f"{op}:x{w}" for op in FORWARD for w in (32, 64)]
    keys += [f"{op}_backward:g{w},y{op}{w}" for op in FORWARD for w in (32, 64)]
    # y for the backward: the forward through NumPy/SciPy (independent of pylucid)
    with np.errstate(all="ignore"):
        for w in (32, 64):
            x = data[f"x{w}"]
            data[f"ysqrt{w}"] = np.sqrt(np.abs(x))
            data[f"ycube_root{w}"] = np.cbrt(x)
            data[f"yerfinv{w}"] = scipy.special.erfinv(x.astype(np.float64)).astype(x.dtype)
    np.savez(tmp / "in.npz", **data)
    results = {}
    for isa in ["baseline", "avx2", None]:
        env = dict(os.environ)
        env.pop("PYLUCID_ISA", None)
        root = os.path.dirname(os.path.dirname(os.path.abspath(pylucid.__file__)))
        env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in [env.get("PYTHONPATH")] if p])
        if isa:
            env["PYLUCID_ISA"] = isa
        out = tmp / f"{isa}.npz"
        subprocess.run([sys.executable, "-c", _CHILD, str(tmp / "in.npz"), json.dumps(keys),
                        str(out)], env=env, check=True)
        results[isa or "default"] = dict(np.load(out))
    return data, results


def test_each_isa_is_the_one_asked_for(isa_results):
    _, results = isa_results
    assert str(results["baseline"]["simd"]) == "baseline"
    assert str(results["avx2"]["simd"]).startswith("avx2")


@pytest.mark.parametrize("isa", ["baseline", "avx2", "default"])
@pytest.mark.parametrize("op", FORWARD)
def test_every_isa_forward_is_within_the_bounds(isa_results, isa, op):
    data, results = isa_results
    r = results[isa]
    for w, dtype, bound in ((32, np.float32, {"sqrt": 0.5, "cube_root": 1, "erfinv": 1}),
                            (64, np.float64, {"sqrt": 0.5, "cube_root": 1, "erfinv": 4.5})):
        x, y = data[f"x{w}"], r[f"{op}:x{w}"]
        with np.errstate(all="ignore"):
            if op == "sqrt":
                ref = np.sqrt(x)
                np.testing.assert_array_equal(y, ref)  # IEEE sqrt: bit-exact
                continue
            if op == "cube_root":
                ref = np.cbrt(x.astype(np.longdouble))
            else:  # SciPy's float64 (~2.3 ULP itself: float64 bound loosened by it)
                ref = scipy.special.erfinv(x.astype(np.float64))
                ref[np.abs(x) == 1] = np.copysign(np.inf, x[np.abs(x) == 1])
                ref = np.where(x == 0, x.astype(np.float64), ref)
        _check_specials(y, ref, dtype)
        assert _ulps(y, ref, dtype).max() <= bound[op] + 1e-6, (isa, op, w)


@pytest.mark.parametrize("isa", ["baseline", "avx2", "default"])
@pytest.mark.parametrize("op", FORWARD)
def test_every_isa_backward_matches_the_formula(isa_results, isa, op):
    data, results = isa_results
    r = results[isa]
    for w, dtype, wide in ((32, np.float32, np.float64), (64, np.float64, np.longdouble)):
        g, y = data[f"g{w}"], data[f"y{op}{w}"]
        out = r[f"{op}_backward:g{w},y{op}{w}"]
        gw, yw = g.astype(wide), y.astype(wide)
        with np.errstate(all="ignore"):
            if op == "sqrt":
                ref = gw / (2 * yw)
            elif op == "cube_root":
                ref = gw / (3 * (yw * yw))
            else:  # exp(y^2) with y^2 split exactly (y = hi + lo, hi = float32(y))
                hi = np.where(np.isfinite(y), y.astype(np.float32), y).astype(wide)
                lo = np.where(np.isfinite(y), yw - hi, 0)
                tail = np.where(np.isfinite(hi), np.exp(2 * hi * lo + lo * lo), 1)
                ref = SQRT_PI_2[wide] * np.exp(hi * hi) * tail * gw
        np.testing.assert_array_equal(np.isnan(out), np.isnan(ref.astype(dtype)))
        assert _ulps(out, ref, dtype).max() <= 3, (isa, op, w)


def test_isas_agree_closely_with_each_other(isa_results):
    """Not required to be bit-identical: within 2 ULP of each other."""
    _, results = isa_results
    for key in results["default"]:
        if key == "simd":
            continue
        a, b = results["baseline"][key], results["default"][key]
        both = np.isfinite(a) & np.isfinite(b)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
        ints = np.int32 if a.dtype == np.float32 else np.int64
        diff = np.abs(a[both].view(ints) - b[both].view(ints))  # same-sign finite: ULPs apart
        assert diff.max(initial=0) <= 2, key
