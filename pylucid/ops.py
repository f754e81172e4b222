"""The functional API: ``sqrt``, ``cube_root``, ``erfinv`` on arrays and Tensors.

* NumPy array-likes in, what the ufunc returns out (an ndarray, or a NumPy scalar for a
  0-d input or Python scalar, as ``np.sqrt``); ``out=`` behaves as the ufunc's.
* An ``mlx.core.array`` in, one out, through the MLX backend (``pylucid.backend.mlx``).
* A :class:`~pylucid.Tensor` in, a Tensor out on the same device, with the op's node recorded
  when grad mode is on and the input requires grad.
* Inside :func:`~pylucid.autocast` the op's AmpPolicy picks the compute dtype (NumPy and MLX
  arrays and Tensors; the raw ufuncs in ``pylucid.ufuncs`` ignore autocast). bfloat16
  computes in float32 and rounds once.
* complex, object, string, bytes, datetime and timedelta inputs raise ``TypeError`` naming
  the op and the dtype, before anything is written to ``out``.

Each op binds its node class, schema and kernel here at import; the float32/float64
ndarray path costs one type check, one thread-local read and the ufunc call.
"""
from __future__ import annotations

import numpy as np

from . import ufuncs as _ufuncs
from . import amp as _ampmod
from .amp import _state as _amp
from .backend import backend_for, get_backend
from .backend.cpu import check_dtype
from .graph.engine import _state as _grad
from .graph.nodes import CubeRootBackward, ErfinvBackward, SqrtBackward
from .graph.tensor import Tensor, _make
from .schema import registry, schema

__all__ = [
    "sqrt", "cube_root", "erfinv", "schema", "registry",
    "SqrtBackward", "CubeRootBackward", "ErfinvBackward",
]

_ndarray = np.ndarray
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_CPU = get_backend("cpu")


def _op(node, ufunc, doc):
    """The public function of one op, with its node, schema and kernel bound ahead.

    float32/float64 ndarrays outside autocast go straight to the ufunc; everything else
    (Tensors, other arrays, other dtypes, autocast) takes the general path."""
    policy = node.schema_v1.amp_policy
    label = "pylucid." + node.schema_v1.name
    dispatch = node.dispatch

    def on_tensor(x):
        data = x.data
        casts = _amp.casts
        if casts is not None:
            cdt = casts[policy].get(data.dtype)
            if cdt is not None:
                x = x.astype(cdt)  # recorded: the gradient is cast back to the input's dtype
                data = x.data
        be = x._be
        y = dispatch(be, data, data.shape, data.dtype)
        if x.requires_grad and _grad.enabled:
            return _make(y, node(x.grad_fn or x, y, be), be)
        return _make(y, None, be)

    def general(x, out):
        if type(x) is Tensor:
            if out is not None:
                raise TypeError(f"{label}: out= is not supported for Tensor inputs")
            return on_tensor(x)
        be = backend_for(x)
        if be is not None and be is not _CPU:  # another backend's array (MLX): its kernels
            if out is not None:
                raise TypeError(f"{label}: out= is only supported for NumPy arrays")
            casts = _amp.casts
            if casts is not None:
                cdt = casts[policy].get(x.dtype)
                if cdt is not None:
                    x = x.astype(cdt)
            return dispatch(be, x, x.shape, x.dtype)
        dt = getattr(x, "dtype", None)
        if not isinstance(dt, np.dtype):
            x = np.asarray(x)
            dt = x.dtype
        check_dtype(label, dt)
        casts = _amp.casts
        if casts is not None:
            cdt = casts[policy].get(dt)
            if cdt is not None:
                x = x.astype(cdt)
                dt = cdt
        if dt is _ampmod.BFLOAT16:  # float32 kernel, rounded once to bfloat16
            y = ufunc(x, dtype=_F32)
            if out is None:
                return y.astype(dt)
            np.copyto(out, y, casting="same_kind")
            return out
        return ufunc(x) if out is None else ufunc(x, out=out)

    def op(x, /, *, out=None):
        if type(x) is _ndarray and _amp.casts is None:
            dt = x.dtype
            if dt is _F64 or dt is _F32:
                return ufunc(x) if out is None else ufunc(x, out=out)
        return general(x, out)

    op.__name__ = op.__qualname__ = node.schema_v1.name
    op.__module__ = __name__
    op.__doc__ = doc
    return op


sqrt = _op(SqrtBackward, _ufuncs.sqrt, """Square root: IEEE sqrt, sqrt(-0.0) = -0.0, NaN below zero.

    Args:
        x: array-like or Tensor (Tensor -> Tensor, differentiable: dx = g / (2y)).
        out: optional ndarray for the result (arrays only), as for ``np.sqrt``.
    Returns:
        What ``np.sqrt`` returns for an array-like; a Tensor for a Tensor.
    """)

cube_root = _op(CubeRootBackward, _ufuncs.cube_root, """Real, sign-preserving cube root: cube_root(-8) == -2, exact on perfect cubes.

    Args:
        x: array-like or Tensor (Tensor -> Tensor, differentiable: dx = g / (3y²)).
        out: optional ndarray for the result (arrays only).
    Returns:
        An ndarray (NumPy scalar for 0-d input) or a Tensor for a Tensor.
    """)

erfinv = _op(ErfinvBackward, _ufuncs.erfinv, """Inverse error function on [-1, 1]: erfinv(±1) = ±inf, NaN outside.

    Args:
        x: array-like or Tensor (Tensor -> Tensor, differentiable: dx = (√π/2)·exp(y²)·g).
        out: optional ndarray for the result (arrays only).
    Returns:
        An ndarray (NumPy scalar for 0-d input) or a Tensor for a Tensor.
    """)
