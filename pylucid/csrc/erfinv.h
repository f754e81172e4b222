/* PLACEHOLDER (being replaced by the real kernels): Newton on libm erf. */
static double lucid_erfinv_slow(double x)
{
    if (!(fabs(x) <= 1)) return NAN;
    if (fabs(x) == 1) return copysign(INFINITY, x);
    double w = -log((1 - x) * (1 + x)), y = copysign(sqrt(w), x) * 0.8;
    if (fabs(x) < 0.7) y = x * 0.886226925452758;
    for (int k = 0; k < 60; k++) y -= (erf(y) - x) / (1.1283791670955126 * exp(-y * y));
    return y;
}
#define LUCID_ERFINV_KERNELS(T, SFX)                                             \
    void LUCID_KERNEL(erfinv_##SFX)(T *y, const T *x, int n)                    \
    {                                                                            \
        for (int i = 0; i < n; i++) y[i] = (T)lucid_erfinv_slow(x[i]);           \
    }                                                                            \
    void LUCID_KERNEL(erfinv_grad_##SFX)(T *gx, const T *g, const T *y, int n)  \
    {                                                                            \
        for (int i = 0; i < n; i++)                                              \
            gx[i] = (T)(0.88622692545275801 * exp((double)y[i] * y[i]) * g[i]);  \
    }
LUCID_ERFINV_KERNELS(float, f32)
LUCID_ERFINV_KERNELS(double, f64)
