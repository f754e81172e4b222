"""Backward nodes: one class per differentiable op, its gradient rule beside its forward.

A node holds its graph edges in ``next`` (one per input: the input's node, the input itself
when it is a leaf that requires grad, or None for a constant) and only the values its rule
needs. ``apply(g, create)`` returns one gradient per edge: on raw arrays when ``create`` is
False, and built from differentiable Tensor ops when it is True, so gradients of gradients
are recorded like any other computation. ``release()`` frees the saved values after a
backward pass without ``retain_graph``.

The three kernels' nodes save their output only (``kSavesOutput``), never their input: the
input of ``sqrt`` is not kept alive by the graph. Their schema, forward (``dispatch``) and
fused backward kernel are bound here, at import, so no op looks anything up by name.
"""
from __future__ import annotations

import math
import operator

from . import tensor as _t  # the Tensor type, used at call time (import cycle)
from ..schema import AmpPolicy, OpSchema, register

__all__ = [
    "Node", "SqrtBackward", "CubeRootBackward", "ErfinvBackward",
    "AddBackward", "SubBackward", "MulBackward", "DivBackward", "PowBackward",
    "NegBackward", "ExpBackward", "LogBackward", "SumBackward", "ReshapeBackward",
    "BroadcastToBackward", "CastBackward", "ToBackward",
]

FREED = (
    "Trying to backward through the graph a second time (or to use its saved values after "
    "they were freed): saved intermediate values of the graph are freed when you call "
    ".backward() or pylucid.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time."
)

_SQRT_PI_2 = math.sqrt(math.pi) / 2  # a Python float: NumPy keeps the array's dtype (NEP 50)


class Node:
    """Base of every backward node: graph edges in ``next``."""

    __slots__ = ("next", "__weakref__")
    kSavesInput = False
    kSavesOutput = False

    def apply(self, g, create):
        raise NotImplementedError

    def release(self):
        """Free saved values (called once the node has run, unless the graph is retained)."""

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__}>"


def _saved(data, edge, be):
    """A saved value for a graph-mode rule: the data, re-attached to the graph it came from."""
    if edge is None:
        return data
    if type(edge) is _t.Tensor:  # a leaf
        return edge
    return _t._make(data, edge, be)


def _sum_to(g, shape):
    """Reduce a broadcast gradient ``g`` back to ``shape`` (ndarray or Tensor alike)."""
    gshape = g.shape
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1
    )
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g.reshape(shape) if lead else g


def _broadcast(g, shape, be):
    return g.broadcast_to(shape) if type(g) is _t.Tensor else be.broadcast_to(g, shape)


def _log(v, be):
    if type(v) is _t.Tensor:
        return v.log()
    if type(v) in (int, float):
        return math.log(v) if v > 0 else float("nan")  # stays a weak Python scalar
    return be.log(v)


# ---------------------------------------------------------------- the three kernels


class _OutputSavingOp(Node):
    """A one-input op whose rule reads only its output ``y``."""

    __slots__ = ("out", "be")
    kSavesInput = False
    kSavesOutput = True

    def __init__(self, edge, out, be):
        self.next = (edge,)
        self.out = out
        self.be = be

    def apply(self, g, create):
        out = self.out
        if out is None:
            raise RuntimeError(FREED)
        if create:  # a: the input is not saved (kSavesInput is False)
            return (self.grad_formula_impl(g, None, _t._make(out, self, self.be)),)
        return (self.grad_formula(g),)

    def release(self):
        self.out = None


class SqrtBackward(_OutputSavingOp):
    """y = sqrt(x);  dx = g / (2y)."""

    __slots__ = ()
    schema_v1 = register(OpSchema("sqrt", 1, AmpPolicy.Promote, True))

    @staticmethod
    def dispatch(be, a, shape, dt):
        return be.sqrt(a, shape, dt)

    def grad_formula(self, g):
        return self.be.sqrt_backward(g, self.out)

    @staticmethod
    def grad_formula_impl(g, a, out):
        return g / (2 * out)


