"""Independent references for the three ops: mpmath, NumPy's long double, SciPy.

Nothing here calls pylucid.  ``ulp_error`` measures how far a result is from a reference
known to far more precision than the result's dtype, in units in the last place of the
result's dtype.
"""
import mpmath
import numpy as np

mpmath.mp.prec = 256

MP_OPS = {
    "sqrt": lambda x: mpmath.sqrt(x) if x >= 0 else mpmath.nan,
    "cube_root": lambda x: mpmath.sign(x) * mpmath.cbrt(abs(x)),
    "erfinv": lambda x: mpmath.erfinv(x) if abs(x) < 1 else mpmath.nan,
}


def mp_value(op, x):
    """op(x) in mpmath at 256 bits, for a finite in-domain float x."""
    return MP_OPS[op](mpmath.mpf(float(x)))


def ulp(dtype):
    """Spacing of floats of ``dtype`` at |v| (a power of two), as an mpf function."""
    info = np.finfo(dtype)

    def spacing(v):
        v = abs(v)
        e = max(int(mpmath.floor(mpmath.log(v, 2))) if v else info.minexp, info.minexp)
        return mpmath.mpf(2) ** (e - info.nmant)

    return spacing


def ulp_error_mp(op, x, y):
    """|y - op(x)| in ULPs of y's dtype, with op(x) from mpmath (for finite results)."""
    ref = mp_value(op, x)
    return float(abs(mpmath.mpf(float(y)) - ref) / ulp(np.asarray(y).dtype)(ref))


def ulp_error_array(y, ref):
    """Element-wise |y - ref| / ulp(ref) for arrays, ref of higher precision than y.

    ref is float64 for float32 results and long double for float64 results."""
    y = np.asarray(y)
    spacing = np.spacing(np.abs(ref).astype(y.dtype)).astype(ref.dtype)
    return np.abs(y.astype(ref.dtype) - ref) / spacing
