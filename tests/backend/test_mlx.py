"""The MLX backend (pylucid.backend.mlx) against pylucid's CPU kernels and closed forms.

Every test runs on MLX's GPU when there is one (CUDA custom kernels on Linux, Metal on macOS)
and on MLX's CPU device otherwise (CI installs mlx[cpu]), like MLX's own suite: the device
comes from the ``mlx_device`` fixture (conftest.py; PYLUCID_MLX_DEVICE=cpu|gpu). The reference is
always pylucid.ufuncs on the same float32 data: sqrt exact, cube_root and erfinv within 2 ulp,
float16/bfloat16 within 1 ulp of the float32 result rounded once, float32 backward kernels
bit-identical (erfinv's within 1 ulp).
"""
import subprocess
import sys

import numpy as np
import pytest

mx = pytest.importorskip("mlx.core")

from pylucid import ufuncs  # noqa: E402
from pylucid.backend import mlx as B  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.filterwarnings("ignore::RuntimeWarning"),
              pytest.mark.usefixtures("mlx_device")]  # conftest.py: the device to run on

OPS = ("sqrt", "cube_root", "erfinv")
HALF = ("float16", "bfloat16")


def on_gpu():
    return B.platform() != "cpu"


# ------------------------------------------------------------------ helpers

def ordered(a):
    """float32 bits as integers ordered like the floats (ulp distance = difference)."""
    i = np.asarray(a, np.float32).view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def ulp_diff(a, b):
    """Element-wise ulp distance of two float32 arrays; 0 where both are NaN."""
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    both_nan = np.isnan(a) & np.isnan(b)
    d = np.abs(ordered(a) - ordered(b))
    d[both_nan] = 0
    d[np.isnan(a) ^ np.isnan(b)] = 2**31
    return d


def to_np(a):
    return np.array(a.astype(mx.float32)) if a.dtype == mx.bfloat16 else np.array(a)


def domain(op, n, seed=0):
    """float32 inputs spanning the op's domain: wide magnitudes, subnormals, near-edge values."""
    rng = np.random.default_rng(seed)
    wide = rng.standard_normal(n) * np.exp(rng.uniform(-87, 87, n))
    if op == "sqrt":
        x = np.concatenate([np.abs(wide), rng.uniform(0, 100, n), [1e-45, 1e-40, 3.4e38]])
    elif op == "cube_root":
        x = np.concatenate([wide, rng.uniform(-100, 100, n), [-1e-45, 1e-45, -3.4e38]])
    else:
        u = rng.uniform(-1, 1, n)
        tail = 1 - np.exp(rng.uniform(np.log(6e-8), 0, n))
        x = np.concatenate([u, tail, -tail, np.logspace(-40, -1, 200), [0.5, -0.999999]])
    return x.astype(np.float32)


# against pylucid.ufuncs's float32 results (erfinv: the CPU kernel's algorithm on CUDA, its
# tail's sqrt from the hardware rsqrt; MLX's own erfinv on Metal)
ULP = {"sqrt": 0, "cube_root": 2, "erfinv": {"metal": 2, "cuda": 1}.get(B.platform(), 0)}

EDGES = {
    "sqrt": ([4.0, 0.0, -0.0, np.inf, -1.0, -np.inf, np.nan, 2.0],
             [2.0, 0.0, -0.0, np.inf, np.nan, np.nan, np.nan, np.sqrt(np.float32(2))]),
    "cube_root": ([-8.0, 27.0, 0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 125.0, -0.001],
                  [-2.0, 3.0, 0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 5.0, -0.1]),
    "erfinv": ([1.0, -1.0, 0.0, -0.0, 1.5, -2.0, np.inf, np.nan],
               [np.inf, -np.inf, 0.0, -0.0, np.nan, np.nan, np.nan, np.nan]),
}


# ------------------------------------------------------------------ forward

