/* erfinv and its gradient, branch-free and vectorized, after Giles ("Approximating the
 * erfinv function", GPU Computing Gems, 2011) with our own coefficients.
 *
 * With w = -log(1 - x^2):
 *   central, w < 4 (|x| < 0.9908):  erfinv(x) = x * P(w),            P(0) = sqrt(pi)/2
 *   tail,    w >= 4:                 erfinv(x) = sign(x) (s + G(s - c)), s = sqrt(w)
 * G = erfinv - s is small (|G| < 0.2), so its rounding errors barely reach the result.
 * Uniform inputs are > 99 % central, so the array is processed in blocks of
 * LUCID_ERFINV_BLOCK_*: every block runs the central path, and only blocks holding a
 * tail input (told by the largest bits of |x| in the block, which also tell whether it
 * holds a special input) run the tail path too.  Each
 * dtype computes in its own lanes: float64 stays within 2 ULP; float32 lanes, twice as
 * many per vector, would round too often for 1 ULP, so w is carried as w + wl and the
 * leading terms (sqrt(pi)/2 + c1 w; s = sqrt(w)) as two floats, the rest in plain
 * float, and the result rounds once: within 0.75 ULP (exhaustively checked).  The
 * gradient computes in double for float64; float32 in float lanes, the leading terms in
 * two floats (0.65 ULP at most over every y with g = 1, 0.76 the worst seen with other g),
 * except for the lanes of an extreme or special y or g, which keep double.  log and exp
 * are our own (exponent by bit
 * manipulation, 64-bit integer shifts and adds only, which AVX2 has).  Special inputs
 * (|x| >= 1, NaN) are classified on the bits (integer compares raise no flags), the
 * arithmetic runs on sanitized values and the results are selected, so no invalid,
 * divide-by-zero or overflow flag is raised: erfinv(+-1) = +-inf, otherwise NaN.
 *
 * Coefficients: tools/fit_erfinv.py (mpmath, Lawson iteration to the weighted minimax
 * polynomial, rounded to double or float); the comment on each table gives its fitted error.
 */

/* Horner steps: fused where that is one instruction, plain elsewhere (libm fma is slow).
 * LUCID_FMAF: a*b + c rounded once where it matters (float products are exact in double). */
#if LUCID_HAS_FMA
#define LUCID_MADD(a, b, c) fma(a, b, c)
#define LUCID_MADDF(a, b, c) fmaf(a, b, c)
#define LUCID_FMAF(a, b, c) fmaf(a, b, c)
#else
#define LUCID_MADD(a, b, c) ((a) * (b) + (c))
#define LUCID_MADDF(a, b, c) ((a) * (b) + (c))
#define LUCID_FMAF(a, b, c) ((float)((double)(a) * (b) + (c)))
#endif

/* lucid_log_c64: log(m) = 2s + s^3 sum c[k] s^2k, s = (m-1)/(m+1); max relative error 1.47e-18 */
static const double lucid_log_c64[7] = {
    0.6666666666666734, 0.3999999999941597, 0.285714287421111,
    0.22222198600347892, 0.1818356297964997, 0.15314083331551043,
    0.14795638145601145,
};
/* lucid_log_f32: log(m) = 2s + s^3 sum c[k] s^2k, s = (m-1)/(m+1); max relative error 8.23e-10 */
static const float lucid_log_f32[3] = {
    0.66666776f, 0.39977568f, 0.29871094f,
};
/* lucid_erfinv_p64: c[0] = sqrt(pi)/2 rounded down (LUCID_SQRTPI_2_LO = 0x1.4f38760a41abbp-54) */
/* lucid_erfinv_p64: erfinv(x)/x = sum c[k] w^k, w = -log(1-x^2) in [0, 4]; max relative error 1.02e-17 */
static const double lucid_erfinv_p64[20] = {
    0.8862269254527579, 0.23201366653465388, 0.011549342038297623,
    -0.0023351016420222, -0.00012804329103471176, 4.6611425222050196e-05,
    2.0200359952380895e-06, -1.0126569554656857e-06, -3.7132587950550415e-08,
    2.2600413424533145e-08, 9.292717779191218e-10, -6.463472307386907e-10,
    4.978460401783696e-11, -1.532909089485019e-11, 9.186418837195291e-12,
    -2.3973707767787456e-12, 3.473040138394692e-13, -3.0048908479499366e-14,
    1.4756499611661208e-15, -3.200579234528444e-17,
};
/* lucid_erfinv_p32: c[0] = sqrt(pi)/2 rounded down (LUCID_SQRTPI_2_LO_F = 0x1.1b4ef6aa79c3bp-25),
 * c[1] rounded before the rest was fitted around it */
