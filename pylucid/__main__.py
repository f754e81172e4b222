"""``python -m pylucid``: what this build runs on, and a self-check against NumPy/SciPy.

``python -m pylucid bench [...]`` runs the side-by-side CPU benchmark (pylucid.bench) and
``python -m pylucid bench-gpu [...]`` the GPU one (pylucid.bench_gpu).
"""
import sys

import numpy as np

from . import __version__, _kernels, ufuncs


def kernel_path():
    if sys.platform == "darwin":
        return "Apple Accelerate (sqrt, cube_root) + portable C (erfinv, gradients)"
    return f"portable C kernels, {_kernels.simd_level()}"


def self_check():
    """Compare each op with an independent implementation; True when all agree."""
    rng = np.random.default_rng(0)
    try:
        from scipy.special import erfinv as scipy_erfinv
    except ImportError:
        scipy_erfinv = None
    peers = {"sqrt": ("numpy.sqrt", np.sqrt, rng.uniform(0, 1e6, 10**5)),
             "cube_root": ("numpy.cbrt", np.cbrt, rng.uniform(-1e6, 1e6, 10**5)),
             "erfinv": ("scipy.special.erfinv", scipy_erfinv, rng.uniform(-1, 1, 10**5))}
    edges = {"sqrt": ([4.0, -0.0, np.inf], [2.0, -0.0, np.inf]),
             "cube_root": ([-8.0, 27.0, -0.0], [-2.0, 3.0, -0.0]),
             "erfinv": ([1.0, -1.0, -0.0], [np.inf, -np.inf, -0.0])}
    ok = True
    for name, (peer_name, peer, x) in peers.items():
        op = getattr(ufuncs, name)
        xs, expected = edges[name]
        y = op(np.array(xs))
        good = np.array_equal(y, expected) and np.array_equal(np.signbit(y), np.signbit(expected))
        line = f"  {name:<10} edges {'ok' if good else 'FAIL'}"
        if peer is None:
            line += f"; {peer_name} not installed"
        else:
            for dtype, tol in ((np.float32, 2e-7), (np.float64, 1e-15)):
                xd = x.astype(dtype)
                rel = np.max(np.abs(op(xd) - peer(xd.astype(np.float64))) /
                             np.maximum(np.abs(peer(xd.astype(np.float64))), 1e-300))
                good &= rel <= 2 * tol
                line += f"; {np.dtype(dtype).name} max rel diff vs {peer_name} {rel:.1e}"
        ok &= good
        print(line + ("" if good else "  <-- FAIL"))
    return ok


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["bench"]:
        from .bench import main as bench_main
        return bench_main(argv[1:])
    if argv[:1] == ["bench-gpu"]:
        from .bench_gpu import main as bench_gpu_main
        return bench_gpu_main(argv[1:])
    if argv:
        print(f"usage: python -m pylucid [bench ... | bench-gpu ...]; got {' '.join(argv)!r}",
              file=sys.stderr)
        return 2
    print(f"pylucid {__version__} (numpy {np.__version__})")
    print(f"kernels: {kernel_path()}")
    print(f"threads: {_kernels.get_num_threads()} of {_kernels.max_threads()}")
    print("self-check:")
    ok = self_check()
    print("all ok" if ok else "SELF-CHECK FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
