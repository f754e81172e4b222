"""The MLX backend: sqrt, cube_root, erfinv and their fused backward kernels on ``mlx.core`` arrays.

``pylucid.backend.get_backend("gpu")`` returns its ``BACKEND``. MLX is imported on first use, so
``import pylucid`` works without it; using the backend without MLX raises ``RuntimeError``
naming the extra to install.

Where each op runs is MLX's choice of device: the ``stream=`` argument, else
``mx.default_device()``. Per device:

=============  ============================================  ===========================================
MLX device     forward (sqrt, cube_root, erfinv)             backward (``*_backward(g, y)``)
=============  ============================================  ===========================================
CUDA GPU       one custom kernel each (mlx_kernels.py):      one fused custom kernel each: 16-byte
               16-byte vector loads/stores; sqrtf, cbrtf;    vector loads/stores; g/(2y), g/(3yy) in
               erfinv: the CPU kernel's float32 algorithm    float32, erfinv's in double
Metal GPU      cube_root: custom kernel (precise::cbrt);     mx.compile'd formulas (MLX's own kernels,
               sqrt, erfinv: MLX's own ops                   fused into one)
CPU            sqrt: mx.sqrt; cube_root: mx.compile'd        sqrt, cube_root: mx.compile'd formulas;
               sign-preserving formula + one Newton step;    erfinv: pylucid's CPU kernel
               erfinv: pylucid's CPU kernel (see below)
=============  ============================================  ===========================================

float16 and bfloat16 are computed in float32 and rounded once; other non-float inputs become
float32 (MLX's default float). float64: MLX's GPU has none, so a float64 input on the GPU raises
``TypeError`` rather than being downcast; on MLX's CPU device float64 runs through pylucid's
CPU kernels (exact, identical to ``pylucid.ufuncs``).

Accuracy (float32, against the true value): sqrt is correctly rounded everywhere; cube_root
is within 1 ulp (cbrtf on CUDA; the CPU formula measured 0.73 ulp); erfinv on CUDA runs the
CPU kernel's float32 algorithm: 0.75 ulp at most on every float32 input (``python -m
pylucid.verify --gpu``; CUDA's own erfinvf is 2.49 ulp off), the CPU's results bit for bit for
|x| < 0.9908 and within one ulp of them in the tail; on the CPU device it is pylucid's CPU
kernel. MLX's own CPU ``erfinv`` is 2.4 ulp off
and its ``exp`` up to ~20 ulp for arguments near 16, which is why erfinv and its gradient use
pylucid's CPU kernels on MLX's CPU device (through a zero-copy NumPy view of the MLX buffer).
The float32 backward results on CUDA are bit-identical to ``pylucid.ufuncs``'s (erfinv's:
computed in double, within one ulp of the CPU's float-lane kernel).
Edge values are those of the CPU kernels: sqrt(-0) = -0, sqrt(x<0) = NaN; cube_root(-8) = -2,
cube_root(+-0) = +-0, cube_root(+-inf) = +-inf; erfinv(+-1) = +-inf, erfinv(|x|>1) = NaN,
erfinv(-0) = -0; NaN in, NaN out.

The CUDA kernels take at most 2**31 - 1 elements per call (MLX passes sizes as int32).
"""
import functools

from . import mlx_kernels

name = "gpu"

INSTALL_HINT = ('pylucid\'s GPU backend needs MLX: pip install "pylucid-kernels[gpu]" '
                '(mlx[cuda13] on Linux, mlx on macOS), or "pylucid-kernels[gpu-cpu]" '
                '(mlx[cpu]: MLX\'s CPU device only)')

