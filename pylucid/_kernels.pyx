# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""NumPy ufuncs over the vForce-style kernels declared in _accelerate.pxd.

One inner loop per arity, written once over float/double; the kernel to run rides in
the ufunc's per-loop ``data`` pointer.  Contiguous arrays go straight to the kernel
(split over threads when large); strided ones are gathered into a small buffer so every
path runs the same arithmetic.  float16 loops compute in float32 through NumPy's
``e_e_As_f_f`` adapters and round once.
"""
cimport numpy as cnp
from numpy cimport npy_intp, PyUFuncGenericFunction
from cython.parallel cimport prange
from cython cimport floating

from ._accelerate cimport (
    vvsqrtf, vvsqrt, vvcbrtf, vvcbrt, vverfinvf, vverfinv,
    vvsqrt_gradf, vvsqrt_grad, vvcbrt_gradf, vvcbrt_grad, vverfinv_gradf, vverfinv_grad,
    lucid_simd_level, vv_chunked, unary_f32, binary_f32,
)

cnp.import_array()
cnp.import_ufunc()

cdef extern from "numpy/ufuncobject.h":
    void PyUFunc_e_e_As_f_f(char **, npy_intp *, npy_intp *, void *) noexcept nogil
    void PyUFunc_ee_e_As_ff_f(char **, npy_intp *, npy_intp *, void *) noexcept nogil

cdef extern from "<fenv.h>" nogil:
    int FE_ALL_EXCEPT
    int fetestexcept(int)
    int feclearexcept(int)
    int feraiseexcept(int)

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    #define LUCID_MAX_THREADS() omp_get_num_procs()
    #else
    #define LUCID_MAX_THREADS() 1
    #endif
    """
    int LUCID_MAX_THREADS() nogil


cdef enum:
    # Below this many elements per thread, starting threads costs more than it saves.
    MIN_PER_THREAD = 1 << 16
    # Strided inputs are gathered in blocks this long (fits in L1 with room to spare).
    BLOCK = 512

cdef int num_threads = 1


def get_num_threads():
    """Number of threads the kernels may use for large arrays."""
    return num_threads


def set_num_threads(n):
    """Let the kernels use up to ``n`` threads; 1 disables threading.

    Results are bit-identical for every thread count.  Builds without OpenMP always
    use one thread.
    """
    global num_threads
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_num_threads: n must be an integer >= 1, got {n!r}")
    num_threads = min(n, 1024) if LUCID_MAX_THREADS() > 1 else 1


def _threads_from_environment():
    import os
    value = os.environ.get("PYLUCID_NUM_THREADS", "")
    if not value:
        return LUCID_MAX_THREADS()
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"PYLUCID_NUM_THREADS must be an integer >= 1, got {value!r}") from None


set_num_threads(_threads_from_environment())


def _check_isa_cap():
    # csrc/vforce.c reads PYLUCID_ISA; a misspelt cap must not silently run another set.
    import os
    cap = os.environ.get("PYLUCID_ISA", "")
    if cap not in ("", "baseline", "avx2", "avx512"):
        raise ValueError(f"PYLUCID_ISA must be baseline, avx2 or avx512, got {cap!r}")


_check_isa_cap()


def max_threads():
    """Threads available to the kernels: the CPU count when built with OpenMP, else 1."""
    return LUCID_MAX_THREADS()


def simd_level():
    """The instruction set the portable kernels dispatched to on this CPU."""
    return lucid_simd_level().decode()


