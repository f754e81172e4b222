/* sqrt and its gradient.  The hardware square root is IEEE: correctly rounded,
 * sqrt(-0) = -0, sqrt(x < 0) = NaN with the invalid flag, as np.sqrt. */
#define LUCID_SQRT_KERNELS(T, SFX, SQRT)                                         \
    LUCID_YMM void LUCID_KERNEL(sqrt_##SFX)(T *y, const T *x, int n)            \
    {                                                                            \
        _Pragma("omp simd")                                                      \
        for (int i = 0; i < n; i++) y[i] = SQRT(x[i]);                           \
    }                                                                            \
    LUCID_YMM void LUCID_KERNEL(sqrt_grad_##SFX)(T *gx, const T *g, const T *y, int n) \
    {                                                                            \
        _Pragma("omp simd")                                                      \
        for (int i = 0; i < n; i++) gx[i] = g[i] / (y[i] + y[i]);               \
    }

LUCID_SQRT_KERNELS(float, f32, sqrtf)
LUCID_SQRT_KERNELS(double, f64, sqrt)
