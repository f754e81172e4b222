"""Exhaustive / sampled accuracy verification of the kernels against independent references.

``python -m pylucid.verify [--ops ...] [--sample N] [--f64 [N]] [--backward [N]] [--workers W]
[--seed S] [--no-progress]``

* default: every one of the 2^32 float32 bit patterns through each op (``--sample N``: a random
  N of them plus the special values), against the correctly rounded float32 result: ``np.sqrt``
  in float64 (double rounding is innocuous for sqrt: 53 >= 2*24 + 2), ``cbrtl`` (NumPy
  long double) and ``scipy.special.erfinv`` in float64, each rounded once to float32. Where a
  reference lies so close to a float32 rounding midpoint that its own error could flip the
  rounding, it is settled by a more accurate tier (erfinv: long-double Newton, then mpmath;
  cube_root: mpmath).
* ``--f64 [N]``: a stratified random sample (every exponent, both signs, subnormals, erfinv's
  ends 1 - k*2^-53 and 1 - 2^-j) against long double: ``sqrtl``/``cbrtl``, and for erfinv one
  or two Newton steps in long double on glibc's ``erfl``/``erfcl`` (``erfcl(y)`` against
  ``1 - |x|`` for ``|x| > 0.5``, the series for tiny ``x``); the reference's own error against
  mpmath is measured on a few thousand points and printed.
* ``--gpu``: the float32 sweep runs through the MLX backend on MLX's GPU (pylucid's CUDA
  kernels) instead of the CPU ufuncs, against the same references.
* ``--backward [N]``: the fused backward ufuncs ``g/(2y)``, ``g/(3y^2)``,
  ``sqrt(pi)/2*exp(y^2)*g`` on random (g, y = op(x)): float32 against float64, float64 against
  long double (exp(y^2) with y^2 split exactly), with the reference checked against mpmath.

Results are printed as markdown tables (the README's accuracy table). Needs SciPy and mpmath
(the ``test`` extra) and, for the float64 erfinv reference, glibc's long-double libm.
"""
import argparse
import ctypes
import ctypes.util
import multiprocessing
import os
import sys
import time

import numpy as np

OPS = ("sqrt", "cube_root", "erfinv")
BOUND = {np.float32: {"sqrt": 0.5, "cube_root": 1.0, "erfinv": 1.0},
         np.float64: {"sqrt": 0.5, "cube_root": 1.0, "erfinv": 2.0}}
CHUNK = 1 << 22
MAX_LISTED = 50  # special-value mismatches kept per op (all are counted)
LD = np.longdouble
PI_LD = LD("3.14159265358979323846264338327950288")
SQRTPI_2_LD = LD("0.886226925452758013649083741670572591")  # sqrt(pi)/2


# ------------------------------------------------------------------------------------------
# references


def _spec(op, x, ref):
    """Overwrite ``ref`` (in place) at the special inputs with the documented semantics:
    NaN -> NaN; sqrt(+-0) = +-0, sqrt(x < 0) = NaN, sqrt(+inf) = +inf; cube_root(+-0) = +-0,
    cube_root(+-inf) = +-inf; erfinv(+-0) = +-0, erfinv(+-1) = +-inf, |x| > 1 -> NaN."""
    xr = x.astype(ref.dtype)
    if op == "sqrt":
        np.copyto(ref, np.nan, where=x < 0)
        np.copyto(ref, xr, where=(x == 0) | (x == np.inf))
    elif op == "cube_root":
        np.copyto(ref, xr, where=(x == 0) | np.isinf(x))
    else:
        np.copyto(ref, np.nan, where=np.abs(x) > 1)
        np.copyto(ref, np.copysign(np.inf, xr), where=np.abs(x) == 1)
        np.copyto(ref, xr, where=x == 0)
    np.copyto(ref, np.nan, where=np.isnan(x))
    return ref


class _LDC(ctypes.c_longdouble):
    """A c_longdouble subclass: ctypes leaves it unconverted (no rounding to a Python float)."""


_LIBM = {}


