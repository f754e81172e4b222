/* The portable kernels, compiled once per instruction set.
 *
 * _build.py builds this file once per instruction set: the baseline ISA with
 * LUCID_ISA=baseline and, on x86-64, LUCID_ISA=avx2 (-mavx2 -mfma) and LUCID_ISA=avx512
 * (x86-64-v4's AVX-512 subsets).  vforce.c picks one set at run time, so a distributed
 * wheel never needs -march=native.
 *
 * Each kernel is a plain loop under `#pragma omp simd` (built with -fopenmp-simd)
 * and -ffp-contract=off: the compiler vectorizes it, and fused multiply-adds happen
 * only where a kernel asks for them with fma(), so every ISA rounds the same way.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#ifndef LUCID_ISA
#error "LUCID_ISA must name the instruction set (baseline, avx2, avx512)"
#endif
#define LUCID_CAT2(a, b) a##_##b
#define LUCID_CAT(a, b) LUCID_CAT2(a, b)
/* LUCID_KERNEL(cbrt_f32) -> lucid_cbrt_f32_avx2 */
#define LUCID_KERNEL(name) LUCID_CAT(lucid_##name, LUCID_ISA)

/* True where fma() is one instruction; elsewhere it is an exact but slow libm call,
 * so kernels may prefer a*b+c where exactness does not matter. */
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA) || defined(__aarch64__)
#define LUCID_HAS_FMA 1
#else
#define LUCID_HAS_FMA 0
#endif

/* Explicit prefetch for the heavier kernels, whose streaming loads the hardware
 * prefetcher alone does not keep ahead of (rw: 0 read, 1 write). */
#if defined(__GNUC__)
#define LUCID_PREFETCH(p, rw) __builtin_prefetch(p, rw)
#else
#define LUCID_PREFETCH(p, rw) ((void)0)
#endif
/* Kernels that stream in blocks of BLK elements: fetch the block of P that starts at END
 * (up to element N) while the current one is computed. */
#define LUCID_PREFETCH_BLOCK(P, END, N, BLK)                                    \
    for (int pf_ = (END); pf_ < (N) && pf_ - (END) < (BLK); pf_ += 64 / (int)sizeof *(P)) \
        LUCID_PREFETCH((P) + pf_, 0)

/* For square roots and divisions, zmm instructions take twice as long as ymm ones on
 * current Intel cores, so the memory-bound sqrt kernels measured slower with 512-bit
 * vectors (10^7 doubles: 1.06 against 0.87 ns): they keep 256-bit vectors. */
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
#define LUCID_YMM __attribute__((target("prefer-vector-width=256")))
#else
#define LUCID_YMM
#endif

#include "sqrt.h"
#include "cbrt.h"
#include "erfinv.h"
