"""Gradient checks: analytic Jacobians from the engine against central differences.

Both checks run in float64 (inputs are copied and upcast) and return True or raise
:class:`GradcheckError` naming the worst element. ``GradcheckError`` subclasses
``RuntimeError``, as PyTorch's does.
"""
from __future__ import annotations

import numpy as np

from .backend.cpu import is_floating
from .graph.engine import grad
from .graph.tensor import Tensor

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """A Jacobian from backward disagrees with finite differences (a ``RuntimeError``)."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _float64(x, requires_grad=True, who="gradcheck"):
    data = x.numpy() if type(x) is Tensor else np.asarray(x)
    if not (data.dtype.kind in "biu" or is_floating(data.dtype)):
        raise TypeError(f"{who}: inputs must be real floating-point Tensors or array-likes, "
                        f"got {type(x).__name__} of dtype {data.dtype}")
    if type(x) is Tensor:
        requires_grad = x.requires_grad
    return Tensor(np.array(data, dtype=np.float64), requires_grad=requires_grad)


def _check_args(fn, eps, atol, rtol, who):
    if not callable(fn):
        raise TypeError(f"{who}: fn must be callable, got {type(fn).__name__}")
    for name, v in (("eps", eps), ("atol", atol), ("rtol", rtol)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise TypeError(f"{who}: {name} must be a real number, got {v!r}")
    if not eps > 0:
        raise ValueError(f"{who}: eps must be positive, got {eps!r}")
    if not (atol >= 0 and rtol >= 0):
        raise ValueError(f"{who}: atol and rtol must be non-negative, got atol={atol!r}, "
                         f"rtol={rtol!r}")


def _outputs(fn, xs):
    return [o for o in _as_tuple(fn(*xs))]


def _values(outs):
    return [np.array(o.data if type(o) is Tensor else o, dtype=np.float64) for o in outs]


def _numeric(fn, xs, i, eps):
    """d outputs / d xs[i] by central differences: one (out.size, x.size) matrix per output."""
    flat = xs[i].data.reshape(-1)  # xs are our own contiguous float64 copies
    cols = []
    for j in range(flat.size):
        v = flat[j]
        flat[j] = v + eps
        plus = _values(_outputs(fn, xs))
        flat[j] = v - eps
        minus = _values(_outputs(fn, xs))
        flat[j] = v
        cols.append([((p - m) / (2 * eps)).reshape(-1) for p, m in zip(plus, minus)])
    n_out = len(cols[0]) if cols else len(_outputs(fn, xs))
    return [np.stack([c[k] for c in cols], axis=1) if cols else None for k in range(n_out)]


def _analytic(outs, xs, diff):
    """d outputs / d xs[i] for each i in ``diff``, one backward pass per output element."""
    jac = {}
    for k, o in enumerate(outs):
        size = int(np.size(o.data if type(o) is Tensor else o))
        rows = {i: np.zeros((size, xs[i].data.size)) for i in diff}
        if type(o) is Tensor and o.requires_grad:
            for m in range(size):
                seed = np.zeros(size)
                seed[m] = 1.0
                gs = grad(o, [xs[i] for i in diff], seed.reshape(o.shape).astype(o.dtype),
                          retain_graph=True, allow_unused=True)
                for i, g in zip(diff, gs):
                    if g is not None:
                        rows[i][m] = np.asarray(g.data, dtype=np.float64).reshape(-1)
        for i in diff:
            jac[k, i] = rows[i]
    return jac


def _compare(a, n, atol, rtol, k, i):
    ok = np.isclose(a, n, rtol=rtol, atol=atol, equal_nan=True)
    if ok.all():
        return
    with np.errstate(invalid="ignore"):
        excess = np.abs(a - n) - (atol + rtol * np.abs(n))
    excess = np.where(ok, -np.inf, np.where(np.isnan(excess), np.inf, excess))
    r, c = np.unravel_index(int(np.argmax(excess)), a.shape)
    raise GradcheckError(
        f"Jacobian mismatch for output {k} with respect to input {i}: worst element "
        f"(output element {r}, input element {c}): analytic {float(a[r, c])!r}, numeric {float(n[r, c])!r}, "
        f"allowed |analytic - numeric| <= {atol} + {rtol}*|numeric|"
    )


def gradcheck(fn, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3) -> bool:
    """Check ``fn``'s first derivatives against central differences in float64.

    ``inputs``: a Tensor or array-like, or a sequence of them; array-likes and Tensors that
    require grad are differentiated. ``fn`` returns a Tensor or a sequence of Tensors.
    Returns True, or raises :class:`GradcheckError` naming the worst element.
    """
    _check_args(fn, eps, atol, rtol, "gradcheck")
    xs = [_float64(x) for x in _as_tuple(inputs)]
    diff = [i for i, x in enumerate(xs) if x.requires_grad]
    if not diff:
        raise ValueError("gradcheck: no input requires grad")
    jac = _analytic(_outputs(fn, xs), xs, diff)
    for i in diff:
        numeric = _numeric(fn, xs, i, eps)
        for k, n in enumerate(numeric):
            if n is not None:
                _compare(jac[k, i], n, atol, rtol, k, i)
    return True


def gradgradcheck(fn, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3) -> bool:
    """Check ``fn``'s second derivatives: gradcheck of its vector-Jacobian product.

    The VJP ``grad(fn(*x), x, v, create_graph=True)`` is differentiated with respect to
    both the inputs and ``v`` (``grad_outputs``; random, seeded, when None).
    """
    _check_args(fn, eps, atol, rtol, "gradgradcheck")
    xs = [_float64(x, who="gradgradcheck") for x in _as_tuple(inputs)]
    diff = [i for i, x in enumerate(xs) if x.requires_grad]
    outs = [o for o in _outputs(fn, xs) if type(o) is Tensor]
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        vs = [Tensor(rng.standard_normal(o.shape), requires_grad=True) for o in outs]
    else:
        vs = [_float64(v, who="gradgradcheck") for v in _as_tuple(grad_outputs)]
    n = len(xs)

    def vjp(*args):
        xs_, vs_ = args[:n], args[n:]
        outs_ = [o for o in _outputs(fn, xs_) if type(o) is Tensor]
        gs = grad(outs_, [xs_[i] for i in diff], list(vs_), create_graph=True,
                  allow_unused=True)
        return tuple(Tensor(np.zeros(xs_[i].shape)) if g is None else g
                     for i, g in zip(diff, gs))

    return gradcheck(vjp, xs + vs, eps=eps, atol=atol, rtol=rtol)