def _libm_ld(name):
    if name not in _LIBM:
        if ctypes.sizeof(ctypes.c_longdouble) != np.dtype(LD).itemsize or np.finfo(LD).nmant < 63:
            raise RuntimeError("verify: the float64 erfinv reference needs an 80-bit long double")
        lib = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        f = getattr(lib, name)
        f.restype, f.argtypes = _LDC, [ctypes.c_longdouble]
        _LIBM[name] = f
    return _LIBM[name]


def _libm_map(name, a):
    """libm's long-double ``name`` element-wise on a long-double array (one C call each)."""
    a = np.ascontiguousarray(a, dtype=LD)
    if a.size == 0:
        return a.copy()
    f = _libm_ld(name)
    buf = (_LDC * a.size).from_buffer(a)
    return np.frombuffer(b"".join([bytes(f(v)) for v in buf]), dtype=LD).copy()


def erfinv_ld(x):
    """erfinv(x) in long double for float64 ``x`` with |x| < 1 (specials per ``_spec``).

    Start from SciPy's float64 value, then Newton steps in long double: on ``erfl(y) - |x|``
    for |x| <= 0.5 and on ``erfcl(y) - (1 - |x|)`` beyond (1 - |x| is exact; near 1 erf's
    conditioning leaves erfl no digits); tiny |x| use the series. Accurate to ~1e-3 ULP of
    float64 (measured against mpmath in the tests and by ``--f64``)."""
    import scipy.special

    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    ok = a < 1
    y = np.zeros(x.shape, LD)
    y[ok] = scipy.special.erfinv(a[ok])
    al = a.astype(LD)
    tiny = ok & (a < 2.0**-24)
    t = al[tiny]
    t2 = PI_LD * t * t
    y[tiny] = SQRTPI_2_LD * t * (1 + t2 / 12 + t2 * t2 * 7 / 480)
    head = ok & ~tiny & (a <= 0.5)
    tail = ok & (a > 0.5)
    for _ in range(3):
        if not (head.any() or tail.any()):
            break
        for mask, fn in ((head, "erfl"), (tail, "erfcl")):
            yi = y[mask]
            deriv = np.exp(-yi * yi) / SQRTPI_2_LD  # erf'(y) = 2/sqrt(pi) exp(-y^2)
            if fn == "erfl":
                step = (_libm_map("erfl", yi) - al[mask]) / deriv
            else:
                step = -(_libm_map("erfcl", yi) - (1 - al[mask])) / deriv
            y[mask] = yi - step
            again = np.zeros_like(mask)
            again[mask] = np.abs(step) > np.abs(yi) * 2.0**-40  # start was poor: one more
            mask &= again
    y = np.copysign(y, x.astype(LD))
    return _spec("erfinv", x, y)


def _ref_hi(op, x64):
    """First-tier reference for float32 inputs (as float64 ``x64``): float64 or long double."""
    if op == "sqrt":
        with np.errstate(invalid="ignore"):
            return _spec(op, x64, np.sqrt(x64))
    if op == "cube_root":
        return _spec(op, x64, np.cbrt(x64.astype(LD)))
    import scipy.special

    ref = np.zeros_like(x64)
    ok = np.abs(x64) < 1
    ref[ok] = scipy.special.erfinv(x64[ok])
    return _spec(op, x64, ref)


# Half-widths (in ULPs of the result dtype) around a rounding midpoint inside which a
# reference's own error could flip the rounding: a more accurate tier settles those points.
# float32: double rounding of a correctly rounded float64 sqrt is innocuous (53 >= 2*24 + 2);
# cbrtl is good to ~1e-10 float32 ULP, SciPy's float64 erfinv to ~1e-7.  float64: the long
# double references are good to ~1e-3 ULP (measured against mpmath by --f64 and the tests).
WINDOW = {np.float32: {"sqrt": None, "cube_root": 1e-6, "erfinv": 1e-3},
          np.float64: {"sqrt": 4e-3, "cube_root": 4e-3, "erfinv": 6e-3}}


