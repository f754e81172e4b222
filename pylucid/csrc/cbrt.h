/* Real cube root and its gradient, branch-free so that each loop vectorizes.
 *
 * |x| = m 2^(3d+rem), m in [1,2), rem in {0,1,2}, is read from the bits (subnormals
 * normalized by an exact subtraction).  For a = m 2^rem in [1,8), a degree-5 minimax
 * polynomial in the input type gives w ~ a^(-1/3) to 2^-17; then in double, with
 * e = 1 - a w^3, cbrt(a) = a w^2 (1-e)^(-2/3) is summed to O(e^4) ~ 2^-63, with no
 * division.  float rounds that once (correctly rounded on all 2^32 inputs); double
 * adds a Newton step on the residual a - y^3 computed without loss (fma, or Dekker
 * products where fma() is a libm call), so perfect cubes come out exact.  Only the
 * bits of x are used until the end: no FP flags for any input (sNaN included).
 * fma() is used where it is one instruction (the loops are bound by instruction count
 * and latency); elsewhere a*b+c, which rounds twice but only inside that error budget.
 */

#if LUCID_HAS_FMA
#define LUCID_CBRT_MAD(FMA, a, b, c) FMA(a, b, c)
#else
#define LUCID_CBRT_MAD(FMA, a, b, c) ((a) * (b) + (c))
#endif

/* c - a*b with a relative error of about 2^-53 of the result, also when it cancels. */
static inline double lucid_cbrt_fnma(double a, double b, double c)
{
#if LUCID_HAS_FMA
    return fma(-a, b, c);
#else
    /* Veltkamp splits and Dekker's exact product p + pl = a*b (exact with
     * -ffp-contract=off, and for the moderate a, b used here). */
    const double split = 134217729.0; /* 2^27 + 1 */
    double ca = split * a, ah = ca - (ca - a), al = a - ah;
    double cb = split * b, bh = cb - (cb - b), bl = b - bh;
    double p = a * b, pl = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
    return (c - p) - pl;
#endif
}

/* cbrt(a) for a in [1,8) from w ~ a^(-1/3), |w a^(1/3) - 1| < 2^-17. */
static inline double lucid_cbrt_refine(double a, double w, int exact_step)
{
    double w2 = w * w;
    double e = LUCID_CBRT_MAD(fma, -a, w2 * w, 1.0);
    double y0 = a * w2;
    double p = LUCID_CBRT_MAD(fma, e, LUCID_CBRT_MAD(fma, e, 40.0 / 81, 5.0 / 9),
                              2.0 / 3);
    double y = LUCID_CBRT_MAD(fma, y0 * e, p, y0);
    if (exact_step) {
        /* y is good to ~2^-52, so a - y^3 = (a - h y) - hl y, h + hl = y^2, loses
         * nothing; 1/(3y^2) = w^2 (1-e)^(-2/3) / 3 is only needed to 2^-26. */
        double h = y * y, hl = lucid_cbrt_fnma(-y, y, -h);
        double res = LUCID_CBRT_MAD(fma, -hl, y, lucid_cbrt_fnma(h, y, a));
        y = LUCID_CBRT_MAD(fma, res, w2 * LUCID_CBRT_MAD(fma, e, 2.0 / 9, 1.0 / 3), y);
    }
    return y;
}

/* T: the element type, I: the signed integer of its width, MANT/BIAS: its mantissa
 * bits and exponent bias, FMA: fma or fmaf, EXACT: add the residual step.
 * Selects are done on integer masks, or interpolated: GCC turns a ternary between
 * floats into a branch, which stops the vectorizer. */
