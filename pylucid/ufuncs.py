"""The NumPy ufuncs: three ops and their fused backward kernels.

Genuine ``numpy.ufunc`` objects with ``e->e``, ``f->f`` and ``d->d`` loops (backward:
``ee->e``, ``ff->f``, ``dd->d``), so broadcasting, ``out=``, ``where=``, ``dtype=``,
NumPy's error state and ``__array_ufunc__`` (Dask, xarray) work as for ``np.sqrt``.
"""
from ._kernels import (
    cube_root,
    cube_root_backward,
    erfinv,
    erfinv_backward,
    sqrt,
    sqrt_backward,
)

__all__ = ["sqrt", "cube_root", "erfinv", "sqrt_backward", "cube_root_backward", "erfinv_backward"]