def _mp_value(op, x):
    import mpmath

    x = mpmath.mpf(float(x))
    if op == "sqrt":
        return mpmath.sqrt(x)
    if op == "cube_root":
        return mpmath.sign(x) * mpmath.cbrt(abs(x))
    if op == "erfinv":
        return mpmath.erfinv(x)
    raise ValueError(op)


def _mp_round(v, cand, dtype):
    """The float of ``dtype`` nearest to mpf ``v`` among ``cand`` and its two neighbours."""
    import mpmath

    c = dtype(cand)
    options = [np.nextafter(c, dtype(-np.inf)), c, np.nextafter(c, dtype(np.inf))]
    dist = [abs(mpmath.mpf(float(o)) - v) for o in options]
    return options[min(range(3), key=dist.__getitem__)]  # no ties: no exact midpoints here


def _ulp(r, dtype):
    """Spacing of ``dtype`` in the binade of |r| (subnormal spacing below the normals), in
    r's own precision (float64 or long double)."""
    info = np.finfo(dtype)
    r = np.asarray(r)
    if r.dtype not in (np.float64, LD):
        r = r.astype(np.float64)
    e = np.frexp(np.abs(r))[1].astype(np.int64) - 1
    return np.ldexp(r.dtype.type(1), np.maximum(e, info.minexp) - info.nmant)


def ld_to_mpf(v):
    """A long double (or float) as an exact mpmath number."""
    import mpmath

    m, e = np.frexp(LD(v))
    return mpmath.mpf(int(np.ldexp(m, 64))) * mpmath.mpf(2) ** (int(e) - 64)


def _settle(op, x64, ref, dtype):
    """Correctly rounded ``dtype`` values from the reference ``ref`` (float64 or long double),
    near-midpoint ones settled by a better tier; returns (cr, ref, number sent to mpmath)."""
    import mpmath

    cr = ref.astype(dtype)
    window = WINDOW[dtype][op]
    if window is None:
        return cr, ref, 0
    fin = np.isfinite(cr) & (ref != 0)
    with np.errstate(invalid="ignore"):
        dist = (np.abs(ref - cr.astype(ref.dtype)) / _ulp(ref, dtype)).astype(np.float64)
    near = np.flatnonzero(fin & (0.5 - dist < window))
    if near.size == 0:
        return cr, ref, 0
    ref = ref.copy()
    if op == "erfinv" and dtype == np.float32:  # second tier: the long-double Newton reference
        r2 = erfinv_ld(x64[near])
        c2 = r2.astype(dtype)
        d2 = (np.abs(r2 - c2.astype(LD)) / _ulp(r2, dtype)).astype(np.float64)
        cr[near], ref[near] = c2, r2.astype(ref.dtype)
        near = near[0.5 - d2 < 1e-6]
    with mpmath.workprec(128):
        for i in near:  # last tier: mpmath
            v = _mp_value(op, x64[i])
            cr[i] = _mp_round(v, cr[i], dtype)
            ref[i] = ref.dtype.type(mpmath.nstr(v, 40)) if ref.dtype == LD else float(v)
    return cr, ref, near.size


# ------------------------------------------------------------------------------------------
# comparison


def _compare(x_bits, y, cr, ref, dtype):
    """Statistics of result ``y`` against the correctly rounded ``cr`` and precise ``ref``."""
    nan_r, nan_y = np.isnan(cr), np.isnan(y)
    special = nan_r | nan_y | np.isinf(cr) | np.isinf(y) | (ref == 0)
    good_special = (nan_r & nan_y) | ((y == cr) & (np.signbit(y) == np.signbit(cr)))
    bad = np.flatnonzero(special & ~good_special)
    reg = ~special
    refr = ref[reg]
    err = (np.abs(y[reg].astype(ref.dtype) - refr) / _ulp(refr, dtype)).astype(np.float64)
    res = {"n": int(y.size), "max_err": 0.0, "worst": None, "n_off": 0,
           "n_special_bad": int(bad.size),
           "special_bad": [(int(x_bits[i]), float(y[i]), float(cr[i])) for i in bad[:MAX_LISTED]]}
    if err.size:
        k = int(np.argmax(err))
        res["max_err"] = float(err[k])
        res["worst"] = int(x_bits[reg][k]) if x_bits is not None else None
        res["n_off"] = int(np.count_nonzero(y[reg] != cr[reg]))
    return res


