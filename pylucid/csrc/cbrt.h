/* Real cube root and its gradient, branch-free so that each loop vectorizes.
 *
 * |x| = m 2^(3q+r) with m in [1,2), r in {0,1,2}, found from the exponent bits
 * (subnormals are first scaled by 2^(3K), which leaves r unchanged).  With a = m 2^r
 * in [1,8), a minimax polynomial gives w ~ a^(-1/3) to 2^-17 in the input type; then
 * in double, with e = 1 - a w^3, cbrt(a) = a w^2 (1 - e)^(-2/3) is summed to O(e^4),
 * about 2^-63, with no division.  float rounds that once: correctly rounded on all
 * but a handful of inputs.  double adds one Newton step on the exact residual
 * a - y^3 (fma or Dekker products), so perfect cubes come out exact.  Only the
 * residual uses fma(), and its products are exact either way, so both ISA builds
 * return the same bits.
 */

/* Error-free product: a*b - p exactly, for p = fl(a*b) and a, b in [1,8). */
static inline double lucid_cbrt_prod_err(double a, double b, double p)
{
#if LUCID_HAS_FMA
    return fma(a, b, -p);
#else
    /* Veltkamp split into 26-bit halves, Dekker's product (exact with -ffp-contract=off). */
    const double split = 134217729.0; /* 2^27 + 1 */
    double ca = split * a, ah = ca - (ca - a), al = a - ah;
    double cb = split * b, bh = cb - (cb - b), bl = b - bh;
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl;
#endif
}

/* cbrt(a) for a in [1,8) from w ~ a^(-1/3), |w a^(1/3) - 1| < 2^-17. */
static inline double lucid_cbrt_refine(double a, double w, int exact_step)
{
    double w2 = w * w;
    double e = 1 - a * (w2 * w);
    double y0 = a * w2;
    double y = y0 + y0 * (e * (2.0 / 3 + e * (5.0 / 9 + e * (40.0 / 81))));
    if (exact_step) {
        /* y is good to ~2^-52; the residual a - y^3 = a - (h + hl) y is computed
         * with only tiny relative error (a - t is exact by Sterbenz), and
         * 1/(3y^2) = w^2 (1-e)^(-2/3) / 3 needs only 2^-26 here. */
        double h = y * y, hl = lucid_cbrt_prod_err(y, y, h);
        double t = h * y, tl = lucid_cbrt_prod_err(h, y, t);
        double res = ((a - t) - tl) - hl * y;
        y = y + res * (w2 * (1.0 / 3 + e * (2.0 / 9)));
    }
    return y;
}

/* T: the element type, I: the signed integer of its width, MANT/BIAS: its mantissa
 * bits and exponent bias, K: subnormals are scaled by 2^(3K), EXACT: add the final
 * residual step.  Work and exponent arithmetic stay in int32 / T until the refine. */
#define LUCID_CBRT_KERNELS(T, SFX, I, MANT, BIAS, K, EXACT)                      \
    void LUCID_KERNEL(cbrt_##SFX)(T *y, const T *x, int n)                      \
    {                                                                            \
        const I one = (I)1 << MANT, inf = (I)(2 * BIAS + 1) << MANT;            \
        const I sign = (I)((I)1 << (8 * sizeof(T) - 1));                        \
        const int32_t off = BIAS / 3 + 1; /* makes the dividend positive */     \
        _Pragma("omp simd")                                                      \
        for (int i = 0; i < n; i++) {                                            \
            T xi = x[i], a, m, ar, sc, r;                                        \
            I ux, ua, special;                                                   \
            memcpy(&ux, &xi, sizeof ux);                                         \
            ua = ux & ~sign;                                                     \
            special = -(I)((ua == 0) | (ua >= inf)); /* +-0, +-inf, NaN */       \
            ua = (ua & ~special) | (one & special); /* keep them out of the FPU */ \
            int32_t tiny = ua < one;                                             \
            /* times 2^(3K tiny), built from bits: a select here becomes a branch */ \
            I bsc = (I)(BIAS + 3 * K * tiny) << MANT;                            \
            memcpy(&a, &ua, sizeof a);                                           \
            memcpy(&sc, &bsc, sizeof sc);                                        \
            a *= sc;                                                             \
            memcpy(&ua, &a, sizeof ua);                                          \
            /* floor(E / 3) by multiply-shift, exact for 0 <= t < 2^15 */       \
            int32_t t = (int32_t)(ua >> MANT) - BIAS + 3 * off;                 \
            int32_t d = (t * 21846) >> 16, rem = t - 3 * d;                      \
            int32_t q = d - off - K * tiny;                                      \
            I um = ua & (one - 1);                                               \
            I bm = um | (I)BIAS << MANT, bar = um | (I)(BIAS + rem) << MANT;     \
            memcpy(&m, &bm, sizeof m);   /* [1, 2) */                            \
            memcpy(&ar, &bar, sizeof ar); /* [1, 8) */                           \
            T s = m - (T)1.5;                                                    \
            T w = (T)-0.017019020517481165716;                                   \
            w = w * s + (T)0.02842884935088723933;                               \
            w = w * s + (T)-0.044371656001809044602;                             \
            w = w * s + (T)0.085931648632087327454;                              \
            w = w * s + (T)-0.19414168526214863524;                              \
            w = w * s + (T)0.87358539195184494883;                               \
            /* times 2^(-rem/3), interpolated: a select here becomes a branch */ \
            w *= (T)1 + (T)rem * ((T)-0.2275792105055187 + (T)rem * (T)0.0212797364896185); \
            r = (T)lucid_cbrt_refine(ar, w, EXACT);                              \
            bsc = (I)(BIAS + q) << MANT;                                         \
            memcpy(&sc, &bsc, sizeof sc);                                        \
            r *= sc;                                                             \
            /* specials return x itself, NaN quieted; selected on the bits, as a \
             * ternary on floats gets turned into a branch */                    \
            I br, quiet = -(I)((ux & ~sign) > inf) & (one >> 1);                \
            memcpy(&br, &r, sizeof br);                                          \
            br = ((br | (ux & sign)) & ~special) | ((ux | quiet) & special);     \
            memcpy(&y[i], &br, sizeof br);                                       \
        }                                                                        \
    }                                                                            \
    void LUCID_KERNEL(cbrt_grad_##SFX)(T *gx, const T *g, const T *y, int n)    \
    {                                                                            \
        _Pragma("omp simd")                                                      \
        for (int i = 0; i < n; i++) gx[i] = g[i] / (3 * y[i] * y[i]);           \
    }

LUCID_CBRT_KERNELS(float, f32, int32_t, 23, 127, 8, 0)
LUCID_CBRT_KERNELS(double, f64, int64_t, 52, 1023, 18, 1)