@pytest.mark.parametrize("op", OPS)
def test_forward_float32_matches_cpu_kernels(op):
    x = domain(op, 200_000)
    y = getattr(B, op)(mx.array(x))
    assert y.dtype == mx.float32 and y.shape == x.shape
    ref32 = getattr(ufuncs, op)(x)
    d = ulp_diff(np.array(y), ref32)
    assert d.max() <= ULP[op], (op, d.max(), x[d.argmax()])
    # and against the true value (the float64 kernel): still within the bound
    ref64 = getattr(ufuncs, op)(x.astype(np.float64))
    finite = np.isfinite(ref64)
    err = np.abs(np.array(y, np.float64)[finite] - ref64[finite]) / np.spacing(
        np.abs(ref64[finite]).astype(np.float32)).astype(np.float64)
    bound = {"sqrt": 0.5, "cube_root": 1.0, "erfinv": 1.0 if B.platform() != "metal" else 2.5}
    assert err.max() <= bound[op], (op, err.max())


@pytest.mark.skipif(B.platform() == "metal", reason="Metal runs MLX's own erfinv")
def test_erfinv_float32_within_one_ulp_where_it_is_hardest():
    """Near +-1 (w = -log(1 - x^2) carried in two floats), at the central/tail boundary
    (|x| ~ 0.9908), tiny inputs around 2^-30 and subnormals (where x * pl would underflow
    without the kernel's 2^64 scaling). Central inputs give the CPU kernel's results bit for
    bit; in the tail (sqrt from the hardware rsqrt on CUDA) they may differ by one ulp."""
    one = np.float32(1)
    near_one = one - np.arange(1, 4097, dtype=np.float32) * np.float32(2**-24)
    boundary = (np.float32(0.99079).view(np.int32) + np.arange(-2000, 2000, dtype=np.int32)
                ).view(np.float32)
    tiny = np.float32(2.0**-30) * np.linspace(0.5, 2, 2001, dtype=np.float32)
    sub = np.arange(1, 2001, dtype=np.uint32).view(np.float32) * np.float32(1)
    x = np.concatenate([near_one, boundary, tiny, sub, np.float32(2.0**-126) * np.arange(1, 200)])
    x = np.concatenate([x, -x]).astype(np.float32)
    y = np.array(B.erfinv(mx.array(x)), np.float64)
    ref = ufuncs.erfinv(x.astype(np.float64))
    err = np.abs(y - ref) / np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    assert err.max() <= 1.0, (err.max(), x[err.argmax()])
    np.testing.assert_array_equal(np.signbit(y), np.signbit(x))
    bits, cpu_bits = y.astype(np.float32).view(np.int32), ufuncs.erfinv(x).view(np.int32)
    central = np.abs(x) < np.float32(0.99079)   # w = -log(1 - x^2) < 4, by a margin
    np.testing.assert_array_equal(bits[central], cpu_bits[central])
    assert np.abs(bits[~central] - cpu_bits[~central]).max() <= 1


@pytest.mark.parametrize("op", OPS)
def test_forward_edges(op):
    xs, expected = EDGES[op]
    y = np.array(getattr(B, op)(mx.array(np.float32(xs))))
    expected = np.float32(expected)
    np.testing.assert_array_equal(y, expected)
    finite = ~np.isnan(expected)
    np.testing.assert_array_equal(np.signbit(y[finite]), np.signbit(expected[finite]))
    np.testing.assert_array_equal(y, ufuncs.__dict__[op](np.float32(xs)))


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("op", OPS)
def test_forward_half_dtypes_round_once(op, dtype):
    mdt = getattr(mx, dtype)
    x = mx.array(domain(op, 20_000, seed=1)).astype(mdt)   # representable inputs
    y = getattr(B, op)(x)
    assert y.dtype == mdt
    x32 = to_np(x).astype(np.float32)
    ref = mx.array(getattr(ufuncs, op)(x32)).astype(mdt)    # float32 kernel, rounded once
    a, b = to_np(y).astype(np.float32), to_np(ref).astype(np.float32)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    if op == "sqrt":
        assert same.all()
    else:  # within one ulp of the narrow dtype (the float32 results may differ by 2 ulp)
        spacing = np.abs(to_np(ref.astype(mdt)).astype(np.float32)) * (2.0 ** -7 if dtype ==
                                                                    "bfloat16" else 2.0 ** -10)
        assert (same | (np.abs(a - b) <= spacing)).all()


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("n", [1, 3, 4, 5, 7, 8, 9, 31, 1023, 2049, 256 * 2 * 4 + 3, 70_001])
def test_sizes_and_tails(op, n):
    x = domain(op, n, seed=n)[:n]
    y = getattr(B, op)(mx.array(x))
    assert ulp_diff(np.array(y), getattr(ufuncs, op)(x)).max() <= ULP[op]


