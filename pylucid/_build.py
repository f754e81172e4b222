"""How pylucid's extensions are built; used by pylucid's own setup.py and by projects that
vendor pylucid, so a vendored copy is built exactly like the original.

Both extensions (``_kernels``: the ufuncs; ``cython_kernels``: the C-level API for other
Cython code) call only the vForce-style names declared in ``_accelerate.pxd``; this file
alone decides what sits behind them:

* csrc/kernels.c is compiled once per instruction set (baseline, and AVX2+FMA and
  AVX-512 on x86-64); csrc/vforce.c picks one set at run time, so no -march=native is needed.
* On macOS, Accelerate supplies vvsqrt*/vvcbrt*; erfinv and the gradients stay ours.
* OpenMP is used where the compiler has it; without it the kernels run on one thread.

Load this file by path, not as ``pylucid._build``: the package cannot be imported before
it is built.  A project that vendors pylucid as ``myproj._lucid`` writes::

    spec = importlib.util.spec_from_file_location("lucid_build", "myproj/_lucid/_build.py")
    lucid_build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lucid_build)
    setup(..., ext_modules=lucid_build.ext_modules("myproj._lucid"),
          cmdclass={"build_ext": lucid_build.BuildKernels})
"""
import os
import platform
import sys
import tempfile

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension
from setuptools.command.build_ext import build_ext

MODULES = ("_kernels", "cython_kernels")
KERNEL_FLAGS = ["-O3", "-std=c99", "-fopenmp-simd", "-ffp-contract=off", "-fno-math-errno"]
IS_X86_64 = platform.machine().lower() in ("x86_64", "amd64")


def compiler_accepts(compiler, flags):
    """Whether the compiler builds and links a trivial OpenMP program with these flags."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "probe.c")
        with open(src, "w") as f:
            f.write("#include <omp.h>\nint main(void) { return omp_get_num_procs() < 1; }\n")
        try:
            objs = compiler.compile([src], output_dir=tmp, extra_postargs=flags)
            compiler.link_executable(objs, os.path.join(tmp, "probe"), extra_postargs=flags)
        except Exception:
            return False
    return True


class KernelExtension(Extension):
    """An extension that links pylucid's per-ISA kernels (its csrc/vforce.c source says where)."""


class BuildKernels(build_ext):
    """build_ext that adds the per-ISA kernel objects to every KernelExtension.

    Other extensions of the same project pass through untouched.
    """

    def build_extension(self, ext):
        if not isinstance(ext, KernelExtension):
            return super().build_extension(ext)
        if self.compiler.compiler_type == "msvc":
            raise RuntimeError("pylucid builds with GCC or Clang (the kernels use GNU C)")
        csrc = next(os.path.dirname(s) for s in ext.sources if os.path.basename(s) == "vforce.c")
        isas = [("baseline", [])]
        if IS_X86_64:
            isas += [("avx2", ["-mavx2", "-mfma"]),
                     ("avx512", ["-mavx512f", "-mavx512dq", "-mavx512vl", "-mavx512bw", "-mfma",
                                 "-mprefer-vector-width=512"])]
            ext.define_macros.append(("LUCID_X86_64", "1"))
        for isa, flags in isas:
            # One object per ISA from the same source, each in its own folder.
            ext.extra_objects += self.compiler.compile(
                [os.path.join(csrc, "kernels.c")],
                output_dir=os.path.join(self.build_temp, isa),
                include_dirs=[csrc],
                macros=[("LUCID_ISA", isa)],
                extra_postargs=KERNEL_FLAGS + flags,
                depends=ext.depends,
            )
        if sys.platform != "darwin" and compiler_accepts(self.compiler, ["-fopenmp"]):
            ext.extra_compile_args.append("-fopenmp")
            ext.extra_link_args.append("-fopenmp")
        super().build_extension(ext)


def ext_modules(package="pylucid", path=None):
    """The cythonized extensions of a copy of pylucid importable as ``package``.

    ``path`` is its source folder relative to setup.py (default: ``package`` with dots
    as folder separators).  The .pyx files use relative cimports, so any name works.
    """
    path = path or os.path.join(*package.split("."))
    csrc = os.path.join(path, "csrc")
    exts = [
        KernelExtension(
            f"{package}.{name}",
            sources=[os.path.join(path, f"{name}.pyx"), os.path.join(csrc, "vforce.c")],
            include_dirs=[csrc, np.get_include()],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_22_API_VERSION")],
            extra_compile_args=["-O3", "-std=c99"],
            extra_link_args=["-framework", "Accelerate"] if sys.platform == "darwin" else [],
            # the kernel objects are extra_objects, which build_ext does not track: a change
            # to any kernel source must still rebuild and relink the extension
            depends=sorted(os.path.join(csrc, f) for f in os.listdir(csrc)
                           if f.endswith((".h", ".c"))),
        )
        for name in MODULES
    ]
    return cythonize(exts, language_level=3)
