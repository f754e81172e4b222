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
"""
from __future__ import annotations

import contextlib
import sys
import threading

import numpy as np

from .schema import AmpPolicy

__all__ = ["autocast", "compute_dtype", "get_autocast_dtype", "BFLOAT16"]

_CASTS: dict = {}  # autocast dtype -> _casts(dtype), filled on first use
_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
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
            _CASTS.clear()  # rebuilt with bfloat16 in them
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


def _casts(amp: np.dtype) -> dict:
    """policy -> {input dtype: compute dtype} for one autocast dtype (built once per dtype)."""
    low = [_F16] + ([BFLOAT16] if BFLOAT16 is not None else [])
    return {
        AmpPolicy.Promote: {_F32: amp},
        AmpPolicy.ForceFP32: {d: _F32 for d in low},
        AmpPolicy.KeepInput: {},
    }


class _State(threading.local):
    dtype = None  # the autocast dtype, or None when off
    casts = None  # _CASTS[dtype] while on: ops read it once per call


_state = _State()


def get_autocast_dtype():
    """The active autocast dtype in this thread, or None."""
    return _state.dtype


def compute_dtype(policy: AmpPolicy, dtype, amp=None) -> np.dtype:
    """The dtype an op with ``policy`` computes a ``dtype`` input in under autocast ``amp``.

    ``amp=None`` means the current thread's autocast state.
    """
    dtype = np.dtype(dtype)
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
