# cython: language_level=3
"""pylucid's C-level API: see cython_kernels.pxd.  Nothing here is callable from Python.

Each entry point forwards to the vForce-style kernels of _accelerate.pxd (the ones the
ufuncs use), in int-sized pieces because vForce counts elements with an int.
"""
from libc.limits cimport INT_MAX

from ._accelerate cimport (
    vvsqrtf, vvsqrt, vvcbrtf, vvcbrt, vverfinvf, vverfinv,
    vvsqrt_gradf, vvsqrt_grad, vvcbrt_gradf, vvcbrt_grad, vverfinv_gradf, vverfinv_grad,
)

ctypedef void (*unary_f32)(float *, const float *, const int *) noexcept nogil
ctypedef void (*unary_f64)(double *, const double *, const int *) noexcept nogil
ctypedef void (*binary_f32)(float *, const float *, const float *, const int *) noexcept nogil
ctypedef void (*binary_f64)(double *, const double *, const double *, const int *) noexcept nogil


cdef inline void unary(floating *out, const floating *x, Py_ssize_t n,
                       unary_f32 f32, unary_f64 f64) noexcept nogil:
    cdef int m
    while n > 0:
        m = <int>(n if n < INT_MAX else INT_MAX)
        if floating is float:
            f32(out, x, &m)
        else:
            f64(out, x, &m)
        out += m
        x += m
        n -= m


cdef inline void binary(floating *out, const floating *g, const floating *y, Py_ssize_t n,
                        binary_f32 f32, binary_f64 f64) noexcept nogil:
    cdef int m
    while n > 0:
        m = <int>(n if n < INT_MAX else INT_MAX)
        if floating is float:
            f32(out, g, y, &m)
        else:
            f64(out, g, y, &m)
        out += m
        g += m
        y += m
        n -= m


cdef void sqrt(floating *out, const floating *x, Py_ssize_t n) noexcept nogil:
    unary(out, x, n, vvsqrtf, vvsqrt)

cdef void cube_root(floating *out, const floating *x, Py_ssize_t n) noexcept nogil:
    unary(out, x, n, vvcbrtf, vvcbrt)

cdef void erfinv(floating *out, const floating *x, Py_ssize_t n) noexcept nogil:
    unary(out, x, n, vverfinvf, vverfinv)


cdef void sqrt_backward(floating *out, const floating *g, const floating *y,
                        Py_ssize_t n) noexcept nogil:
    binary(out, g, y, n, vvsqrt_gradf, vvsqrt_grad)

cdef void cube_root_backward(floating *out, const floating *g, const floating *y,
                             Py_ssize_t n) noexcept nogil:
    binary(out, g, y, n, vvcbrt_gradf, vvcbrt_grad)

cdef void erfinv_backward(floating *out, const floating *g, const floating *y,
                          Py_ssize_t n) noexcept nogil:
    binary(out, g, y, n, vverfinv_gradf, vverfinv_grad)
