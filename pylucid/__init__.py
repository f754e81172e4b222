"""pylucid: exact, fast sqrt, cube_root and erfinv with gradients of any order."""
from pylucid import ufuncs
from pylucid.ops import cube_root, erfinv, sqrt

cbrt = cube_root
__version__ = "0.1.0"
__all__ = ["sqrt", "cube_root", "cbrt", "erfinv", "ufuncs"]
