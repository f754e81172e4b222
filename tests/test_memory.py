"""Memory: no RSS growth over 10^5 forward+backward calls (ufuncs and the graph layer), saved
outputs freed by backward(), and the peak of one op's forward+backward on N elements at most
3·N·itemsize above its inputs (tracemalloc sees NumPy's data allocations)."""
import gc
import os
import tracemalloc
import weakref

import numpy as np
import pytest

import pylucid
from pylucid import ufuncs

OPS = ["sqrt", "cube_root", "erfinv"]
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss():
    gc.collect()
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def _ufunc_step(i, x, g, out):
    op = OPS[i % 3]
    y = getattr(ufuncs, op)(x)
    getattr(ufuncs, op + "_backward")(g, y)
    getattr(ufuncs, op)(x, out=out)  # the out= path too
    return getattr(ufuncs, op + "_backward")(g, out, out=out)


def _graph_step(i, x, g):
    t = pylucid.Tensor(x, requires_grad=True)
    y = getattr(pylucid.ops, OPS[i % 3])(t)
    if i % 2:
        y.backward(g)
    else:
        pylucid.grad(y.sum(), t)
    return t


def test_no_rss_growth_over_1e5_forward_backward_calls():
    x = np.linspace(0.1, 0.9, 8)
    x32 = x.astype(np.float32)
    g = np.ones(8)
    out = np.empty(8)
    g32 = g.astype(np.float32)
    steps = [lambda i: _ufunc_step(i, x, g, out), lambda i: _graph_step(i, x32, g32),
             lambda i: _graph_step(i, x, g)]
    for i in range(3000):  # warm up: caches, free lists, the allocator's arenas
        steps[i % 3](i)
    before = rss()
    for i in range(100_000):
        steps[i % 3](i)
    grown = rss() - before
    assert grown < 2 * 2**20, f"RSS grew by {grown / 2**20:.2f} MiB over 10^5 calls"


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("how", ["backward", "grad"])
def test_backward_frees_the_saved_outputs(op, how):
    t = pylucid.Tensor(np.linspace(0.1, 0.9, 1000), requires_grad=True)
    y = getattr(pylucid.ops, op)(t)
    loss = (y * 2).sum()
    node = y.grad_fn
    saved = weakref.ref(node.out)
    del y  # the graph (loss -> ... -> node) is still alive; only the node holds the output
    gc.collect()
    assert saved() is not None
    if how == "backward":
        loss.backward()
    else:
        pylucid.grad(loss, t)
    gc.collect()
    assert node.out is None and saved() is None
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()


@pytest.mark.parametrize("op", OPS)
def test_retain_graph_keeps_the_saved_output_until_the_last_backward(op):
    t = pylucid.Tensor(np.linspace(0.1, 0.9, 100), requires_grad=True)
    y = getattr(pylucid.ops, op)(t)
    loss = y.sum()
    saved = weakref.ref(y.grad_fn.out)
    del y
    loss.backward(retain_graph=True)
    gc.collect()
    assert saved() is not None
    loss.backward()
    gc.collect()
    assert saved() is None


def test_the_graph_does_not_keep_the_input_alive():
    x = pylucid.Tensor(np.linspace(0.1, 0.9, 100), requires_grad=True)
    mid = x * 2  # an intermediate: the input of sqrt
    ref = weakref.ref(mid.data)
    y = pylucid.sqrt(mid)
    del mid
    gc.collect()
    assert ref() is None
    y.sum().backward()
    assert x.grad is not None


N = 1_000_000


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("path", ["ufunc", "tensor-backward", "tensor-grad"])
def test_peak_memory_of_forward_backward_is_at_most_3n_itemsize(op, dtype, path):
    rng = np.random.default_rng(0)
    x = rng.uniform(0.1, 0.9, N).astype(dtype)
    g = rng.uniform(0.5, 1.5, N).astype(dtype)
    f = getattr(pylucid.ops, op)
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        if path == "ufunc":
            y = f(x)
            gx = getattr(ufuncs, op + "_backward")(g, y)
        elif path == "tensor-backward":
            t = pylucid.Tensor(x, requires_grad=True)
            f(t).backward(g)
            gx = t.grad.data
        else:
            t = pylucid.Tensor(x, requires_grad=True)
            (gx,) = pylucid.grad(f(t), t, g)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert gx.shape == (N,)
    # backward() reaches the bound: y, the gradient and .grad's copy of it (the engine copies
    # the first gradient into a leaf); 64 KiB for the Python objects around the arrays
    limit = 3 * N * np.dtype(dtype).itemsize + 64 * 1024
    assert peak <= limit, f"peak {peak / 2**20:.1f} MiB > 3·N·itemsize = {limit / 2**20:.1f} MiB"
    assert peak >= 2 * N * np.dtype(dtype).itemsize  # y and the gradient: tracemalloc sees them


def test_asv_has_a_peakmem_benchmark_of_forward_backward():
    import ast
    import pathlib

    src = pathlib.Path(__file__).resolve().parent.parent / "asv_benches" / "graph.py"
    if not src.exists():
        pytest.skip("asv_benches/ is not shipped with the installed package")
    names = [n.name for n in ast.walk(ast.parse(src.read_text())) if isinstance(n, ast.FunctionDef)]
    assert "peakmem_forward_backward" in names
