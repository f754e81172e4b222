"""Side-by-side benchmark: pylucid against memcpy, NumPy, SciPy, PyTorch, JAX and MLX.

Run it as (the OpenBLAS variables can slow NumPy on some machines, so unset them)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m pylucid bench [--plot bench.png]

Every figure comes from the same process, so compare ratios rather than absolute times on a
shared machine. What one cell measures (best of R timed calls after one warm-up call; inputs and
output buffers are allocated once, outside the timed call):

* forward rows, ns per element of ``f(x)``:
  memcpy ``np.copyto(out, x)``; NumPy ``np.sqrt(x)`` / ``np.cbrt(x)``; "NumPy out=" the same with
  ``out=``; SciPy ``scipy.special.cbrt`` / ``erfinv``; PyTorch ``torch.sqrt`` /
  ``sign(x)*pow(|x|, 1/3)`` / ``torch.erfinv``, the faster of the allocating and the ``out=``
  form (marked ``o``); JAX ``jax.jit(jnp.sqrt | jnp.cbrt | jax.scipy.special.erfinv)`` with
  ``block_until_ready``; MLX (CPU) ``mx.sqrt`` / ``sign*power`` / ``mx.erfinv`` with ``mx.eval``;
  pylucid ``pylucid.ufuncs.<op>(x)`` and, "pylucid out=", ``(x, out=out)``.
* backward rows, ns per element of the input gradient from the saved output ``y``:
  memcpy is the three-stream memory floor ``np.add(g, y, out=gx)``; NumPy the expression
  ``g/(2*y)``, ``g/(3*y*y)``, ``sqrt(pi)/2*exp(y*y)*g``; "NumPy out=" that expression as a
  chain of ufunc calls into preallocated buffers; PyTorch ``torch.autograd.grad(y, x, g,
  retain_graph=True)`` on a forward graph built once (the backward pass only, with whatever
  PyTorch's nodes save or recompute); pylucid the fused ``<op>_backward(g, y)`` / ``out=gx``.
* fwd+grad rows, ns per element of a whole graph step: PyTorch ``y = f(x); autograd.grad(y, x,
  g)`` on a leaf with ``requires_grad``; pylucid the same with ``pylucid.Tensor`` and
  ``pylucid.grad``.

At 10^3 elements a figure in ns per element is also the time of one call in µs.

``--isa avx2`` reruns the benchmark with every library capped at AVX2 + FMA through its own
documented switch (``ISA_CAPS``): the closest this machine can come to an AVX2-only one, such as
the reference machine of the issue's peer table. It caps instruction sets only: the
microarchitecture, and MKL's dispatch on AMD CPUs, stay this machine's.
Threads: "1" sets ``pylucid._kernels.set_num_threads(1)`` and ``torch.set_num_threads(1)``;
"all" sets both to the machine's maximum. NumPy and SciPy are single-threaded; JAX (XLA's
thread pool) and MLX keep their own threading in both modes, which cannot be changed in-process.
With both modes, every table is measured twice, the modes alternating, and each cell keeps its
best: on a shared machine the second core is at times busy with another tenant's work, and
small calls (~1 us) feel any drift of the machine's speed, which would otherwise show as a
thread-count effect.
"""
import argparse
import math
import os
import platform
import sys
import time
from dataclasses import dataclass

import numpy as np

from . import _kernels, ufuncs
from .graph import Tensor, grad

# ----------------------------------------------------------------------------------------------
# The one list of ops, shared by this benchmark, asv_benches/ and tests/test_bench.py.

SQRT_PI_2 = math.sqrt(math.pi) / 2


@dataclass(frozen=True)
class Op:
    name: str
    low: float             # inputs are uniform(low, high)
    high: float
    label: str             # row label in tables

    @property
    def forward(self):
        return getattr(ufuncs, self.name)

    @property
    def backward(self):
        return getattr(ufuncs, self.name + "_backward")


OPS = {
    "sqrt": Op("sqrt", 0.0, 1e4, "sqrt"),
    "cube_root": Op("cube_root", -1e4, 1e4, "cbrt (±x)"),
    "erfinv": Op("erfinv", -1.0, 1.0, "erfinv"),
}
DTYPES = {"float32": np.float32, "float64": np.float64}
SHORT = {"float32": "f32", "float64": "f64"}