def _merge(a, b):
    if a is None:
        return dict(b)
    out = dict(a)
    for k in ("n", "n_off", "n_special_bad", "n_settled"):
        out[k] = a.get(k, 0) + b.get(k, 0)
    out["special_bad"] = (a["special_bad"] + b["special_bad"])[:MAX_LISTED]
    if b["max_err"] > a["max_err"]:
        out["max_err"], out["worst"] = b["max_err"], b["worst"]
    return out


# ------------------------------------------------------------------------------------------
# float32 forward


SPECIAL32 = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001,
                      0x3F800000, 0xBF800000, 0x3F7FFFFF, 0xBF7FFFFF, 0x3F800001, 0xBF800001,
                      1, 0x80000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF,
                      0x41000000, 0xC1000000, 0x41D80000, 0x33000000], dtype=np.uint32)


def _f32_bits(task):
    kind, a, b = task[1:4]
    if kind == "range":
        return np.arange(a, b, dtype=np.uint64).astype(np.uint32)
    rng = np.random.default_rng([a, b])
    return rng.integers(0, 1 << 32, task[4], dtype=np.uint64).astype(np.uint32)


_ON_GPU = [False]  # the float32 sweep through MLX's GPU (--gpu); set in every worker


def _f32_forward(op, x):
    if _ON_GPU[0]:
        import mlx.core as mx

        from .backend import mlx as mlx_backend
        return np.array(getattr(mlx_backend, op)(mx.array(x), stream=mx.gpu))
    from . import ufuncs
    return getattr(ufuncs, op)(x)


def _f32_task(task):
    op = task[0]
    bits = _f32_bits(task) if task[1] != "bits" else task[2]
    x = bits.view(np.float32)
    with np.errstate(all="ignore"):
        y = _f32_forward(op, x)
        x64 = x.astype(np.float64)
        ref = _ref_hi(op, x64)
        cr, ref, n_settled = _settle(op, x64, ref, np.float32)
        res = _compare(bits, y, cr, ref, np.float32)
    res["n_settled"] = n_settled
    return op, res


def f32_tasks(ops, sample=None, seed=0):
    tasks = []
    for op in ops:
        tasks.append((op, "bits", SPECIAL32))
        if sample is None:
            tasks += [(op, "range", s, min(s + CHUNK, 1 << 32)) for s in range(0, 1 << 32, CHUNK)]
        else:
            tasks += [(op, "random", seed, i, min(CHUNK, sample - s))
                      for i, s in enumerate(range(0, sample, CHUNK))]
    return tasks


# ------------------------------------------------------------------------------------------
# float64 forward (stratified sample)


def f64_sample(op, n, rng):
    """``n`` stratified float64 inputs for ``op`` (plus the special values)."""
    n = max(int(n), 1)
    sign = rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(63)
    mant = rng.integers(0, 1 << 52, n, dtype=np.uint64)
    if op == "erfinv":
        expo = rng.integers(0, 1023, n, dtype=np.uint64)  # every binade of (-1, 1), subnormals
    else:
        expo = rng.integers(0, 2047, n, dtype=np.uint64)  # every finite binade
    x = (sign | (expo << np.uint64(52)) | mant).view(np.float64)
    if op == "sqrt":  # mostly non-negative: the negatives are all NaN
        x[: n * 9 // 10] = np.abs(x[: n * 9 // 10])
    if op == "erfinv":  # the ends of the domain: 1 - k*2^-53 and 1 - 2^-j
        m = n // 10
        k = np.floor(np.exp(rng.uniform(0, np.log(2.0**30), m)))
        x[:m] = np.copysign(1 - k * 2.0**-53, x[:m])
        j = np.arange(1, 54, dtype=np.float64)
        x[m:m + 106] = np.concatenate([1 - 2.0**-j, -(1 - 2.0**-j)])[: max(0, n - m)]
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 5e-324, -5e-324,
                         2.2250738585072014e-308, 1.7976931348623157e308, -1.7976931348623157e308,
                         np.nextafter(1.0, 0), -np.nextafter(1.0, 0), 1.0000000000000002, 8.0,
                         -27.0, 0.5, -0.5, 1e-300])
    return np.concatenate([specials, x])


