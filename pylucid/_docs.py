"""Docstrings of the ufuncs, keyed by name; _kernels.pyx attaches them at creation."""

_UNARY = """{name}(x, /, out=None, *, where=True, casting='same_kind', order='K', dtype=None, subok=True)

{summary}

Parameters
----------
x : array_like
    Input values. Integer and bool inputs are computed as NumPy's ``np.sqrt``
    computes them; float16 is computed in float32 and rounded once.
out : ndarray, None, or tuple of ndarray and None, optional
    A location into which the result is stored.
where : array_like, optional
    Where False, ``out`` keeps its value.
**kwargs
    The other keyword arguments of a NumPy ufunc.

Returns
-------
y : ndarray or scalar
    {returns}

See Also
--------
{see_also}

Notes
-----
{notes}

Examples
--------
>>> import numpy as np
>>> from pylucid import ufuncs
{examples}
"""

_BINARY = """{name}(g, y, /, out=None, *, where=True, casting='same_kind', order='K', dtype=None, subok=True)

Vector-Jacobian product of ``{op}`` from its saved output: ``{formula}``.

One fused pass over ``g`` and ``y``, with no temporaries.

Parameters
----------
g : array_like
    Gradient with respect to the output of ``{op}``.
y : array_like
    The output of ``{op}`` (never its input).
out : ndarray, None, or tuple of ndarray and None, optional
    A location into which the result is stored.

Returns
-------
gx : ndarray or scalar
    Gradient with respect to the input of ``{op}``.

Notes
-----
{notes}

Examples
--------
>>> import numpy as np
>>> from pylucid import ufuncs
{examples}
"""

UFUNC_DOCS = {
    "sqrt": _UNARY.format(
        name="sqrt",
        summary="Square root, element-wise, correctly rounded (IEEE 754).",
        returns="The non-negative square root of each element of `x`.",
        see_also="numpy.sqrt : the same values; pylucid.ops.sqrt : differentiable version.",
        notes="sqrt(-0.0) is -0.0, sqrt(x < 0) is NaN and sets NumPy's 'invalid' error\n"
              "state, sqrt(+inf) is +inf.",
        examples=">>> ufuncs.sqrt(np.array([4.0, -0.0, 2.0]))\narray([ 2.        , -0.        ,  1.41421356])",
    ),
    "cube_root": _UNARY.format(
        name="cube_root",
        summary="Real cube root, element-wise, sign-preserving, within 1 ULP.",
        returns="The real cube root of each element of `x`.",
        see_also="numpy.cbrt : libm's cube root; pylucid.ops.cube_root : differentiable version.",
        notes="Exact on every representable perfect cube: cube_root(-8.0) is -2.0 and\n"
              "cube_root(27.0) is 3.0. cube_root(+-0) is +-0, cube_root(+-inf) is +-inf,\n"
              "subnormal inputs are handled. It never sets a floating-point error.",
        examples=">>> ufuncs.cube_root(np.array([-8.0, 27.0, 2.0]))\narray([-2.        ,  3.        ,  1.25992105])",
    ),
    "erfinv": _UNARY.format(
        name="erfinv",
        summary="Inverse error function, element-wise.",
        returns="The y with erf(y) = x for each element x of `x`.",
        see_also="scipy.special.erfinv : the same function; pylucid.ops.erfinv : differentiable version.",
        notes="The domain is [-1, 1]: erfinv(+-1) is +-inf, |x| > 1 and NaN give NaN\n"
              "(quietly, as scipy.special.erfinv), erfinv(-0.0) is -0.0 and tiny x give\n"
              "x*sqrt(pi)/2. Within 1 ULP in float32 and 2 ULP in float64.",
        examples=">>> ufuncs.erfinv(np.array([0.0, 0.5, -1.0]))\narray([ 0.        ,  0.47693628,        -inf])",
    ),
    "sqrt_backward": _BINARY.format(
        name="sqrt_backward", op="sqrt", formula="g / (2*y)",
        notes="y = 0 gives an infinite gradient, and NaN where g is 0 too, as PyTorch.",
        examples=">>> ufuncs.sqrt_backward(1.0, np.array([2.0, 0.5]))\narray([0.25, 1.  ])",
    ),
    "cube_root_backward": _BINARY.format(
        name="cube_root_backward", op="cube_root", formula="g / (3*y**2)",
        notes="y = 0 gives an infinite gradient, and NaN where g is 0 too, as PyTorch.",
        examples=">>> ufuncs.cube_root_backward(1.0, np.array([1.0, 2.0]))\narray([0.33333333, 0.08333333])",
    ),
    "erfinv_backward": _BINARY.format(
        name="erfinv_backward", op="erfinv", formula="sqrt(pi)/2 * exp(y**2) * g",
        notes="y = +-inf (x = +-1) gives an infinite gradient, and NaN where g is 0, as PyTorch.",
        examples=">>> ufuncs.erfinv_backward(1.0, np.array([0.0]))\narray([0.88622693])",
    ),
}