#define LUCID_CBRT_KERNELS(T, SFX, I, MANT, BIAS, FMA, EXACT)                   \
    void LUCID_KERNEL(cbrt_##SFX)(T *y, const T *x, int n)                      \
    {                                                                           \
        const I one = (I)1 << MANT, inf = (I)(2 * BIAS + 1) << MANT;            \
        const I sign = (I)((I)1 << (8 * sizeof(T) - 1));                        \
        /* 1.5 2^MANT: adding it rounds to an integer, kept in the low bits */  \
        const T magic = (T)(3 * ((I)1 << (MANT - 1)));                          \
        I bmagic;                                                               \
        memcpy(&bmagic, &magic, sizeof bmagic);                                 \
        const int blk = 1024 / (int)sizeof(T);                                  \
        for (int b = 0; b < n; b += blk) {                                      \
        int end = n - b > blk ? b + blk : n;                                    \
        /* Prefetch x one 1 KiB block ahead: this loop is heavy enough that the \
         * hardware prefetcher alone leaves it waiting on DRAM (for 10^7        \
         * doubles 3.8 -> 2.1 ns/element; no change in cache). */               \
        LUCID_PREFETCH_BLOCK(x, end, n, blk);                                   \
        _Pragma("omp simd")                                                     \
        for (int i = b; i < end; i++) {                                         \
            T xi = x[i], m, ef, df, sc, r, sub;                                 \
            I ux, ua, tiny, ub, bm, e, bsc;                                     \
            memcpy(&ux, &xi, sizeof ux);                                        \
            ua = ux & ~sign;                                                    \
            /* A subnormal is its mantissa bits times 2^(1 - BIAS - MANT): get  \
             * them normalized as (2^MANT + bits) - 2^MANT, kept in range (and  \
             * free of flags) for every input; the FPU never sees x itself. */  \
            bm = (ua & (one - 1)) | (I)(BIAS + MANT) << MANT;                   \
            memcpy(&sub, &bm, sizeof sub);                                      \
            sub -= (T)((I)1 << MANT);                                           \
            memcpy(&bsc, &sub, sizeof bsc);                                     \
            tiny = -(I)(ua < one);                                              \
            ub = (ua & ~tiny) | (bsc & tiny);                                   \
            bm = (ub & (one - 1)) | (I)BIAS << MANT;                            \
            memcpy(&m, &bm, sizeof m); /* [1, 2) */                             \
            /* e = 3d + rem, d = round(e/3 - 1/3) in T via the magic constant:  \
             * AVX2 has no int64 multiply nor int64 <-> double conversion */    \
            e = (ub >> MANT) - BIAS - (tiny & (BIAS - 1 + MANT)) + bmagic;      \
            memcpy(&ef, &e, sizeof ef);                                         \
            ef -= magic;                                                        \
            df = LUCID_CBRT_MAD(FMA, ef, (T)(1.0 / 3), (T)(-1.0 / 3)) + magic;  \
            memcpy(&bsc, &df, sizeof bsc);                                      \
            bsc = (bsc - bmagic + BIAS) << MANT; /* 2^d */                      \
            memcpy(&sc, &bsc, sizeof sc);                                       \
            df -= magic;                                                        \
            T rem = LUCID_CBRT_MAD(FMA, (T)-3, df, ef);                         \
            /* Remez fit (tools/fit_cbrt.py) of m^(-1/3) on [1,2], rel. error 2^-17.4 */ \
            T s = m - (T)1.5, s2 = s * s;                                       \
            T p01 = LUCID_CBRT_MAD(FMA, s, (T)-0.19414168526214863524,          \
                                   (T)0.87358539195184494883);                  \
            T p23 = LUCID_CBRT_MAD(FMA, s, (T)-0.044371656001809044602,         \
                                   (T)0.085931648632087327454);                 \
            T p45 = LUCID_CBRT_MAD(FMA, s, (T)-0.017019020517481165716,         \
                                   (T)0.02842884935088723933);                  \
            T w = LUCID_CBRT_MAD(FMA, s2, LUCID_CBRT_MAD(FMA, s2, p45, p23), p01); \
            /* times 2^(-rem/3), and m times 2^rem: quadratics through the three \
             * values of rem */                                                 \
            T k = LUCID_CBRT_MAD(FMA, rem, (T)0.021279736489618506,             \
                                 (T)-0.22757921050551871);                      \
            w *= LUCID_CBRT_MAD(FMA, rem, k, (T)1);                             \
            m *= LUCID_CBRT_MAD(FMA, rem, rem + 1, (T)2) * (T)0.5;              \
            r = (T)lucid_cbrt_refine(m, w, EXACT) * sc;                         \
            /* +-0, +-inf return x, NaN x quieted */                            \
            I special = -(I)((ua == 0) | (ua >= inf));                          \
            I br, quiet = -(I)(ua > inf) & (one >> 1);                          \
            memcpy(&br, &r, sizeof br);                                         \
            br = ((br | (ux & sign)) & ~special) | ((ux | quiet) & special);    \
            memcpy(&y[i], &br, sizeof br);                                      \
        }                                                                       \
        }                                                                       \
    }                                                                           \
    void LUCID_KERNEL(cbrt_grad_##SFX)(T *gx, const T *g, const T *y, int n)    \
    {                                                                           \
        /* in double: float32 gets one rounding (and no overflow of 3y^2) */    \
        _Pragma("omp simd")                                                     \
        for (int i = 0; i < n; i++)                                             \
            gx[i] = (T)((double)g[i] / (3.0 * (double)y[i] * (double)y[i]));    \
    }

LUCID_CBRT_KERNELS(float, f32, int32_t, 23, 127, fmaf, 0)
LUCID_CBRT_KERNELS(double, f64, int64_t, 52, 1023, fma, 1)
