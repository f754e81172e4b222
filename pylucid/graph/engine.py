"""The engine: grad mode, ``backward`` and ``grad``.

One pass walks an iterative, child-counted topological order (no recursion: chains of any
length), sums each node's incoming gradients in a dict and pops them once used (HIPS
autograd's ``backward_pass``). Leaves are the graph's sinks: their gradients accumulate into
``.grad`` in the leaf's dtype (``backward``) or are returned (``grad``). Without
``retain_graph`` each node frees its saved values once it has run. With ``create_graph`` the
rules run on Tensors under grad mode, so the gradients are graphs themselves.
"""
from __future__ import annotations

import contextlib
import threading

import numpy as np

from . import tensor as _t  # the Tensor type, used at call time (import cycle)

__all__ = ["backward", "grad", "no_grad", "enable_grad", "is_grad_enabled"]


class _GradMode(threading.local):
    enabled = True  # each thread starts with grad mode on


_state = _GradMode()


def is_grad_enabled() -> bool:
    """Whether ops record the graph in this thread."""
    return _state.enabled


class _SetGradMode(contextlib.ContextDecorator):
    _mode = True

    def __init__(self):
        self._saved = []

    def __enter__(self):
        self._saved.append(_state.enabled)
        _state.enabled = self._mode
        return self

    def __exit__(self, *exc):
        _state.enabled = self._saved.pop()
        return False

    def _recreate_cm(self):  # decorator form: a fresh stack per call (threads, recursion)
        return type(self)()


class no_grad(_SetGradMode):
    """Context manager and decorator: ops record nothing inside (thread-local, nestable)."""

    _mode = False


class enable_grad(_SetGradMode):
    """Context manager and decorator: turn grad mode back on inside ``no_grad``."""

    _mode = True


class _Root:
    """The virtual node above every output of one pass."""

    __slots__ = ("next",)

    def __init__(self, edges):
        self.next = edges


def _toposort(root):
    """Nodes and leaves below ``root``, each after every node that feeds it a gradient."""
    counts = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node in counts:
            counts[node] += 1
        else:
            counts[node] = 1
            for e in node.next:
                if e is not None:
                    stack.append(e)
    order = []
    ready = [root]
    while ready:
        node = ready.pop()
        order.append(node)
        for e in node.next:
            if e is None:
                continue
            c = counts[e]
            if c == 1:
                ready.append(e)
            else:
                counts[e] = c - 1
    return order


def _seed(out, g, create, index, who):
    """The gradient that starts the pass at ``out``, and ``out``'s graph edge."""
    if type(out) is not _t.Tensor:
        raise TypeError(f"{who}: outputs must be Tensors, got {type(out).__name__}")
    if not out.requires_grad:
        raise RuntimeError(
            f"element {index} of the outputs does not require grad and has no grad_fn"
        )
    be = out._be
    data = out.data
    if g is None:
        if data.size != 1:
            raise RuntimeError(
                "grad can be implicitly created only for scalar outputs: pass gradient= "
                f"(output shape {data.shape})"
            )
        g = be.ones(data.shape, data.dtype)
    else:
        gt = g if type(g) is _t.Tensor else None
        gd = g.data if gt is not None else be.asarray(g)
        be.check_dtype(f"{who}: gradient", gd.dtype)
        if gd.shape != data.shape:
            raise RuntimeError(
                f"mismatch in shape: gradient has shape {gd.shape}, output has {data.shape}"
            )
        if create and gt is not None:  # keep a Tensor gradient's graph (double backward)
            return out.grad_fn or out, gt if gt.dtype == data.dtype else gt.astype(data.dtype)
        g = gd if gd.dtype == data.dtype else gd.astype(data.dtype)
    return out.grad_fn or out, (_t._make(g, None, be) if create else g)


