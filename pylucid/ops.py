"""Functional API (temporary NumPy-only version)."""
import numpy as np
from pylucid import ufuncs

def sqrt(x, *, out=None):
    return ufuncs.sqrt(x, out=out)
def cube_root(x, *, out=None):
    return ufuncs.cube_root(x, out=out)
def erfinv(x, *, out=None):
    return ufuncs.erfinv(x, out=out)
