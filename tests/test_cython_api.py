"""The C-level API: a downstream extension cimports pylucid.cython_kernels and calls it nogil.

The extension is built in a temporary folder with setuptools + Cython, the way another
package would build against an installed pylucid, and must agree bit for bit with the
ufuncs (both run the same kernels).
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pylucid
from pylucid import ufuncs
from pylucid._include import get_include

pytest.importorskip("Cython")
pytest.importorskip("setuptools")

DOWNSTREAM_PYX = """
# cython: language_level=3, boundscheck=False, wraparound=False
from cython cimport floating
from pylucid.cython_kernels cimport (
    sqrt, cube_root, erfinv, sqrt_backward, cube_root_backward, erfinv_backward)

cdef extern from "vforce.h":  # the header is found through pylucid.get_include()
    pass

def forward(str op, floating[::1] out, const floating[::1] x, Py_ssize_t n):
    cdef int k = ("sqrt", "cube_root", "erfinv").index(op)
    with nogil:
        if k == 0:
            sqrt(&out[0], &x[0], n)
        elif k == 1:
            cube_root(&out[0], &x[0], n)
        else:
            erfinv(&out[0], &x[0], n)

def backward(str op, floating[::1] out, const floating[::1] g, const floating[::1] y,
             Py_ssize_t n):
    cdef int k = ("sqrt", "cube_root", "erfinv").index(op)
    with nogil:
        if k == 0:
            sqrt_backward(&out[0], &g[0], &y[0], n)
        elif k == 1:
            cube_root_backward(&out[0], &g[0], &y[0], n)
        else:
            erfinv_backward(&out[0], &g[0], &y[0], n)

def cube_root_inplace(double[::1] x):
    with nogil:
        cube_root(&x[0], &x[0], x.shape[0])
"""

SETUP_PY = """
from Cython.Build import cythonize
from setuptools import Extension, setup

import pylucid._include

ext = Extension("downstream", ["downstream.pyx"], include_dirs=[pylucid._include.get_include()])
setup(name="downstream", ext_modules=cythonize([ext]))
"""

OPS = ("sqrt", "cube_root", "erfinv")


@pytest.fixture(scope="module")
def downstream(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("downstream")
    (tmp / "downstream.pyx").write_text(textwrap.dedent(DOWNSTREAM_PYX))
    (tmp / "setup.py").write_text(textwrap.dedent(SETUP_PY))
    # Cython finds pylucid/*.pxd on sys.path, as it finds numpy's.
    site = os.path.dirname(os.path.dirname(os.path.abspath(pylucid.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([site, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, "setup.py", "build_ext", "--inplace"],
        cwd=tmp, env=env, capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    sys.path.insert(0, str(tmp))
    try:
        import downstream
    finally:
        sys.path.remove(str(tmp))
    return downstream


def inputs(op, dtype, n=1000):
    rng = np.random.default_rng(6)
    if op == "erfinv":
        x = rng.uniform(-1, 1, n)
        x[:4] = [-1, 1, 0, 0.5]
    elif op == "sqrt":
        x = rng.uniform(0, 1e6, n)
        x[:3] = [0, np.inf, 4]
    else:
        x = rng.standard_normal(n) * 1e3
        x[:3] = [-27, 0, np.inf]
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", OPS)
def test_forward_matches_ufunc(downstream, op, dtype):
    x = inputs(op, dtype)
    out = np.full_like(x, np.nan)
    downstream.forward(op, out, x, x.size)
    np.testing.assert_array_equal(out, getattr(ufuncs, op)(x))
    assert out.dtype == dtype


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", OPS)
def test_backward_matches_ufunc(downstream, op, dtype):
    y = getattr(ufuncs, op)(inputs(op, dtype))
    g = np.random.default_rng(1).standard_normal(y.size).astype(dtype)
    out = np.full_like(y, np.nan)
    downstream.backward(op, out, g, y, y.size)
    with np.errstate(all="ignore"):
        expected = getattr(ufuncs, f"{op}_backward")(g, y)
    np.testing.assert_array_equal(out, expected)


def test_length_is_respected(downstream):
    x = np.array([8.0, 27.0, 64.0])
    out = np.zeros(3)
    downstream.forward("cube_root", out, x, 0)  # n = 0 touches nothing
    np.testing.assert_array_equal(out, 0)
    downstream.forward("cube_root", out, x, 2)
    np.testing.assert_array_equal(out, [2.0, 3.0, 0.0])


def test_in_place(downstream):
    x = np.array([-27.0, 8.0, 0.125])
    downstream.cube_root_inplace(x)
    np.testing.assert_array_equal(x, [-3.0, 2.0, 0.5])


def test_get_include_has_headers():
    include = get_include()
    assert os.path.isfile(os.path.join(include, "vforce.h"))
    package = os.path.dirname(os.path.abspath(pylucid.__file__))
    for pxd in ("cython_kernels.pxd", "_accelerate.pxd"):
        assert os.path.isfile(os.path.join(package, pxd))