/* lucid_erfinv_p32: erfinv(x)/x = sqrt(pi)/2 + c[1] w + w^2 sum c[k+2] w^k, w = -log(1-x^2) in [0, 4]; max relative error 2.19e-09 */
static const float lucid_erfinv_p32[10] = {
    0.8862269f, 0.23201363f, 0.011549793f,
    -0.0023369053f, -0.00012450587f, 4.267196e-05f,
    4.6851624e-06f, -2.1267615e-06f, 2.382057e-07f,
    -9.598823e-09f,
};
/* lucid_erfinv_g64: erfinv(x) = s + sum c[k] (s - 4)^k, s = sqrt(w) in [2, 6.01]; max relative error 1.10e-17 */
static const double lucid_erfinv_g64[31] = {
    -0.16021641864382266, 0.009494924886731563, 0.0012536038929747684,
    -0.000854043757673347, 0.0002952773864587175, -8.433749452304051e-05,
    2.134059002845926e-05, -4.57929352951795e-06, 5.857940974672891e-07,
    1.5695577332970934e-07, -1.7056438194145989e-07, 8.407897063800644e-08,
    -2.709443351804999e-08, 4.205299301768213e-09, 1.2693500558046078e-09,
    -1.2170839826704976e-09, 4.691686126046196e-10, -8.272897642121321e-11,
    -1.8893031703329597e-11, 1.6606903003594016e-11, -3.4512253442402624e-12,
    1.7363697418808934e-13, -3.527286416826725e-13, 7.559187368666691e-14,
    1.215069113413655e-13, -4.842499004366236e-14, -6.4476611489091964e-15,
    5.423694156384643e-15, -2.718235363831432e-16, -2.0119016417916411e-16,
    2.5797390873943307e-17,
};
/* lucid_erfinv_g32: erfinv(x) = s + sum c[k] (s - 3)^k, s = sqrt(w) in [2, 4]; max relative error 6.04e-09 */
static const float lucid_erfinv_g32[9] = {
    -0.167198f, 0.0026624007f, 0.0068430738f,
    -0.0034453382f, 0.001146622f, -0.0002203067f,
    -4.663574e-05f, 5.600801e-05f, -1.4222218e-05f,
};
/* lucid_exp_c64: e^r = 1 + r + r^2 sum c[k] r^k, |r| <= ln2/2; max relative error 1.07e-17 */
static const double lucid_exp_c64[10] = {
    0.5000000000000011, 0.16666666666666413, 0.04166666666653012,
    0.00833333333349446, 0.0013888888943639221, 0.00019841269506619736,
    2.4801493090095856e-05, 2.755758631427353e-06, 2.763025132583952e-07,
    2.5000085665461386e-08,
};
/* lucid_exp_c32: e^r = 1 + r + r^2 sum c[k] r^k, |r| <= ln2/2; max relative error 3.06e-09 */
static const double lucid_exp_c32[5] = {
    0.49999993446490365, 0.16666520618944275, 0.04166838830827598,
    0.008368718066805931, 0.0013814586040771673,
};

#define LUCID_HORNER(T, SFX, MADD)                                               \
    static inline T lucid_horner_##SFX(T t, const T *c, int n)                   \
    {                                                                            \
        T p = c[n - 1];                                                          \
        _Pragma("GCC unroll 32")                                                 \
        for (int k = n - 2; k >= 0; k--) p = MADD(p, t, c[k]);                   \
        return p;                                                                \
    }
LUCID_HORNER(double, f64, LUCID_MADD)
LUCID_HORNER(float, f32, LUCID_MADDF)

/* Horner in t^4 over c[r], c[r+4], ... below c[m]. */
static inline double lucid_chain4(double t4, const double *c, int r, int m)
{
    int i = (m - 1 - r) / 4 * 4 + r;
    double q = c[i];
    _Pragma("GCC unroll 8")
    for (i -= 4; i >= 0; i -= 4) q = LUCID_MADD(q, t4, c[i]);
    return q;
}

/* sum c[k] t^k for k < n.  Long polynomials: c[0] + t (c[1] + t S(t)) with S in four
 * interleaved chains in t^4, a quarter of Horner's latency; the low-order terms, which
 * carry the value, are still added last. */
