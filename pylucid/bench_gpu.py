"""``python -m pylucid bench-gpu`` (or ``python -m pylucid.bench_gpu``): the GPU benchmark.

For 2**28 and 2**24 float32 elements, the forward and the backward pass of each op, in one
run on one GPU: pylucid on MLX (its custom CUDA kernels), MLX's own ops (mx.sqrt, mx.erfinv,
compiled sign*|x|**(1/3); backward: the formulas compiled with mx.compile), PyTorch CUDA
(torch.sqrt, torch.erfinv, sign*|x|**(1/3); backward: torch.autograd.grad through that
forward) and CuPy (cp.sqrt, cp.cbrt, cupyx.scipy.special.erfinv; backward: one
ElementwiseKernel each).

Throughput is GB/s of the fewest bytes each pass must move: forward reads x and writes y
(8 bytes per float32 element), backward reads g and y and writes the gradient (12 bytes).
Every framework is timed the same way: ``reps`` back-to-back calls (the last ``KEEP`` outputs
kept alive, so that each call writes memory the allocator has not just handed back), one
synchronisation, wall clock over reps; the median of ``trials`` such runs. ``reps`` is chosen so
that a run moves ~128 GiB: a synchronisation's fixed cost (measured on an H200: ~0.3 ms for
MLX, ~0.07 ms for PyTorch) then stays under 1 % of the time, so the figures are the
sustained throughput. The inputs are
random (never zeros) over each op's domain. Prints a markdown table, the ratio of pylucid to
PyTorch, and cube_root's forward against PyTorch's sqrt (the same bytes, so the same ceiling).
"""
import argparse
import collections
import math
import multiprocessing
import statistics
import sys
import time

OPS = ("sqrt", "cube_root", "erfinv")
DOMAIN = {"sqrt": (0.0, 100.0), "cube_root": (-100.0, 100.0), "erfinv": (-0.999, 0.999)}
BYTES = {"forward": 8, "backward": 12}   # float32: bytes read + written per element
KEEP = 8


def _calls(call, reps):
    """call() reps times back to back; the last KEEP results, still alive."""
    return list(collections.deque((call() for _ in range(reps)), maxlen=KEEP))


def _median_time(run_many, sync, reps, trials):  # used for the copy ceiling
    run_many(1)
    sync()                                   # warm-up: JIT compilation, allocator
    times = []
    for _ in range(trials):
        sync()
        t0 = time.perf_counter()
        keep = run_many(reps)
        sync()
        times.append((time.perf_counter() - t0) / reps)
        del keep
    return statistics.median(times)


# ------------------------------------------------------------------ per framework

def _mlx_inputs(n):
    """op -> (x, g, y = op(x)): random float32 MLX arrays over each op's domain, evaluated."""
    import mlx.core as mx
    from .backend import mlx as B
    inputs = {}
    for op in OPS:
        lo, hi = DOMAIN[op]
        x = mx.random.uniform(lo, hi, (n,), dtype=mx.float32)
        g = mx.random.normal((n,), dtype=mx.float32)
        y = getattr(B, op)(x)
        mx.eval(x, g, y)
        inputs[op] = (x, g, y)
    return inputs


def _mlx_runner(f, *args):
    """run_many(reps) for f(*args) on MLX: each call evaluated asynchronously, so that the GPU
    starts at once, as PyTorch's launches do."""
    import mlx.core as mx

    def call():
        o = f(*args)
        mx.async_eval(o)
        return o

    def run_many(reps):
        outs = _calls(call, reps)
        mx.eval(outs)
        return outs
    return run_many


def _mlx_cases(n):
    import mlx.core as mx
    from .backend import mlx as B

    def native_cbrt(x):
        return mx.sign(x) * mx.power(mx.abs(x), 1.0 / 3.0)

    native_fwd = {"sqrt": mx.sqrt, "erfinv": mx.erfinv, "cube_root": mx.compile(native_cbrt)}
    native_bwd = {
        "sqrt": mx.compile(lambda g, y: g / (2 * y)),
        "cube_root": mx.compile(lambda g, y: g / (3 * y * y)),
        "erfinv": mx.compile(lambda g, y: 0.88622692545275801 * mx.exp(y * y) * g),
    }
    cases = _mlx_inputs(n)

    for op in OPS:
        x, g, y = cases[op]
        yield op, "forward", "pylucid", _mlx_runner(getattr(B, op), x), mx.synchronize
        yield op, "forward", "mlx", _mlx_runner(native_fwd[op], x), mx.synchronize
        yield op, "backward", "pylucid", _mlx_runner(getattr(B, op + "_backward"), g, y), mx.synchronize
        yield op, "backward", "mlx", _mlx_runner(native_bwd[op], g, y), mx.synchronize


