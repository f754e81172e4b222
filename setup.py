"""Build pylucid's two extensions: pylucid._kernels (the ufuncs) and pylucid.cython_kernels
(the C-level API that other packages' Cython code cimports).

The build logic lives in pylucid/_build.py, shipped inside the package, so that a project
vendoring pylucid under another name builds it the same way (see README, "Vendoring").
It is loaded by path because the package cannot be imported before it is built.
"""
import importlib.util
import os

from setuptools import setup

spec = importlib.util.spec_from_file_location("pylucid_build", os.path.join("pylucid", "_build.py"))
lucid_build = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lucid_build)

setup(
    ext_modules=lucid_build.ext_modules("pylucid"),
    cmdclass={"build_ext": lucid_build.BuildKernels},
)
