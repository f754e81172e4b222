/* Real cube root and its gradient, branch-free so that each loop vectorizes.
 *
 * Both types start from w ~ x^(-1/3), a minimax polynomial in the mantissa m (the exponent
 * split as e = 3d + r) times a quadratic in r, and refine it in double with
 * e = 1 - a w^3: cbrt(a) = a w^2 (1-e)^(-2/3), summed as a series in e, with no division.
 * Only the bits of x are used until x is known to be harmless: no FP flags for any input
 * (sNaN included).  fma() is used where it is one instruction (the loops are bound by
 * instruction count); elsewhere a*b+c, which rounds twice but only inside the error budget.
 *
 * float: x converted to double is exact and normal (float subnormals included), and
 * x^(-1/3) fits a float, so the refinement runs on x itself, w scaled by 2^-d: no scaling
 * of x and back.  The polynomial (degree 6, 2^-20.1) gives |e| < 2^-18.4, so two terms of
 * the series leave ~2^-56 and the roundings ~2^-52, while no float's cube root comes
 * nearer than 2^-49.7 (relative) to a rounding midpoint: one rounding to float is
 * correctly rounded (checked on all 2^32 inputs).  Each block goes through two loops: the
 * bit work in float lanes, then the double part, which then converts its inputs straight
 * from memory (for 10^7 floats on AVX2 0.93 -> 0.74 ns/element against one loop).
 *
 * double: |x| = m 2^(3d+rem), m in [1,2), rem in {0,1,2} (subnormals normalized by an
 * exact subtraction); a = m 2^rem in [1,8) gets w to 2^-17 (degree 5), the series to
 * O(e^4) ~ 2^-63, then a Newton step on the residual a - y^3 computed without loss (fma,
 * or Dekker products where fma() is a libm call), so perfect cubes come out exact.
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
static inline double lucid_cbrt_refine(double a, double w)
{
    double w2 = w * w;
    double e = LUCID_CBRT_MAD(fma, -a, w2 * w, 1.0);
    double y0 = a * w2;
    double p = LUCID_CBRT_MAD(fma, e, LUCID_CBRT_MAD(fma, e, 40.0 / 81, 5.0 / 9),
                              2.0 / 3);
    double y = LUCID_CBRT_MAD(fma, y0 * e, p, y0);
    /* y is good to ~2^-52, so a - y^3 = (a - h y) - hl y, h + hl = y^2, loses
     * nothing; 1/(3y^2) = w^2 (1-e)^(-2/3) / 3 is only needed to 2^-26. */
    double h = y * y, hl = lucid_cbrt_fnma(-y, y, -h);
    double res = LUCID_CBRT_MAD(fma, -hl, y, lucid_cbrt_fnma(h, y, a));
    return LUCID_CBRT_MAD(fma, res, w2 * LUCID_CBRT_MAD(fma, e, 2.0 / 9, 1.0 / 3), y);
}

/* Selects are done on integer masks, or interpolated: GCC turns a ternary between
 * floats into a branch, which stops the vectorizer. */