class CubeRootBackward(_OutputSavingOp):
    """y = cbrt(x);  dx = g / (3y²)."""

    __slots__ = ()
    schema_v1 = register(OpSchema("cube_root", 1, AmpPolicy.ForceFP32, True))

    @staticmethod
    def dispatch(be, a, shape, dt):
        return be.cube_root(a, shape, dt)

    def grad_formula(self, g):
        return self.be.cube_root_backward(g, self.out)

    @staticmethod
    def grad_formula_impl(g, a, out):
        return g / (3 * (out * out))


class ErfinvBackward(_OutputSavingOp):
    """y = erfinv(x);  dx = (√π/2)·exp(y²)·g."""

    __slots__ = ()
    schema_v1 = register(OpSchema("erfinv", 1, AmpPolicy.Promote, True))

    @staticmethod
    def dispatch(be, a, shape, dt):
        return be.erfinv(a, shape, dt)

    def grad_formula(self, g):
        return self.be.erfinv_backward(g, self.out)

    @staticmethod
    def grad_formula_impl(g, a, out):
        return g * (_SQRT_PI_2 * (out * out).exp())


# ---------------------------------------------------------------- arithmetic


class _Binary(Node):
    __slots__ = ("ashape", "bshape")

    def _edges(self, ea, eb, a, b):
        self.next = (ea, eb)
        self.ashape = a.shape if ea is not None else None
        self.bshape = b.shape if eb is not None else None


class AddBackward(_Binary):
    """a + b;  da = g, db = g (each reduced to its input's shape)."""

    __slots__ = ()
    forward = staticmethod(operator.add)

    def __init__(self, ea, eb, a, b, out, be):
        self._edges(ea, eb, a, b)

    def apply(self, g, create):
        ea, eb = self.next
        return (None if ea is None else _sum_to(g, self.ashape),
                None if eb is None else _sum_to(g, self.bshape))


class SubBackward(_Binary):
    """a - b;  da = g, db = -g."""

    __slots__ = ()
    forward = staticmethod(operator.sub)

    def __init__(self, ea, eb, a, b, out, be):
        self._edges(ea, eb, a, b)

    def apply(self, g, create):
        ea, eb = self.next
        return (None if ea is None else _sum_to(g, self.ashape),
                None if eb is None else _sum_to(-g, self.bshape))


class MulBackward(_Binary):
    """a * b;  da = g·b, db = g·a."""

    __slots__ = ("a", "b", "be")
    forward = staticmethod(operator.mul)

    def __init__(self, ea, eb, a, b, out, be):
        self._edges(ea, eb, a, b)
        self.a = a if eb is not None else None  # each saved only if the other side needs it
        self.b = b if ea is not None else None
        self.be = be

    def apply(self, g, create):
        ea, eb = self.next
        a, b = self.a, self.b
        if create:
            a, b = _saved(a, ea, self.be), _saved(b, eb, self.be)
        return (None if ea is None else _sum_to(g * b, self.ashape),
                None if eb is None else _sum_to(g * a, self.bshape))


class DivBackward(_Binary):
    """y = a / b;  da = g / b, db = -g·y / b."""

    __slots__ = ("b", "out", "be")
    forward = staticmethod(operator.truediv)

    def __init__(self, ea, eb, a, b, out, be):
        self._edges(ea, eb, a, b)
        self.b = b
        self.out = out if eb is not None else None
        self.be = be

    def apply(self, g, create):
        ea, eb = self.next
        b, out = self.b, self.out
        if b is None:
            raise RuntimeError(FREED)
        if create:
            b = _saved(b, eb, self.be)
            if out is not None:
                out = _t._make(out, self, self.be)
        return (None if ea is None else _sum_to(g / b, self.ashape),
                None if eb is None else _sum_to(-(g * out) / b, self.bshape))

    def release(self):
        self.b = self.out = None


