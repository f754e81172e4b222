/* PLACEHOLDER (being replaced by the real kernels): libm cbrt. */
#define LUCID_CBRT_KERNELS(T, SFX, CBRT)                                         \
    void LUCID_KERNEL(cbrt_##SFX)(T *y, const T *x, int n)                      \
    {                                                                            \
        for (int i = 0; i < n; i++) y[i] = CBRT(x[i]);                           \
    }                                                                            \
    void LUCID_KERNEL(cbrt_grad_##SFX)(T *gx, const T *g, const T *y, int n)    \
    {                                                                            \
        _Pragma("omp simd")                                                      \
        for (int i = 0; i < n; i++) gx[i] = g[i] / (3 * y[i] * y[i]);           \
    }
LUCID_CBRT_KERNELS(float, f32, cbrtf)
LUCID_CBRT_KERNELS(double, f64, cbrt)
