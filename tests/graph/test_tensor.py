"""Tensor: construction, properties, and its differentiable ops against closed forms."""
import numpy as np
import pytest

import pylucid as pl
from pylucid import ops

RNG = np.random.default_rng(7)


def leaf(values, dtype=np.float64):
    return pl.Tensor(np.array(values, dtype=dtype), requires_grad=True)


# ------------------------------------------------------------------ construction

def test_tensor_wraps_and_tensor_function_copies():
    a = np.array([1.0, 2.0])
    assert pl.Tensor(a).data is a
    t = pl.tensor(a)
    assert t.data is not a and np.array_equal(t.data, a)


def test_properties():
    t = pl.tensor([[1.0, 2.0, 3.0]], dtype="float32", requires_grad=True)
    assert (t.dtype, t.shape, t.ndim, t.size, t.device) == (np.float32, (1, 3), 2, 3, "cpu")
    assert t.is_leaf and t.grad is None and t.grad_fn is None and t.requires_grad
    assert len(t) == 1
    y = t.sqrt()
    assert not y.is_leaf and y.requires_grad
    d = y.detach()
    assert d.grad_fn is None and not d.requires_grad and d.data is y.data
    assert isinstance(t.numpy(), np.ndarray)
    assert pl.tensor(2.0).item() == 2.0


def test_scalars_become_0d_arrays():
    t = leaf(4.0)
    y = ops.sqrt(t)
    assert type(y.data) is np.ndarray and y.shape == ()
    assert type(t.sum().data) is np.ndarray
    with pytest.raises(TypeError):
        len(y)


def test_repr_reads_like_pytorch():
    assert repr(pl.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(leaf([1.0])) == "tensor([1.], requires_grad=True)"
    assert repr(ops.sqrt(leaf([4.0], np.float32))) == \
        "tensor([2.], dtype=float32, grad_fn=<SqrtBackward>)"


def test_bad_construction():
    with pytest.raises(RuntimeError, match="floating"):
        pl.tensor([1, 2], requires_grad=True)
    with pytest.raises(TypeError, match="complex128"):
        pl.tensor([1j])
    with pytest.raises(ValueError, match="'cpu', 'gpu'"):
        pl.tensor([1.0], device="tpu")


def test_bfloat16_tensor():
    pytest.importorskip("ml_dtypes")
    t = pl.tensor([4.0], dtype="bfloat16", requires_grad=True)
    y = t.sqrt()
    assert y.dtype.name == "bfloat16"
    y.backward()
    assert t.grad.dtype.name == "bfloat16"
    assert float(t.grad.numpy()[0]) == 0.25


def test_numpy_operands_defer_to_tensor():
    x = leaf([1.0, 2.0])
    for y in (np.array([2.0, 2.0]) * x, np.float64(2.0) * x, 2 * x):
        assert isinstance(y, pl.Tensor) and y.grad_fn is not None
    assert np.allclose(np.asarray(x), [1.0, 2.0])


def test_python_scalars_keep_the_tensor_dtype():
    x = leaf([1.0], np.float32)
    for y in (x + 1, 1 - x, x * 0.5, 2 / x, x ** 2, 2.0 ** x, -x, x.exp(), x.mean()):
        assert y.dtype == np.float32


# ------------------------------------------------------------------ gradients of each op

A, B = np.array([0.5, 1.5, 2.0]), np.array([1.25, 0.75, 3.0])

BINARY = [  # op, d/da, d/db  (closed forms)
    (lambda a, b: a + b, lambda a, b: 1 + 0 * a, lambda a, b: 1 + 0 * b),
    (lambda a, b: a - b, lambda a, b: 1 + 0 * a, lambda a, b: -1 + 0 * b),
    (lambda a, b: a * b, lambda a, b: b, lambda a, b: a),
    (lambda a, b: a / b, lambda a, b: 1 / b, lambda a, b: -a / b ** 2),
    (lambda a, b: a ** b, lambda a, b: b * a ** (b - 1), lambda a, b: a ** b * np.log(a)),
]


@pytest.mark.parametrize("op, da, db", BINARY)
def test_binary_gradients(op, da, db):
    a, b = leaf(A), leaf(B)
    op(a, b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), da(A, B), rtol=1e-14)
    np.testing.assert_allclose(b.grad.numpy(), db(A, B), rtol=1e-14)
    assert pl.gradgradcheck(op, [A, B])