# CUDA launch configuration per op: (kernel source in mlx_kernels.CUDA_OPS, 16-byte words in
# flight per thread U, threads per block, streaming cache hints CS). Chosen on an H200 by
# ``python -m pylucid.bench_gpu --tune`` (see bench_gpu.tune); the kernels are correct for any.
CONFIG = {  # as tuned on an H200 (MLX 0.32.4, CUDA 13): the configuration of the README's table
    "sqrt": ("sqrt", 1, 128, False),
    "cube_root": ("cube_root", 1, 128, False),
    "erfinv": ("erfinv", 2, 128, False),
    "sqrt_backward": ("sqrt_backward", 1, 128, False),
    "cube_root_backward": ("cube_root_backward", 1, 128, False),
    "erfinv_backward": ("erfinv_backward", 2, 128, False),   # in double, rounded once
}
_MAX_CUDA_ELEMENTS = 2**31 - 1


_ARRAY = [None]  # mlx.core.array once imported (a fast exact-type check in the hot path)


def _mx():
    try:
        import mlx.core as mx
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise RuntimeError(INSTALL_HINT) from e
    _ARRAY[0] = mx.array
    return mx


def available():
    """True when mlx.core imports."""
    try:
        _mx()
    except RuntimeError:
        return False
    return True


def platform(stream=None):
    """'cuda', 'metal' or 'cpu': where an op on ``stream`` (default: MLX's default device) runs."""
    mx = _mx()
    device = mx.default_device() if stream is None else getattr(stream, "device", stream)
    kind = device if isinstance(device, mx.DeviceType) else device.type  # mx.cpu is a DeviceType
    if kind != mx.DeviceType.gpu:
        return "cpu"
    return _gpu_kind()


@functools.lru_cache(maxsize=None)
def _gpu_kind():
    mx = _mx()
    if mx.cuda.is_available():
        return "cuda"
    if mx.metal.is_available():
        return "metal"
    return "cpu"  # pragma: no cover


# ------------------------------------------------------------------ arrays and dtypes

@functools.lru_cache(maxsize=None)
def _dtypes():
    mx = _mx()
    return {"float16": mx.float16, "bfloat16": mx.bfloat16, "float32": mx.float32,
            "float64": mx.float64}


def to_mlx_dtype(dtype):
    """An mx.Dtype from an mx.Dtype, a NumPy dtype or a name ('float32', 'bfloat16', ...)."""
    mx = _mx()
    if dtype is None or isinstance(dtype, mx.Dtype):
        return dtype
    name_ = getattr(dtype, "name", None) or getattr(dtype, "__name__", None) or str(dtype)
    try:
        import numpy as np
        name_ = np.dtype(dtype).name
    except TypeError:
        pass
    try:
        return _dtypes()[name_]
    except KeyError:
        raise TypeError(f"pylucid's MLX backend computes in float16, bfloat16, float32 "
                        f"(and float64 on MLX's CPU device); got dtype {dtype!r}") from None


def asarray(a, dtype=None):
    """``a`` as an mx.array. NumPy arrays are copied in with their dtype (float64 stays float64:
    never downcast); Python scalars and lists become float32, MLX's default float, unless
    ``dtype`` asks for float64."""
    mx = _mx()
    dtype = to_mlx_dtype(dtype)
    if not isinstance(a, mx.array):
        import numpy as np
        if not isinstance(a, (np.ndarray, np.generic)):
            a = np.asarray(a)
            if a.dtype == np.float64 and (dtype is None or dtype != mx.float64):
                a = a.astype(np.float32)              # Python floats: MLX's default float32
        n = a
        if n.dtype.name == "bfloat16":              # ml_dtypes: MLX cannot read it directly
            a = mx.array(n.astype(np.float32)).astype(mx.bfloat16)
        elif n.dtype.kind == "f" and n.dtype.name in _dtypes():
            a = mx.array(n, dtype=_dtypes()[n.dtype.name])
        else:
            a = mx.array(n)
    if dtype is not None and a.dtype != dtype:
        a = a.astype(dtype)
    if a.dtype not in _dtypes().values():
        if mx.issubdtype(a.dtype, mx.complexfloating):
            raise TypeError(f"pylucid's ops are real: got {a.dtype}")
        a = a.astype(mx.float32)
    return a