def ref64(op, x):
    """Long-double reference for float64 inputs."""
    with np.errstate(invalid="ignore"):
        if op == "sqrt":
            return _spec(op, x, np.sqrt(x.astype(LD)))
        if op == "cube_root":
            return _spec(op, x, np.cbrt(x.astype(LD)))
    return erfinv_ld(x)


def _f64_task(task):
    from . import ufuncs

    op, seed, i, n = task
    x = f64_sample(op, n, np.random.default_rng([seed, 64, i]))
    with np.errstate(all="ignore"):
        y = getattr(ufuncs, op)(x)
        ref = ref64(op, x)
        cr, ref, n_settled = _settle(op, x, ref, np.float64)
        res = _compare(x.view(np.uint64), y, cr, ref, np.float64)
    res["n_settled"] = n_settled
    return op, res


def reference_error_vs_mpmath(op, x, ref):
    """Max |ref - exact| in ULPs of float64, for finite nonzero reference values."""
    import mpmath

    worst = 0.0
    with mpmath.workprec(160):
        for xi, ri in zip(x, ref):
            if not np.isfinite(ri) or ri == 0:
                continue
            v = _mp_value(op, xi)
            e = abs(ld_to_mpf(ri) - v)
            worst = max(worst, float(e / ld_to_mpf(_ulp(LD(ri), np.float64))))
    return worst


# ------------------------------------------------------------------------------------------
# backward


def _backward_ref(op, g, y):
    """The backward formula in a wider type: float64 for float32 g, y; long double for
    float64 (exp(y^2) with y^2 split exactly: y = yh + yl, yh = float32(y))."""
    if g.dtype == np.float32:
        g, y = g.astype(np.float64), y.astype(np.float64)
        if op == "sqrt":
            return g / (2 * y)
        if op == "cube_root":
            return g / (3 * (y * y))
        return (np.sqrt(np.pi) / 2) * np.exp(y * y) * g
    gl, yl_ = g.astype(LD), y.astype(LD)
    if op == "sqrt":
        return gl / (2 * yl_)
    if op == "cube_root":
        return gl / (3 * (yl_ * yl_))
    yh = y.astype(np.float32).astype(np.float64)
    yh[~np.isfinite(yh)] = y[~np.isfinite(yh)]  # out of float32 range: no split
    lo = np.where(np.isfinite(y), y - yh, 0).astype(LD)
    yh = yh.astype(LD)
    e = np.exp(yh * yh) * np.where(np.isfinite(yh), np.exp(2 * yh * lo + lo * lo), 1)
    return SQRTPI_2_LD * e * gl


def _mp_backward(op, g, y):
    import mpmath

    g, y = mpmath.mpf(float(g)), mpmath.mpf(float(y))
    if op == "sqrt":
        return g / (2 * y)
    if op == "cube_root":
        return g / (3 * y * y)
    return mpmath.sqrt(mpmath.pi) / 2 * mpmath.exp(y * y) * g


