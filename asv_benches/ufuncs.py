"""Forward and fused backward ufuncs: op x dtype x size, plus NumPy/SciPy/PyTorch peers.

Inputs and output buffers are built in ``setup``; the timed body is one call.
"""
from pylucid import _kernels
from pylucid.bench import DTYPES, OPS, PEERS, installed, make_inputs

SIZES = [10**3, 10**5, 10**7]
BASE = ([list(OPS), list(DTYPES), SIZES], ["op", "dtype", "n"])


class Forward:
    params, param_names = BASE

    def setup(self, op, dtype, n):
        self.a = make_inputs(op, DTYPES[dtype], n, with_y=False)
        self.f = OPS[op].forward

    def time_forward(self, op, dtype, n):
        self.f(self.a["x"], out=self.a["out"])

    def time_forward_alloc(self, op, dtype, n):
        self.f(self.a["x"])

    def peakmem_forward_alloc(self, op, dtype, n):
        self.f(self.a["x"])


class Backward:
    params, param_names = BASE

    def setup(self, op, dtype, n):
        self.a = make_inputs(op, DTYPES[dtype], n)
        self.f = OPS[op].backward

    def time_backward(self, op, dtype, n):
        self.f(self.a["g"], self.a["y"], out=self.a["out"])

    def time_backward_alloc(self, op, dtype, n):
        self.f(self.a["g"], self.a["y"])

    def peakmem_backward_alloc(self, op, dtype, n):
        self.f(self.a["g"], self.a["y"])


class Peers:
    """The same cases through the peers of ``python -m pylucid bench`` (skipped where a peer
    lacks the op or is not installed). Backward: memcpy is the 3-stream floor, NumPy the
    expression, PyTorch ``autograd.grad`` on a prebuilt graph."""
    peer_names = ["memcpy", "NumPy", "NumPy out=", "SciPy", "PyTorch"]
    params = BASE[0] + [["fwd", "bwd"], peer_names]
    param_names = BASE[1] + ["kind", "peer"]

    def setup(self, op, dtype, n, kind, peer):
        fn, module = PEERS[peer]
        if not installed(module):
            raise NotImplementedError(f"{module} not installed")
        if not fn(kind, op, dtype, make_inputs(op, DTYPES[dtype], 8)):  # cheap probe first
            raise NotImplementedError(f"{peer} has no {kind} {op}")
        made = fn(kind, op, dtype, make_inputs(op, DTYPES[dtype], n, with_y=kind == "bwd"))
        self.call = made[0][0] if isinstance(made, list) else made  # PyTorch: plain form
        self.call()  # warm-up outside the timing (first-call costs; --quick times one call)

    def time_peer(self, op, dtype, n, kind, peer):
        self.call()


class Threads:
    """Forward at 10^7 elements with one thread and with all of them."""
    params = [list(OPS), list(DTYPES), ["1", "all"]]
    param_names = ["op", "dtype", "threads"]

    def setup(self, op, dtype, threads):
        self.saved = _kernels.get_num_threads()
        _kernels.set_num_threads(1 if threads == "1" else _kernels.max_threads())
        self.a = make_inputs(op, DTYPES[dtype], 10**7, with_y=False)
        self.f = OPS[op].forward

    def teardown(self, op, dtype, threads):
        _kernels.set_num_threads(self.saved)

    def time_forward(self, op, dtype, threads):
        self.f(self.a["x"], out=self.a["out"])