def _check_gpu_dtype(dtype, plat):
    mx = _mx()
    if dtype == mx.float64 and plat != "cpu":
        raise TypeError("MLX's GPU has no float64: pylucid does not downcast silently. Cast to "
                        "float32 (x.astype(mlx.core.float32)) or run on MLX's CPU device "
                        "(stream=mlx.core.cpu), where float64 uses pylucid's CPU kernels.")


# ------------------------------------------------------------------ CPU-device and Metal formulas

def _in_float32(fn):
    """Run fn in float32 for float16/bfloat16 inputs and round the result once."""
    def wrapped(*args):
        mx = _mx()
        dt = args[0].dtype
        if dt in (mx.float16, mx.bfloat16):
            return fn(*(a.astype(mx.float32) for a in args)).astype(dt)
        return fn(*args)
    wrapped.__name__ = fn.__name__
    return wrapped


def _sqrt_formula(x):
    return _mx().sqrt(x)


def _cube_root_formula(x):
    """Real, sign-preserving cube root: exp(log|x|/3), one Newton step, then sign and edges.

    The Newton step r + (|x|/r^2 - r)/3 has a small correction term, so its rounding adds
    little: measured 0.73 ulp max over float32 (cubes exact: cube_root(-8) = -2). log(0) and
    inf/inf would poison 0 and inf, so those are passed through with their sign."""
    mx = _mx()
    a = mx.abs(x)
    r = mx.exp(mx.log(a) * (1.0 / 3.0))
    r = r + (a / (r * r) - r) * (1.0 / 3.0)
    r = mx.where(x < 0, -r, r)
    return mx.where((a == 0) | (a == mx.inf), x, r)


def _erfinv_formula(x):
    return _mx().erfinv(x)


def _sqrt_backward_formula(g, y):
    return g / (2 * y)


def _cube_root_backward_formula(g, y):
    return g / (3 * y * y)


def _erfinv_backward_formula(g, y):
    return 0.88622692545275801 * _mx().exp(y * y) * g


_FORMULAS = {
    "sqrt": _sqrt_formula,
    "cube_root": _cube_root_formula,
    "erfinv": _erfinv_formula,
    "sqrt_backward": _sqrt_backward_formula,
    "cube_root_backward": _cube_root_backward_formula,
    "erfinv_backward": _erfinv_backward_formula,
}

# On MLX's CPU device these go through pylucid's CPU kernels instead of MLX formulas.
_CPU_KERNEL_OPS = frozenset({"erfinv", "erfinv_backward"})


@functools.lru_cache(maxsize=None)
def _compiled(op):
    """The formula for op, as one fused MLX kernel (shapeless: compiled once per dtype)."""
    return _mx().compile(_in_float32(_FORMULAS[op]), shapeless=True)


def _via_cpu_kernels(op, arrays):
    """pylucid.ufuncs.<op> on zero-copy NumPy views of (evaluated, MLX-CPU-resident) arrays."""
    import numpy as np
    from .. import ufuncs
    mx = _mx()
    dt = arrays[0].dtype
    if dt == mx.bfloat16:
        return _via_cpu_kernels(op, [a.astype(mx.float32) for a in arrays]).astype(dt)
    views = [np.asarray(a) for a in arrays]
    with np.errstate(all="ignore"):
        res = getattr(ufuncs, op)(*views)
    return mx.array(res, dtype=dt)


# ------------------------------------------------------------------ custom kernels

@functools.lru_cache(maxsize=None)
def _cuda_kernel(op):
    kname, inputs, header, body = mlx_kernels.cuda_source(op)
    return _mx().fast.cuda_kernel(name=kname, input_names=inputs, output_names=["out"],
                                  source=body, header=header, ensure_row_contiguous=True)


