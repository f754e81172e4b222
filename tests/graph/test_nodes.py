"""Backward nodes: derivatives of every order, boundaries, and the memory contract.

References are independent of pylucid: closed forms evaluated in mpmath (40 digits)
and central differences (gradcheck / gradgradcheck).
"""
import gc
import math
import warnings
import weakref

import mpmath as mp
import numpy as np
import pytest

import pylucid as pl
from pylucid import ops
from pylucid.backend import get_backend
from pylucid.graph import nodes

mp.mp.dps = 40


# closed forms of d^n/dx^n, n = 0..3, written in mpmath
def _sqrt_ref(x, n):
    return [mp.sqrt(x), 1 / (2 * mp.sqrt(x)), -1 / (4 * x ** mp.mpf(1.5)),
            mp.mpf(3) / (8 * x ** mp.mpf(2.5))][n]


def _cbrt_ref(x, n):
    a, s = abs(x), mp.sign(x)
    return [s * mp.cbrt(a), a ** (-mp.mpf(2) / 3) / 3,
            -mp.mpf(2) / 9 * s * a ** (-mp.mpf(5) / 3),
            mp.mpf(10) / 27 * a ** (-mp.mpf(8) / 3)][n]


def _erfinv_ref(x, n):
    y = mp.erfinv(x)
    d1 = mp.sqrt(mp.pi) / 2 * mp.exp(y * y)
    return [y, d1, 2 * y * d1 ** 2, 2 * d1 ** 3 * (1 + 4 * y * y)][n]


OPS = {
    "sqrt": (ops.sqrt, _sqrt_ref, [0.01, 0.3, 1.0, 2.5, 17.0, 1e4]),
    "cube_root": (ops.cube_root, _cbrt_ref, [-27.0, -0.7, 0.02, 1.0, 8.0, 1e3]),
    "erfinv": (ops.erfinv, _erfinv_ref, [-0.95, -0.5, -1e-3, 0.1, 0.7, 0.99]),
}


def _derivative(op, x, order, dtype=np.float64):
    """The order-th derivative of an element-wise op, by repeated pylucid.grad."""
    xt = pl.Tensor(np.asarray(x, dtype=dtype), requires_grad=True)
    y = op(xt)
    for k in range(order):
        (y,) = pl.grad(y, xt, np.ones(xt.shape, dtype), create_graph=k < order - 1)
    return y


@pytest.mark.parametrize("order", [0, 1, 2, 3])
@pytest.mark.parametrize("name", list(OPS))
def test_derivatives_match_closed_forms(name, order):
    op, ref, xs = OPS[name]
    got = _derivative(op, xs, order)
    want = np.array([float(ref(mp.mpf(x), order)) for x in xs])
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-9)


@pytest.mark.parametrize("order", [1, 2, 3])
@pytest.mark.parametrize("name", list(OPS))
def test_float32_derivatives_stay_float32(name, order):
    op, ref, xs = OPS[name]
    got = _derivative(op, xs, order, np.float32)
    want = np.array([float(ref(mp.mpf(float(np.float32(x))), order)) for x in xs])
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.numpy(), want, rtol=2e-5)


@pytest.mark.parametrize("name", list(OPS))
def test_first_and_second_derivatives_match_finite_differences(name):
    op, _, xs = OPS[name]
    x = np.array(xs[1:4])
    assert pl.gradcheck(op, [x])
    assert pl.gradgradcheck(op, [x])


@pytest.mark.parametrize("name", list(OPS))
def test_third_derivative_matches_finite_differences(name):
    op, _, xs = OPS[name]

    def first(x):
        (g,) = pl.grad(op(x), x, np.ones(x.shape), create_graph=True)
        return g

    assert pl.gradgradcheck(first, [np.array(xs[1:4])], rtol=2e-3)


