"""PReLU (a learned negative slope, shared or per channel) and Softmax2d (softmax over the
channels at every position)."""

from __future__ import annotations

from .. import functional as F, init
from ._factory import new_param
from .module import Module

__all__ = ["PReLU", "Softmax2d"]


class PReLU(Module):
    """x where x > 0, else a x with learned `a` (one, or `num_parameters` = channels), starting
    at `init`."""

    def __init__(
        self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None
    ) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = new_param((num_parameters,), device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Set every slope to the `init` value given to the constructor."""
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softmax2d(Module):
    """Softmax over the channels of (N, C, H, W) or (C, H, W) inputs."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(
                f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead"
            )
        return F.softmax(input, -3)
