"""Per-call cost of a graph step: Tensor forward + pylucid.grad vs PyTorch forward +
torch.autograd.grad (skipped while pylucid's graph layer or PyTorch is missing)."""
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