@pytest.mark.parametrize("op", OPS)
def test_views_offsets_strides(op):
    base = domain(op, 5000, seed=3)[:4099]
    xm = mx.array(base)
    ref = getattr(ufuncs, op)(base)
    f = getattr(B, op)
    for sl in (slice(1, None), slice(3, -2), slice(None, None, 3), slice(None, None, -1)):
        y = f(xm[sl])
        assert ulp_diff(np.array(y), ref[sl]).max() <= ULP[op], sl
    m = base[:4096].reshape(64, 64)
    y = f(mx.array(m).T)
    assert y.shape == (64, 64)
    assert ulp_diff(np.array(y), getattr(ufuncs, op)(m.T)).max() <= ULP[op]


@pytest.mark.parametrize("op", OPS)
def test_empty_and_scalar(op):
    f = getattr(B, op)
    assert f(mx.zeros((0, 3))).shape == (0, 3)
    y = f(mx.array(0.25))
    assert y.shape == () and y.item() == pytest.approx(float(getattr(ufuncs, op)(np.float32(0.25))))


def test_inputs_shape_and_dtype_arguments():
    assert B.sqrt([1, 4, 9]).dtype == mx.float32                  # ints: MLX's default float
    np.testing.assert_array_equal(np.array(B.sqrt(np.float32([4, 9]))), [2, 3])
    y = B.cube_root(mx.array([-8.0, 27.0]), (3, 2), "float32")    # (a, shape, dtype)
    assert y.shape == (3, 2)
    np.testing.assert_array_equal(np.array(y), [[-2, 3]] * 3)
    assert B.cube_root(mx.array([-8.0]), None, np.float16).dtype == mx.float16
    assert B.cube_root(mx.array([-8.0]), None, mx.bfloat16).dtype == mx.bfloat16
    with pytest.raises(TypeError):
        B.sqrt(mx.array([1 + 1j]))


# ------------------------------------------------------------------ backward

BACKWARD = ("sqrt_backward", "cube_root_backward", "erfinv_backward")


def backward_inputs(name, n, seed=0):
    rng = np.random.default_rng(seed)
    g = (rng.standard_normal(n) * np.exp(rng.uniform(-20, 20, n))).astype(np.float32)
    op = name[: -len("_backward")]
    y = getattr(ufuncs, op)(domain(op, n, seed)[:n])
    return g, y


@pytest.mark.parametrize("name", BACKWARD)
def test_backward_float32_matches_cpu_kernels(name):
    g, y = backward_inputs(name, 100_000)
    r = getattr(B, name)(mx.array(g), mx.array(y))
    assert r.dtype == mx.float32
    with np.errstate(all="ignore"):
        ref = getattr(ufuncs, name)(g, y)
    # sqrt: one rounding on both sides; cube_root: MLX rounds g / (3y^2) in float32 three
    # times where the CPU kernel computes in double and rounds once
    tol = {"sqrt_backward": 0, "cube_root_backward": 2, "erfinv_backward": 1}[name]
    if name == "erfinv_backward" and B.platform() == "cuda" and B.CONFIG[name][0].endswith("f32"):
        tol = 4  # the float32 variant: expf (2 ulp) with y^2's rounding error folded back in
    # against the closed form in float64, rounded once ...
    g64, y64 = g.astype(np.float64), y.astype(np.float64)
    with np.errstate(all="ignore"):
        closed = {"sqrt_backward": g64 / (2 * y64), "cube_root_backward": g64 / (3 * y64 * y64),
                  "erfinv_backward": 0.88622692545275801 * np.exp(y64 * y64) * g64}[name]
    assert ulp_diff(np.array(r), closed.astype(np.float32)).max() <= max(tol, 2)  # float32 formula
    # ... and against pylucid's CPU kernel
    assert ulp_diff(np.array(r), ref).max() <= tol


