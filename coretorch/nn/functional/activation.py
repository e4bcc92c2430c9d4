"""Activation functions of ``nn.functional`` (pointwise ops exist as coretorch ops; these add
PyTorch's functional signatures: `inplace=`, legacy implicit softmax dims, ...)."""
from __future__ import annotations

import warnings

from ...ops import aten
from ...tensor.tensor import Tensor

__all__ = ["relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "gelu", "silu", "mish", "elu",
           "selu", "celu", "softplus", "sigmoid", "tanh", "hardtanh", "hardtanh_",
           "hardsigmoid", "hardswish", "logsigmoid", "softsign", "tanhshrink", "threshold",
           "glu", "softmax", "log_softmax", "softmin"]


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(0, x)."""
    return input.relu_() if inplace else input.relu()


def relu_(input: Tensor) -> Tensor:
    return input.relu_()


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(0, x), 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x if x > 0 else negative_slope * x."""
    if inplace:
        return input.leaky_relu_(negative_slope)
    return input.leaky_relu(negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return input.leaky_relu_(negative_slope)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Φ(x) (exact, with erf) or its tanh approximation (``approximate="tanh"``)."""
    return input.gelu(approximate=approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x)."""
    return input.silu_() if inplace else input.silu()


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""
    return input.mish_() if inplace else input.mish()


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return input.elu_(alpha) if inplace else input.elu(alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with the self-normalizing constants."""
    if inplace:
        return input.elu_(_SELU_ALPHA).mul_(_SELU_SCALE)
    return input.elu(_SELU_ALPHA) * _SELU_SCALE


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise RuntimeError("celu(): ZeroDivisionError: alpha cannot be 0 for CELU")
    out = (input / alpha).elu() * alpha
    return input.copy_(out) if inplace else out


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta * x)) / beta, linear above `threshold`."""
    return input.softplus(beta, threshold)


def sigmoid(input: Tensor) -> Tensor:
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return input.hardtanh_(min_val, max_val) if inplace else input.hardtanh(min_val, max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, True)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    return input.hardsigmoid_() if inplace else input.hardsigmoid()


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    return input.hardswish_() if inplace else input.hardswish()


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)), computed stably as -softplus(-x)."""
    return -((-input).softplus())


def softsign(input: Tensor) -> Tensor:
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:
    return input - input.tanh()


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x if x > threshold else value."""
    out = aten.where(input > threshold, input, value)
    return input.copy_(out) if inplace else out


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b) where a, b are the two halves of `input` along `dim`."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if input.size(dim) % 2:
        raise RuntimeError(f"glu(): Halving dimension must be even, but dimension {dim} is size "
                           f"{input.size(dim)}")
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  f"include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """exp(x) / sum(exp(x)) along `dim` (computed in `dtype` if given)."""
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return input.softmax(dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype=None) -> Tensor:
    """log(softmax(x)) along `dim`, computed stably."""
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return input.log_softmax(dim, dtype)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """softmax(-x)."""
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    return (-input).softmax(dim, dtype)
