"""The graph layer: Tensor, backward nodes and the engine."""
from .tensor import Tensor, tensor  # first: nodes and engine refer back to it
from .engine import backward, enable_grad, grad, is_grad_enabled, no_grad

__all__ = ["Tensor", "tensor", "backward", "grad", "no_grad", "enable_grad", "is_grad_enabled"]
