"""Per-call cost of a graph step: Tensor forward + pylucid.grad vs PyTorch forward +
torch.autograd.grad (skipped while pylucid's graph layer or PyTorch is missing)."""
import numpy as np

from pylucid.bench import DTYPES, OPS, PEERS, installed, make_inputs


class ForwardGrad:
    params = [list(OPS), list(DTYPES), [10**3, 10**5], ["pylucid", "PyTorch"]]
    param_names = ["op", "dtype", "n", "impl"]

    def setup(self, op, dtype, n, impl):
        fn, module = PEERS[impl]
        if not installed(module):
            raise NotImplementedError(f"{module} not installed")
        self.call = fn("graph", op, dtype, make_inputs(op, DTYPES[dtype], n, with_y=False))
        if not self.call:
            raise NotImplementedError("pylucid.Tensor / pylucid.grad not available yet")
        self.call()  # warm-up outside the timing (first-call costs; --quick times one call)

    def time_forward_grad(self, op, dtype, n, impl):
        self.call()


class ForwardBackwardMemory:
    """Peak memory of one op's forward + backward through the graph layer on n elements:
    the inputs x and g (built in setup) plus y, the gradient and the leaf's .grad, i.e. at
    most 3·n·itemsize above the inputs (tests/test_memory.py checks the bound with
    tracemalloc)."""
    params = [list(OPS), list(DTYPES), [10**7]]
    param_names = ["op", "dtype", "n"]

    def setup(self, op, dtype, n):
        import pylucid

        # only x and g (make_inputs' extra buffers would raise the process's peak RSS)
        rng, spec = np.random.default_rng(0), OPS[op]
        self.x = rng.uniform(spec.low, spec.high, n).astype(DTYPES[dtype])
        self.g = rng.uniform(0.5, 1.5, n).astype(DTYPES[dtype])
        self.f = getattr(pylucid.ops, op)
        self.Tensor = pylucid.Tensor

    def peakmem_forward_backward(self, op, dtype, n):
        t = self.Tensor(self.x, requires_grad=True)
        self.f(t).backward(self.g)