# NumPy's own formulas for the backward pass from the saved output y.
NUMPY_BACKWARD = {
    "sqrt": lambda g, y: g / (2 * y),
    "cube_root": lambda g, y: g / (3 * y * y),
    "erfinv": lambda g, y: SQRT_PI_2 * np.exp(y * y) * g,
}


def numpy_backward_out(op, g, y, gx, t):
    """The NumPy backward expression as ufunc calls into preallocated buffers ``gx`` and ``t``."""
    if op == "sqrt":
        np.multiply(y, 2, out=t)
        np.divide(g, t, out=gx)
    elif op == "cube_root":
        np.multiply(y, y, out=t)
        np.multiply(t, 3, out=t)
        np.divide(g, t, out=gx)
    else:
        np.multiply(y, y, out=t)
        np.exp(t, out=t)
        np.multiply(t, SQRT_PI_2, out=t)
        np.multiply(t, g, out=gx)
    return gx


def make_inputs(op, dtype, n, seed=0, with_y=True):
    """x in the op's domain, its output y (the saved output of backward; None unless
    ``with_y``), an incoming gradient g (away from 0) and two output buffers."""
    rng = np.random.default_rng(seed)
    spec = OPS[op]
    x = rng.uniform(spec.low, spec.high, n).astype(dtype)
    y = spec.forward(x) if with_y else None
    g = rng.uniform(0.5, 1.5, n).astype(dtype)
    return {"x": x, "y": y, "g": g, "out": np.empty_like(x), "tmp": np.empty_like(x)}


# ----------------------------------------------------------------------------------------------
# Timing


