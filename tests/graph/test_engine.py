"""The engine: order, accumulation, retain/free, create_graph, grad(), grad mode."""
import threading

import numpy as np
import pytest

import pylucid as pl
from pylucid import ops


def leaf(values, dtype=np.float64):
    return pl.Tensor(np.array(values, dtype=dtype), requires_grad=True)


# ------------------------------------------------------------------ order and accumulation

def test_long_chain_needs_no_recursion():
    x = leaf([1.0])
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    y.backward(np.ones(1))
    np.testing.assert_allclose(x.grad.numpy(), [1.0001 ** 10_000], rtol=1e-9)


def test_diamond_sums_both_paths():
    x = leaf([2.0, 3.0])
    h = ops.sqrt(x)
    y = (h * h + h).sum()              # d/dx (x + sqrt x) = 1 + 1/(2 sqrt x)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 1 + 1 / (2 * np.sqrt([2.0, 3.0])), rtol=1e-14)


def test_grads_accumulate_over_two_backward_calls():
    x = leaf([4.0])
    ops.sqrt(x).backward()
    first = x.grad
    ops.sqrt(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.5])
    np.testing.assert_allclose(first.numpy(), [0.25])   # the first .grad was not mutated


def test_leaf_grad_is_cast_to_the_leaf_dtype():
    x = leaf([4.0], np.float32)
    y = (x * np.array([2.0])).sum()    # float64 graph above a float32 leaf
    assert y.dtype == np.float64
    y.backward()
    assert x.grad.dtype == np.float32
    assert x.grad.requires_grad is False
    np.testing.assert_array_equal(x.grad.numpy(), [2.0])


def test_leaf_grad_is_a_writable_array_of_its_own():
    x = leaf([1.0, 2.0])
    x.sum().backward()                  # the gradient is a broadcast view internally
    x.grad.data[:] = 0.0


def test_backward_on_non_scalar_without_gradient_raises():
    y = ops.sqrt(leaf([1.0, 4.0]))
    with pytest.raises(RuntimeError, match="scalar"):
        y.backward()


def test_gradient_of_wrong_shape_raises():
    y = ops.sqrt(leaf([1.0, 4.0]))
    with pytest.raises(RuntimeError, match="shape"):
        y.backward(np.ones(3))


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        pl.Tensor(np.ones(1)).backward()


# ------------------------------------------------------------------ retain / free

def test_second_backward_through_freed_graph_raises():
    x = leaf([4.0])
    y = ops.sqrt(x)
    y.backward()
    with pytest.raises(RuntimeError, match=r"graph.*freed.*retain_graph=True"):
        y.backward()


def test_retain_graph_allows_a_second_backward():
    x = leaf([4.0])
    y = ops.sqrt(x)
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.5])


def test_grad_retains_only_when_asked():
    x = leaf([4.0])
    y = ops.erfinv(x * 0.1)
    pl.grad(y, x, retain_graph=True)
    pl.grad(y, x)
    with pytest.raises(RuntimeError, match="retain_graph"):
        pl.grad(y, x)


def test_create_graph_implies_retain():
    x = leaf([4.0])
    y = ops.sqrt(x)
    y.backward(create_graph=True)
    assert x.grad.grad_fn is not None   # the first gradient is a graph
    y.backward()                        # the graph was retained
    np.testing.assert_allclose(x.grad.numpy(), [0.5])


def test_create_graph_backward_gives_second_derivative():
    x = leaf([4.0])
    y = ops.cube_root(x)
    y.backward(create_graph=True)
    g = x.grad
    x.grad = None
    g.backward()
    np.testing.assert_allclose(x.grad.numpy(), [-2 / 9 * 4.0 ** (-5 / 3)], rtol=1e-13)


# ------------------------------------------------------------------ grad()

def test_grad_returns_without_touching_dot_grad():
    x = leaf([1.0, 9.0])
    (g,) = pl.grad(ops.sqrt(x).sum(), x)
    assert x.grad is None
    assert isinstance(g, pl.Tensor) and g.grad_fn is None
    np.testing.assert_allclose(g.numpy(), [0.5, 1 / 6])


def test_grad_with_respect_to_an_intermediate():
    x = leaf([4.0])
    h = x * 3.0
    y = ops.sqrt(h)
    gh, gx = pl.grad(y, [h, x])
    np.testing.assert_allclose(gh.numpy(), [1 / (2 * np.sqrt(12.0))])
    np.testing.assert_allclose(gx.numpy(), [3 / (2 * np.sqrt(12.0))])


def test_grad_multiple_outputs_and_grad_outputs():
    x = leaf([4.0])
    g = pl.grad([ops.sqrt(x), x * 2.0], x, [np.array([2.0]), np.array([10.0])])[0]
    np.testing.assert_allclose(g.numpy(), [2 * 0.25 + 20.0])


def test_grad_of_unused_input_raises_unless_allowed():
    x, z = leaf([4.0]), leaf([1.0])
    y = ops.sqrt(x)
    with pytest.raises(RuntimeError, match="not have been used"):
        pl.grad(y, [x, z], retain_graph=True)
    gx, gz = pl.grad(y, [x, z], allow_unused=True)
    assert gz is None and gx is not None


def test_grad_of_input_without_requires_grad_raises():
    x = pl.Tensor(np.array([4.0]))
    with pytest.raises(RuntimeError, match="does not require grad"):
        pl.grad(ops.sqrt(leaf([1.0])), x)


def test_grad_returns_the_input_dtype():
    x = leaf([4.0], np.float32)
    (g,) = pl.grad((x * np.float64(3.0)).sum(), x)
    assert g.dtype == np.float32


# ------------------------------------------------------------------ grad mode

def test_no_grad_records_nothing():
    x = leaf([4.0])
    with pl.no_grad():
        assert not pl.is_grad_enabled()
        y = ops.sqrt(x) * 2.0
        with pl.enable_grad():
            assert pl.is_grad_enabled()
            z = ops.sqrt(x)
        assert not pl.is_grad_enabled()
    assert pl.is_grad_enabled()
    assert y.grad_fn is None and not y.requires_grad
    assert z.grad_fn is not None


def test_no_grad_as_decorator_and_on_exceptions():
    @pl.no_grad()
    def f(x):
        return ops.sqrt(x)

    assert f(leaf([1.0])).grad_fn is None
    with pytest.raises(ZeroDivisionError):
        with pl.no_grad():
            1 / 0
    assert pl.is_grad_enabled()


def test_grad_mode_is_thread_local():
    seen = []
    ready, done = threading.Event(), threading.Event()

    def worker():
        ready.wait()
        seen.append(pl.is_grad_enabled())
        seen.append(ops.sqrt(leaf([1.0])).grad_fn is not None)
        done.set()

    t = threading.Thread(target=worker)
    t.start()
    with pl.no_grad():
        ready.set()
        done.wait()
    t.join()
    assert seen == [True, True]


def test_grad_mode_in_worker_threads_is_independent():
    results = {}

    def worker(i):
        ctx = pl.no_grad() if i % 2 else pl.enable_grad()
        with ctx:
            for _ in range(200):
                y = ops.sqrt(leaf([4.0]))
            results[i] = y.grad_fn is None

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {0: False, 1: True, 2: False, 3: True}
