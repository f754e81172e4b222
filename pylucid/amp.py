"""Automatic mixed precision: ``autocast`` and the dtype each op computes in.

Inside ``autocast(dtype)``, the ops ``pylucid.ops.*`` and their Tensor methods apply their
schema's :class:`~pylucid.schema.AmpPolicy` to a float input:

=============  =========  =========  =========  =======
policy         float16    bfloat16   float32    float64
=============  =========  =========  =========  =======
Promote        float16    bfloat16   autocast   float64
ForceFP32      float32    float32    float32    float64
KeepInput      float16    bfloat16   float32    float64
=============  =========  =========  =========  =======

float64 is never downcast; integer and bool inputs follow NumPy (computed in float64);
outside autocast every op keeps its input's float dtype. The raw ufuncs ignore autocast.
The state is thread-local: each thread starts with autocast off.

The same table serves every backend (MLX arrays and ``device="gpu"`` Tensors too): it is
written in dtype names and keyed by the dtype objects of every loaded backend, each mapped
by the backend's own ``dtype(name)``. NumPy's and MLX's dtype objects are distinct keys, so
an op still does one dict lookup and the NumPy path pays nothing for MLX.
"""
from __future__ import annotations

import contextlib
import sys
import threading

import numpy as np

from .schema import AmpPolicy

__all__ = ["autocast", "compute_dtype", "get_autocast_dtype", "BFLOAT16"]

_CASTS: dict = {}  # autocast dtype -> _casts(dtype): built on first use, extended in place
_BACKENDS: list = []  # every loaded backend (pylucid.backend.get_backend adds each)
_F16 = np.dtype(np.float16)
BFLOAT16 = None  # np.dtype(ml_dtypes.bfloat16) once known; see _load_bfloat16


def _load_bfloat16(import_it: bool):
    """Bind ``BFLOAT16`` from ml_dtypes: at once if ml_dtypes is already imported (a bfloat16
    array can exist only then), importing it only when ``import_it`` (it costs ~0.5 s, so
    ``import pylucid`` never does)."""
    global BFLOAT16
    if BFLOAT16 is None:
        mod = sys.modules.get("ml_dtypes")
        if mod is None and import_it:
            try:
                import ml_dtypes as mod
            except ImportError:
                mod = None
        if mod is not None:
            BFLOAT16 = np.dtype(mod.bfloat16)
            _refresh()  # NumPy's bfloat16 joins the tables
    return BFLOAT16


def bfloat16() -> np.dtype:
    """The bfloat16 dtype, or ``ImportError`` naming ml_dtypes when it is not installed."""
    if _load_bfloat16(True) is None:
        raise ImportError(
            "bfloat16 needs the optional dependency ml_dtypes: "
            'pip install ml_dtypes (or pip install "pylucid-kernels[amp]")'
        )
    return BFLOAT16


def _amp_dtype(dtype) -> np.dtype:
    if isinstance(dtype, str):
        name = dtype
    else:
        try:
            name = np.dtype(dtype).name
        except TypeError:
            name = repr(dtype)
    if name == "float16":
        return _F16
    if name == "bfloat16":
        return bfloat16()
    raise ValueError(f"autocast dtype must be 'float16' or 'bfloat16', got {dtype!r}")


# policy -> {input dtype: compute dtype}, by name; None stands for the autocast dtype
_RULES = {
    AmpPolicy.Promote: {"float32": None},
    AmpPolicy.ForceFP32: {"float16": "float32", "bfloat16": "float32"},
    AmpPolicy.KeepInput: {},
}


def _native(be, name):
    """``be``'s dtype called ``name``. NumPy's bfloat16 is None until ml_dtypes is loaded: no
    bfloat16 ndarray exists before, and importing it (~0.5 s) is not float16 autocast's job."""
    if name == "bfloat16" and be.name == "cpu":
        return BFLOAT16
    return be.dtype(name)


def _fill(casts: dict, amp: np.dtype) -> dict:
    """Key ``casts`` (one autocast dtype's table) by every loaded backend's dtypes, in place."""
    for be in _BACKENDS:
        for policy, rule in _RULES.items():
            for src, dst in rule.items():
                key = _native(be, src)
                if key is not None:
                    casts[policy][key] = _native(be, dst or amp.name)
    return casts


def _casts(amp: np.dtype) -> dict:
    """policy -> {input dtype: compute dtype} for one autocast dtype (built once per dtype)."""
    return _fill({policy: {} for policy in _RULES}, amp)


def _refresh():
    # In place: a thread inside autocast holds its table and must see what loaded since.
    for amp, casts in list(_CASTS.items()):  # a copy: another thread may add a table
        _fill(casts, amp)


def _add_backend(be):
    """Key the autocast tables by ``be``'s dtypes too (called once per backend, on load)."""
    _BACKENDS.append(be)
    _refresh()


class _State(threading.local):
    dtype = None  # the autocast dtype, or None when off
    casts = None  # _CASTS[dtype] while on: ops read it once per call


_state = _State()


def get_autocast_dtype():
    """The active autocast dtype in this thread, or None."""
    return _state.dtype


def compute_dtype(policy: AmpPolicy, dtype, amp=None):
    """The dtype an op with ``policy`` computes a ``dtype`` input in under autocast ``amp``.

    ``dtype`` is a loaded backend's dtype object (``mlx.core.float32``) or anything
    ``numpy.dtype`` takes; ``amp=None`` means the current thread's autocast state.
    """
    try:
        dtype = np.dtype(dtype)
    except TypeError:  # another backend's dtype object: the tables hold it as it is
        pass
    _load_bfloat16(False)
    if amp is None:
        casts = _state.casts
    else:
        amp = _amp_dtype(amp)
        casts = _CASTS.get(amp) or _CASTS.setdefault(amp, _casts(amp))
    if casts is None:
        return dtype
    return casts[policy].get(dtype, dtype)


class autocast(contextlib.ContextDecorator):
    """Compute ops in ``dtype`` (``"float16"`` or ``"bfloat16"``) per their AmpPolicy.

    A nestable, thread-local context manager and decorator; ``enabled=False`` turns
    autocast off inside it. The previous state comes back on exit, exceptions included.
    bfloat16 needs ml_dtypes (``ImportError`` naming it otherwise).
    """

    def __init__(self, dtype="float16", enabled: bool = True):
        self.enabled = bool(enabled)
        self.dtype = _amp_dtype(dtype) if self.enabled else None
        self._saved: list = []

    def __enter__(self):
        if BFLOAT16 is None:
            _load_bfloat16(False)
        s = _state
        self._saved.append((s.dtype, s.casts))
        if self.enabled:
            d = self.dtype
            s.casts = _CASTS.get(d) or _CASTS.setdefault(d, _casts(d))
            s.dtype = d
        else:
            s.dtype = s.casts = None
        return self

    def __exit__(self, *exc):
        _state.dtype, _state.casts = self._saved.pop()
        return False

    def _recreate_cm(self):  # decorator form: a fresh state stack per call (threads)
        cm = object.__new__(type(self))
        cm.enabled, cm.dtype, cm._saved = self.enabled, self.dtype, []
        return cm

    def __repr__(self):
        return f"autocast(dtype={self.dtype}, enabled={self.enabled})"


_load_bfloat16(False)
