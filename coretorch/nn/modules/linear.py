"""Linear, Bilinear and Identity layers."""

from __future__ import annotations

import math

from .. import functional as F, init
from ._factory import new_param, register_bias, reset_fan_in_uniform
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear", "NonDynamicallyQuantizableLinear"]


class Identity(Module):
    """Returns its input; accepts (and ignores) any constructor arguments."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x Wᵀ + b with W (out_features, in_features); W and b start as U(-1/√in, 1/√in)
    (kaiming_uniform_ with a=√5, as PyTorch).

    Args:
        in_features: size of the last dimension of the input.
        out_features: size of the last dimension of the output.
        bias: whether to add the learned bias b.
        device: where the parameters are created.
        dtype: the parameters' dtype (default: the default dtype).

    Examples:
        >>> import coretorch
        >>> layer = coretorch.nn.Linear(3, 2)
        >>> layer
        Linear(in_features=3, out_features=2, bias=True)
        >>> layer(coretorch.ones(4, 3)).shape
        coretorch.Size([4, 2])
        >>> with coretorch.no_grad():
        ...     _ = layer.weight.fill_(1.0), layer.bias.fill_(0.5)
        >>> layer(coretorch.tensor([[1., 2., 3.]]))
        tensor([[6.5000, 6.5000]], grad_fn=<AddmmBackward0>)
        >>> layer(coretorch.ones(4, 5))
        Traceback (most recent call last):
            ...
        RuntimeError: ...
    """

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = new_param((out_features, in_features), device, dtype)
        register_bias(self, (out_features,), bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-initialize weight and bias uniformly in +-1/sqrt(in_features), as PyTorch."""
        reset_fan_in_uniform(self.weight, self.bias)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class NonDynamicallyQuantizableLinear(Linear):
    """The output projection of MultiheadAttention (a Linear; the name mirrors PyTorch's repr)."""


class Bilinear(Module):
    """y = x1ᵀ A x2 + b with A (out_features, in1_features, in2_features)."""

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = new_param((out_features, in1_features, in2_features), device, dtype)
        register_bias(self, (out_features,), bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-initialize weight and bias uniformly in +-1/sqrt(in1_features)."""
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )
