# The vForce-style vector API the kernels in _kernels.pyx call, and nothing else.
#
# On macOS setup.py links Apple Accelerate, which supplies vvsqrtf/vvsqrt/vvcbrtf/vvcbrt;
# elsewhere csrc/vforce.c defines the same symbols over the package's portable kernels.
# erfinv and the gradient routines are pylucid's own on every platform.
# As in vForce, n is a pointer to int: vv_chunked below splits longer arrays.
from cython cimport floating
from libc.limits cimport INT_MAX

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

ctypedef void (*unary_f32)(float *, const float *, const int *) noexcept nogil
ctypedef void (*unary_f64)(double *, const double *, const int *) noexcept nogil
ctypedef void (*binary_f32)(float *, const float *, const float *, const int *) noexcept nogil
ctypedef void (*binary_f64)(double *, const double *, const double *, const int *) noexcept nogil


cdef inline void vv_chunked(void *kernel, floating *out, const floating *a, const floating *b,
                            Py_ssize_t n) noexcept nogil:
    """out = kernel(a) (b NULL) or kernel(a, b) over n elements, in int-sized pieces.

    kernel is one of the vv* routines above of out's precision."""
    cdef int m
    while n > 0:
        m = <int>(n if n < INT_MAX else INT_MAX)
        if floating is float:
            if b == NULL:
                (<unary_f32>kernel)(out, a, &m)
            else:
                (<binary_f32>kernel)(out, a, b, &m)
        else:
            if b == NULL:
                (<unary_f64>kernel)(out, a, &m)
            else:
                (<binary_f64>kernel)(out, a, b, &m)
        out += m
        a += m
        if b != NULL:
            b += m
        n -= m
