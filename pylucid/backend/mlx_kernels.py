"""Kernel sources for the MLX backend: CUDA (``mx.fast.cuda_kernel``) and Metal (``mx.fast.metal_kernel``).

Each kernel is written once and instantiated over dtypes by MLX's template arguments
(``T`` = float / __half / __nv_bfloat16 on CUDA, float / half / bfloat16_t on Metal). Every
element is converted to float32, the op is computed in float32 (erfinv's gradient in double),
and the result is rounded once to ``T``.

Only the scalar op differs between kernels: ``OPS`` maps an op name to the body of
``__device__ float pl_op(float x)`` (forward) or ``pl_op(float g, float y)`` (backward), and the
two launch skeletons below supply the memory access:

* 16-byte vector loads and stores (``uint4``: 4 float32 or 8 half/bfloat16 elements), ``U``
  of them in flight per thread, laid out so that consecutive threads touch consecutive
  16-byte words (coalesced);
* the ``n % VEC`` tail elements handled by the first threads of the grid;
* a scalar fallback when a pointer is not 16-byte aligned (an MLX array that is a view with an
  offset, e.g. ``x[1:]``, is row-contiguous but misaligned) -- a uniform branch, free when
  not taken.

The element count comes from ``x_shape[0]``: the wrapper flattens every input to 1-D (free for
contiguous arrays), so sizes never become template arguments and one compiled kernel serves
every size. Kernel names carry a hash of the source, so MLX's on-disk PTX cache
(keyed by name) can never serve a stale build of an edited kernel.
"""
import functools
import hashlib
import os
import re

import numpy

# --------------------------------------------------------------------------- CUDA

# MLX's default header already brings in cuda_fp16.h / cuda_bf16.h (for __half and
# __nv_bfloat16); NVRTC has no C library headers, so plain long long stands in for pl_i64.
CUDA_HEADER = r"""
typedef long long pl_i64;
typedef unsigned long long pl_uptr;
"""


@functools.lru_cache(maxsize=None)
def _c_source():
    """csrc/erfinv.h, read once for the tables and constants the CUDA erfinv shares with it."""
    with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "csrc", "erfinv.h")) as f:
        return f.read()


def _c_table(name):
    """The coefficients of table ``name`` in csrc/erfinv.h, as Python floats."""
    body = re.search(name + r"\[\d+\] = \{([^}]*)\}", _c_source()).group(1)
    return [float(c.strip().rstrip("f")) for c in body.split(",") if c.strip()]


def _c_define(name):
    """The value of the floating-point ``#define name`` in csrc/erfinv.h (hex or decimal)."""
    v = re.search(r"#define " + name + r" (\S+)", _c_source()).group(1).rstrip("f")
    return float.fromhex(v) if "0x" in v else float(v)


def _f32(v):
    """A float32 literal for CUDA: v rounded to float32, written exactly."""
    return f"{float(numpy.float32(v))!r}f"