/* The n <= 256 floats of one block. */
static inline void lucid_cbrt_block_f32(float *y, const float *x, int n)
{
    const float magic = 12582912.0f; /* 1.5 2^23: adding it rounds to an integer */
    float xq[256], wb[256];
    #pragma omp simd
    for (int i = 0; i < n; i++) {
        uint32_t ux, ua, bq, bt, tiny, ub, bqf, bk, bm;
        memcpy(&ux, &x[i], sizeof ux);
        ua = ux & 0x7fffffffu;
        /* x with NaN quieted, which double takes without a flag */
        bq = ux | (-(uint32_t)((int32_t)ua > 0x7f800000) & 0x400000u);
        memcpy(&xq[i], &bq, sizeof bq);
        /* a subnormal is its bits times 2^-149: as an integer converted exactly (the
         * other lanes' conversion is discarded) */
        float t = (float)(int32_t)ua;
        memcpy(&bt, &t, sizeof bt);
        tiny = -(uint32_t)((int32_t)ua < 0x800000);
        ub = (ua & ~tiny) | ((bt - (149u << 23)) & tiny);
        /* e + 1 = E - 126 = 3d + r, r in {-1,0,1}, d rounded via magic (E/3 is never
         * near a half-integer, so the float 1/3 does not matter) */
        float E = (float)((int32_t)ub >> 23);
        float qf = LUCID_CBRT_MAD(fmaf, E, 1.0f / 3, magic - 42);
        float r = LUCID_CBRT_MAD(fmaf, qf - (magic - 42), -3.0f, E);
        /* 2^((1-r)/3): the quadratic through r = -1, 0, 1; then times 2^-d (the low
         * bits of magic's pattern are zero) and the sign of x */
        float k = LUCID_CBRT_MAD(fmaf, r, LUCID_CBRT_MAD(fmaf, r, 0.033779476089226572609f,
                                                       -0.29370052598409973738f),
                                 1.2599210498948731648f);
        memcpy(&bqf, &qf, sizeof bqf);
        memcpy(&bk, &k, sizeof bk);
        bk = (bk - (bqf << 23)) ^ (ux & 0x80000000u);
        memcpy(&k, &bk, sizeof k);
        /* Remez fit (tools/fit_cbrt.py 6) of m^(-1/3) on [1,2], rel. error 2^-20.1 */
        float m, s;
        bm = (ub & 0x7fffff) | 0x3f800000;
        memcpy(&m, &bm, sizeof m);
        s = m - 1.5f;
        float w = LUCID_CBRT_MAD(fmaf, s, 0.010388406081024932428f, -0.016912946468082497636f);
        w = LUCID_CBRT_MAD(fmaf, s, w, 0.024532081651708484715f);
        w = LUCID_CBRT_MAD(fmaf, s, w, -0.044404784639577542003f);
        w = LUCID_CBRT_MAD(fmaf, s, w, 0.086297144484436440173f);
        w = LUCID_CBRT_MAD(fmaf, s, w, -0.19413961715583083584f);
        w = LUCID_CBRT_MAD(fmaf, s, w, 0.87358031082312670443f);
        wb[i] = w * k;
    }
    /* w^2 is exact; y0 = x w^2 (1 + 2^-53) only moves the result by a third of that.
     * +-0, +-inf and NaN come through as themselves, w being finite for them (for inf,
     * e and p are infinite of one sign: (y0 e) p + y0 adds infinities of one sign). */
    #pragma omp simd
    for (int i = 0; i < n; i++) {
        double a = xq[i], w = wb[i];
        double y0 = a * (w * w);
        double e = LUCID_CBRT_MAD(fma, -y0, w, 1.0);
        y[i] = (float)LUCID_CBRT_MAD(fma, y0 * e, LUCID_CBRT_MAD(fma, e, 5.0 / 9, 2.0 / 3), y0);
    }
}