cdef void contiguous(void *kernel, floating *out, const floating *a, const floating *b, npy_intp n) noexcept nogil:
    """Split a large contiguous call over threads; results do not depend on the split."""
    cdef int threads = num_threads
    if n // MIN_PER_THREAD < threads:
        threads = <int>(n // MIN_PER_THREAD)
    if threads <= 1:
        vv_chunked(kernel, out, a, b, n)
        return
    # Chunks are multiples of 64 elements so no two threads share a cache line.
    cdef npy_intp chunk = ((n + threads - 1) // threads + 63) & ~(<npy_intp>63)
    cdef npy_intp t, start, stop
    cdef int raised = 0, before
    for t in prange(threads, num_threads=threads, schedule="static"):
        start = t * chunk
        stop = min(start + chunk, n)
        if start < stop:
            # FP flags are per thread: collect the workers' so NumPy's error state sees them.
            before = fetestexcept(FE_ALL_EXCEPT)
            feclearexcept(FE_ALL_EXCEPT)
            vv_chunked(kernel, out + start, a + start, b + start if b != NULL else b, stop - start)
            raised |= fetestexcept(FE_ALL_EXCEPT)
            feclearexcept(FE_ALL_EXCEPT)
            feraiseexcept(before)
    if raised:
        feraiseexcept(raised)


cdef inline void unary_loop(floating *buf, char **args, npy_intp *dims, npy_intp *steps,
                            void *kernel) noexcept nogil:
    cdef npy_intp n = dims[0], sa = steps[0], so = steps[1], i, j, m
    cdef char *a = args[0]
    cdef char *out = args[1]
    if sa == sizeof(floating) and so == sizeof(floating):
        contiguous[floating](kernel, <floating *>out, <const floating *>a, NULL, n)
        return
    i = 0
    while i < n:
        m = min(<npy_intp>BLOCK, n - i)
        for j in range(m):
            buf[j] = (<floating *>(a + (i + j) * sa))[0]
        vv_chunked[floating](kernel, buf, buf, NULL, m)
        for j in range(m):
            (<floating *>(out + (i + j) * so))[0] = buf[j]
        i += m


cdef inline void binary_loop(floating *abuf, floating *bbuf, char **args, npy_intp *dims,
                             npy_intp *steps, void *kernel) noexcept nogil:
    cdef npy_intp n = dims[0], sa = steps[0], sb = steps[1], so = steps[2], i, j, m
    cdef char *a = args[0]
    cdef char *b = args[1]
    cdef char *out = args[2]
    if sa == sizeof(floating) and sb == sizeof(floating) and so == sizeof(floating):
        contiguous[floating](kernel, <floating *>out, <const floating *>a, <const floating *>b, n)
        return
    i = 0
    while i < n:
        m = min(<npy_intp>BLOCK, n - i)
        for j in range(m):
            abuf[j] = (<floating *>(a + (i + j) * sa))[0]
            bbuf[j] = (<floating *>(b + (i + j) * sb))[0]
        vv_chunked[floating](kernel, abuf, abuf, bbuf, m)
        for j in range(m):
            (<floating *>(out + (i + j) * so))[0] = abuf[j]
        i += m


# The ufunc loops proper: each only provides the gather buffers for its dtype.
cdef void unary_f(char **args, npy_intp *dims, npy_intp *steps, void *kernel) noexcept nogil:
    cdef float buf[BLOCK]
    unary_loop(buf, args, dims, steps, kernel)

cdef void unary_d(char **args, npy_intp *dims, npy_intp *steps, void *kernel) noexcept nogil:
    cdef double buf[BLOCK]
    unary_loop(buf, args, dims, steps, kernel)

cdef void binary_f(char **args, npy_intp *dims, npy_intp *steps, void *kernel) noexcept nogil:
    cdef float abuf[BLOCK]
    cdef float bbuf[BLOCK]
    binary_loop(abuf, bbuf, args, dims, steps, kernel)

cdef void binary_d(char **args, npy_intp *dims, npy_intp *steps, void *kernel) noexcept nogil:
    cdef double abuf[BLOCK]
    cdef double bbuf[BLOCK]
    binary_loop(abuf, bbuf, args, dims, steps, kernel)


# Scalar float32 entry points for NumPy's float16 adapters.
cdef float unary_scalar(float x, void *kernel) noexcept nogil:
    cdef int one = 1
    (<unary_f32>kernel)(&x, &x, &one)
    return x

cdef float sqrt_f(float x) noexcept nogil:
    return unary_scalar(x, <void *>vvsqrtf)
cdef float cbrt_f(float x) noexcept nogil:
    return unary_scalar(x, <void *>vvcbrtf)
cdef float erfinv_f(float x) noexcept nogil:
    return unary_scalar(x, <void *>vverfinvf)

cdef float binary_scalar(float g, float y, void *kernel) noexcept nogil:
    cdef int one = 1
    (<binary_f32>kernel)(&g, &g, &y, &one)
    return g

cdef float sqrt_grad_f(float g, float y) noexcept nogil:
    return binary_scalar(g, y, <void *>vvsqrt_gradf)
cdef float cbrt_grad_f(float g, float y) noexcept nogil:
    return binary_scalar(g, y, <void *>vvcbrt_gradf)
cdef float erfinv_grad_f(float g, float y) noexcept nogil:
    return binary_scalar(g, y, <void *>vverfinv_gradf)


# Loop order e, f, d mirrors np.sqrt, so integer and bool inputs resolve as NumPy does.
cdef PyUFuncGenericFunction unary_loops[3]
unary_loops[0] = <PyUFuncGenericFunction>PyUFunc_e_e_As_f_f
unary_loops[1] = <PyUFuncGenericFunction>unary_f
unary_loops[2] = <PyUFuncGenericFunction>unary_d
cdef PyUFuncGenericFunction binary_loops[3]
binary_loops[0] = <PyUFuncGenericFunction>PyUFunc_ee_e_As_ff_f
binary_loops[1] = <PyUFuncGenericFunction>binary_f
binary_loops[2] = <PyUFuncGenericFunction>binary_d
cdef char unary_types[6]
cdef char binary_types[9]
for _i, _t in enumerate((cnp.NPY_FLOAT16, cnp.NPY_FLOAT, cnp.NPY_DOUBLE)):
    unary_types[2 * _i] = unary_types[2 * _i + 1] = _t
    binary_types[3 * _i] = binary_types[3 * _i + 1] = binary_types[3 * _i + 2] = _t

# ufuncs keep pointers to their name, doc and data: these live as long as the module.
cdef void *loop_data[6][3]
_keepalive = []


cdef object make_ufunc(int slot, str name, str doc, int nin,
                       void *f16, void *f32, void *f64):
    loop_data[slot][0] = f16
    loop_data[slot][1] = f32
    loop_data[slot][2] = f64
    name_b, doc_b = name.encode(), doc.encode()
    _keepalive.extend([name_b, doc_b])
    cdef PyUFuncGenericFunction *loops = unary_loops
    cdef char *types = unary_types
    if nin == 2:
        loops, types = binary_loops, binary_types
    ufunc = cnp.PyUFunc_FromFuncAndData(loops, loop_data[slot], types, 3, nin, 1,
                                        cnp.PyUFunc_None, name_b, doc_b, 0)
    ufunc.__module__ = __name__.rpartition(".")[0] + ".ufuncs"  # the package, vendored or not
    return ufunc


from ._docs import UFUNC_DOCS as _DOCS

sqrt = make_ufunc(0, "sqrt", _DOCS["sqrt"], 1, <void *>sqrt_f, <void *>vvsqrtf, <void *>vvsqrt)
cube_root = make_ufunc(1, "cube_root", _DOCS["cube_root"], 1,
                       <void *>cbrt_f, <void *>vvcbrtf, <void *>vvcbrt)
erfinv = make_ufunc(2, "erfinv", _DOCS["erfinv"], 1,
                    <void *>erfinv_f, <void *>vverfinvf, <void *>vverfinv)
sqrt_backward = make_ufunc(3, "sqrt_backward", _DOCS["sqrt_backward"], 2,
                           <void *>sqrt_grad_f, <void *>vvsqrt_gradf, <void *>vvsqrt_grad)
cube_root_backward = make_ufunc(4, "cube_root_backward", _DOCS["cube_root_backward"], 2,
                                <void *>cbrt_grad_f, <void *>vvcbrt_gradf, <void *>vvcbrt_grad)
erfinv_backward = make_ufunc(5, "erfinv_backward", _DOCS["erfinv_backward"], 2,
                             <void *>erfinv_grad_f, <void *>vverfinv_gradf, <void *>vverfinv_grad)