@pytest.mark.parametrize("op, da, db", BINARY)
def test_reverse_ops_with_constants(op, da, db):
    a = leaf(A)
    op(3.0, a).sum().backward()                        # constant on the left: __r*__
    np.testing.assert_allclose(a.grad.numpy(), db(3.0, A), rtol=1e-14)
    b = leaf(B)
    op(b, 3.0).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), da(B, 3.0), rtol=1e-14)


def test_unary_gradients():
    for f, d in [(lambda x: -x, lambda x: -1 + 0 * x), (lambda x: x.exp(), np.exp),
                 (lambda x: x.log(), lambda x: 1 / x), (lambda x: x ** 3, lambda x: 3 * x * x)]:
        x = leaf(A)
        f(x).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), d(A), rtol=1e-14)
        assert pl.gradgradcheck(f, [A])


# ------------------------------------------------------------------ broadcasting and reductions

@pytest.mark.parametrize("sa, sb", [((3,), (2, 3)), ((2, 1), (1, 3)), ((), (2, 3)),
                                    ((4, 1, 3), (2, 1)), ((1,), (5,))])
def test_broadcasting_reduces_gradients_to_input_shapes(sa, sb):
    av, bv = RNG.uniform(0.5, 2, sa), RNG.uniform(0.5, 2, sb)
    a, b = leaf(av), leaf(bv)
    (a * b).sum().backward()
    out_shape = np.broadcast_shapes(sa, sb)
    # independent reference: d/da_i sum(a*b) = sum of b over the positions a_i was broadcast to
    ref_a = np.zeros(sa)
    for idx in np.ndindex(*out_shape):
        ia = tuple(i if n != 1 else 0 for i, n in zip(idx[len(idx) - len(sa):], sa))
        ib = tuple(i if n != 1 else 0 for i, n in zip(idx[len(idx) - len(sb):], sb))
        ref_a[ia] += bv[ib]
    assert a.grad.shape == sa and b.grad.shape == sb
    np.testing.assert_allclose(a.grad.numpy(), ref_a, rtol=1e-13)
    assert pl.gradcheck(lambda a, b: a / b, [av, bv])


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2), (-1, 0)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_sum_and_mean_gradients(axis, keepdims):
    xv = RNG.uniform(size=(2, 3, 4))
    s = xv.sum(axis=axis, keepdims=keepdims)
    w = RNG.uniform(size=np.shape(s))
    x = leaf(xv)
    y = x.sum(axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(y.numpy(), s, rtol=1e-14)
    (y * w).sum().backward()
    ref = np.broadcast_to(w if keepdims else np.expand_dims(w, _axes(axis)), xv.shape)
    np.testing.assert_allclose(x.grad.numpy(), ref, rtol=1e-14)
    m = leaf(xv).mean(axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(m.numpy(), xv.mean(axis=axis, keepdims=keepdims), rtol=1e-14)
    assert pl.gradgradcheck(lambda t: (t.mean(axis=axis, keepdims=keepdims) ** 2).sum(), [xv])


def _axes(axis):
    if axis is None:
        return (0, 1, 2)
    return tuple(a % 3 for a in ((axis,) if isinstance(axis, int) else axis))


def test_reshape_broadcast_to_and_astype_are_differentiable():
    xv = RNG.uniform(size=(2, 3))
    assert pl.gradgradcheck(lambda t: t.reshape(3, 2) ** 2, [xv])
    assert pl.gradgradcheck(lambda t: t.reshape((6,)).broadcast_to((4, 6)) ** 2, [xv])
    x = leaf(xv, np.float32)
    y = x.astype(np.float64)
    assert y.dtype == np.float64
    (y * 2.0).sum().backward()
    assert x.grad.dtype == np.float32
