"""LayerNorm and GroupNorm layers."""

from __future__ import annotations

from .. import functional as F, init
from ..functional.normalization import as_normalized_shape
from ._factory import new_param, register_affine, reset_affine
from ._layer import SHOWN, options_repr
from .module import Module

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm"]


class _AffineNorm(Module):
    """A normalization layer whose optional affine starts as the identity."""

    def _affine(self, shape: tuple, affine: bool, bias: bool, device, dtype) -> None:
        register_affine(self, shape, affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        reset_affine(self)

    def _bias_repr(self) -> str:
        return f", bias={self.bias is not None}"


class LayerNorm(_AffineNorm):
    """Normalize over the trailing `normalized_shape` dims; elementwise affine (weight 1, bias 0)
    when `elementwise_affine`.

    Raises:
        RuntimeError: when the input's trailing dims are not `normalized_shape`.

    Examples:
        >>> import coretorch
        >>> ln = coretorch.nn.LayerNorm(3)
        >>> ln(coretorch.tensor([[1., 2., 3.]])).detach()
        tensor([[-1.2247,  0.0000,  1.2247]])
        >>> ln(coretorch.zeros(2, 4))
        Traceback (most recent call last):
            ...
        RuntimeError: layer_norm(): Given normalized_shape=[3], expected input with shape ...
    """

    def __init__(
        self,
        normalized_shape,
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.normalized_shape = as_normalized_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        self._affine(self.normalized_shape, elementwise_affine, bias, device, dtype)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            options_repr(self, ("normalized_shape",), eps=SHOWN, elementwise_affine=SHOWN)
            + self._bias_repr()
        )


class RMSNorm(Module):
    """x / sqrt(mean(x²) + eps) over the trailing dims, times a learned weight."""

    def __init__(
        self,
        normalized_shape,
        eps: float | None = None,
        elementwise_affine: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.normalized_shape = as_normalized_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = new_param(self.normalized_shape, device, dtype)
            init.ones_(self.weight)
        else:
            self.register_parameter("weight", None)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return options_repr(self, ("normalized_shape",), eps=SHOWN, elementwise_affine=SHOWN)


class GroupNorm(_AffineNorm):
    """Normalize groups of channels of (N, C, *) inputs; per-channel affine when `affine`."""

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        self._affine((num_channels,), affine, bias, device, dtype)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            options_repr(self, ("num_groups", "num_channels"), eps=SHOWN, affine=SHOWN)
            + self._bias_repr()
        )
