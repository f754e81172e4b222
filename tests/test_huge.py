"""Arrays of more than 2^31 float32 elements (~8.6 GiB each), end to end: the kernels' int-length
(vForce-style) calls must be chunked. Marked slow (CI skips it): run with
``python -m pytest -q -m slow tests/test_huge.py``; needs ~9 GiB of free memory (~18 GiB for
the two-array backward case, skipped otherwise).

Memory is held to one array by working in place (``out=`` the input); values are a pattern that
differs along the whole array, so an element the kernels skip or misplace keeps a wrong value.
sqrt is checked on every element against ``np.sqrt``; cube_root and erfinv on every element
by a cheap inverse check (y^3 vs x, erf(y) vs x) and against the references (cbrtl, SciPy)
at both ends, around indices 2^31 and 2^32-ish boundaries of int chunks, and on 10^6 random
indices."""
import os

import numpy as np
import pytest
import scipy.special

from pylucid import ufuncs

pytestmark = pytest.mark.slow

# PYLUCID_HUGE_N: a smaller size to try the test itself quickly
N = int(os.environ.get("PYLUCID_HUGE_N", 2**31 + 2**20 + 3))
CHUNK = 1 << 26
B = min(2**31, N // 2)


def mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def need(nbytes):
    if mem_available() < nbytes + 2**30:
        pytest.skip(f"needs {nbytes / 2**30:.1f} GiB of free memory")


def values(lo, hi, i):
    """The input at indices ``i``: a ramp over [lo, hi) with a period prime to every power of
    two, so neighbouring chunks differ."""
    i = np.asarray(i, dtype=np.int64)
    return (lo + (hi - lo) * ((i * 7919) % 1_000_003) / 1_000_003).astype(np.float32)


def pattern(lo, hi, start, stop):
    return values(lo, hi, np.arange(start, stop, dtype=np.int64))


def fill(a, lo, hi):
    for s in range(0, a.size, CHUNK):
        a[s:s + CHUNK] = pattern(lo, hi, s, min(s + CHUNK, a.size))


SPOTS = np.unique(np.concatenate([
    np.arange(0, 64), np.arange(B - 64, B + 64), np.arange(N - 64, N),
    np.arange(B - 2**20 - 8, B - 2**20 + 8),  # where a 2^31 - 2^20 int chunk could end
    np.random.default_rng(0).integers(0, N, 10**6)]))


@pytest.fixture(scope="module")
def huge():
    need(N * 4)
    a = np.empty(N, np.float32)
    yield a
    del a


def ulps(y, ref):
    ref = np.asarray(ref, np.float64)
    e = np.frexp(np.abs(ref))[1] - 1
    return np.abs(y.astype(np.float64) - ref) / np.ldexp(1.0, np.maximum(e, -126) - 23)


def test_erfinv_backward_two_huge_arrays():
    """g and y both huge and contiguous (~17 GiB); out= g. First in the file: it runs before
    the module's one-array fixture exists."""
    need(2 * N * 4)
    g = np.empty(N, np.float32)
    fill(g, 0.5, 1.5)
    y = np.empty(N, np.float32)
    fill(y, -2.0, 2.0)
    ufuncs.erfinv_backward(g, y, out=g)
    for s in range(0, N, CHUNK):
        e = min(s + CHUNK, N)
        gg = pattern(0.5, 1.5, s, e).astype(np.float64)
        yy = pattern(-2.0, 2.0, s, e).astype(np.float64)
        ref = np.sqrt(np.pi) / 2 * np.exp(yy * yy) * gg
        assert ulps(g[s:e], ref).max() <= 1.0, f"chunk at {s}"
    del g, y


def test_sqrt_forward_in_place_every_element(huge):
    fill(huge, 0.0, 1e6)
    assert ufuncs.sqrt(huge, out=huge) is huge
    for s in range(0, N, CHUNK):
        x = pattern(0.0, 1e6, s, min(s + CHUNK, N))
        np.testing.assert_array_equal(huge[s:s + CHUNK], np.sqrt(x), err_msg=f"chunk at {s}")


def test_sqrt_backward_broadcast_g_in_place(huge):
    fill(huge, 0.5, 1e6)  # y
    ufuncs.sqrt_backward(np.float32(3.0), huge, out=huge)
    for s in range(0, N, CHUNK):
        y = pattern(0.5, 1e6, s, min(s + CHUNK, N)).astype(np.float64)
        ref = (3.0 / (2 * y)).astype(np.float32)
        np.testing.assert_array_equal(huge[s:s + CHUNK], ref, err_msg=f"chunk at {s}")


@pytest.mark.parametrize("op, lo, hi", [("cube_root", -1e6, 1e6), ("erfinv", -0.999, 0.999)])
def test_cube_root_and_erfinv_forward_in_place(huge, op, lo, hi):
    fill(huge, lo, hi)
    getattr(ufuncs, op)(huge, out=huge)
    for idx in np.array_split(SPOTS, 8):  # spot checks against the references
        x = values(lo, hi, idx)
        ref = (np.cbrt(x.astype(np.longdouble)) if op == "cube_root"
               else scipy.special.erfinv(x.astype(np.float64)))
        assert ulps(huge[idx], ref).max() <= 1.0
    for s in range(0, N, CHUNK):  # every element: the inverse gives x back
        y = huge[s:s + CHUNK].astype(np.float64)
        x = pattern(lo, hi, s, min(s + CHUNK, N)).astype(np.float64)
        back = y ** 3 if op == "cube_root" else scipy.special.erf(y)
        tol = 4e-7 * np.abs(x) if op == "cube_root" else 2e-7 * (1 + np.abs(y)) * np.exp(-y * y)
        assert np.all(np.abs(back - x) <= tol + 1e-30), f"chunk at {s}"
