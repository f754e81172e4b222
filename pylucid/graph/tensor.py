"""Tensor: an array, its gradient, and the node that made it.

A Tensor wraps one backend array (``numpy.ndarray`` on ``"cpu"``, ``mlx.core.array`` on
``"gpu"``) without copying it (``pylucid.tensor`` copies, like ``torch.tensor``). The array
library's semantics throughout: dtypes, promotion (Python scalars keep the tensor's dtype) and
broadcasting; gradients are reduced back to each input's shape. Each op below records its node
(``pylucid.graph.nodes``) when grad mode is on and an input requires grad. Dtype arguments go
through the tensor's backend (``be.dtype``): a name such as ``"bfloat16"`` works on either
device. ``.to(device)`` moves a tensor, differentiably.

Operators take a Tensor and a Tensor on the same device, or a constant. With an MLX array
put the Tensor on the left (``t * a``): ``a * t`` raises ``ValueError``, because
``mlx.core.array``'s operators raise on unknown types instead of returning NotImplemented
and MLX has no ``__array_ufunc__``/``__array_priority__`` hook to defer to the Tensor (its
``__mlx_array__`` protocol would convert it, silently dropping it from the graph).
"""
from __future__ import annotations

import numpy as np

from ..backend import get_backend
from . import nodes as _n
from .engine import _state as _grad
from . import engine as _engine

__all__ = ["Tensor", "tensor"]

_ndarray = np.ndarray
_generic = np.generic
_new = object.__new__
_CPU = get_backend("cpu")


def _make(data, grad_fn, be):
    """A Tensor without checks: the graph layer's own constructor (hot path)."""
    if type(data) is not _ndarray and isinstance(data, _generic):
        data = np.asarray(data)  # NumPy returns scalars from 0-d results
    t = _new(Tensor)
    t.data = data
    t.grad = None
    t.grad_fn = grad_fn
    t.requires_grad = grad_fn is not None
    t._be = be
    return t


def _binary(cls, a, b):
    """Forward ``cls.forward(a, b)`` for a Tensor and a Tensor or constant, recording ``cls``."""
    if type(a) is Tensor:
        be = a._be
        ad = a.data
        ea = (a.grad_fn or a) if a.requires_grad else None
        if type(b) is Tensor:
            if b._be is not be:
                raise RuntimeError(
                    f"expected both tensors on one device, got {be.name!r} and "
                    f"{b._be.name!r}: move one with .to()"
                )
            bd = b.data
            eb = (b.grad_fn or b) if b.requires_grad else None
        else:
            bd, eb = b, None
    else:  # a reflected operator: b is the Tensor
        be = b._be
        bd = b.data
        eb = (b.grad_fn or b) if b.requires_grad else None
        ad, ea = a, None
        if type(a) is _ndarray and be is not _CPU:
            # ndarray * mx.array would be NumPy's (an ndarray); convert as MLX does t * ndarray
            ad = be.asarray(a, bd.dtype)
    out = cls.forward(ad, bd)
    if (ea is not None or eb is not None) and _grad.enabled:
        return _make(out, cls(ea, eb, ad, bd, out, be), be)
    return _make(out, None, be)


def _backend(device, where):
    """``get_backend(device)``, its unknown-device error prefixed with the caller's name."""
    try:
        return get_backend(device)
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None


def _dtype(be, spec, where):
    """``be.dtype(spec)``, an unknown dtype name raising ``TypeError`` that names the caller."""
    try:
        return be.dtype(spec)
    except TypeError as e:
        raise TypeError(f"{where}: unknown or unsupported dtype {spec!r} ({e})") from None