/* The n <= 128 doubles of one block. */
static inline void lucid_cbrt_block_f64(double *y, const double *x, int n)
{
    const int64_t one = (int64_t)1 << 52, inf = (int64_t)2047 << 52;
    const int64_t sign = (int64_t)((uint64_t)1 << 63);
    /* 1.5 2^52: adding it rounds to an integer, kept in the low bits */
    const double magic = (double)(3 * ((int64_t)1 << 51));
    int64_t bmagic;
    memcpy(&bmagic, &magic, sizeof bmagic);
    #pragma omp simd
    for (int i = 0; i < n; i++) {
        double xi = x[i], m, ef, df, sc, r, sub;
        int64_t ux, ua, tiny, ub, bm, e, bsc;
        memcpy(&ux, &xi, sizeof ux);
        ua = ux & ~sign;
        /* A subnormal is its mantissa bits times 2^(1 - 1023 - 52): get them normalized
         * as (2^52 + bits) - 2^52, kept in range (and free of flags) for every input;
         * the FPU never sees x itself. */
        bm = (ua & (one - 1)) | (int64_t)(1023 + 52) << 52;
        memcpy(&sub, &bm, sizeof sub);
        sub -= (double)((int64_t)1 << 52);
        memcpy(&bsc, &sub, sizeof bsc);
        tiny = -(int64_t)(ua < one);
        ub = (ua & ~tiny) | (bsc & tiny);
        bm = (ub & (one - 1)) | (int64_t)1023 << 52;
        memcpy(&m, &bm, sizeof m); /* [1, 2) */
        /* e = 3d + rem, d = round(e/3 - 1/3) in double via the magic constant: AVX2 has
         * no int64 multiply nor int64 <-> double conversion */
        e = (ub >> 52) - 1023 - (tiny & (1023 - 1 + 52)) + bmagic;
        memcpy(&ef, &e, sizeof ef);
        ef -= magic;
        df = LUCID_CBRT_MAD(fma, ef, 1.0 / 3, -1.0 / 3) + magic;
        memcpy(&bsc, &df, sizeof bsc);
        bsc = (bsc - bmagic + 1023) << 52; /* 2^d */
        memcpy(&sc, &bsc, sizeof sc);
        df -= magic;
        double rem = LUCID_CBRT_MAD(fma, -3.0, df, ef);
        /* Remez fit (tools/fit_cbrt.py 5) of m^(-1/3) on [1,2], rel. error 2^-17.4 */
        double s = m - 1.5, s2 = s * s;
        double p01 = LUCID_CBRT_MAD(fma, s, -0.19414168526214863524, 0.87358539195184494883);
        double p23 = LUCID_CBRT_MAD(fma, s, -0.044371656001809044602, 0.085931648632087327454);
        double p45 = LUCID_CBRT_MAD(fma, s, -0.017019020517481165716, 0.02842884935088723933);
        double w = LUCID_CBRT_MAD(fma, s2, LUCID_CBRT_MAD(fma, s2, p45, p23), p01);
        /* times 2^(-rem/3), and m times 2^rem: quadratics through the three values of rem */
        double k = LUCID_CBRT_MAD(fma, rem, 0.021279736489618506, -0.22757921050551871);
        w *= LUCID_CBRT_MAD(fma, rem, k, 1.0);
        m *= LUCID_CBRT_MAD(fma, rem, rem + 1, 2.0) * 0.5;
        r = lucid_cbrt_refine(m, w) * sc;
        /* +-0, +-inf return x, NaN x quieted */
        int64_t special = -(int64_t)((ua == 0) | (ua >= inf));
        int64_t br, quiet = -(int64_t)(ua > inf) & (one >> 1);
        memcpy(&br, &r, sizeof br);
        br = ((br | (ux & sign)) & ~special) | ((ux | quiet) & special);
        memcpy(&y[i], &br, sizeof br);
    }
}

#define LUCID_CBRT_KERNELS(T, SFX)                                              \
    void LUCID_KERNEL(cbrt_##SFX)(T *y, const T *x, int n)                      \
    {                                                                           \
        const int blk = 1024 / (int)sizeof(T);                                  \
        for (int b = 0; b < n; b += blk) {                                      \
            int end = n - b > blk ? b + blk : n;                                \
            /* Prefetch x one 1 KiB block ahead: this loop is heavy enough that \
             * the hardware prefetcher alone leaves it waiting on DRAM (for     \
             * 10^7 doubles 3.8 -> 2.1 ns/element; no change in cache). */      \
            LUCID_PREFETCH_BLOCK(x, end, n, blk);                               \
            lucid_cbrt_block_##SFX(y + b, x + b, end - b);                      \
        }                                                                       \
    }                                                                           \
    void LUCID_KERNEL(cbrt_grad_##SFX)(T *gx, const T *g, const T *y, int n)    \
    {                                                                           \
        /* in double: float32 gets one rounding (and no overflow of 3y^2) */    \
        _Pragma("omp simd")                                                     \
        for (int i = 0; i < n; i++)                                             \
            gx[i] = (T)((double)g[i] / (3.0 * (double)y[i] * (double)y[i]));    \
    }

LUCID_CBRT_KERNELS(float, f32)
LUCID_CBRT_KERNELS(double, f64)
