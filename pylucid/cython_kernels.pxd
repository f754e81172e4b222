# pylucid's C-level API for other packages' Cython code (after scipy.special.cython_special).
#
#     from cython cimport floating
#     from pylucid.cython_kernels cimport cube_root, cube_root_backward
#
#     with nogil:
#         cube_root(&y[0], &x[0], n)               # y[i] = cbrt(x[i]), i < n
#         cube_root_backward(&gx[0], &g[0], &y[0], n)  # gx[i] = g[i] / (3 y[i]^2)
#
# Each function is fused over float and double, takes raw pointers and a length, needs
# neither the GIL nor any Python object, and runs the same kernels as pylucid.ufuncs, so
# results are bit-identical to the ufuncs.  Forwards: out[i] = f(x[i]).  Backwards (the
# fused vector-Jacobian products, from the forward's output y):
#     sqrt: out = g / (2y)    cube_root: out = g / (3y^2)    erfinv: out = (sqrt(pi)/2) exp(y^2) g
# out may be the same buffer as x (forwards) or g (backwards); no other overlap.  n <= 0
# does nothing.  Calls are single-threaded and thread-safe: parallelise with prange.
# The calls go through function pointers that `cimport` fetches from the compiled
# pylucid.cython_kernels module at import time: nothing needs linking.
from cython cimport floating

cdef void sqrt(floating *out, const floating *x, Py_ssize_t n) noexcept nogil
cdef void cube_root(floating *out, const floating *x, Py_ssize_t n) noexcept nogil
cdef void erfinv(floating *out, const floating *x, Py_ssize_t n) noexcept nogil

cdef void sqrt_backward(floating *out, const floating *g, const floating *y,
                        Py_ssize_t n) noexcept nogil
cdef void cube_root_backward(floating *out, const floating *g, const floating *y,
                             Py_ssize_t n) noexcept nogil
cdef void erfinv_backward(floating *out, const floating *g, const floating *y,
                          Py_ssize_t n) noexcept nogil
