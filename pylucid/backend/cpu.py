"""The CPU backend: NumPy arrays through the Cython ufuncs and fused backward kernels.

float16 runs the kernels' own ``e`` loops (computed in float32, rounded once); bfloat16
(ml_dtypes) computes in float32 and rounds once to bfloat16 here.
"""
from __future__ import annotations

import numpy as np

from .. import ufuncs
from .. import amp as _amp  # _amp.BFLOAT16: bound once ml_dtypes is in use

__all__ = ["BACKEND", "CpuBackend", "check_dtype", "is_floating", "dtype"]


def is_floating(dtype) -> bool:
    """float16/32/64 (any byte order) or bfloat16: the dtypes that can carry gradients."""
    return (dtype.kind == "f" and dtype.itemsize <= 8) or dtype is _amp.BFLOAT16


def check_dtype(op: str, dtype) -> None:
    """``TypeError`` naming ``op`` unless the kernels accept ``dtype`` (real float, int, bool)."""
    if dtype.kind in "biu" or is_floating(dtype):
        return
    if dtype.name == "bfloat16" and dtype is _amp._load_bfloat16(False):
        return
    raise TypeError(
        f"{op}: unsupported dtype {dtype}; expected a real floating, integer or bool array"
    )


def dtype(spec) -> np.dtype:
    """The NumPy dtype for ``spec`` (a name, type or dtype); "bfloat16" is ml_dtypes' (imported
    on demand: ``ImportError`` naming it when it is not installed)."""
    if isinstance(spec, str) and spec == "bfloat16":
        return _amp.bfloat16()
    return np.dtype(spec)


def _forward(uf):
    def forward(a, shape, dtype):
        y = uf(a)
        return y.astype(dtype) if dtype is _amp.BFLOAT16 else y

    forward.__name__ = uf.__name__
    forward.__doc__ = f"{uf.__name__}(a, shape, dtype): the forward kernel, result in ``dtype``."
    return forward


def _backward(uf):
    def backward(g, y):
        r = uf(g, y)
        bf16 = _amp.BFLOAT16
        return r.astype(bf16) if y.dtype is bf16 and g.dtype is bf16 else r

    backward.__name__ = uf.__name__
    backward.__doc__ = f"{uf.__name__}(g, y): the fused backward kernel, one pass."
    return backward


class CpuBackend:
    """Kernels and array helpers for ``numpy.ndarray`` data."""

    __slots__ = ()
    name = "cpu"
    array_types = (np.ndarray,)

    sqrt = staticmethod(_forward(ufuncs.sqrt))
    cube_root = staticmethod(_forward(ufuncs.cube_root))
    erfinv = staticmethod(_forward(ufuncs.erfinv))
    sqrt_backward = staticmethod(_backward(ufuncs.sqrt_backward))
    cube_root_backward = staticmethod(_backward(ufuncs.cube_root_backward))
    erfinv_backward = staticmethod(_backward(ufuncs.erfinv_backward))

    exp = staticmethod(np.exp)
    log = staticmethod(np.log)
    broadcast_to = staticmethod(np.broadcast_to)
    ones = staticmethod(np.ones)  # (shape, dtype)
    check_dtype = staticmethod(check_dtype)
    is_floating = staticmethod(is_floating)
    dtype = staticmethod(dtype)
    copy = staticmethod(np.array)  # (a, dtype=None): a fresh, writable ndarray (0-d for scalars)
    numpy = staticmethod(np.asarray)  # the data itself: it is NumPy's already

    @staticmethod
    def asarray(data, dtype=None):
        return np.asarray(data, dtype=dtype)

    def __repr__(self):
        return "<pylucid cpu backend>"


BACKEND = CpuBackend()