def _run(roots, seeds, retain, create, capture=None):
    """One backward pass from ``roots`` (edges) seeded with ``seeds``. ``capture``:
    {edge: None} to return gradients instead of accumulating into leaves; then only the
    nodes that lead to a captured edge run."""
    order = _toposort(_Root(roots))
    del order[0]  # the virtual root
    run = None
    if capture is not None:
        live = set(capture)
        run = set()
        for node in reversed(order):
            for e in node.next:
                if e in live:
                    run.add(node)
                    live.add(node)
                    break
    grads = {}
    for e, g in zip(roots, seeds):
        old = grads.get(e)
        grads[e] = g if old is None else old + g
    Tensor = _t.Tensor
    state = _state
    saved_mode = state.enabled
    state.enabled = create
    try:
        # y = 0 at sqrt / cube_root and |x| = 1 at erfinv give inf (and 0·inf = NaN) by design.
        with np.errstate(divide="ignore", invalid="ignore"):
            for node in order:
                g = grads.pop(node, None)
                if g is None:
                    continue
                if run is not None:
                    if node in capture:
                        capture[node] = g
                    if node not in run:
                        continue
                elif type(node) is Tensor:
                    _accumulate(node, g, create)
                    continue
                gs = node.apply(g, create)
                if not retain:
                    node.release()
                for e, gi in zip(node.next, gs):
                    if e is not None and gi is not None:
                        old = grads.get(e)
                        grads[e] = gi if old is None else old + gi
    finally:
        state.enabled = saved_mode


def _accumulate(leaf, g, create):
    be = leaf._be
    dt = leaf.data.dtype
    if create:
        if type(g) is not _t.Tensor:
            g = _t._make(g, None, be)
        if g.dtype != dt:
            g = g.astype(dt)
        leaf.grad = g if leaf.grad is None else leaf.grad + g
        return
    if type(g) is _t.Tensor:
        g = g.data
    if g.dtype != dt:
        g = g.astype(dt)
    old = leaf.grad
    leaf.grad = _t._make(be.copy(g) if old is None else old.data + g, None, be)


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def backward(tensors, grad_tensors=None, retain_graph=False, create_graph=False):
    """Accumulate the gradients of ``tensors`` into the leaves' ``.grad``."""
    tensors = _as_tuple(tensors)
    grad_tensors = (None,) * len(tensors) if grad_tensors is None else _as_tuple(grad_tensors)
    if len(grad_tensors) != len(tensors):
        raise ValueError(f"got {len(grad_tensors)} gradients for {len(tensors)} tensors")
    roots, seeds = [], []
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        e, g = _seed(t, g, create_graph, i, "backward")
        roots.append(e)
        seeds.append(g)
    _run(roots, seeds, retain_graph or create_graph, create_graph)


def grad(outputs, inputs, grad_outputs=None, *, retain_graph=None, create_graph=False,
         allow_unused=False):
    """The gradients of ``outputs`` with respect to ``inputs``, like ``torch.autograd.grad``.

    Returns a tuple with one Tensor per input, in the input's dtype; ``.grad`` is untouched.
    ``retain_graph`` defaults to ``create_graph``. An input the outputs do not depend on
    raises ``RuntimeError`` unless ``allow_unused=True`` (then its gradient is None).
    """
    Tensor = _t.Tensor
    outputs = (outputs,) if type(outputs) is Tensor else _as_tuple(outputs)
    inputs = (inputs,) if type(inputs) is Tensor else _as_tuple(inputs)
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    else:
        grad_outputs = (grad_outputs,) if len(outputs) == 1 and not isinstance(
            grad_outputs, (tuple, list)) else tuple(grad_outputs)
        if len(grad_outputs) != len(outputs):
            raise ValueError(f"got {len(grad_outputs)} grad_outputs for {len(outputs)} outputs")
    capture = {}
    for x in inputs:
        if type(x) is not Tensor:
            raise TypeError(f"grad: inputs must be Tensors, got {type(x).__name__}")
        if not x.requires_grad:
            raise RuntimeError("one of the differentiated Tensors does not require grad")
        capture[x.grad_fn or x] = None
    roots, seeds = [], []
    for i, (t, g) in enumerate(zip(outputs, grad_outputs)):
        e, g = _seed(t, g, create_graph, i, "grad")
        roots.append(e)
        seeds.append(g)
    retain = create_graph if retain_graph is None else retain_graph
    _run(roots, seeds, retain, create_graph, capture)
    result = []
    for x in inputs:
        g = capture[x.grad_fn or x]
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    "one of the differentiated Tensors appears to not have been used in the "
                    "graph; set allow_unused=True if this is the desired behavior"
                )
            result.append(None)
            continue
        dt = x.data.dtype
        if type(g) is Tensor:
            result.append(g if g.dtype == dt else g.astype(dt))
        else:
            result.append(_t._make(g if g.dtype == dt else g.astype(dt), None, x._be))
    return tuple(result)