@functools.lru_cache(maxsize=None)
def _metal_kernel(op):
    kname, inputs, header, body = mlx_kernels.metal_source(op)
    return _mx().fast.metal_kernel(name=kname, input_names=inputs, output_names=["out"],
                                   source=body, header=header, ensure_row_contiguous=True)


def _run_cuda(op, arrays, stream, config=None):
    mx = _mx()
    shape, dt = arrays[0].shape, arrays[0].dtype
    n = arrays[0].size
    if n == 0:
        return mx.zeros(shape, dtype=dt)
    if n > _MAX_CUDA_ELEMENTS:
        raise ValueError(f"pylucid's CUDA kernels take at most 2**31 - 1 elements; got {n}")
    kernel, u, threads, cs = config or CONFIG[op]
    words = -(-n // (16 // dt.size))
    blocks = -(-words // (threads * u))
    out = _cuda_kernel(kernel)(
        inputs=[a.reshape(-1) for a in arrays],
        template=[("T", dt), ("U", u), ("CS", cs)],
        grid=(blocks * threads, 1, 1), threadgroup=(threads, 1, 1),
        output_shapes=[(n,)], output_dtypes=[dt], stream=stream)[0]
    return out.reshape(shape)


def _run_metal(op, x, stream):
    mx = _mx()
    if x.size == 0:
        return mx.zeros(x.shape, dtype=x.dtype)
    out = _metal_kernel(op)(
        inputs=[x.reshape(-1)], template=[("T", x.dtype)],
        grid=(x.size, 1, 1), threadgroup=(256, 1, 1),
        output_shapes=[(x.size,)], output_dtypes=[x.dtype], stream=stream)[0]
    return out.reshape(x.shape)


def _dispatch(op, arrays, stream):
    mx = _mx()
    plat = platform(stream)
    _check_gpu_dtype(arrays[0].dtype, plat)
    if plat == "cuda":
        return _run_cuda(op, arrays, stream)
    if plat == "metal" and op in mlx_kernels.METAL_OPS:
        return _run_metal(op, arrays[0], stream)
    if plat == "cpu" and (arrays[0].dtype == mx.float64 or op in _CPU_KERNEL_OPS):
        with mx.stream(mx.cpu):
            return _via_cpu_kernels(op, arrays)
    if stream is None:
        return _compiled(op)(*arrays)
    with mx.stream(stream):
        return _compiled(op)(*arrays)


# ------------------------------------------------------------------ the backend interface

def _forward(op, a, shape, dtype, stream):
    if type(a) is _ARRAY[0] and shape is None and dtype is None and a.dtype in _dtypes().values():
        x = a                                         # the hot path: nothing to convert
    else:
        x = asarray(a, dtype)
    if shape is not None and tuple(shape) != tuple(x.shape):
        x = _mx().broadcast_to(x, tuple(shape))
    return _dispatch(op, [x], stream)


def sqrt(a, shape=None, dtype=None, *, stream=None):
    """Square root of ``a`` (an mx.array or array-like) as ``dtype``, broadcast to ``shape``."""
    return _forward("sqrt", a, shape, dtype, stream)


def cube_root(a, shape=None, dtype=None, *, stream=None):
    """Real, sign-preserving cube root: cube_root(-8) = -2."""
    return _forward("cube_root", a, shape, dtype, stream)


def erfinv(a, shape=None, dtype=None, *, stream=None):
    """Inverse error function: erfinv(+-1) = +-inf, NaN outside [-1, 1]."""
    return _forward("erfinv", a, shape, dtype, stream)


def _promote(a, b):
    """MLX's promotion of two float dtypes (without building arrays: float64 is CPU-only)."""
    mx = _mx()
    if mx.float64 in (a, b):
        return mx.float64
    if {a, b} == {mx.float16, mx.bfloat16}:
        return mx.float32
    return a if a.size >= b.size else b


def _backward(op, g, y, stream):
    mx = _mx()
    y = asarray(y)
    # A Python scalar gradient takes y's dtype (MLX's weak scalar typing), not float64.
    g = asarray(g, y.dtype) if isinstance(g, (int, float)) else asarray(g)
    if g.dtype != y.dtype:
        dt = _promote(g.dtype, y.dtype)
        g, y = (a if a.dtype == dt else a.astype(dt) for a in (g, y))
    if g.shape != y.shape:
        g, y = mx.broadcast_arrays(g, y)
    return _dispatch(op, [g, y], stream)


def sqrt_backward(g, y, *, stream=None):
    """Fused g / (2 y), from the forward's output y."""
    return _backward("sqrt_backward", g, y, stream)


def cube_root_backward(g, y, *, stream=None):
    """Fused g / (3 y^2), from the forward's output y."""
    return _backward("cube_root_backward", g, y, stream)


def erfinv_backward(g, y, *, stream=None):
    """Fused (sqrt(pi)/2) exp(y^2) g, from the forward's output y."""
    return _backward("erfinv_backward", g, y, stream)


def synchronize():
    """Wait for MLX's queued work (for timing)."""
    _mx().synchronize()


# ------------------------------------------------------------------ the backend object

def _copy(a, dtype=None):
    """A new mx.array holding ``a`` (as ``dtype``): never ``a`` itself."""
    mx = _mx()
    if not isinstance(a, mx.array):
        return asarray(a, dtype)
    dtype = to_mlx_dtype(dtype)
    return mx.array(a) if dtype is None or dtype == a.dtype else a.astype(dtype)


def to_numpy(a):
    """A NumPy copy of ``a``. NumPy has no bfloat16 of its own: it crosses through float32
    (exact) to ml_dtypes' bfloat16, whose absence raises ``ImportError`` naming it."""
    import numpy as np
    mx = _mx()
    if a.dtype == mx.bfloat16:
        from ..amp import bfloat16
        return np.array(a.astype(mx.float32)).astype(bfloat16())
    return np.array(a)


class MlxBackend:
    """Kernels and array helpers for ``mlx.core.array`` data (``pylucid.backend`` protocol)."""

    __slots__ = ()
    name = "gpu"

    @property
    def array_types(self):
        return (_mx().array,)

    sqrt = staticmethod(sqrt)
    cube_root = staticmethod(cube_root)
    erfinv = staticmethod(erfinv)
    sqrt_backward = staticmethod(sqrt_backward)
    cube_root_backward = staticmethod(cube_root_backward)
    erfinv_backward = staticmethod(erfinv_backward)

    @staticmethod
    def exp(a):
        return _mx().exp(a)

    @staticmethod
    def log(a):
        return _mx().log(a)

    @staticmethod
    def broadcast_to(a, shape):
        return _mx().broadcast_to(a, tuple(shape))

    @staticmethod
    def ones(shape, dtype):
        return _mx().ones(tuple(shape), dtype=to_mlx_dtype(dtype))

    @staticmethod
    def is_floating(dtype):
        """float16, bfloat16, float32, float64: the dtypes that can carry gradients."""
        mx = _mx()
        return isinstance(dtype, mx.Dtype) and mx.issubdtype(dtype, mx.floating)

    @staticmethod
    def check_dtype(op, dtype):
        """``TypeError`` naming ``op`` unless the kernels accept ``dtype`` (real float, int, bool)."""
        mx = _mx()
        if isinstance(dtype, mx.Dtype) and (mx.issubdtype(dtype, mx.floating) or mx.issubdtype(
                dtype, mx.integer) or dtype == mx.bool_):
            return
        raise TypeError(f"{op}: unsupported dtype {dtype}; expected a real floating, integer "
                        "or bool array")

    copy = staticmethod(_copy)
    asarray = staticmethod(asarray)
    numpy = staticmethod(to_numpy)
    dtype = staticmethod(to_mlx_dtype)

    def __repr__(self):
        return "<pylucid gpu backend (MLX)>"


BACKEND = MlxBackend()