@pytest.mark.parametrize("name", list(OPS))
def test_fused_kernel_and_graph_formula_agree(name):
    op, ref, xs = OPS[name]
    x = pl.Tensor(np.array(xs), requires_grad=True)
    g = np.linspace(-2.0, 3.0, len(xs))
    eager = pl.grad(op(x), x, g)[0].numpy()
    graph = pl.grad(op(x), x, g, create_graph=True)[0].numpy()
    want = g * np.array([float(ref(mp.mpf(v), 1)) for v in xs])
    np.testing.assert_allclose(eager, want, rtol=1e-12)
    np.testing.assert_allclose(graph, want, rtol=1e-12)


# ------------------------------------------------------------------ boundaries (as PyTorch)

BOUNDARIES = [  # op, x, d/dx at x
    (ops.sqrt, 0.0, math.inf),
    (ops.cube_root, 0.0, math.inf),
    (ops.cube_root, -0.0, math.inf),
    (ops.erfinv, 1.0, math.inf),
    (ops.erfinv, -1.0, math.inf),
]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("op, x, d", BOUNDARIES)
def test_boundary_gradient_is_inf_and_nan_for_zero_g(op, x, d, create_graph):
    xt = pl.Tensor(np.array([x, x]), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning spam from the backward kernels
        (g,) = pl.grad(op(xt), xt, np.array([1.0, 0.0]), create_graph=create_graph)
    assert g.numpy()[0] == d
    assert np.isnan(g.numpy()[1])


def test_sqrt_of_negative_warns_in_forward_like_numpy():
    with pytest.warns(RuntimeWarning):
        y = ops.sqrt(pl.Tensor(np.array([-1.0]), requires_grad=True))
    assert np.isnan(y.numpy()).all()


# ------------------------------------------------------------------ memory contract

@pytest.mark.parametrize("name", list(OPS))
def test_node_does_not_keep_its_input_alive(name):
    op = OPS[name][0]
    x = pl.Tensor(np.array([0.2, 0.4, 0.6]), requires_grad=True)
    h = x * 0.5                       # an intermediate: only h references its data
    data = weakref.ref(h.data)
    y = op(h)
    del h
    gc.collect()
    assert data() is None
    assert y.grad_fn.out is y.data    # the node saved its output, nothing else
    y.sum().backward()
    want = 0.5 * np.array([float(OPS[name][1](mp.mpf(v), 1)) for v in (0.1, 0.2, 0.3)])
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("cls", [nodes.SqrtBackward, nodes.CubeRootBackward, nodes.ErfinvBackward])
def test_node_declares_it_saves_only_its_output(cls):
    assert cls.kSavesInput is False
    assert cls.kSavesOutput is True
    assert set(cls.__slots__) == set()          # nothing beyond the shared out/be slots
    assert set(nodes._OutputSavingOp.__slots__) == {"out", "be"}


def test_backward_without_retain_frees_the_saved_output():
    x = pl.Tensor(np.array([4.0]), requires_grad=True)
    y = ops.sqrt(x)
    node = y.grad_fn
    y.backward()
    assert node.out is None


@pytest.mark.parametrize("name", list(OPS))
def test_node_api(name):
    cls = {"sqrt": ops.SqrtBackward, "cube_root": ops.CubeRootBackward,
           "erfinv": ops.ErfinvBackward}[name]
    assert cls.schema_v1 is ops.schema(name)
    be = get_backend("cpu")
    a = np.array([0.25, 0.5])
    y = cls.dispatch(be, a, a.shape, a.dtype)
    np.testing.assert_allclose(y, [float(OPS[name][1](mp.mpf(v), 0)) for v in a], rtol=1e-14)
    node = cls(None, y, be)
    g = np.array([1.0, -2.0])
    want = g * np.array([float(OPS[name][1](mp.mpf(v), 1)) for v in a])
    np.testing.assert_allclose(node.grad_formula(g), want, rtol=1e-13)
    out = pl.Tensor(y)
    np.testing.assert_allclose(cls.grad_formula_impl(pl.Tensor(g), None, out).numpy(), want,
                               rtol=1e-13)