@pytest.mark.parametrize("name", BACKWARD)
def test_backward_edges(name):
    # y = 0 -> inf gradient (sqrt, cube_root); y = +-inf (erfinv at +-1) -> inf; g = 0 there -> NaN
    y0 = np.inf if name == "erfinv_backward" else 0.0
    r = np.array(getattr(B, name)(mx.array(np.float32([1.0, 0.0, -1.0])),
                                  mx.array(np.float32([y0, y0, y0]))))
    assert np.isinf(r[0]) and r[0] > 0 and np.isnan(r[1]) and np.isinf(r[2]) and r[2] < 0


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("name", BACKWARD)
def test_backward_half_dtypes(name, dtype):
    mdt = getattr(mx, dtype)
    g, y = backward_inputs(name, 10_000, seed=2)
    y = np.clip(y, -3, 3)  # keep exp(y^2) inside float16's range
    gm, ym = mx.array(g).astype(mdt), mx.array(y).astype(mdt)
    r = getattr(B, name)(gm, ym)
    assert r.dtype == mdt
    with np.errstate(all="ignore"):
        ref32 = getattr(ufuncs, name)(to_np(gm).astype(np.float32), to_np(ym).astype(np.float32))
    ref = to_np(mx.array(ref32).astype(mdt)).astype(np.float32)
    a = to_np(r).astype(np.float32)
    ok = (a == ref) | (np.isnan(a) & np.isnan(ref)) | (
        np.abs(a - ref) <= np.abs(ref) * (2.0 ** -7 if dtype == "bfloat16" else 2.0 ** -10))
    assert ok.all()


def test_backward_broadcasts_and_promotes():
    y = mx.array(np.float32([[1, 2], [4, 8]]))
    r = B.sqrt_backward(1.0, y)                       # a Python scalar keeps y's dtype
    assert r.dtype == mx.float32 and r.shape == (2, 2)
    np.testing.assert_array_equal(np.array(r), 1 / (2 * np.float32([[1, 2], [4, 8]])))
    r = B.cube_root_backward(mx.array(np.float32([1, 2])), y)
    assert r.shape == (2, 2)
    assert B.sqrt_backward(mx.array([1.0], dtype=mx.float16), y).dtype == mx.float32


# ------------------------------------------------------------------ float64

@pytest.mark.parametrize("op", OPS)
def test_float64(op):
    x = domain(op, 1000).astype(np.float64)
    if on_gpu():
        with pytest.raises(TypeError, match="MLX's GPU has no float64"):
            getattr(B, op)(mx.array(x, dtype=mx.float64))
        y = getattr(B, op)(mx.array(x, dtype=mx.float64), stream=mx.cpu)
    else:
        y = getattr(B, op)(mx.array(x, dtype=mx.float64))
    assert y.dtype == mx.float64                      # never downcast
    np.testing.assert_array_equal(np.array(y), getattr(ufuncs, op)(x))


@pytest.mark.parametrize("name", BACKWARD)
def test_float64_backward(name):
    g, y = (a.astype(np.float64) for a in backward_inputs(name, 1000))
    gm, ym = mx.array(g, dtype=mx.float64), mx.array(y, dtype=mx.float64)
    if on_gpu():
        with pytest.raises(TypeError, match="float64"):
            getattr(B, name)(gm, ym)
        return
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(np.array(getattr(B, name)(gm, ym)),
                                      getattr(ufuncs, name)(g, y))