def backward_sample(op, dtype, n, rng):
    """Random (g, y): y = op(x) for x from random bit patterns (with specials), g random."""
    from . import ufuncs

    if dtype == np.float32:
        x = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
        gb = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    else:
        x = f64_sample(op, n, rng)[:n]
        gb = rng.integers(0, 1 << 64, n, dtype=np.uint64).view(np.float64)
    if op == "erfinv":  # keep most x inside the domain
        with np.errstate(all="ignore"):
            x = np.where(np.abs(x) > 1, x / np.float32(4e38) if dtype == np.float32 else x / 2e308,
                         x).astype(dtype)
    g = np.where(np.isfinite(gb), gb, rng.standard_normal(n)).astype(dtype)
    k = min(n, 16)
    g[:k] = np.array([0, -0.0, np.inf, -np.inf, np.nan, 1, -1, 1, 1, 1, 0, 1, 1, 0, 1, 1],
                     dtype)[:k]
    xs = ([0.5] * 5 + [0, 0, -0.0, 1, np.nan, 0, 1e-30, -1, 1, 0.5, 0.25] if op == "erfinv" else
          [4] * 5 + [0, 0, -0.0, np.inf, np.nan, 0, 1e-30, 1e30, np.inf, 0.5, 0.25])
    x[:k] = np.array(xs, dtype)[:k]
    with np.errstate(all="ignore"):
        y = getattr(ufuncs, op)(x)
    return g, y


def _bwd_task(task):
    from . import ufuncs

    op, dtype, seed, i, n = task
    dtype = np.dtype(dtype).type
    g, y = backward_sample(op, dtype, n, np.random.default_rng([seed, 7, i]))
    with np.errstate(all="ignore"):
        out = getattr(ufuncs, op + "_backward")(g, y)
        ref = _backward_ref(op, g, y)
        cr = ref.astype(dtype)
        bits = np.stack([g.view(np.uint64 if dtype == np.float64 else np.uint32),
                         y.view(np.uint64 if dtype == np.float64 else np.uint32)], 1)
        res = _compare(np.arange(n), out, cr, ref, dtype)
    if res["worst"] is not None:
        res["worst"] = tuple(int(b) for b in bits[res["worst"]])
    res["special_bad"] = [(tuple(int(b) for b in bits[j]), yv, cv)
                          for j, yv, cv in res["special_bad"]]
    return (op, np.dtype(dtype).name), res


# ------------------------------------------------------------------------------------------
# running and printing


def _progress(done, total, t0, label, stream):
    width = 40
    frac = done / total if total else 1.0
    el = time.time() - t0
    eta = el / frac - el if frac > 0 else 0
    bar = "#" * int(width * frac) + "." * (width - int(width * frac))
    stream.write(f"\r{label} [{bar}] {100 * frac:5.1f}% {el:6.0f} s elapsed, eta {eta:5.0f} s")
    stream.flush()


def run_tasks(fn, tasks, workers=1, label="verify", progress=True, weights=None):
    """Run ``fn`` over ``tasks`` (in ``workers`` processes); merge results per key."""
    results = {}
    weights = weights or [1] * len(tasks)
    total, done, t0, last = sum(weights), 0, time.time(), 0.0
    stream = sys.stderr

    def consume(it):
        nonlocal done, last
        for w, (key, res) in it:
            results[key] = _merge(results.get(key), res)
            done += w
            if progress and (time.time() - last > 0.5 or done == total):
                _progress(done, total, t0, label, stream)
                last = time.time()

    if workers <= 1:
        consume(((w, fn(t)) for w, t in zip(weights, tasks)))
    else:
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(workers, initializer=_worker_init, initargs=(_ON_GPU[0],)) as pool:
            it = pool.imap_unordered(_weighted, [(fn, w, t) for w, t in zip(weights, tasks)])
            consume(it)
    if progress:
        stream.write("\n")
        stream.flush()
    return results


def _weighted(args):
    fn, w, t = args
    return w, fn(t)


def _worker_init(on_gpu=False):
    from . import _kernels

    _kernels.set_num_threads(1)  # the processes are the parallelism
    _ON_GPU[0] = on_gpu


def _value(b, dtype):
    v = np.array([b], dtype=np.uint32 if dtype == np.float32 else np.uint64).view(dtype)[0]
    return repr(float(v)) if dtype == np.float64 else np.format_float_positional(
        v, unique=True, trim="-") if abs(v) >= 1e-4 and abs(v) < 1e6 else repr(float(v))


