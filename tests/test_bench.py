"""Smoke tests of ``python -m pylucid bench`` (pylucid/bench.py): it runs on tiny sizes and
prints the tables; peers that are not installed are dropped, never an error."""
import math
import platform

import numpy as np
import pytest

from pylucid import _kernels, bench
from pylucid.__main__ import main as pylucid_main

TINY = ["--size", "2000", "--small-size", "1000", "--repeat", "1", "--quiet"]


def test_bench_prints_tables(capsys):
    before = _kernels.get_num_threads()
    assert bench.main(TINY) == 0
    out = capsys.readouterr().out
    assert "| case | memcpy | NumPy | NumPy out= |" in out
    for row in ("| sqrt f32 |", "| cbrt (±x) f64 |", "| erfinv f32 backward |"):
        assert row in out
    assert "1 thread, 2,000 elements" in out and "all threads" in out
    assert "Speedup of pylucid" in out and "Targets of issue 4" in out
    assert "Failed cells" not in out
    assert _kernels.get_num_threads() == before  # thread count restored


def test_dispatch_from_python_m_pylucid(capsys):
    args = ["bench", "--size", "500", "--small-size", "0", "--repeat", "1", "--threads", "1",
            "--ops", "sqrt", "--dtypes", "float64", "--peers", "NumPy", "pylucid", "--quiet"]
    assert pylucid_main(args) == 0
    out = capsys.readouterr().out
    assert "| case | NumPy | pylucid |" in out and "| sqrt f64 backward |" in out


@pytest.mark.parametrize("peer", [p for p, (_, mod) in bench.PEERS.items()
                                  if mod and not bench.installed(mod)])
def test_missing_peer_is_dropped(peer, capsys):
    bench.main(["--size", "100", "--small-size", "0", "--repeat", "1", "--threads", "1",
                "--ops", "sqrt", "--quiet", "--peers", peer, "pylucid"])
    assert "not installed (columns dropped): " + peer in capsys.readouterr().out


def reference(kind, op, a):
    """Independent float64 values: NumPy/SciPy forward, the NumPy backward expression."""
    if kind == "bwd":
        y = a["y"].astype(np.float64)
        return bench.NUMPY_BACKWARD[op](a["g"].astype(np.float64), y)
    x = a["x"].astype(np.float64)
    if op == "erfinv":
        return pytest.importorskip("scipy.special").erfinv(x)
    return {"sqrt": np.sqrt, "cube_root": np.cbrt}[op](x)


@pytest.mark.parametrize("op", list(bench.OPS))
@pytest.mark.parametrize("dt", list(bench.DTYPES))
@pytest.mark.parametrize("kind", ["fwd", "bwd", "graph"])
def test_every_installed_peer_computes_the_op(op, dt, kind):
    """Each peer's timed callable runs; forward/backward results (pylucid's included) agree
    with an independent float64 reference, so every column times the same computation."""
    a = bench.make_inputs(op, bench.DTYPES[dt], 64)
    expected = reference(kind, op, a) if kind != "graph" else None
    rtol = 1e-4 if dt == "float32" else 1e-9
    for name, (peer, mod) in bench.PEERS.items():
        if name == "memcpy" or not bench.installed(mod):
            continue
        made = peer(kind, op, dt, a)
        for fn, _ in (made if isinstance(made, list) else [(made, "")] if made else []):
            a["out"][:] = np.nan
            got = fn()
            if expected is None or name == "MLX":  # mx.eval returns nothing to compare
                continue
            got = got[0] if isinstance(got, tuple) else got  # torch.autograd.grad
            got = a["out"] if got is None else got
            got = np.asarray(got.detach() if hasattr(got, "detach") else got, dtype=float)
            np.testing.assert_allclose(got, expected, rtol=rtol, err_msg=f"{name} {kind}")


def test_best_ns_and_targets():
    assert bench.best_ns(lambda: None, repeat=2) < 1e6
    row = {c: bench.Cell() for c in bench.PEERS}
    row["NumPy"] = bench.Cell(2.0)
    row["pylucid"] = bench.Cell(1.0)
    assert bench.best(row, "pylucid", "pylucid out=") == 1.0
    assert math.isnan(bench.best(row, "SciPy"))
    checks = bench.check_targets({(10, 1): {("fwd", "sqrt", "float64"): row}}, 10, 0)
    assert checks == [(True, "sqrt f64: NumPy / pylucid = 2.00 (≥ 1)")]


def test_repeated_passes_keep_each_cells_best():
    key = ("fwd", "sqrt", "float32")
    first = {key: {"NumPy": bench.Cell(2.0, "a"), "SciPy": bench.Cell(), "pylucid": bench.Cell(1.0)}}
    second = {key: {"NumPy": bench.Cell(1.5, "b"), "SciPy": bench.Cell(3.0), "pylucid": bench.Cell(1.2)}}
    merged = bench.best_of(first, second)[key]
    assert (merged["NumPy"].ns, merged["NumPy"].note) == (1.5, "b")
    assert merged["SciPy"].ns == 3.0            # not measured in one pass: the other's value
    assert merged["pylucid"].ns == 1.0
    assert bench.best_of(None, second) is second


def test_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = tmp_path / "bench.png"
    assert bench.main(["--size", "200", "--small-size", "0", "--repeat", "1", "--threads", "1",
                       "--ops", "sqrt", "--quiet", "--plot", str(path)]) == 0
    assert path.stat().st_size > 1000


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="x86-64 only")
def test_isa_cap_reruns_with_every_library_capped(capfd):
    assert bench.main(["--isa", "avx2", "--size", "200", "--small-size", "0", "--repeat", "1",
                       "--threads", "1", "--ops", "sqrt", "--dtypes", "float32",
                       "--peers", "NumPy", "pylucid", "--quiet"]) == 0
    out = capfd.readouterr().out
    assert "Every library capped at avx2: `PYLUCID_ISA=avx2`" in out
    assert "NPY_DISABLE_CPU_FEATURES" in out and "| sqrt f32 |" in out
    if _kernels.simd_level() != "baseline":
        assert "pylucid kernels avx2+fma" in out
