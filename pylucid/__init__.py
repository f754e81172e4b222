"""pylucid: exact, fast sqrt, cube_root and erfinv with gradients of any order."""
from . import ufuncs
from ._include import get_include
from ._kernels import get_num_threads, set_num_threads
from .amp import autocast
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .graph import Tensor, enable_grad, grad, is_grad_enabled, no_grad, tensor
from .ops import cube_root, erfinv, sqrt
from .ops import cube_root as cbrt
from .schema import AmpPolicy, OpSchema

__version__ = "0.1.0"

__all__ = [
    # the functional API
    "sqrt", "cube_root", "cbrt", "erfinv", "ufuncs",
    # the graph layer
    "Tensor", "tensor", "grad", "no_grad", "enable_grad", "is_grad_enabled",
    # op metadata and mixed precision
    "OpSchema", "AmpPolicy", "autocast",
    # gradient checks
    "gradcheck", "gradgradcheck", "GradcheckError",
    # kernel threads and the C-level API's include folder
    "set_num_threads", "get_num_threads", "get_include",
]