def _fmt_input(b, dtype):
    if b is None:
        return "-"
    if isinstance(b, tuple):
        return "g=" + _fmt_input(b[0], dtype) + ", y=" + _fmt_input(b[1], dtype)
    w = 8 if dtype == np.float32 else 16
    return f"{_value(b, dtype)} (`0x{b:0{w}x}`)"


def table(results, dtype, title, bounds=None):
    lines = [f"### {title}", "",
             "| op | dtype | points | max ULP error | worst input | > 0.5 ULP | bound | "
             "special mismatches |", "|---|---|---:|---:|---|---:|---:|---:|"]
    extra = []
    order = {op: i for i, op in enumerate(OPS)}
    for key, r in sorted(results.items(), key=lambda kv: order[kv[0] if isinstance(kv[0], str)
                                                                 else kv[0][0]]):
        op = key if isinstance(key, str) else key[0]
        bound = (BOUND[dtype] if bounds is None else bounds).get(op)
        verdict = "" if bound is None else (" ok" if r["max_err"] <= bound else " **FAIL**")
        lines.append(f"| {op} | {np.dtype(dtype).name} | {r['n']:,} | {r['max_err']:.4f} | "
                     f"{_fmt_input(r['worst'], dtype)} | {r['n_off']:,} | "
                     f"{'-' if bound is None else bound}{verdict} | {r['n_special_bad']} |")
        for b, yv, cv in r["special_bad"]:
            extra.append(f"- special mismatch {op}({_fmt_input(b, dtype)}): got {yv!r}, "
                         f"expected {cv!r}")
        if r["n_special_bad"] > len(r["special_bad"]):
            extra.append(f"- ... {r['n_special_bad'] - len(r['special_bad'])} more for {op}")
        if r.get("n_settled"):
            extra.append(f"- {op}: {r['n_settled']} near-midpoint references settled by mpmath")
    return "\n".join(lines + ([""] + extra if extra else [])) + "\n"


def verify_f32(ops=OPS, sample=None, seed=0, workers=1, progress=True):
    tasks = f32_tasks(ops, sample, seed)
    weights = [len(t[2]) if t[1] == "bits" else (t[3] - t[2] if t[1] == "range" else t[4])
               for t in tasks]
    return run_tasks(_f32_task, tasks, workers, "float32", progress, weights)


def verify_f64(ops=OPS, n=10**7, seed=0, workers=1, progress=True, chunk=10**6):
    tasks = [(op, seed, i, min(chunk, n - s))
             for op in ops for i, s in enumerate(range(0, n, chunk))]
    return run_tasks(_f64_task, tasks, workers, "float64", progress, [t[3] for t in tasks])


def verify_backward(ops=OPS, n32=10**7, n64=10**6, seed=0, workers=1, progress=True):
    tasks = [(op, dt, seed, i, min(CHUNK, n - s)) for dt, n in (("float32", n32), ("float64", n64))
             for op in ops for i, s in enumerate(range(0, n, CHUNK))]
    return run_tasks(_bwd_task, tasks, workers, "backward", progress, [t[4] for t in tasks])


def reference_check(ops=OPS, n=2000, seed=0):
    """Max error (float64 ULPs) of the long-double references against mpmath on ``n``
    stratified points per op, and of the backward references."""
    out = {}
    for op in ops:
        x = f64_sample(op, n, np.random.default_rng([seed, 99]))[:n]
        with np.errstate(all="ignore"):
            out[op] = reference_error_vs_mpmath(op, x, ref64(op, x))
    return out


def backward_reference_check(ops=OPS, n=2000, seed=0):
    import mpmath

    out = {}
    for op in ops:
        g, y = backward_sample(op, np.float64, n, np.random.default_rng([seed, 98]))
        with np.errstate(all="ignore"):
            ref = _backward_ref(op, g, y)
        worst = 0.0
        with mpmath.workprec(160):
            for gi, yi, ri in zip(g, y, ref):
                if not np.isfinite(ri) or ri == 0 or abs(ri) < 1e-300:
                    continue
                v = _mp_backward(op, gi, yi)
                e = abs(ld_to_mpf(ri) - v)
                worst = max(worst, float(e / ld_to_mpf(_ulp(LD(ri), np.float64))))
        out[op] = worst
    return out


