"""Backends: where an array's kernels run.

A backend is an object with the forward kernels ``sqrt``, ``cube_root``, ``erfinv``
(``(a, shape, dtype) -> array``), the fused backward kernels ``sqrt_backward``,
``cube_root_backward``, ``erfinv_backward`` (``(g, y) -> array``), and the few array
helpers the graph layer needs: ``exp``, ``log``, ``broadcast_to``, ``ones``, ``copy``,
``asarray(data, dtype=None)`` (from NumPy data or its own arrays) and ``numpy(a)`` (a NumPy
array; the two move data between devices), and the dtype rules ``dtype(spec)`` (the one
place a dtype name, or another backend's dtype, becomes this backend's dtype object),
``check_dtype(op, dtype)`` and ``is_floating(dtype)``. Both backends have exactly these.

Adding a backend is one entry in ``_DEVICES``; each loaded backend's dtypes join the autocast
tables (``pylucid.amp``). The backend of an array is chosen by an exact type check
(``type(a)``) against each loaded backend's ``array_types``, never by ``isinstance``:
subclasses of ndarray go through NumPy's own dispatch instead.
"""
from __future__ import annotations

import importlib

from .. import amp as _amp

__all__ = ["get_backend", "backend_for", "DEVICES"]

_GPU_HINT = (
    'the "gpu" device needs MLX: pip install "pylucid-kernels[gpu]" '
    "(mlx[cuda13] on Linux, mlx on macOS), or "
    'pip install "pylucid-kernels[gpu-cpu]" for CPU-only MLX'
)

# device -> (backend module, relative so a vendored copy works; a module that must import
#            first, or None; its install hint; the __module__ of its array type, so an array
#            selects its backend before it is loaded)
_DEVICES = {
    "cpu": (".cpu", None, None, "numpy"),
    "gpu": (".mlx", "mlx.core", _GPU_HINT, "mlx.core"),
}
DEVICES = tuple(_DEVICES)

_LOADED: dict = {}   # device -> backend object
_BY_TYPE: dict = {}  # exact array type -> backend object


def get_backend(device: str):
    """The backend object for ``device`` (``"cpu"`` or ``"gpu"``), loaded once."""
    be = _LOADED.get(device) if isinstance(device, str) else None
    if be is not None:
        return be
    try:
        module, needs, hint, _ = _DEVICES[device]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown device {device!r}; expected one of {', '.join(map(repr, DEVICES))}"
        ) from None
    if needs is not None:
        try:
            importlib.import_module(needs)
        except ImportError as e:
            raise RuntimeError(hint) from e
    try:
        mod = importlib.import_module(module, __name__)
    except ModuleNotFoundError as e:
        if e.name != __name__ + module:
            raise
        raise RuntimeError(f"the {device!r} backend is not part of this pylucid build") from e
    be = mod.BACKEND
    _LOADED[device] = be
    for t in be.array_types:
        _BY_TYPE[t] = be
    _amp._add_backend(be)
    return be


def backend_for(a):
    """The backend of array ``a`` (exact type match), or None for a non-backend object."""
    be = _BY_TYPE.get(type(a))
    if be is None:
        tmod = type(a).__module__
        for device, (_, _, _, array_module) in _DEVICES.items():
            if tmod == array_module and device not in _LOADED:
                get_backend(device)
                return _BY_TYPE.get(type(a))
    return be


get_backend("cpu")