def _torch_cases(n):
    import torch

    dev = torch.device("cuda")
    fwd = {"sqrt": torch.sqrt, "erfinv": torch.erfinv,
           "cube_root": lambda x: torch.sign(x) * torch.abs(x).pow(1.0 / 3.0)}
    sync = torch.cuda.synchronize
    for op in OPS:
        lo, hi = DOMAIN[op]
        x = torch.empty(n, device=dev, dtype=torch.float32).uniform_(lo, hi)
        f = fwd[op]

        def run_fwd(reps, f=f, x=x):
            with torch.no_grad():
                return _calls(lambda: f(x), reps)
        yield op, "forward", "torch", run_fwd, sync

        xg = x.clone().requires_grad_(True)
        y = f(xg)
        g = torch.randn(n, device=dev, dtype=torch.float32)

        def run_bwd(reps, y=y, xg=xg, g=g):
            return _calls(lambda: torch.autograd.grad(y, xg, g, retain_graph=True)[0], reps)
        yield op, "backward", "torch", run_bwd, sync
        del x, xg, y, g


def _cupy_cases(n):
    import cupy as cp
    import cupyx.scipy.special as cps

    fwd = {"sqrt": cp.sqrt, "cube_root": cp.cbrt, "erfinv": cps.erfinv}
    bwd = {
        "sqrt": cp.ElementwiseKernel("T g, T y", "T out", "out = g / (2 * y)", "pl_sqrt_bwd"),
        "cube_root": cp.ElementwiseKernel("T g, T y", "T out", "out = g / (3 * y * y)",
                                          "pl_cbrt_bwd"),
        "erfinv": cp.ElementwiseKernel("T g, T y", "T out",
                                       "out = 0.88622692545275801f * exp(y * y) * g",
                                       "pl_erfinv_bwd"),
    }

    def sync():
        cp.cuda.Device().synchronize()
    for op in OPS:
        lo, hi = DOMAIN[op]
        x = cp.random.uniform(lo, hi, n, dtype=cp.float32)
        g = cp.random.standard_normal(n, dtype=cp.float32)
        y = fwd[op](x)
        yield op, "forward", "cupy", (lambda reps, f=fwd[op], x=x: _calls(lambda: f(x), reps)), sync
        yield op, "backward", "cupy", (lambda reps, f=bwd[op], g=g, y=y:
                                       _calls(lambda: f(g, y), reps)), sync


def _free_all():
    try:
        import mlx.core as mx
        mx.clear_cache()
    except Exception:  # noqa: BLE001
        pass
    try:
        import torch
        torch.cuda.empty_cache()
    except Exception:  # noqa: BLE001
        pass
    try:
        import cupy as cp
        cp.get_default_memory_pool().free_all_blocks()
    except Exception:  # noqa: BLE001
        pass