def _failed(results, dtype):
    return any(v["max_err"] > BOUND[dtype][k] or v["n_special_bad"] for k, v in results.items())


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m pylucid.verify", description=__doc__.split("\n")[0])
    p.add_argument("--ops", nargs="+", choices=OPS, default=list(OPS))
    p.add_argument("--sample", type=int, metavar="N",
                   help="float32: a random N bit patterns instead of all 2^32")
    p.add_argument("--f64", type=int, nargs="?", const=10**7, metavar="N",
                   help="also the float64 stratified sample (default N = 10^7 per op)")
    p.add_argument("--backward", type=int, nargs="?", const=10**7, metavar="N",
                   help="also the backward kernels (N float32 points, N/10 float64 per op)")
    p.add_argument("--no-f32", action="store_true", help="skip the float32 sweep")
    p.add_argument("--gpu", action="store_true",
                   help="run the float32 sweep on MLX's GPU (pylucid's CUDA/Metal path)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-progress", action="store_true")
    a = p.parse_args(argv)
    for name in ("sample", "f64", "backward"):
        v = getattr(a, name)
        if v is not None and v < 1:
            p.error(f"--{name} needs a positive count, got {v}")
    if a.workers < 1:
        p.error(f"--workers needs a positive count, got {a.workers}")
    from . import _kernels

    prog = not a.no_progress
    if a.gpu:
        from .backend import mlx as mlx_backend
        if not (mlx_backend.available() and mlx_backend.platform(mlx_backend._mx().gpu) != "cpu"):
            p.error("--gpu needs MLX with a GPU (CUDA or Metal)")
    _ON_GPU[0] = a.gpu
    where = "MLX GPU" if a.gpu else f"kernels {_kernels.simd_level()}"
    print(f"pylucid.verify: {where}, workers {a.workers}, seed {a.seed}")
    failed = False
    if not a.no_f32:
        t = time.time()
        r = verify_f32(a.ops, a.sample, a.seed, a.workers, prog)
        what = "all 2^32 bit patterns" if a.sample is None else f"{a.sample:,} random bit patterns"
        what += " on MLX's GPU" if a.gpu else ""
        print(table(r, np.float32, f"float32, {what} ({time.time() - t:.0f} s)"))
        failed |= _failed(r, np.float32)
    if a.f64:
        t = time.time()
        r = verify_f64(a.ops, a.f64, a.seed, a.workers, prog)
        print(table(r, np.float64, f"float64, stratified sample of {a.f64:,} per op "
                                   f"({time.time() - t:.0f} s)"))
        errs = reference_check(a.ops)
        print("Reference (long double) vs mpmath, 2,000 points per op: " + ", ".join(
            f"{k} {v:.2e} ULP" for k, v in errs.items()) + "\n")
        failed |= _failed(r, np.float64)
    if a.backward:
        t = time.time()
        r = verify_backward(a.ops, a.backward, max(a.backward // 10, 1), a.seed, a.workers, prog)
        for dt in ("float32", "float64"):
            sub = {k: v for k, v in r.items() if k[1] == dt}
            n = a.backward if dt == "float32" else max(a.backward // 10, 1)
            ref = "float64" if dt == "float32" else "long double"
            print(table(sub, np.dtype(dt).type, f"backward {dt}, {n:,} random (g, y = op(x)) "
                        f"per op vs {ref} ({time.time() - t:.0f} s)", bounds={}))
        errs = backward_reference_check(a.ops)
        print("Backward float64 reference (long double) vs mpmath, 2,000 points per op: "
              + ", ".join(f"{k} {v:.2e} ULP" for k, v in errs.items()) + "\n")
        failed |= any(v["n_special_bad"] for v in r.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
