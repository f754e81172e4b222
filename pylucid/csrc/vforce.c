/* Public vForce-style entry points: pick the kernels for this CPU once, then forward.
 *
 * The per-ISA kernels take n as int, like vForce; _kernels.pyx chunks longer arrays.
 */
#include <stdlib.h>
#include <string.h>

#include "vforce.h"

#define LUCID_ALL_KERNELS(X)                                                     \
    X(sqrt_f32, unary, float) X(sqrt_f64, unary, double)                         \
    X(cbrt_f32, unary, float) X(cbrt_f64, unary, double)                         \
    X(erfinv_f32, unary, float) X(erfinv_f64, unary, double)                     \
    X(sqrt_grad_f32, binary, float) X(sqrt_grad_f64, binary, double)             \
    X(cbrt_grad_f32, binary, float) X(cbrt_grad_f64, binary, double)             \
    X(erfinv_grad_f32, binary, float) X(erfinv_grad_f64, binary, double)

/* Declarator of a kernel of each arity: NAME is a function name or (*field). */
#define LUCID_unary(NAME, T) void NAME(T *, const T *, int);
#define LUCID_binary(NAME, T) void NAME(T *, const T *, const T *, int);

#define LUCID_DECLARE(name, kind, T)                                             \
    LUCID_##kind(lucid_##name##_baseline, T) LUCID_##kind(lucid_##name##_avx2, T)          \
    LUCID_##kind(lucid_##name##_avx512, T)
LUCID_ALL_KERNELS(LUCID_DECLARE)

#define LUCID_FIELD(name, kind, T) LUCID_##kind((*name), T)
struct lucid_kernel_table { LUCID_ALL_KERNELS(LUCID_FIELD) const char *level; };

#define LUCID_ENTRY(name, kind, T) lucid_##name##_baseline,
static const struct lucid_kernel_table baseline = {LUCID_ALL_KERNELS(LUCID_ENTRY) "baseline"};

#if defined(LUCID_X86_64)
#undef LUCID_ENTRY
#define LUCID_ENTRY(name, kind, T) lucid_##name##_avx2,
static const struct lucid_kernel_table avx2 = {LUCID_ALL_KERNELS(LUCID_ENTRY) "avx2+fma"};
#undef LUCID_ENTRY
#define LUCID_ENTRY(name, kind, T) lucid_##name##_avx512,
static const struct lucid_kernel_table avx512 = {LUCID_ALL_KERNELS(LUCID_ENTRY) "avx512"};
#endif

static const struct lucid_kernel_table *table;

/* The best kernel set this CPU runs.  PYLUCID_ISA=baseline|avx2|avx512 caps it, so tests can
 * check every set on one machine (as NumPy's NPY_DISABLE_CPU_FEATURES). */
static const struct lucid_kernel_table *kernels(void)
{
    /* Benign race: every thread computes the same pointer. */
    if (!table) {
        const struct lucid_kernel_table *best = &baseline;
#if defined(LUCID_X86_64)
        const char *cap = getenv("PYLUCID_ISA");
        int allow_avx2 = !cap || strcmp(cap, "baseline") != 0;
        int allow_avx512 = allow_avx2 && (!cap || strcmp(cap, "avx2") != 0);
        __builtin_cpu_init();
        if (allow_avx2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
            best = &avx2;
        if (allow_avx512 && __builtin_cpu_supports("avx512f") &&
            __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
            __builtin_cpu_supports("avx512bw"))
            best = &avx512;
#endif
        table = best;
    }
    return table;
}

const char *lucid_simd_level(void) { return kernels()->level; }

#ifndef __APPLE__
void vvsqrtf(float *y, const float *x, const int *n) { kernels()->sqrt_f32(y, x, *n); }
void vvsqrt(double *y, const double *x, const int *n) { kernels()->sqrt_f64(y, x, *n); }
void vvcbrtf(float *y, const float *x, const int *n) { kernels()->cbrt_f32(y, x, *n); }
void vvcbrt(double *y, const double *x, const int *n) { kernels()->cbrt_f64(y, x, *n); }
#endif
void vverfinvf(float *y, const float *x, const int *n) { kernels()->erfinv_f32(y, x, *n); }
void vverfinv(double *y, const double *x, const int *n) { kernels()->erfinv_f64(y, x, *n); }

#define LUCID_GRAD(pub, field, T)                                                \
    void pub(T *gx, const T *g, const T *y, const int *n) { kernels()->field(gx, g, y, *n); }
LUCID_GRAD(vvsqrt_gradf, sqrt_grad_f32, float)
LUCID_GRAD(vvsqrt_grad, sqrt_grad_f64, double)
LUCID_GRAD(vvcbrt_gradf, cbrt_grad_f32, float)
LUCID_GRAD(vvcbrt_grad, cbrt_grad_f64, double)
LUCID_GRAD(vverfinv_gradf, erfinv_grad_f32, float)
LUCID_GRAD(vverfinv_grad, erfinv_grad_f64, double)