# ------------------------------------------------------------------ the backend object

def test_backend_object_and_ops_dispatch():
    from pylucid.backend import backend_for, get_backend
    be = get_backend("gpu")
    assert be is B.BACKEND and be.name == "gpu"
    x = mx.array(np.float32([-8, 27, 0.25]))
    assert backend_for(x) is be
    import pylucid
    y = pylucid.cube_root(x)
    assert isinstance(y, mx.array)
    np.testing.assert_array_equal(np.array(y), ufuncs.cube_root(np.float32([-8, 27, 0.25])))
    assert be.ones((2, 3), mx.float16).dtype == mx.float16
    assert be.ones((2,), "float32").dtype == mx.float32
    c = be.copy(x)
    assert c is not x and np.array_equal(np.array(c), np.array(x))


@pytest.mark.skipif(not (mx.is_available(mx.gpu) and mx.cuda.is_available()), reason="needs CUDA")
def test_cuda_large_array_uses_custom_kernels():
    n = (1 << 22) + 5
    for op in OPS:
        x = domain(op, n, seed=9)[:n]
        y = getattr(B, op)(mx.array(x))
        assert ulp_diff(np.array(y), getattr(ufuncs, op)(x)).max() <= ULP[op]


@pytest.mark.skipif(not (mx.is_available(mx.gpu) and mx.cuda.is_available()), reason="needs CUDA")
@pytest.mark.parametrize("op", OPS + BACKWARD)
def test_cuda_every_kernel_variant(op):
    """Every kernel source and launch configuration the tuner may pick is correct."""
    from pylucid.bench_gpu import VARIANTS
    n = 100_003
    if op in OPS:
        x = domain(op, n, seed=5)[:n]
        args, ref = [mx.array(x)], getattr(ufuncs, op)(x)
        tol = 2 if op == "erfinv" else ULP[op]
    else:
        g, y = backward_inputs(op, n, seed=5)
        args = [mx.array(g), mx.array(y)]
        g64, y64 = g.astype(np.float64), y.astype(np.float64)
        with np.errstate(all="ignore"):
            ref = {"sqrt_backward": g64 / (2 * y64), "cube_root_backward": g64 / (3 * y64 * y64),
                   "erfinv_backward": 0.88622692545275801 * np.exp(y64 * y64) * g64}[op]
        ref = ref.astype(np.float32)
        tol = 4
    for src in VARIANTS[op]:
        for cfg in ((src, 1, 256, False), (src, 2, 128, True), (src, 1, 512, True)):
            for sl in (slice(None), slice(1, None)):          # aligned and misaligned
                r = B._run_cuda(op, [a[sl] for a in args], None, config=cfg)
                assert ulp_diff(np.array(r), ref[sl]).max() <= tol, (cfg, sl)


def test_import_without_mlx():
    """pylucid imports without MLX; the GPU backend then says how to install it."""
    code = (
        "import sys; sys.modules['mlx'] = None; sys.modules['mlx.core'] = None\n"
        "import pylucid, pylucid.backend.mlx as B\n"
        "assert not B.available()\n"
        "try:\n    B.sqrt([1.0])\nexcept RuntimeError as e:\n    assert 'pip install' in str(e), e\n"
        "else:\n    raise SystemExit('no error')\n"
        "from pylucid.backend import get_backend\n"
        "try:\n    get_backend('gpu')\nexcept RuntimeError as e:\n    assert 'mlx' in str(e), e\n"
        "else:\n    raise SystemExit('no error')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_pylucid_import_does_not_import_mlx():
    code = "import sys, pylucid; assert 'mlx' not in sys.modules, 'mlx imported eagerly'"
    subprocess.run([sys.executable, "-c", code], check=True)