class Tensor:
    """``Tensor(data, *, dtype=None, device="cpu", requires_grad=False)``.

    ``data`` is any array-like (an ndarray is wrapped, not copied). Only floating tensors
    can require grad. ``device`` is ``"cpu"`` or ``"gpu"`` (see ``pylucid.backend``).
    """

    __slots__ = ("data", "grad", "grad_fn", "requires_grad", "_be", "__weakref__")
    __array_ufunc__ = None  # NumPy defers operators to Tensor: ndarray * Tensor -> Tensor
    next = ()  # the engine walks ``next`` on nodes and leaves alike: a leaf is a sink

    def __init__(self, data, *, dtype=None, device="cpu", requires_grad=False):
        be = _backend(device, "pylucid.Tensor")
        if type(data) is Tensor:
            data = data.data
        data = be.asarray(data, None if dtype is None else _dtype(be, dtype, "pylucid.Tensor"))
        be.check_dtype("pylucid.Tensor", data.dtype)
        if requires_grad and not be.is_floating(data.dtype):
            raise RuntimeError(
                f"only floating-point tensors can require gradients, got dtype {data.dtype}"
            )
        self.data = data
        self.grad = None
        self.grad_fn = None
        self.requires_grad = bool(requires_grad)
        self._be = be

    # ------------------------------------------------------------ properties
    @property
    def dtype(self):
        return self.data.dtype

    @property
    def shape(self):
        return self.data.shape

    @property
    def ndim(self):
        return self.data.ndim

    @property
    def size(self):
        return self.data.size

    @property
    def device(self) -> str:
        return self._be.name

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    def numpy(self):
        """The data as a NumPy array: shared on ``"cpu"``, a copy from another device."""
        return self._be.numpy(self.data)

    def item(self):
        return self.data.item()

    def detach(self):
        """The same data, cut from the graph."""
        return _make(self.data, None, self._be)

    def requires_grad_(self, requires_grad=True):
        if not self.is_leaf and not requires_grad:
            raise RuntimeError("requires_grad can only be switched off on a leaf; use .detach()")
        if requires_grad and not self._be.is_floating(self.data.dtype):
            raise RuntimeError(
                f"only floating-point tensors can require gradients, got dtype {self.dtype}"
            )
        self.requires_grad = bool(requires_grad)
        return self

    def backward(self, gradient=None, *, retain_graph=False, create_graph=False):
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad`` (``create_graph`` retains)."""
        _engine.backward((self,), (gradient,), retain_graph or create_graph, create_graph)

    # ------------------------------------------------------------ the three kernels
    def sqrt(self):
        return _ops.sqrt(self)

    def cube_root(self):
        return _ops.cube_root(self)

    def erfinv(self):
        return _ops.erfinv(self)

    # ------------------------------------------------------------ arithmetic
    def __add__(self, other):
        return _binary(_n.AddBackward, self, other)

    def __radd__(self, other):
        return _binary(_n.AddBackward, other, self)

    def __sub__(self, other):
        return _binary(_n.SubBackward, self, other)

    def __rsub__(self, other):
        return _binary(_n.SubBackward, other, self)

    def __mul__(self, other):
        return _binary(_n.MulBackward, self, other)

    def __rmul__(self, other):
        return _binary(_n.MulBackward, other, self)

    def __truediv__(self, other):
        return _binary(_n.DivBackward, self, other)

    def __rtruediv__(self, other):
        return _binary(_n.DivBackward, other, self)

    def __pow__(self, other):
        return _binary(_n.PowBackward, self, other)

    def __rpow__(self, other):
        return _binary(_n.PowBackward, other, self)

    def __neg__(self):
        return self._unary(-self.data, _n.NegBackward)

    def __pos__(self):
        return self

    def _unary(self, out, cls, *saved):
        if self.requires_grad and _grad.enabled:
            return _make(out, cls(self.grad_fn or self, *saved), self._be)
        return _make(out, None, self._be)

    def exp(self):
        out = self._be.exp(self.data)
        if self.requires_grad and _grad.enabled:
            return _make(out, _n.ExpBackward(self.grad_fn or self, out, self._be), self._be)
        return _make(out, None, self._be)

    def log(self):
        return self._unary(self._be.log(self.data), _n.LogBackward, self.data, self._be)

    # ------------------------------------------------------------ shape
    def sum(self, axis=None, keepdims=False):
        data = self.data
        shape = data.shape
        if axis is None:
            axes = range(len(shape))
        else:
            axes = [a % len(shape) if len(shape) else a
                    for a in ((axis,) if isinstance(axis, int) else axis)]
        kshape = tuple(1 if i in axes else n for i, n in enumerate(shape))
        out = data.sum(axis=axis, keepdims=keepdims)
        return self._unary(out, _n.SumBackward, shape, kshape, self._be)

    def mean(self, axis=None, keepdims=False):
        shape = self.data.shape
        if axis is None:
            n = self.data.size
        else:
            n = 1
            for a in (axis,) if isinstance(axis, int) else axis:
                n *= shape[a]
        return self.sum(axis, keepdims) / n

    def reshape(self, *shape):
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = tuple(shape[0])
        return self._unary(self.data.reshape(shape), _n.ReshapeBackward, self.data.shape)

    def broadcast_to(self, shape):
        shape = tuple(shape)
        out = self._be.broadcast_to(self.data, shape)
        return self._unary(out, _n.BroadcastToBackward, self.data.shape)

    def astype(self, dtype):
        """A differentiable cast (gradients are cast back to this tensor's dtype)."""
        dtype = _dtype(self._be, dtype, "Tensor.astype")
        if dtype == self.data.dtype:
            return self
        return self._unary(self.data.astype(dtype), _n.CastBackward, self.data.dtype)

    def to(self, device):
        """A copy on ``device`` (``"cpu"`` or ``"gpu"``), or self when it is there already.

        Differentiable: the gradient goes back to this tensor's device. The dtype is kept;
        bfloat16 is ml_dtypes' on the NumPy side (it crosses through float32, exactly).
        """
        be = _backend(device, "Tensor.to")
        if be is self._be:
            return self
        out = be.asarray(self._be.numpy(self.data))
        if self.requires_grad and _grad.enabled:
            return _make(out, _n.ToBackward(self.grad_fn or self, self._be, be), be)
        return _make(out, None, be)

    # ------------------------------------------------------------ Python protocol
    def __len__(self):
        if not self.data.ndim:
            raise TypeError("len() of a 0-d tensor")
        return len(self.data)

    def __bool__(self):
        return bool(self.data)

    def __float__(self):
        return float(self.data)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        if dtype is not None and a.dtype != dtype:
            return a.astype(dtype)
        return a.copy() if copy else a

    def __repr__(self):
        body = np.array2string(self.numpy(), separator=", ", prefix="tensor(")
        extra = []
        if self.data.dtype != np.float64:
            extra.append(f"dtype={self.data.dtype}")
        if self._be.name != "cpu":
            extra.append(f"device={self._be.name!r}")
        if self.grad_fn is not None:
            extra.append(f"grad_fn=<{type(self.grad_fn).__name__}>")
        elif self.requires_grad:
            extra.append("requires_grad=True")
        return "tensor(" + ", ".join([body] + extra) + ")"


def tensor(data, *, dtype=None, device="cpu", requires_grad=False) -> Tensor:
    """A new leaf Tensor holding a copy of ``data`` (like ``torch.tensor``)."""
    if type(data) is Tensor:
        data = data.data
    be = _backend(device, "pylucid.tensor")
    return Tensor(be.copy(data, None if dtype is None else _dtype(be, dtype, "pylucid.tensor")),
                  device=device, requires_grad=requires_grad)


from .. import ops as _ops  # noqa: E402  (ops imports Tensor: bound after it exists)