def _horner(t, coeffs):
    """sum coeffs[k] t^k in float32 as nested fmaf(), highest degree innermost (as the CPU's
    lucid_horner_f32)."""
    expr = _f32(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        expr = f"fmaf({expr}, {t}, {_f32(c)})"
    return expr


def _erfinv_f32():
    """Body of pl_op(x) for erfinv: the CPU kernel's float32 algorithm (csrc/erfinv.h:
    lucid_neglog_f32, lucid_central_f32, the tail) with its tables, 0.75 ulp at most on every
    float32 input (CUDA's own erfinvf is 2.49 ulp off). Three changes make it ~15 % faster on
    an H200 (it is instruction-bound): the division in the log is the hardware reciprocal
    plus one correction (on all 2^32 inputs the same quotients as IEEE division, so the
    central path gives the CPU's results bit for bit); the tail's sqrt(w + wl) in two floats
    comes from the hardware rsqrt, whose error the low part absorbs (1,874 tail results, all
    within the same 0.75 ulp, differ from the CPU's by one ulp); |x| >= 1 and NaN are sorted
    out on the tail's branch, not on a branch of their own. NVRTC would contract a product
    into a following add: __fmul_rn marks the products the CPU rounds on their own."""
    p, g = _c_table("lucid_erfinv_p32"), _c_table("lucid_erfinv_g32")
    rcp = 'asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d));'
    rsqrt = 'asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(rs) : "f"(w));'
    return f"""// w + wl = -log(1 - x^2): 1 - x^2 = 2^k m, m in [sqrt(1/2), sqrt(2)), m - 1 rounded once
    const unsigned kb = (__float_as_uint(fmaf(-x, x, 1.0f)) + (0x3f800000u - 0x3f3504f3u)) >> 23;
    const float sc = __uint_as_float((254u - kb) << 23);  // 2^-k
    const float f = fmaf(-x, __fmul_rn(x, sc), sc - 1.0f), d = 2.0f + f;
    float r; {rcp}  // d in [1.7, 2.5]: no ftz effect
    const float s0 = __fmul_rn(f, r), s = fmaf(fmaf(-s0, d, f), r, s0), z = __fmul_rn(s, s);  // f / d
    const float logm = fmaf(__fmul_rn(s, z), {_horner("z", _c_table("lucid_log_f32"))}, s + s);
    const float nk = (float)(int)(127u - kb);
    const float w = fmaf(nk, {_f32(_c_define("LUCID_LN2_F"))}, -logm);
    const float wl = fmaf(nk, {_f32(_c_define("LUCID_LN2_LO_F"))}, fmaf(nk, {_f32(_c_define("LUCID_LN2_F"))}, -w) - logm);
    if (w < {_f32(_c_define("LUCID_ERFINV_W0"))} && fabsf(x) < 1.0f) {{  // central: x (c0 + c1 w + w^2 R(w)), c0 + c1 w in two floats
        const float ph = fmaf({_f32(p[1])}, w, {_f32(p[0])});
        const float pl = fmaf({_f32(p[1])}, wl, fmaf({_f32(p[1])}, w, {_f32(p[0])} - ph))
            + (__fmul_rn(__fmul_rn(w, w), {_horner("w", p[2:])}) + {_f32(_c_define("LUCID_SQRTPI_2_LO_F"))});
        const float xs = __fmul_rn(x, 18446744073709551616.0f);  // lest xs * pl be subnormal
        return __fmul_rn(fmaf(xs, ph, __fmul_rn(xs, pl)), 5.421010862427522e-20f);
    }}
    if (!(fabsf(x) < 1.0f))  // +-1 -> +-inf; |x| > 1, NaN -> NaN
        return fabsf(x) == 1.0f ? copysignf(__int_as_float(0x7f800000), x) : __int_as_float(0x7fc00000);
    // tail: t + G(t - 3), t + dt = sqrt(w + wl), t = w rsqrt(w) (a few ulp) and dt its remainder
    float rs; {rsqrt}  // w >= 4
    const float t = __fmul_rn(w, rs), dt = __fmul_rn(fmaf(-t, t, w) + wl, 0.5f * rs);
    return copysignf(t + (dt + {_horner("(t - 3.0f)", g)}), x);"""


# The scalar ops, all in float32 unless noted. sqrtf and cbrtf are CUDA's builtins: without
# --use_fast_math (MLX compiles custom kernels without it) sqrtf is IEEE correctly rounded and
# cbrtf within 1 ulp (CUDA Math API, accuracy tables); both keep -0, +-inf and NaN as the CPU
# kernels do (sqrt(x<0) = NaN). The backward formulas repeat the CPU kernels' expression order
# (csrc/*.h), so float32 results are bit-identical: g / (2y), g / (3 y y); erfinv's
# (sqrt(pi)/2) exp(y^2) g is evaluated in double and rounded once (within one ulp of the CPU's
# float-lane result, 0.76 ulp off at worst as measured).
CUDA_OPS = {
    "sqrt": "return sqrtf(x);",
    "cube_root": "return cbrtf(x);",
    "erfinv": _erfinv_f32(),
    "sqrt_backward": "return g / (2.0f * y);",
    "cube_root_backward": "return g / (3.0f * y * y);",
    "erfinv_backward": (
        "double yd = (double)y;\n"
        "    return (float)(0.88622692545275801 * exp(yd * yd) * (double)g);"
    ),
    # A variant the benchmark can pick instead (see bench_gpu.VARIANTS): erfinv's gradient in
    # float32 with y^2's rounding error folded back in by an fma (a few ulp, cheaper).
    "erfinv_backward_f32": (
        "float h = y * y, l = fmaf(y, y, -h), e = expf(h);\n"
        "    return 0.88622692545275801f * fmaf(e, l, e) * g;"
    ),
}

# Forward: y = op(x). Inputs: x. Output: out. Template args: T (dtype), U (16-byte loads per
# thread), CS (streaming cache hints __ldcs/__stcs, evict-first, instead of plain loads/stores).
CUDA_UNARY = r"""
    constexpr int VEC = 16 / sizeof(T);                // elements per 16-byte word
    const pl_i64 n = x_shape[0];
    const pl_i64 tid = (pl_i64)blockIdx.x * blockDim.x + threadIdx.x;
    const pl_i64 base = (pl_i64)blockIdx.x * blockDim.x * U + threadIdx.x;
    const bool aligned = ((reinterpret_cast<pl_uptr>(x) | reinterpret_cast<pl_uptr>(out)) & 15) == 0;
    if (aligned) {
        const pl_i64 nv = n / VEC;                    // whole 16-byte words
        const uint4* xv = reinterpret_cast<const uint4*>(x);
        uint4* ov = reinterpret_cast<uint4*>(out);
        uint4 buf[U];
        #pragma unroll
        for (int u = 0; u < U; ++u) {                  // all loads first: U words in flight
            const pl_i64 v = base + (pl_i64)u * blockDim.x;
            if (v < nv) buf[u] = CS ? __ldcs(xv + v) : xv[v];
        }
        #pragma unroll
        for (int u = 0; u < U; ++u) {
            const pl_i64 v = base + (pl_i64)u * blockDim.x;
            if (v < nv) {
                T* e = reinterpret_cast<T*>(&buf[u]);
                #pragma unroll
                for (int k = 0; k < VEC; ++k) e[k] = static_cast<T>(pl_op(static_cast<float>(e[k])));
                if (CS) __stcs(ov + v, buf[u]); else ov[v] = buf[u];
            }
        }
        const pl_i64 t = nv * VEC + tid;              // tail: fewer than VEC elements
        if (t < n) out[t] = static_cast<T>(pl_op(static_cast<float>(x[t])));
    } else {
        #pragma unroll
        for (int k = 0; k < U * VEC; ++k) {
            const pl_i64 i = (pl_i64)blockIdx.x * blockDim.x * U * VEC + threadIdx.x + (pl_i64)k * blockDim.x;
            if (i < n) out[i] = static_cast<T>(pl_op(static_cast<float>(x[i])));
        }
    }
"""

# Backward: out = op(g, y), one fused pass. Inputs: g, y (same shape and dtype). Output: out.
CUDA_BINARY = r"""
    constexpr int VEC = 16 / sizeof(T);
    const pl_i64 n = g_shape[0];
    const pl_i64 tid = (pl_i64)blockIdx.x * blockDim.x + threadIdx.x;
    const pl_i64 base = (pl_i64)blockIdx.x * blockDim.x * U + threadIdx.x;
    const bool aligned = ((reinterpret_cast<pl_uptr>(g) | reinterpret_cast<pl_uptr>(y)
                           | reinterpret_cast<pl_uptr>(out)) & 15) == 0;
    if (aligned) {
        const pl_i64 nv = n / VEC;
        const uint4* gv = reinterpret_cast<const uint4*>(g);
        const uint4* yv = reinterpret_cast<const uint4*>(y);
        uint4* ov = reinterpret_cast<uint4*>(out);
        uint4 gb[U], yb[U];
        #pragma unroll
        for (int u = 0; u < U; ++u) {
            const pl_i64 v = base + (pl_i64)u * blockDim.x;
            if (v < nv) { gb[u] = CS ? __ldcs(gv + v) : gv[v]; yb[u] = CS ? __ldcs(yv + v) : yv[v]; }
        }
        #pragma unroll
        for (int u = 0; u < U; ++u) {
            const pl_i64 v = base + (pl_i64)u * blockDim.x;
            if (v < nv) {
                T* ge = reinterpret_cast<T*>(&gb[u]);
                const T* ye = reinterpret_cast<const T*>(&yb[u]);
                #pragma unroll
                for (int k = 0; k < VEC; ++k)
                    ge[k] = static_cast<T>(pl_op(static_cast<float>(ge[k]), static_cast<float>(ye[k])));
                if (CS) __stcs(ov + v, gb[u]); else ov[v] = gb[u];
            }
        }
        const pl_i64 t = nv * VEC + tid;
        if (t < n) out[t] = static_cast<T>(pl_op(static_cast<float>(g[t]), static_cast<float>(y[t])));
    } else {
        #pragma unroll
        for (int k = 0; k < U * VEC; ++k) {
            const pl_i64 i = (pl_i64)blockIdx.x * blockDim.x * U * VEC + threadIdx.x + (pl_i64)k * blockDim.x;
            if (i < n) out[i] = static_cast<T>(pl_op(static_cast<float>(g[i]), static_cast<float>(y[i])));
        }
    }
"""

# --------------------------------------------------------------------------- Metal
# Metal is kept minimal (it cannot be tested in CI): one element per thread, only where MLX has
# no equal op. MSL has cbrt (precise:: for the IEEE-accurate variant); sqrt, erfinv and the
# backward formulas use MLX's own Metal ops and mx.compile, as on MLX's CPU device.
METAL_OPS = {
    "cube_root": "return metal::precise::cbrt(x);",
}

METAL_UNARY = r"""
    uint i = thread_position_in_grid.x;
    if (i < uint(x_shape[0])) out[i] = static_cast<T>(pl_op(static_cast<float>(x[i])));
"""


def _digest(*parts):
    return hashlib.sha1("\x00".join(parts).encode()).hexdigest()[:10]


def cuda_source(op):
    """(name, input_names, header, body) of the CUDA kernel for ``op``."""
    binary = "_backward" in op
    sig = "float g, float y" if binary else "float x"
    header = CUDA_HEADER + f"\n__device__ __forceinline__ float pl_op({sig}) {{\n    {CUDA_OPS[op]}\n}}\n"
    body = CUDA_BINARY if binary else CUDA_UNARY
    inputs = ["g", "y"] if binary else ["x"]
    return f"pylucid_{op}_{_digest(header, body)}", inputs, header, body


def metal_source(op):
    """(name, input_names, header, body) of the Metal kernel for ``op``."""
    header = f"\ninline float pl_op(float x) {{\n    {METAL_OPS[op]}\n}}\n"
    return f"pylucid_{op}_{_digest(header, METAL_UNARY)}", ["x"], header, METAL_UNARY
