# cython: language_level=3
"""pylucid's C-level API: see cython_kernels.pxd.  Nothing here is callable from Python.

Each entry point forwards to the vForce-style kernels of _accelerate.pxd (the ones the
ufuncs use), in int-sized pieces because vForce counts elements with an int.
"""
from ._accelerate cimport (
    vvsqrtf, vvsqrt, vvcbrtf, vvcbrt, vverfinvf, vverfinv,
    vvsqrt_gradf, vvsqrt_grad, vvcbrt_gradf, vvcbrt_grad, vverfinv_gradf, vverfinv_grad,
    vv_chunked,
)

cdef void sqrt(floating *out, const floating *x, Py_ssize_t n) noexcept nogil:
    vv_chunked(<void *>vvsqrtf if floating is float else <void *>vvsqrt, out, x, NULL, n)

cdef void cube_root(floating *out, const floating *x, Py_ssize_t n) noexcept nogil:
    vv_chunked(<void *>vvcbrtf if floating is float else <void *>vvcbrt, out, x, NULL, n)

cdef void erfinv(floating *out, const floating *x, Py_ssize_t n) noexcept nogil:
    vv_chunked(<void *>vverfinvf if floating is float else <void *>vverfinv, out, x, NULL, n)


cdef void sqrt_backward(floating *out, const floating *g, const floating *y,
                        Py_ssize_t n) noexcept nogil:
    vv_chunked(<void *>vvsqrt_gradf if floating is float else <void *>vvsqrt_grad, out, g, y, n)

cdef void cube_root_backward(floating *out, const floating *g, const floating *y,
                             Py_ssize_t n) noexcept nogil:
    vv_chunked(<void *>vvcbrt_gradf if floating is float else <void *>vvcbrt_grad, out, g, y, n)

cdef void erfinv_backward(floating *out, const floating *g, const floating *y,
                          Py_ssize_t n) noexcept nogil:
    vv_chunked(<void *>vverfinv_gradf if floating is float else <void *>vverfinv_grad, out, g, y, n)