class PowBackward(_Binary):
    """y = a ** b;  da = g·b·a^(b-1), db = g·y·log(a)."""

    __slots__ = ("a", "b", "out", "be")
    forward = staticmethod(operator.pow)

    def __init__(self, ea, eb, a, b, out, be):
        self._edges(ea, eb, a, b)
        self.a, self.b, self.be = a, b, be
        self.out = out if eb is not None else None

    def apply(self, g, create):
        ea, eb = self.next
        a, b, out = self.a, self.b, self.out
        if a is None:
            raise RuntimeError(FREED)
        if create:
            a, b = _saved(a, ea, self.be), _saved(b, eb, self.be)
            if out is not None:
                out = _t._make(out, self, self.be)
        return (None if ea is None else _sum_to(g * b * a ** (b - 1), self.ashape),
                None if eb is None else _sum_to(g * out * _log(a, self.be), self.bshape))

    def release(self):
        self.a = self.b = self.out = None


# ---------------------------------------------------------------- one-input helpers


class NegBackward(Node):
    """-a;  da = -g."""

    __slots__ = ()

    def __init__(self, edge):
        self.next = (edge,)

    def apply(self, g, create):
        return (-g,)


class ExpBackward(Node):
    """y = exp(a);  da = g·y (saves its output)."""

    __slots__ = ("out", "be")
    kSavesOutput = True

    def __init__(self, edge, out, be):
        self.next = (edge,)
        self.out, self.be = out, be

    def apply(self, g, create):
        out = self.out
        if out is None:
            raise RuntimeError(FREED)
        return (g * (_t._make(out, self, self.be) if create else out),)

    def release(self):
        self.out = None


class LogBackward(Node):
    """log(a);  da = g / a (saves its input)."""

    __slots__ = ("a", "be")
    kSavesInput = True

    def __init__(self, edge, a, be):
        self.next = (edge,)
        self.a, self.be = a, be

    def apply(self, g, create):
        a = self.a
        if a is None:
            raise RuntimeError(FREED)
        return (g / (_saved(a, self.next[0], self.be) if create else a),)

    def release(self):
        self.a = None


class SumBackward(Node):
    """a.sum(axis, keepdims);  da = g broadcast back to a's shape."""

    __slots__ = ("shape", "kshape", "be")

    def __init__(self, edge, shape, kshape, be):
        self.next = (edge,)
        self.shape, self.kshape, self.be = shape, kshape, be

    def apply(self, g, create):
        return (_broadcast(g.reshape(self.kshape), self.shape, self.be),)


class ReshapeBackward(Node):
    """a.reshape(shape);  da = g.reshape(a.shape)."""

    __slots__ = ("shape",)

    def __init__(self, edge, shape):
        self.next = (edge,)
        self.shape = shape

    def apply(self, g, create):
        return (g.reshape(self.shape),)


class BroadcastToBackward(Node):
    """a.broadcast_to(shape);  da = g summed back to a's shape."""

    __slots__ = ("shape",)

    def __init__(self, edge, shape):
        self.next = (edge,)
        self.shape = shape

    def apply(self, g, create):
        return (_sum_to(g, self.shape),)


class CastBackward(Node):
    """a.astype(dtype) (also autocast's recorded cast);  da = g.astype(a.dtype)."""

    __slots__ = ("dtype",)

    def __init__(self, edge, dtype):
        self.next = (edge,)
        self.dtype = dtype

    def apply(self, g, create):
        return (g.astype(self.dtype),)


class ToBackward(Node):
    """a.to(device);  da = g moved back to a's device (``src``) from ``dst``."""

    __slots__ = ("src", "dst")

    def __init__(self, edge, src, dst):
        self.next = (edge,)
        self.src, self.dst = src, dst

    def apply(self, g, create):
        if create:
            return (g.to(self.src.name),)
        return (self.src.asarray(self.dst.numpy(g)),)
