"""Build pylucid's one extension, pylucid._kernels.

_kernels.pyx calls only the vForce-style names declared in _accelerate.pxd; this file
alone decides what sits behind them:

* csrc/kernels.c is compiled once per instruction set (baseline, and AVX2+FMA on
  x86-64); csrc/vforce.c picks one set at run time, so no -march=native is needed.
* On macOS, Accelerate supplies vvsqrt*/vvcbrt*; erfinv and the gradients stay ours.
* OpenMP is used where the compiler has it; without it the kernels run on one thread.
"""
import os
import platform
import sys
import tempfile

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

CSRC = os.path.join("pylucid", "csrc")
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


class BuildKernels(build_ext):
    def build_extension(self, ext):
        if self.compiler.compiler_type == "msvc":
            raise RuntimeError("pylucid builds with GCC or Clang (the kernels use GNU C)")
        isas = [("baseline", [])]
        if IS_X86_64:
            isas.append(("avx2", ["-mavx2", "-mfma"]))
            ext.define_macros.append(("LUCID_HAVE_AVX2", "1"))
        for isa, flags in isas:
            # One object per ISA from the same source, each in its own folder.
            ext.extra_objects += self.compiler.compile(
                [os.path.join(CSRC, "kernels.c")],
                output_dir=os.path.join(self.build_temp, isa),
                include_dirs=[CSRC],
                macros=[("LUCID_ISA", isa)],
                extra_postargs=KERNEL_FLAGS + flags,
                depends=[os.path.join(CSRC, h) for h in os.listdir(CSRC) if h.endswith(".h")],
            )
        if sys.platform != "darwin" and compiler_accepts(self.compiler, ["-fopenmp"]):
            ext.extra_compile_args.append("-fopenmp")
            ext.extra_link_args.append("-fopenmp")
        super().build_extension(ext)


kernels = Extension(
    "pylucid._kernels",
    sources=["pylucid/_kernels.pyx", os.path.join(CSRC, "vforce.c")],
    include_dirs=[CSRC, np.get_include()],
    define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_22_API_VERSION")],
    extra_compile_args=["-O3", "-std=c99"],
    extra_link_args=["-framework", "Accelerate"] if sys.platform == "darwin" else [],
)

setup(
    ext_modules=cythonize([kernels], language_level=3),
    cmdclass={"build_ext": BuildKernels},
)
