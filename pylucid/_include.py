"""Where pylucid's C headers live, for code built against pylucid (re-exported as get_include)."""
import os


def get_include() -> str:
    """Return the folder holding pylucid's C headers (``vforce.h`` and the kernels).

    Pass it to ``include_dirs`` when compiling code that says ``#include "vforce.h"``
    or cimports ``pylucid._accelerate``.  As with NumPy's ``.pxd`` files, Cython finds
    ``pylucid/cython_kernels.pxd`` on ``sys.path``; a module that only cimports
    ``pylucid.cython_kernels`` needs no header, so this folder is optional for it.
    """
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "csrc")
