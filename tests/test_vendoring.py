"""Vendoring: pylucid copied into another project under another name builds and works.

The copy is built from that project's own setup.py with pylucid's _build.py (the recipe
in README, "Vendoring"), then imported in a fresh interpreter where the name ``pylucid``
must never be imported: everything inside the package is relative.
"""
import ast
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

import pylucid

pytest.importorskip("Cython")
pytest.importorskip("setuptools")

SOURCE = os.path.dirname(os.path.abspath(pylucid.__file__))
# Build outputs of the original: never copied.
IGNORE = shutil.ignore_patterns(
    "*.so", "*.pyd", "__pycache__", "_kernels.c", "cython_kernels.c", "*.html"
)

SETUP_PY = """
import importlib.util
import os

from setuptools import setup

# pylucid's build helper, loaded by path: the vendored package is not built yet.
spec = importlib.util.spec_from_file_location(
    "lucid_build", os.path.join("myproj", "_lucid", "_build.py"))
lucid_build = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lucid_build)

setup(
    name="myproj",
    version="1.0",
    packages=["myproj", "myproj._lucid"],
    ext_modules=lucid_build.ext_modules("myproj._lucid"),
    cmdclass={"build_ext": lucid_build.BuildKernels},
)
"""

SMOKE = """
import pickle
import sys

import numpy as np

import myproj._lucid as lucid
from myproj._lucid import ufuncs

assert ufuncs.cube_root(np.array([-27.0, 8.0])).tolist() == [-3.0, 2.0]
assert ufuncs.sqrt(np.float32(4)).dtype == np.float32
assert ufuncs.erfinv(np.array([0.0, 1.0])).tolist() == [0.0, np.inf]
assert ufuncs.cube_root_backward(1.0, 2.0) == 1 / 12
assert ufuncs.cube_root.__module__ == "myproj._lucid.ufuncs", ufuncs.cube_root.__module__
assert pickle.loads(pickle.dumps(ufuncs.erfinv)) is ufuncs.erfinv
leaked = sorted(m for m in sys.modules if m.split(".")[0] == "pylucid")
assert not leaked, f"the vendored copy imported the original: {leaked}"
print("vendored ok")
"""

SELF_IMPORT = re.compile(r"^\s*(from|c?import)\s+pylucid\b")


def package_files(*exts):
    for folder, _, files in os.walk(SOURCE):
        for name in sorted(files):
            if name.endswith(exts):
                yield os.path.join(folder, name)


def test_no_absolute_self_imports():
    """The package refers to itself only relatively, so it works under any name."""
    offenders = []
    for path in package_files(".py"):
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            if any(n.split(".")[0] == "pylucid" for n in names):
                offenders.append(f"{os.path.relpath(path, SOURCE)}:{node.lineno}")
    for path in package_files(".pyx", ".pxd"):
        with open(path) as f:
            for lineno, line in enumerate(f, 1):
                if SELF_IMPORT.match(line):
                    offenders.append(f"{os.path.relpath(path, SOURCE)}:{lineno}")
    assert not offenders, "use relative (c)imports instead: " + ", ".join(offenders)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    proj = tmp_path_factory.mktemp("vendoring")
    shutil.copytree(SOURCE, proj / "myproj" / "_lucid", ignore=IGNORE)
    (proj / "myproj" / "__init__.py").write_text("")
    (proj / "setup.py").write_text(textwrap.dedent(SETUP_PY))
    proc = subprocess.run(
        [sys.executable, "setup.py", "build_ext", "--inplace"],
        cwd=proj, capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proj


def test_vendored_copy_builds_and_works(project):
    built = os.listdir(project / "myproj" / "_lucid")
    for module in ("_kernels", "cython_kernels"):
        assert any(f.startswith(module + ".") and f.endswith((".so", ".pyd")) for f in built)
    # A fresh interpreter in the project folder: the source tree is not on its path.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SMOKE)],
        cwd=project, env=env, capture_output=True, text=True,
    )
    assert proc.returncode == 0 and "vendored ok" in proc.stdout, proc.stdout + proc.stderr
