"""Activation layers (ReLU, LeakyReLU, GELU, SiLU, Tanh, Sigmoid, Softmax, LogSoftmax, ...)."""

from __future__ import annotations

from typing import Callable

from .. import functional as F
from ._layer import functional_layer
from .module import Module

__all__ = [
    "ReLU",
    "ReLU6",
    "LeakyReLU",
    "GELU",
    "SiLU",
    "Mish",
    "ELU",
    "SELU",
    "CELU",
    "Softplus",
    "Tanh",
    "Sigmoid",
    "Hardtanh",
    "Hardsigmoid",
    "Hardswish",
    "LogSigmoid",
    "Softsign",
    "Tanhshrink",
    "Threshold",
    "GLU",
    "Softmax",
    "LogSoftmax",
    "Softmin",
    "Hardshrink",
    "Softshrink",
    "RReLU",
]


def _layer(name: str, fn: Callable, doc: str) -> type:
    return functional_layer(name, fn, doc, __name__)


ReLU = _layer("ReLU", F.relu, "max(0, x).")
ReLU6 = _layer("ReLU6", F.relu6, "min(max(0, x), 6).")
LeakyReLU = _layer("LeakyReLU", F.leaky_relu, "x if x > 0 else negative_slope * x.")
GELU = _layer("GELU", F.gelu, "x * Phi(x); ``approximate='tanh'`` uses the tanh approximation.")
SiLU = _layer("SiLU", F.silu, "x * sigmoid(x).")
Mish = _layer("Mish", F.mish, "x * tanh(softplus(x)).")
ELU = _layer("ELU", F.elu, "x if x > 0 else alpha * (exp(x) - 1).")
SELU = _layer("SELU", F.selu, "scale * elu(x, alpha) with the self-normalizing constants.")
CELU = _layer("CELU", F.celu, "max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).")
Softplus = _layer(
    "Softplus", F.softplus, "log(1 + exp(beta * x)) / beta, linear above `threshold`."
)
Hardtanh = _layer("Hardtanh", F.hardtanh, "x clamped to [min_val, max_val].")
Hardsigmoid = _layer("Hardsigmoid", F.hardsigmoid, "relu6(x + 3) / 6.")
Hardswish = _layer("Hardswish", F.hardswish, "x * relu6(x + 3) / 6.")
Threshold = _layer("Threshold", F.threshold, "x if x > threshold else value.")
GLU = _layer("GLU", F.glu, "a * sigmoid(b), the halves of the input along `dim`.")
LogSigmoid = _layer("LogSigmoid", F.logsigmoid, "log(sigmoid(x)).")
Softsign = _layer("Softsign", F.softsign, "x / (1 + |x|).")
Tanhshrink = _layer("Tanhshrink", F.tanhshrink, "x - tanh(x).")
Tanh = _layer("Tanh", F.tanh, "tanh(x).")
Sigmoid = _layer("Sigmoid", F.sigmoid, "1 / (1 + exp(-x)).")


class _SoftmaxBase(Module):
    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_SoftmaxBase):
    """softmax along `dim`."""

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)


class LogSoftmax(_SoftmaxBase):
    """log_softmax along `dim`."""

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)


class Softmin(_SoftmaxBase):
    """softmin along `dim`: softmax of the negated input."""

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)


class _Shrink(Module):
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(_Shrink):
    """x where |x| > lambd, else 0."""

    def forward(self, input):
        return F.hardshrink(input, self.lambd)


class Softshrink(_Shrink):
    """x - lambd above lambd, x + lambd below -lambd, else 0."""

    def forward(self, input):
        return F.softshrink(input, self.lambd)


class RReLU(Module):
    """Randomized leaky ReLU: slopes drawn from U(lower, upper) per element in training,
    (lower + upper) / 2 in evaluation."""

    def __init__(
        self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False
    ) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (
            ", inplace=True" if self.inplace else ""
        )