def best_ns(fn, repeat, budget_s=4.0, min_sample_ns=2_000_000):
    """Best time of one call of ``fn`` in ns: one warm-up call, then ``repeat`` samples.

    Short calls are looped so that one sample lasts at least ``min_sample_ns`` (as timeit's
    autorange); calls slower than ``budget_s / repeat`` get fewer samples (at least one).
    """
    t0 = time.perf_counter_ns()
    fn()
    first = max(time.perf_counter_ns() - t0, 1)
    loops = max(1, min_sample_ns // first)
    samples = max(1, min(repeat, int(budget_s * 1e9 // (first * loops))))
    best = math.inf
    for _ in range(samples):
        t0 = time.perf_counter_ns()
        for _ in range(loops):
            fn()
        best = min(best, (time.perf_counter_ns() - t0) / loops)
    return best


# ----------------------------------------------------------------------------------------------
# Peers: each takes (kind, op, dtype name, inputs) and returns a callable to time, or None
# where the peer has no such case. kind is "fwd", "bwd" or "graph". A peer returning a
# (callable, note) pair marks the cell (e.g. "o" for a PyTorch out= variant).


def peer_memcpy(kind, op, dt, a):
    if kind == "fwd":
        return lambda: np.copyto(a["out"], a["x"])
    if kind == "bwd":  # three streams: read g, read y, write gx
        return lambda: np.add(a["g"], a["y"], out=a["out"])
    return None


def peer_numpy(kind, op, dt, a):
    if kind == "fwd":
        f = {"sqrt": np.sqrt, "cube_root": np.cbrt}.get(op)
        return f and (lambda: f(a["x"]))
    if kind == "bwd":
        f = NUMPY_BACKWARD[op]
        return lambda: f(a["g"], a["y"])
    return None


def peer_numpy_out(kind, op, dt, a):
    if kind == "fwd":
        f = {"sqrt": np.sqrt, "cube_root": np.cbrt}.get(op)
        return f and (lambda: f(a["x"], out=a["out"]))
    if kind == "bwd":
        return lambda: numpy_backward_out(op, a["g"], a["y"], a["out"], a["tmp"])
    return None


def peer_scipy(kind, op, dt, a):
    import scipy.special as sc
    f = {"cube_root": sc.cbrt, "erfinv": sc.erfinv}.get(op)
    return f and kind == "fwd" and (lambda: f(a["x"]))


def _torch_forward(torch, op):
    return {"sqrt": torch.sqrt,
            "cube_root": lambda x: torch.sign(x) * torch.pow(torch.abs(x), 1 / 3),
            "erfinv": torch.erfinv}[op]


def peer_torch(kind, op, dt, a):
    import torch
    f = _torch_forward(torch, op)
    x = torch.from_numpy(a["x"])
    g = torch.from_numpy(a["g"])
    if kind == "fwd":
        plain = lambda: f(x)  # noqa: E731
        o, t = torch.from_numpy(a["out"]), torch.from_numpy(a["tmp"])
        if op == "cube_root":
            def with_out():
                torch.abs(x, out=t)
                torch.pow(t, 1 / 3, out=t)
                torch.sign(x, out=o)
                return torch.mul(o, t, out=o)
        else:
            with_out = lambda: f(x, out=o)  # noqa: E731
        return [(plain, ""), (with_out, "o")]  # the faster one is reported
    xl = x.clone().requires_grad_(True)
    if kind == "bwd":
        y = f(xl)
        return lambda: torch.autograd.grad(y, xl, g, retain_graph=True)
    return lambda: torch.autograd.grad(f(xl), xl, g)


def _jax():
    import jax
    jax.config.update("jax_enable_x64", True)  # float64 arrays stay float64
    return jax


def peer_jax(kind, op, dt, a):
    if kind != "fwd":
        return None
    jax = _jax()
    import jax.numpy as jnp
    import jax.scipy.special as jsp
    f = jax.jit({"sqrt": jnp.sqrt, "cube_root": jnp.cbrt, "erfinv": jsp.erfinv}[op])
    x = jax.device_put(a["x"])
    if x.dtype != a["x"].dtype:
        return None
    return lambda: f(x).block_until_ready()


def peer_mlx(kind, op, dt, a):
    if kind != "fwd":
        return None
    import mlx.core as mx
    f = {"sqrt": mx.sqrt,
         "cube_root": lambda x: mx.sign(x) * mx.power(mx.abs(x), 1 / 3),
         "erfinv": mx.erfinv}[op]
    with mx.stream(mx.cpu):
        x = mx.array(a["x"], dtype=getattr(mx, dt))
        probe = f(x[:8])
        mx.eval(probe)  # float64 may be unsupported on some MLX CPU builds: '–' then
        if probe.dtype != getattr(mx, dt):
            return None

    def run():
        with mx.stream(mx.cpu):
            mx.eval(f(x))
    return run


def peer_pylucid(kind, op, dt, a):
    spec = OPS[op]
    if kind == "fwd":
        return lambda: spec.forward(a["x"])
    if kind == "bwd":
        return lambda: spec.backward(a["g"], a["y"])
    x = Tensor(a["x"], requires_grad=True)
    g = a["g"]
    return lambda: grad(getattr(x, op)(), x, g)


def peer_pylucid_out(kind, op, dt, a):
    spec = OPS[op]
    if kind == "fwd":
        return lambda: spec.forward(a["x"], out=a["out"])
    if kind == "bwd":
        return lambda: spec.backward(a["g"], a["y"], out=a["out"])
    return None


# column name -> (peer, module it needs)
PEERS = {
    "memcpy": (peer_memcpy, None),
    "NumPy": (peer_numpy, None),
    "NumPy out=": (peer_numpy_out, None),
    "SciPy": (peer_scipy, "scipy"),
    "PyTorch": (peer_torch, "torch"),
    "JAX": (peer_jax, "jax"),
    "MLX": (peer_mlx, "mlx.core"),
    "pylucid": (peer_pylucid, None),
    "pylucid out=": (peer_pylucid_out, None),
}
# Which pylucid column a peer is compared with in the ratio table (like with like).
RATIO_AGAINST = {"memcpy": "pylucid out=", "NumPy out=": "pylucid out=", "PyTorch": "best"}


def installed(module):
    if module is None:
        return True
    try:
        __import__(module)
        return True
    except Exception:
        return False


# ----------------------------------------------------------------------------------------------
# Running


@dataclass
class Cell:
    ns: float = math.nan   # ns per element; nan = not measured
    note: str = ""


def set_threads(n):
    _kernels.set_num_threads(n)
    if installed("torch"):
        import torch
        torch.set_num_threads(n)


def measure_case(kind, op, dt, n, repeat, peers, errors):
    a = make_inputs(op, DTYPES[dt], n, with_y=kind == "bwd")
    row = {col: Cell() for col in PEERS}  # columns not measured stay nan
    for col in peers:
        peer, _ = PEERS[col]
        try:
            made = peer(kind, op, dt, a)
            options = made if isinstance(made, list) else [(made, "")] if made else []
            cells = [Cell(best_ns(fn, repeat) / n, note) for fn, note in options]
        except Exception as e:  # a peer that breaks must not stop the run
            errors.append(f"{col} {kind} {op} {dt}: {type(e).__name__}: {e}")
            cells = []
        row[col] = min(cells, key=lambda c: c.ns) if cells else Cell()
    return row


def run_table(n, threads, repeat, ops, dtypes, peers, errors, progress=None):
    """{(kind, op, dtype): {column: Cell}} at n elements with ``threads`` threads."""
    set_threads(threads)
    table = {}
    for kind in ("fwd", "bwd", "graph"):
        for op in ops:
            for dt in dtypes:
                if progress:
                    progress(f"{threads} thr, n={n}: {kind} {op} {dt}")
                table[kind, op, dt] = measure_case(kind, op, dt, n, repeat, peers, errors)
    return table


def best_of(old, new):
    """Tables from run_table merged cell by cell, keeping the faster (old may be None)."""
    if old is None:
        return new
    return {key: {col: min(old[key][col], cell, key=lambda c: math.inf if math.isnan(c.ns) else c.ns)
                  for col, cell in row.items()} for key, row in new.items()}


def row_label(key):
    kind, op, dt = key
    suffix = {"fwd": "", "bwd": " backward", "graph": " fwd+grad"}[kind]
    return f"{OPS[op].label} {SHORT[dt]}{suffix}"


def fmt(x, digits=3):
    if not math.isfinite(x):
        return "–"
    return f"{x:.{digits}g}" if x < 1000 else f"{x:.0f}"


def pylucid_ref(row, col):
    against = RATIO_AGAINST.get(col, "pylucid")
    if against == "best":
        return best(row, "pylucid", "pylucid out=")
    return row[against].ns


def markdown(table, peers, ratios=False):
    cols = [c for c in peers if not (ratios and c.startswith("pylucid"))]
    lines = ["| case | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for key, row in table.items():
        if ratios:
            cells = [fmt(row[c].ns / pylucid_ref(row, c), 2) for c in cols]
            if set(cells) == {"–"}:
                continue
        else:
            cells = [fmt(row[c].ns) + (f" ({row[c].note})" if row[c].note else "") for c in cols]
        lines.append(f"| {row_label(key)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# The targets


def best(row, *cols):
    """The fastest of the given columns, ignoring those not measured (nan if none was)."""
    return min((row[c].ns for c in cols if c in row and math.isfinite(row[c].ns)),
               default=math.nan)


def check_targets(results, big, small):
    """[(ok, text)] for every target whose figures were measured; nan comparisons are skipped.

    Speed ratios take each side's faster form (allocating or ``out=``), except sqrt's, which
    is checked in both forms."""
    out = []

    def add(ok_value, threshold, higher_is_better, text):
        if not math.isfinite(ok_value):
            return
        ok = ok_value >= threshold if higher_is_better else ok_value <= threshold
        out.append((ok, text.format(v=ok_value)))

    one = results.get((big, 1)) or {}
    for dt in DTYPES:
        r = one.get(("fwd", "sqrt", dt))
        if r:
            add(r["NumPy"].ns / r["pylucid"].ns, 1.0, True,
                f"sqrt {SHORT[dt]}: NumPy / pylucid = {{v:.2f}} (≥ 1)")
            add(r["NumPy out="].ns / r["pylucid out="].ns, 1.0, True,
                f"sqrt {SHORT[dt]} out=: NumPy out= / pylucid out= = {{v:.2f}} (≥ 1)")
    for dt, goal in (("float32", 10), ("float64", 5)):
        r = one.get(("fwd", "cube_root", dt))
        if r:
            add(best(r, "NumPy", "NumPy out=") / best(r, "pylucid", "pylucid out="), goal,
                True, f"cube_root {SHORT[dt]}: NumPy / pylucid = {{v:.2f}}× (≥ {goal}×)")
    for dt in DTYPES:
        r = one.get(("fwd", "erfinv", dt))
        if r:
            add(r["PyTorch"].ns / best(r, "pylucid", "pylucid out="), 2, True,
                f"erfinv {SHORT[dt]}: PyTorch / pylucid = {{v:.2f}}× (≥ 2×)")
    for op in ("sqrt", "cube_root"):
        for dt in DTYPES:
            r = one.get(("bwd", op, dt))
            if r:
                add(r["pylucid out="].ns / r["memcpy"].ns, 1.25, False,
                    f"{op} backward {SHORT[dt]}: pylucid out= / 3-stream floor = {{v:.2f}}"
                    " (≤ 1.25)")
    for dt in DTYPES:
        r = one.get(("bwd", "erfinv", dt))
        if r:
            add(best(r, "NumPy", "NumPy out=") / best(r, "pylucid", "pylucid out="), 2.5, True,
                f"erfinv backward {SHORT[dt]}: NumPy expr / pylucid = {{v:.2f}}× (≥ 2.5×)")
    for n, goal, note in ((big, 1.8, "≥ 1.8×"), (small, 0.95, "≥ 0.95×, i.e. no slower")):
        one, many = results.get((n, 1)), results.get((n, "all"))
        if not (one and many):
            continue
        for op in (("cube_root", "erfinv") if n == big else OPS):
            for dt in DTYPES:
                if ("fwd", op, dt) in one:
                    p1 = best(one["fwd", op, dt], "pylucid", "pylucid out=")
                    pn = best(many["fwd", op, dt], "pylucid", "pylucid out=")
                    add(p1 / pn, goal, True, f"{op} {SHORT[dt]} n={n}: all threads speedup "
                        f"= {{v:.2f}}× ({note})")
    one = results.get((small, 1))
    if one:
        r = one.get(("fwd", "sqrt", "float64"))
        if r:
            add(r["pylucid"].ns / r["NumPy"].ns, 1.2, False,
                f"n={small} call: pylucid.ufuncs.sqrt / np.sqrt = {{v:.2f}} (≤ 1.2)")
        for op in OPS:
            r = one.get(("graph", op, "float64"))
            if r:
                add(r["pylucid"].ns / r["PyTorch"].ns, 0.5, False,
                    f"n={small} {op} f64 Tensor fwd+grad / PyTorch fwd+autograd.grad "
                    "= {v:.2f} (≤ 0.5)")
    return out


# ----------------------------------------------------------------------------------------------
# Plot


def plot(results, peers, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit("--plot needs matplotlib: pip install 'pylucid-kernels[bench]'")
    panels = list(results.items())
    fig, axes = plt.subplots(len(panels), 1, figsize=(13, 4.2 * len(panels)), squeeze=False)
    for ax, ((n, threads), table) in zip(axes[:, 0], panels):
        keys = [k for k, row in table.items() if any(math.isfinite(row[c].ns) for c in peers)]
        width = 0.8 / len(peers)
        for i, col in enumerate(peers):
            vals = [table[k][col].ns for k in keys]
            ax.bar([j + i * width for j in range(len(keys))],
                   [v if math.isfinite(v) else 0 for v in vals], width, label=col,
                   **({"color": "black"} if col == "pylucid" else
                      {"color": "dimgray"} if col == "pylucid out=" else {}))
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(keys))])
        ax.set_xticklabels([row_label(k) for k in keys], rotation=30, ha="right", fontsize=8)
        ax.set_yscale("log")
        unit = "µs per call" if n == 1000 else "ns per element"
        ax.set_ylabel(f"{unit} (log, lower is better)")
        ax.set_title(f"n = {n:.0e}, threads = {threads}")
        ax.legend(fontsize=7, ncol=len(peers))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ----------------------------------------------------------------------------------------------
# Command line


# Environment switches that cap each library at AVX2 + FMA (read when each one loads, hence the
# fresh process): NumPy's dispatch, PyTorch's ATen kernels, MKL (PyTorch's erfinv), XLA (JAX).
ISA_CAPS = {"avx2": {"PYLUCID_ISA": "avx2",
                     "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
                     "ATEN_CPU_CAPABILITY": "avx2",
                     "MKL_ENABLE_INSTRUCTIONS": "AVX2",
                     "XLA_FLAGS": "--xla_cpu_max_isa=AVX2"}}


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m pylucid bench", description=__doc__.split("\n")[0])
    p.add_argument("--size", type=int, default=10**7, help="elements for the main table")
    p.add_argument("--small-size", type=int, default=10**3,
                   help="elements for the per-call table (0: skip it)")
    p.add_argument("--repeat", type=int, default=5, help="timed samples per cell (best is kept)")
    p.add_argument("--threads", choices=("1", "all", "both"), default="both")
    p.add_argument("--ops", nargs="+", choices=list(OPS), default=list(OPS))
    p.add_argument("--dtypes", nargs="+", choices=list(DTYPES), default=list(DTYPES))
    p.add_argument("--peers", nargs="+", choices=list(PEERS), default=list(PEERS),
                   help="columns to measure (those not installed are dropped)")
    p.add_argument("--plot", metavar="FILE.png", help="also draw a grouped bar chart")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--isa", choices=list(ISA_CAPS),
                   help="cap every library (pylucid and its peers) at this instruction set")
    return p.parse_args(argv)


def environment_line():
    versions = [f"numpy {np.__version__}"]
    for mod, name in (("scipy", "SciPy"), ("torch", "PyTorch"), ("jax", "JAX"),
                      ("mlx.core", "MLX")):
        if installed(mod):
            versions.append(f"{name} {getattr(sys.modules[mod], '__version__', '?')}")
    return (f"{platform.machine()}, {os.cpu_count()} CPUs, pylucid kernels "
            f"{_kernels.simd_level()}, max threads {_kernels.max_threads()}; "
            + ", ".join(versions))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.isa and platform.machine().lower() not in ("x86_64", "amd64"):
        print(f"--isa {args.isa} is an x86-64 instruction set", file=sys.stderr)
        return 2
    caps = ISA_CAPS.get(args.isa, {})
    if any(os.environ.get(k) != v for k, v in caps.items()):  # rerun with the caps in place
        import subprocess
        return subprocess.run([sys.executable, "-m", "pylucid", "bench", *argv],
                              env={**os.environ, **caps}).returncode
    if args.plot:  # fail before a long run, not after it
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print("--plot needs matplotlib: pip install 'pylucid-kernels[bench]'", file=sys.stderr)
            return 2
    peers = [c for c in args.peers if installed(PEERS[c][1])]
    missing = [c for c in args.peers if c not in peers]
    if "JAX" in peers:
        _jax()
    maxt = _kernels.max_threads()
    modes = {"1": [1], "all": ["all"], "both": [1, "all"]}[args.threads]
    sizes = [args.size] + ([args.small_size] if args.small_size else [])
    progress = None if args.quiet else (lambda s: print(f"  {s}", file=sys.stderr, flush=True))
    saved_threads = _kernels.get_num_threads()
    errors, results = [], {}
    try:
        for n in sizes:
            # So that a busy second core or drift of this shared machine's speed cannot pass
            # for a thread-count effect, the modes are measured twice, alternating, each cell
            # keeping its best.
            passes = 2 if len(modes) > 1 else 1
            for _ in range(passes):
                for mode in modes:
                    table = run_table(n, 1 if mode == 1 else maxt, args.repeat, args.ops,
                                      args.dtypes, peers, errors, progress)
                    results[n, mode] = best_of(results.get((n, mode)), table)
    finally:
        set_threads(saved_threads)

    print("## pylucid benchmark\n")
    print("`env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python -m pylucid bench "
          + " ".join(argv) + "`\n")
    print(environment_line() + "\n")
    if caps:
        print("Every library capped at " + args.isa + ": " + ", ".join(
            f"`{k}={v}`" for k, v in caps.items()) + "\n")
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if var in os.environ:
            print(f"**warning**: {var} is set; NumPy may be slowed. Unset it (see above).\n")
    if missing:
        print("not installed (columns dropped): " + ", ".join(missing) + "\n")
    for (n, mode), table in results.items():
        threads = "1 thread" if mode == 1 else f"all threads ({maxt})"
        unit = "µs per call (= ns per element)" if n == 1000 else "ns per element"
        print(f"### {threads}, {n:,} elements: {unit}, lower is better\n")
        print(markdown(table, peers) + "\n")
        print("Speedup of pylucid (peer / pylucid, > 1: pylucid faster; memcpy and out= "
              "columns against pylucid out=, PyTorch against pylucid's faster form):\n")
        print(markdown(table, peers, ratios=True) + "\n")
    checks = check_targets(results, args.size, args.small_size)
    if checks:
        print("### Targets of issue 4\n")
        for ok, text in checks:
            print(f"- {'PASS' if ok else 'FAIL'}: {text}")
        print()
    print("Legend: memcpy is `np.copyto` (2 streams) in forward rows and the 3-stream floor "
          "`np.add(g, y, out=gx)` in backward rows; (o) = PyTorch out= form was faster; "
          "backward PyTorch = `autograd.grad` on a prebuilt graph; '–' = no such case. "
          "JAX and MLX keep their own threading in both modes. Details: `pydoc pylucid.bench`.")
    if errors:
        print("\nFailed cells:\n" + "\n".join(f"- {e}" for e in errors))
    if args.plot:
        plot(results, peers, args.plot)
        print(f"\nplot written to {args.plot}")
    return 0
