# The vForce-style vector API the kernels in _kernels.pyx call, and nothing else.
#
# On macOS setup.py links Apple Accelerate, which supplies vvsqrtf/vvsqrt/vvcbrtf/vvcbrt;
# elsewhere csrc/vforce.c defines the same symbols over the package's portable kernels.
# erfinv and the gradient routines are pylucid's own on every platform.
# As in vForce, n is a pointer to int: callers chunk arrays longer than INT_MAX.

cdef extern from "vforce.h" nogil:
    void vvsqrtf(float *y, const float *x, const int *n)
    void vvsqrt(double *y, const double *x, const int *n)
    void vvcbrtf(float *y, const float *x, const int *n)
    void vvcbrt(double *y, const double *x, const int *n)
    void vverfinvf(float *y, const float *x, const int *n)
    void vverfinv(double *y, const double *x, const int *n)

    void vvsqrt_gradf(float *gx, const float *g, const float *y, const int *n)
    void vvsqrt_grad(double *gx, const double *g, const double *y, const int *n)
    void vvcbrt_gradf(float *gx, const float *g, const float *y, const int *n)
    void vvcbrt_grad(double *gx, const double *g, const double *y, const int *n)
    void vverfinv_gradf(float *gx, const float *g, const float *y, const int *n)
    void vverfinv_grad(double *gx, const double *g, const double *y, const int *n)

    const char *lucid_simd_level()