static inline double lucid_poly(double t, const double *c, int n)
{
    if (n < 12) return lucid_horner_f64(t, c, n); /* short: Horner has fewer operations */
    double t2 = t * t, t4 = t2 * t2;
    const double *d = c + 2;
    int m = n - 2;
    double s = LUCID_MADD(t2, LUCID_MADD(t, lucid_chain4(t4, d, 3, m), lucid_chain4(t4, d, 2, m)),
                          LUCID_MADD(t, lucid_chain4(t4, d, 1, m), lucid_chain4(t4, d, 0, m)));
    return LUCID_MADD(t, LUCID_MADD(t, s, c[1]), c[0]);
}

static inline double lucid_from_bits(uint64_t b)
{
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static inline uint64_t lucid_to_bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

static inline float lucid_from_bits_f32(uint32_t b)
{
    float d;
    memcpy(&d, &b, sizeof d);
    return d;
}

/* Selects are written on the bits with all-ones/zero masks: given `c ? a : b` on doubles,
 * GCC (with the default -ftrapping-math) sinks the arithmetic of an arm into a branch
 * and then no longer vectorizes the loop. */
#define LUCID_MASK(I, cond) (-(I)(cond))
#define LUCID_SELECT(I, T, m, a, b)                                              \
    do {                                                                         \
        T a_ = (a), b_ = (b);                                                    \
        I ia_, ib_;                                                              \
        memcpy(&ia_, &a_, sizeof ia_);                                          \
        memcpy(&ib_, &b_, sizeof ib_);                                          \
        ia_ = (ia_ & (m)) | (ib_ & ~(m));                                        \
        memcpy(&(a), &ia_, sizeof ia_);                                         \
    } while (0)

/* ln2 split so that k * LUCID_LN2_HI is exact for |k| < 2^20. */
#define LUCID_LN2_HI 6.93147180369123816490e-01
#define LUCID_LN2_LO 1.90821492927058770002e-10

/* w = -log(u) for 0 < u = 1 - x^2 <= 1, with u = 2^k m, m in [sqrt(1/2), sqrt(2)).
 * Adding bits(1) - bits(sqrt(1/2)) makes the exponent field step at sqrt(1/2); k + 1023
 * is then a plain shift, and (k+1023) | bits(2^52) is the double 2^52 + k + 1023, so k
 * never passes through an int64 <-> double conversion (none on AVX2).
 * For k = 0, m - 1 = -x^2 is taken as nx2 = -(x*x), rounded relative to x^2 rather
 * than to 1; log(1+f) = f - (f^2/2 - s (f^2/2 + s^2 L(s^2))): f carries the result,
 * rounding errors only touch the small corrections; ln2 in two parts. */
static inline double lucid_neglog(double u, double nx2, const double *c, int n)
{
    uint64_t b = lucid_to_bits(u);
    uint64_t kb = (b + (0x3ff0000000000000u - 0x3fe6a09e667f3bcdu)) >> 52;
    double f = lucid_from_bits(b - ((kb - 1023) << 52)) - 1;
    double k = lucid_from_bits(kb | 0x4330000000000000u) - 0x1.00000000003ffp52;
    LUCID_SELECT(int64_t, double, LUCID_MASK(int64_t, kb != 1023), f, nx2);
    double s = f / (2 + f), z = s * s;
    double hfsq = 0.5 * f * f;
    double logm = f - (hfsq - s * LUCID_MADD(z, lucid_poly(z, c, n), hfsq));
    return -LUCID_MADD(k, LUCID_LN2_HI, LUCID_MADD(k, LUCID_LN2_LO, logm));
}

/* The same in float lanes for float32, w as w + *wl: k as above (int32 <-> float
 * conversions are single instructions), m - 1 = 2^-k (1 - x^2) - 1 rounded once (for
 * k = 0, relative to x^2), log(m) = 2 atanh(s) in float, and w = -k ln2 - log(m) rounded
 * once with *wl its remainder: -k ln2 to twice float precision, the fma's own remainder
 * rounded (its error is within an ULP of log(m), itself a few ULP off). */
#define LUCID_LN2_F 0x1.62e430p-1f
#define LUCID_LN2_LO_F -0x1.05c610p-29f /* ln2 - LUCID_LN2_F */
static inline float lucid_neglog_f32(float x, float *wl)
{
    uint32_t b;
    float u = LUCID_FMAF(-x, x, 1.0f);
    memcpy(&b, &u, sizeof b);
    uint32_t kb = (b + (0x3f800000u - 0x3f3504f3u)) >> 23;
    float sc = lucid_from_bits_f32((254 - kb) << 23); /* 2^-k */
    float f = LUCID_FMAF(-x, x * sc, sc - 1);
    float s = f / (2 + f), z = s * s;
    float logm = LUCID_MADDF(s * z, lucid_horner_f32(z, lucid_log_f32, 3), s + s);
    float nk = (float)(int32_t)(127 - kb), w = LUCID_FMAF(nk, LUCID_LN2_F, -logm);
    *wl = LUCID_MADDF(nk, LUCID_LN2_LO_F, LUCID_FMAF(nk, LUCID_LN2_F, -w) - logm);
    return w;
}

/* a*b - p exactly, for p = a*b rounded (and no overflow). */
static inline double lucid_mul_lo(double a, double b, double p)
{
#if LUCID_HAS_FMA
    return fma(a, b, -p);
#else
    /* Dekker: split a and b into 26-bit halves, whose products are exact unless they
     * underflow; near the subnormals the term is dropped (p is then the result; -0
     * keeps the sign of a zero sum). */
    const uint64_t hi26 = 0xfffffffff8000000u;
    double ah = lucid_from_bits(lucid_to_bits(a) & hi26), al = a - ah;
    double bh = lucid_from_bits(lucid_to_bits(b) & hi26), bl = b - bh;
    double lo = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
    int64_t pb = (int64_t)(lucid_to_bits(p) << 1 >> 1);
    LUCID_SELECT(int64_t, double, LUCID_MASK(int64_t, pb > 0x0210000000000000), lo, -0.0);
    return lo;
#endif
}

/* a*b + c with the product exact, for |c| small against a*b: fma, or its emulation
 * where fma is a slow call. */
static inline double lucid_fma(double a, double b, double c)
{
#if LUCID_HAS_FMA
    return fma(a, b, c);
#else
    double p = a * b;
    return p + (lucid_mul_lo(a, b, p) + c);
#endif
}

/* Elements per block: ~14 % of blocks of 16 uniform inputs hold a tail element.  16 fills
 * whole zmm vectors with AVX-512 (8 doubles per block left it no faster than AVX2) and
 * measured about as fast as 8 with AVX2.  The block is inlined into the array loop, which
 * then keeps its constants in registers. */
#define LUCID_ERFINV_BLOCK_f32 16
#define LUCID_ERFINV_BLOCK_f64 16
/* Streaming inputs: the hardware prefetchers alone leave a kernel this short waiting on
 * memory (10^7 elements ran ~40 % slower than in cache); fetch ahead explicitly. */
#define LUCID_ERFINV_PREFETCH 2048 /* bytes ahead */
/* sqrt(pi)/2 - c[0] > 0 (the tables' c[0] is sqrt(pi)/2 rounded down, so that the low
 * part has the sign of x and erfinv(-0) = -0): x * sqrt(pi)/2 rounds once, as
 * x * c[0] + x * (... + LO) with the first product exact. */
#define LUCID_SQRTPI_2_LO 0x1.4f38760a41abbp-54
#define LUCID_SQRTPI_2_LO_F 0x1.1b4ef6aa79c3bp-25f
#define LUCID_ERFINV_W0 4.0   /* central/tail boundary in w */
/* Bits of the least |x| of each dtype with -log(1-x^2) >= W0 (4.0000048, 4 + 2e-15):
 * tail lanes are told apart on the input bits, so that the test of a block is integer
 * compares in the lanes of the dtype. */
#define LUCID_ERFINV_XT_f32 0x3f7da510
#define LUCID_ERFINV_XT_f64 0x3fefb4a1e80d0329

/* 1 - x^2 for |x| < 1, rounded once (1 - x*x is exact where it matters, x*x >= 1/2). */
static inline double lucid_one_minus_sq(double x)
{
#if LUCID_HAS_FMA
    return fma(-x, x, 1.0);
#else
    double p = x * x;
    return (1 - p) - lucid_mul_lo(x, x, p);
#endif
}

/* float32 central: P(w) = c0 + c1 (w + wl) + w^2 R(w) as ph + pl, with ph = c0 + c1 w
 * rounded and its remainder from an fma (c0 - ph is exact), R (< 3 % of P) in float;
 * then x * (ph + pl) rounds once (scaled by 2^64 and back: exact, but lest x * pl,
 * rounded, be subnormal and cost 1/2 ULP). */
static inline float lucid_central_f32(float x, float w, float wl)
{
    const float *c = lucid_erfinv_p32;
    float ph = LUCID_FMAF(c[1], w, c[0]);
    float pl = LUCID_MADDF(c[1], wl, LUCID_FMAF(c[1], w, c[0] - ph)) +
               (w * w * lucid_horner_f32(w, c + 2, 8) + LUCID_SQRTPI_2_LO_F);
    x *= 0x1p64f;
    return LUCID_FMAF(x, ph, x * pl) * 0x1p-64f;
}

/* Per dtype: w (+ wl, float32 only) and the central result; the tail's s + ds = sqrt(w + wl)
 * to twice the precision of the lanes; M(fn): fn of the lane type. */
#define LUCID_NEGLOG_f64(x, wl)                                                  \
    (*(wl) = 0, lucid_neglog(lucid_one_minus_sq(x), -((x) * (x)), lucid_log_c64,   \
                             sizeof lucid_log_c64 / sizeof lucid_log_c64[0]))
#define LUCID_NEGLOG_f32(x, wl) lucid_neglog_f32(x, wl)
#define LUCID_CENTRAL_f64(xs, w, wl)                                             \
    lucid_fma(xs, lucid_erfinv_p64[0],                                           \
              xs * LUCID_MADD(w, lucid_poly(w, lucid_erfinv_p64 + 1,             \
                                            sizeof lucid_erfinv_p64 / sizeof lucid_erfinv_p64[0] - 1), \
                              LUCID_SQRTPI_2_LO))
#define LUCID_CENTRAL_f32(xs, w, wl) lucid_central_f32(xs, w, wl)
#define LUCID_SQRT_LO_f64(w, wl, s) /* wl = 0 */                                 \
    ((void)(wl), ((w - s * s) - lucid_mul_lo(s, s, s * s)) / (s + s))
#define LUCID_SQRT_LO_f32(w, wl, s) ((LUCID_FMAF(-s, s, w) + wl) / (s + s))
#define LUCID_POLY_f64 lucid_poly
#define LUCID_POLY_f32 lucid_horner_f32
#define LUCID_M_f64(fn) fn
#define LUCID_M_f32(fn) fn##f

/* T: the dtype, also of the lanes; I: the signed integer of its size; ONE, INF, QNAN:
 * bits of 1, inf and NaN in T; TAIL: the tail's table and TC its expansion point.
 * The remainder of n goes through a zero-padded copy so that every block has the same
 * fixed length. */
#define LUCID_ERFINV_KERNELS(T, SFX, I, ONE, INF, QNAN, TAIL, TC)                \
    /* The central path on every lane; w, wl and x kept for the tail (y may      \
     * be x).  clean: no lane is special (the caller checked): no selects. */    \
    static inline __attribute__((always_inline)) void lucid_erfinv_central_##SFX( \
        T *y, T *wv, T *lv, T *xv, const T *x, int clean)                        \
    {                                                                            \
        _Pragma("omp simd")                                                      \
        for (int j = 0; j < LUCID_ERFINV_BLOCK_##SFX; j++) {                     \
            I bits, sign, ab, in, cb;                                            \
            T xc, yj, wl, w;                                                     \
            memcpy(&bits, &x[j], sizeof bits);                                   \
            sign = bits & (I)((I)1 << (8 * sizeof(I) - 1));                      \
            ab = bits ^ sign;                                                    \
            in = clean ? (I)-1 : LUCID_MASK(I, ab < (I)ONE);                     \
            cb = bits & in; /* NaN, inf, |x| >= 1 -> 0 */                        \
            memcpy(&xc, &cb, sizeof xc);                                         \
            w = LUCID_NEGLOG_##SFX(xc, &wl);                                     \
            yj = LUCID_CENTRAL_##SFX(xc, w, wl);                                 \
            /* |x| = 1: inf of the sign of x; |x| > 1 or NaN: NaN */             \
            I eq = LUCID_MASK(I, ab == (I)ONE);                                  \
            I special = ((sign | (I)INF) & eq) | ((I)QNAN & ~eq);                \
            T sp;                                                                \
            memcpy(&sp, &special, sizeof sp);                                    \
            LUCID_SELECT(I, T, in, yj, sp);                                      \
            y[j] = yj;                                                           \
            wv[j] = w;                                                           \
            lv[j] = wl;                                                          \
            xv[j] = xc;                                                          \
        }                                                                        \
    }                                                                            \
    /* The largest bits of |x| in the block (NaN above inf) tell whether it      \
     * holds a special lane (ordinary data does not) and whether a tail lane. */ \
    static inline __attribute__((always_inline)) void lucid_erfinv_block_##SFX(  \
        T *y, const T *x)                                                        \
    {                                                                            \
        enum { B = LUCID_ERFINV_BLOCK_##SFX };                                   \
        T wv[B], lv[B], xv[B];                                                   \
        I amax = 0;                                                              \
        _Pragma("omp simd reduction(max:amax)")                                  \
        for (int j = 0; j < B; j++) {                                            \
            I ab;                                                                \
            memcpy(&ab, &x[j], sizeof ab);                                       \
            ab &= ~(I)((I)1 << (8 * sizeof(I) - 1));                             \
            amax = ab > amax ? ab : amax;                                        \
        }                                                                        \
        if (amax < (I)ONE)                                                       \
            lucid_erfinv_central_##SFX(y, wv, lv, xv, x, 1);                     \
        else                                                                     \
            lucid_erfinv_central_##SFX(y, wv, lv, xv, x, 0);                     \
        if (amax >= (I)LUCID_ERFINV_XT_##SFX) { /* specials too: harmless */     \
            _Pragma("omp simd")                                                  \
            for (int j = 0; j < B; j++) {                                        \
                /* central lanes (and specials, w = 0) run on w = W0 (no 0/0 in  \
                 * ds) and are discarded */                                      \
                I tl = LUCID_MASK(I, wv[j] >= (T)LUCID_ERFINV_W0);               \
                T w = wv[j];                                                     \
                LUCID_SELECT(I, T, tl, w, (T)LUCID_ERFINV_W0);                   \
                T s = LUCID_M_##SFX(sqrt)(w);                                    \
                T ds = LUCID_SQRT_LO_##SFX(w, lv[j], s);                         \
                T yt = LUCID_M_##SFX(copysign)(s + (ds + LUCID_POLY_##SFX(s - (T)TC, TAIL, \
                                               sizeof TAIL / sizeof TAIL[0])), xv[j]); \
                LUCID_SELECT(I, T, tl, yt, y[j]);                                \
                y[j] = yt;                                                       \
            }                                                                    \
        }                                                                        \
    }                                                                            \
    void LUCID_KERNEL(erfinv_##SFX)(T *y, const T *x, int n)                    \
    {                                                                            \
        enum { B = LUCID_ERFINV_BLOCK_##SFX, PF = LUCID_ERFINV_PREFETCH / sizeof(T) }; \
        int i = 0;                                                               \
        for (; i + B <= n; i += B) {                                             \
            for (int p = 0; p < B; p += 64 / sizeof(T)) {                        \
                LUCID_PREFETCH(x + i + p + PF, 0);                               \
                LUCID_PREFETCH(y + i + p + PF, 1);                               \
            }                                                                    \
            lucid_erfinv_block_##SFX(y + i, x + i);                              \
        }                                                                        \
        if (i < n) {                                                             \
            T buf[B] = {0};                                                      \
            memcpy(buf, x + i, (size_t)(n - i) * sizeof(T));                     \
            lucid_erfinv_block_##SFX(buf, buf);                                  \
            memcpy(y + i, buf, (size_t)(n - i) * sizeof(T));                     \
        }                                                                        \
    }

LUCID_ERFINV_KERNELS(float, f32, int32_t, 0x3f800000, 0x7f800000, 0x7fc00000,
                     lucid_erfinv_g32, 3.0)
LUCID_ERFINV_KERNELS(double, f64, int64_t, 0x3ff0000000000000, 0x7ff0000000000000,
                     0x7ff8000000000000, lucid_erfinv_g64, 4.0)

/* e^(zh + zl) for zh >= 0 (zl a small correction), overflowing to inf, NaN kept.
 * k = round(zh/ln2) comes from the 2^52 + 2^51 rounding trick, whose low bits are k, so
 * 2^(k-1) is built by integer adds and shifts alone (k <= 1024 below the overflow
 * threshold, where 2^(k-1) * 2 overflows as it should).  Beyond it the reduction is
 * meaningless and inf is selected.  `precise` (float64) reduces with ln2 in two parts; a
 * float result needs r = zh - k ln2 only to ~2^-40: one multiply-add (this loop is bound by
 * its operation count: with AVX2 0.98 -> 0.80 ns per float, in cache). */
static inline double lucid_exp_pos(double zh, double zl, const double *c, int n, int precise)
{
    double t = precise ? zh * 0x1.71547652b82fep0 + 0x1.8p52
                       : LUCID_MADD(zh, 0x1.71547652b82fep0, 0x1.8p52);
    double kd = t - 0x1.8p52;
    double scale = lucid_from_bits((lucid_to_bits(t) + 1022) << 52);
    double r = precise ? (zh - kd * LUCID_LN2_HI) - kd * LUCID_LN2_LO + zl
                       : LUCID_MADD(-kd, 0x1.62e42fefa39efp-1, zh);
    double e = (1 + LUCID_MADD(r * r, lucid_poly(r, c, n), r)) * scale * 2;
    LUCID_SELECT(int64_t, double, LUCID_MASK(int64_t, !(zh > 709.8)), e, (double)INFINITY);
    return e;
}

/* float inputs square exactly in double. */
#define lucid_sq_lo_f64(y, zh) lucid_mul_lo(y, y, zh)
#define lucid_sq_lo_f32(y, zh) 0.0

/* (sqrt(pi)/2) e^(y^2) g in double lanes, rounded once to T: float64, and the float32
 * lanes outside the fast path's range (specials included). */
#define LUCID_GRAD_DOUBLE(T, SFX, EXP)                                           \
    static inline T lucid_erfinv_grad_double_##SFX(T y, T g)                     \
    {                                                                            \
        double yi = y, zh = yi * yi;                                             \
        double e = lucid_exp_pos(zh, lucid_sq_lo_##SFX(yi, zh), EXP,             \
                                 sizeof EXP / sizeof EXP[0], sizeof(T) == 8);    \
        return (T)(0.88622692545275801 * e * (double)g);                         \
    }
LUCID_GRAD_DOUBLE(float, f32, lucid_exp_c32)
LUCID_GRAD_DOUBLE(double, f64, lucid_exp_c64)

/* lucid_grad_s32: sqrt(pi)/2 e^r = Ch (1 + r) + sum c[k] r^k, Ch = sqrt(pi)/2 rounded to float, |r| <= ln2/2; max relative error 3.00e-09 */
static const float lucid_grad_s32[7] = {
    -2.6131588e-08f, 5.585983e-09f, 0.4431134f,
    0.1477023f, 0.036927503f, 0.0074219946f,
    0.0012262556f,
};
#define LUCID_SQRTPI_2_F 0x1.c5bf8ap-1f /* Ch */
/* Fast float32 lanes (bits of |y|, |g|): y = 0 or 2^-50 <= |y| <= 6, g = 0 or
 * 2^-100 <= |g| <= 2^72, so that y^2 = h + l, g 2^k (k <= 52), the result and its parts
 * are normal and finite, and no flag but inexact is raised; other lanes run in double. */
#define LUCID_GRAD_Y_MIN 0x26800000u
#define LUCID_GRAD_Y_MAX 0x40c00000u
#define LUCID_GRAD_G_MIN 0x0d800000u
#define LUCID_GRAD_G_MAX 0x63800000u

/* (sqrt(pi)/2) e^(y^2) g for a fast lane, in float within 1 ULP: y^2 = h + l exactly,
 * h = k ln2 + r with r exact (|r| <= ln2/2; k ln2 to twice float precision in LN2_F,
 * LN2_LO_F) and c = l - k LN2_LO_F (tiny, e^c = 1 + c); C e^r = a + lo with the leading
 * Ch (1 + r) in two floats (a is offset by -2^-16 so that lo > 0: a zero g then keeps
 * its sign) and S(r) < 8 % in float; the result rounds once, from a fma of (a + lo) and
 * g 2^k (exact). */
static inline float lucid_erfinv_grad_fast_f32(float y, float g)
{
    const float ch = LUCID_SQRTPI_2_F;
    float h = y * y, l = LUCID_FMAF(y, y, -h);
    float t = LUCID_MADDF(h, 0x1.715476p0f, 0x1.8p23f); /* 2^23 + 2^22 + k */
    float kf = t - 0x1.8p23f;
    float r = LUCID_FMAF(-kf, LUCID_LN2_F, h);
    float c = LUCID_MADDF(-kf, LUCID_LN2_LO_F, l);
    float a = LUCID_FMAF(r, ch, ch - 0x1p-16f);
    float lo = LUCID_FMAF(r, ch, ch - a) + lucid_grad_s32[0];
    lo = LUCID_MADDF(lucid_horner_f32(r, lucid_grad_s32 + 1, 6), r, lo);
    lo = LUCID_MADDF(a + lo, c, lo);
    uint32_t tb;
    memcpy(&tb, &t, sizeof tb);
    float gs = g * lucid_from_bits_f32((tb << 23) + 0x3f800000u); /* g 2^k */
    return LUCID_FMAF(a, gs, lo * gs);
}

/* Bits of |y| and |g| at most ymax, gmax and, less 1, at least ymin1, gmin1 (0 less 1 is
 * all ones: above any bound, so y = 0 and g = 0 are in range). */
#define LUCID_GRAD_IN_RANGE(ymax, ymin1, gmax, gmin1)                            \
    (((ymax) <= LUCID_GRAD_Y_MAX) & ((ymin1) >= LUCID_GRAD_Y_MIN - 1) &          \
     ((gmax) <= LUCID_GRAD_G_MAX) & ((gmin1) >= LUCID_GRAD_G_MIN - 1))

static inline int32_t lucid_grad_lane_ok_f32(float y, float g)
{
    uint32_t yb, gb;
    memcpy(&yb, &y, sizeof yb);
    memcpy(&gb, &g, sizeof gb);
    yb &= 0x7fffffffu;
    gb &= 0x7fffffffu;
    return LUCID_MASK(int32_t, LUCID_GRAD_IN_RANGE(yb, yb - 1, gb, gb - 1));
}

/* Whether all of y[b:end], g[b:end] are fast lanes, from the maxima of the bits of |y|,
 * |g| and the minima of the bits less 1 (NaN is above the maxima). */
static inline int lucid_grad_block_ok_f32(const float *g, const float *y, int b, int end)
{
    uint32_t ymax = 0, gmax = 0, ymin = 0xffffffffu, gmin = 0xffffffffu;
    _Pragma("omp simd reduction(max:ymax, gmax) reduction(min:ymin, gmin)")
    for (int i = b; i < end; i++) {
        uint32_t yb, gb;
        memcpy(&yb, &y[i], sizeof yb);
        memcpy(&gb, &g[i], sizeof gb);
        yb &= 0x7fffffffu;
        gb &= 0x7fffffffu;
        ymax = yb > ymax ? yb : ymax;
        gmax = gb > gmax ? gb : gmax;
        ymin = yb - 1 < ymin ? yb - 1 : ymin;
        gmin = gb - 1 < gmin ? gb - 1 : gmin;
    }
    return LUCID_GRAD_IN_RANGE(ymax, ymin, gmax, gmin);
}

/* Per dtype: whether a block runs the fast path, and a lane of the others (float32: the
 * fast path where the lane allows it, on sanitized inputs lest it raise flags, so that a
 * lane's result does not depend on its neighbours). */
#define LUCID_GRAD_FAST_BLOCK_f64(g, y, b, end) 0
#define LUCID_GRAD_FAST_f64(yv, gv) 0.0
#define LUCID_GRAD_LANE_f64(yv, gv) lucid_erfinv_grad_double_f64(yv, gv)
#define LUCID_GRAD_FAST_BLOCK_f32(g, y, b, end) lucid_grad_block_ok_f32(g, y, b, end)
#define LUCID_GRAD_FAST_f32(yv, gv) lucid_erfinv_grad_fast_f32(yv, gv)
#define LUCID_GRAD_LANE_f32(yv, gv) lucid_erfinv_grad_lane_f32(yv, gv)
static inline float lucid_erfinv_grad_lane_f32(float y, float g)
{
    int32_t ok = lucid_grad_lane_ok_f32(y, g);
    float ys = y, gs = g;
    LUCID_SELECT(int32_t, float, ok, ys, 0.0f);
    LUCID_SELECT(int32_t, float, ok, gs, 1.0f);
    float f = lucid_erfinv_grad_fast_f32(ys, gs);
    LUCID_SELECT(int32_t, float, ok, f, lucid_erfinv_grad_double_f32(y, g));
    return f;
}

#define LUCID_ERFINV_GRAD_KERNELS(T, SFX)                                        \
    void LUCID_KERNEL(erfinv_grad_##SFX)(T *gx, const T *g, const T *y, int n)  \
    {                                                                            \
        const int blk = 1024 / (int)sizeof(T);                                   \
        for (int b = 0; b < n; b += blk) {                                       \
            int end = n - b > blk ? b + blk : n;                                 \
            LUCID_PREFETCH_BLOCK(g, end, n, blk);                                \
            LUCID_PREFETCH_BLOCK(y, end, n, blk);                                \
            if (LUCID_GRAD_FAST_BLOCK_##SFX(g, y, b, end)) {                     \
                _Pragma("omp simd")                                              \
                for (int i = b; i < end; i++)                                    \
                    gx[i] = LUCID_GRAD_FAST_##SFX(y[i], g[i]);                   \
            } else {                                                             \
                _Pragma("omp simd")                                              \
                for (int i = b; i < end; i++)                                    \
                    gx[i] = LUCID_GRAD_LANE_##SFX(y[i], g[i]);                   \
            }                                                                    \
        }                                                                        \
    }
LUCID_ERFINV_GRAD_KERNELS(float, f32)
LUCID_ERFINV_GRAD_KERNELS(double, f64)