def _reps(n):
    return max(40, min(2000, 2**37 // (n * 8)))   # ~128 GiB of traffic per timed run


def measure(n, frameworks, trials):
    """{(op, pass, framework): GB/s} for n float32 elements.

    All cases are built first, then timed in interleaved rounds (the order rotating each
    round), so clock ramps and drift spread evenly over the frameworks."""
    makers = {"pylucid+mlx": _mlx_cases, "torch": _torch_cases, "cupy": _cupy_cases}
    cases = []
    for fw in frameworks:
        try:
            cases.extend(makers[fw](n))
        except Exception as e:  # noqa: BLE001 - report and go on
            print(f"  {fw} unavailable: {type(e).__name__}: {e}", file=sys.stderr)
    reps = _reps(n)
    times = {}
    for r in range(trials + 1):                       # round 0 is the warm-up
        k = r % max(len(cases), 1)
        for op, pas, who, run_many, sync in cases[k:] + cases[:k]:
            key = (op, pas, who)
            if key in times and times[key] is None:
                continue
            try:
                sync()
                t0 = time.perf_counter()
                keep = run_many(1 if r == 0 else reps)
                sync()
                dt = (time.perf_counter() - t0) / reps
                del keep
                if r:
                    times.setdefault(key, []).append(dt)
            except Exception as e:  # noqa: BLE001
                print(f"  {who} {op} {pas} n={n}: {type(e).__name__}: {e}", file=sys.stderr)
                times[key] = None
    del cases
    _free_all()
    return {key: BYTES[key[1]] * n / statistics.median(ts) / 1e9
            for key, ts in times.items() if ts}


def _measure_size(n, frameworks, trials, config):
    """measure() and copy_ceiling() for one size, in the process it is called in (main runs it
    in a fresh one per size: after the 2**28 runs, MLX's 2**24 throughput in the same process
    was seen to drop to about half, while a fresh process measures it as in isolation)."""
    from .backend import mlx as B
    B.CONFIG.update(config)
    return measure(n, frameworks, trials), copy_ceiling(n, trials)


def copy_ceiling(n, trials):
    try:
        import torch
        x = torch.empty(n, device="cuda", dtype=torch.float32).uniform_()
        t = _median_time(lambda reps: _calls(x.clone, reps), torch.cuda.synchronize,
                         _reps(n), trials)
        return 8 * n / t / 1e9
    except Exception:  # noqa: BLE001
        return float("nan")


VARIANTS = {  # kernel sources the tuner may choose between, per op (the first is exact)
    "sqrt": ("sqrt",), "cube_root": ("cube_root",), "erfinv": ("erfinv",),
    "sqrt_backward": ("sqrt_backward",), "cube_root_backward": ("cube_root_backward",),
    "erfinv_backward": ("erfinv_backward", "erfinv_backward_f32"),
}


def tune(n, trials, log=print):
    """Time every launch configuration of every CUDA kernel on n float32 elements, set
    pylucid.backend.mlx.CONFIG to the fastest of each op, and return it. Where an op has a
    more exact kernel source (erfinv in double), it is kept unless the cheaper one is more
    than 3% faster."""
    import mlx.core as mx
    from .backend import mlx as B
    data = {}
    for op, (x, g, y) in _mlx_inputs(n).items():
        data[op] = [x]
        data[op + "_backward"] = [g, y]
    configs = [(src, u, th, cs) for op in VARIANTS for src in VARIANTS[op]
               for u in (1, 2) for th in (128, 256, 512) for cs in (False, True)]
    owner = {src: op for op in VARIANTS for src in VARIANTS[op]}
    times = {}
    reps = _reps(n)
    for r in range(trials + 1):
        for cfg in configs:
            run_many = _mlx_runner(B._run_cuda, owner[cfg[0]], data[owner[cfg[0]]], None, cfg)
            mx.synchronize()
            t0 = time.perf_counter()
            keep = run_many(1 if r == 0 else reps)
            mx.synchronize()
            del keep
            if r:
                times.setdefault(cfg, []).append((time.perf_counter() - t0) / reps)
    best = {}
    for op, srcs in VARIANTS.items():
        nbytes = BYTES["backward" if "backward" in op else "forward"] * n
        per_src = {}
        for src in srcs:
            rows = sorted((statistics.median(times[c]), c) for c in configs if c[0] == src)
            for t, c in rows:
                log(f"  tune {op:<19} {c[0]:<20} U={c[1]} threads={c[2]:<4} cs={int(c[3])}: "
                    f"{nbytes / t / 1e9:,.0f} GB/s")
            per_src[src] = rows[0]
        exact = per_src[srcs[0]]
        fast = min(per_src.values())
        best[op] = exact[1] if exact[0] <= 1.03 * fast[0] else fast[1]
    B.CONFIG.update(best)
    _free_all()
    return best


def check_correctness(n=1 << 20):
    """pylucid's GPU results against PyTorch's on the same data (max relative difference)."""
    import mlx.core as mx
    import numpy as np
    import torch
    from .backend import mlx as B
    out = []
    for op in OPS:
        lo, hi = DOMAIN[op]
        xn = np.random.default_rng(0).uniform(lo, hi, n).astype(np.float32)
        y = np.array(getattr(B, op)(mx.array(xn)), np.float64)
        xt = torch.from_numpy(xn).cuda()
        ref = {"sqrt": torch.sqrt, "erfinv": torch.erfinv,
               "cube_root": lambda v: torch.sign(v) * torch.abs(v.double()).pow(1 / 3)}[op](xt)
        ref = ref.double().cpu().numpy()
        out.append((op, float(np.max(np.abs(y - ref) / np.maximum(np.abs(ref), 1e-30)))))
    return out


def _fmt(v):
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:,.0f}"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m pylucid bench-gpu", description=__doc__.split("\n\n")[0])
    ap.add_argument("--log2n", type=int, nargs="+", default=[28, 24],
                    help="sizes as powers of two (default: 28 24)")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--frameworks", nargs="+", default=["pylucid+mlx", "torch", "cupy"])
    ap.add_argument("--tune", action="store_true",
                    help="first time every CUDA launch configuration and use the fastest")
    ap.add_argument("--tune-log", default="bench_gpu_tune.log", help="where --tune writes its timings")
    args = ap.parse_args(argv)

    import mlx.core as mx
    from .backend import mlx as B
    if B.platform() != "cuda":
        print(f"bench-gpu needs MLX's CUDA backend; MLX {mx.__version__} runs on "
              f"{mx.default_device()} here", file=sys.stderr)
        return 1
    env = [f"MLX {mx.__version__}"]
    for mod in ("torch", "cupy"):
        try:
            env.append(f"{mod} {__import__(mod).__version__}")
        except Exception:  # noqa: BLE001
            env.append(f"{mod} missing")
    try:
        import torch
        env.insert(0, torch.cuda.get_device_name())
    except Exception:  # noqa: BLE001
        pass
    print("# pylucid bench-gpu: " + ", ".join(env), flush=True)

    try:
        for op, rel in check_correctness():
            print(f"  check {op}: max rel diff vs PyTorch {rel:.2e}", flush=True)
    except Exception as e:  # noqa: BLE001
        print(f"  check skipped: {type(e).__name__}: {e}", flush=True)

    if args.tune:
        with open(args.tune_log, "w") as f:
            chosen = tune(1 << args.log2n[0], 3, log=lambda line: print(line, file=f))
        print("  tuned CONFIG = {", flush=True)
        for op, cfg in chosen.items():
            print(f"      {op!r}: {cfg!r},", flush=True)
        print("  }", flush=True)
    else:
        print(f"  CONFIG = {B.CONFIG!r}", flush=True)

    tables = []
    spawn = multiprocessing.get_context("spawn")
    for k in args.log2n:
        n = 1 << k
        with spawn.Pool(1) as pool:   # a fresh process per size, see _measure_size
            res, ceiling = pool.apply(_measure_size, (n, args.frameworks, args.trials, B.CONFIG))
        tables.append((k, n, res, ceiling))
        print(f"  measured 2^{k}", flush=True)

    print()
    print("| op | pass | n | pylucid on MLX (GB/s) | MLX ops | PyTorch | CuPy | pylucid / PyTorch |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for k, n, res, ceiling in tables:
        for op in OPS:
            for pas in ("forward", "backward"):
                p = res.get((op, pas, "pylucid"))
                t = res.get((op, pas, "torch"))
                ratio = f"{p / t:.2f}x" if p and t else "—"
                print(f"| {op} | {pas} | 2^{k} | {_fmt(p)} | {_fmt(res.get((op, pas, 'mlx')))} | "
                      f"{_fmt(t)} | {_fmt(res.get((op, pas, 'cupy')))} | {ratio} |")
    print()
    for k, n, res, ceiling in tables:
        c = res.get(("cube_root", "forward", "pylucid"))
        s = res.get(("sqrt", "forward", "torch"))
        line = f"2^{k}: copy (torch clone) {_fmt(ceiling)} GB/s"
        if c and s:
            line += f"; pylucid cube_root forward / PyTorch sqrt forward = {c / s:.2f}x"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
