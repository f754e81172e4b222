"""Types: pylucid ships py.typed and stubs for its compiled modules; mypy --strict is happy."""
import os
import subprocess
import sys
import textwrap

import pytest

import pylucid

pytest.importorskip("mypy")

EXAMPLE = """
import numpy as np
import numpy.typing as npt

from pylucid import _kernels, ufuncs
from pylucid._include import get_include


def cube_root_and_grad(
    x: npt.NDArray[np.float64],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    y: npt.NDArray[np.float64] = ufuncs.cube_root(x)
    gx: npt.NDArray[np.float64] = ufuncs.cube_root_backward(np.ones_like(x), y)
    return y, gx


def describe() -> str:
    loops: list[str] = ufuncs.erfinv.types
    _kernels.set_num_threads(_kernels.max_threads())
    threads: int = _kernels.get_num_threads()
    return f"{_kernels.simd_level()} {threads} {loops} {get_include()}"


ufunc: np.ufunc = ufuncs.sqrt
print(cube_root_and_grad(np.arange(3.0)), describe(), ufunc.nin)
"""


def package_root():
    return os.path.dirname(os.path.dirname(os.path.abspath(pylucid.__file__)))


def mypy_env():
    env = dict(os.environ)
    root = package_root()
    if os.path.basename(root) != "site-packages":
        env["MYPYPATH"] = root  # a source checkout; an installed copy is found by py.typed
    return env


def run_mypy(*args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", *args],
        cwd=cwd, env=mypy_env(), capture_output=True, text=True,
    )


def test_py_typed_and_stubs_ship():
    package = os.path.dirname(os.path.abspath(pylucid.__file__))
    for name in ("py.typed", "_kernels.pyi", "cython_kernels.pyi"):
        assert os.path.isfile(os.path.join(package, name)), name


def test_mypy_strict_on_usage_example(tmp_path):
    (tmp_path / "example.py").write_text(textwrap.dedent(EXAMPLE))
    # --follow-imports=silent: judge the example and pylucid's declared types, not the
    # strictness of pylucid's own untyped internals.
    proc = run_mypy("--strict", "--follow-imports=silent", "example.py", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_sees_the_stubs(tmp_path):
    # The stubs are really used: a wrong argument type is an error, not Any.
    (tmp_path / "wrong.py").write_text("from pylucid import _kernels\n_kernels.set_num_threads('2')\n")
    proc = run_mypy("--strict", "--follow-imports=silent", "wrong.py", cwd=tmp_path)
    assert proc.returncode == 1 and "set_num_threads" in proc.stdout, proc.stdout + proc.stderr


def test_stub_matches_compiled_module(tmp_path):
    # stubtest imports the compiled modules and checks every public name against the stubs,
    # so a function added to _kernels.pyx without a stub fails here.
    allow = tmp_path / "allowlist.txt"
    allow.write_text("pylucid\\.\\w+\\.__test__\npylucid\\.cython_kernels\\.__pyx_capi__\n")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "--allowlist", str(allow),
         "pylucid._kernels", "pylucid.cython_kernels"],
        cwd=tmp_path, env=dict(mypy_env(), PYTHONPATH=package_root()),
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
