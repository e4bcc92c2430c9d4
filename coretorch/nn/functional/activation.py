"""Activation functions of ``nn.functional`` (pointwise ops exist as coretorch ops; these add
PyTorch's functional signatures: `inplace=`, legacy implicit softmax dims, ...)."""

from __future__ import annotations

import warnings

from ...ops import aten
from ...tensor.tensor import Tensor
from ._from_schema import functional

__all__ = [
    "relu",
    "relu_",
    "relu6",
    "leaky_relu",
    "leaky_relu_",
    "gelu",
    "silu",
    "mish",
    "elu",
    "elu_",
    "selu",
    "celu",
    "softplus",
    "sigmoid",
    "tanh",
    "hardtanh",
    "hardtanh_",
    "hardsigmoid",
    "hardswish",
    "logsigmoid",
    "softsign",
    "tanhshrink",
    "threshold",
    "glu",
    "softmax",
    "log_softmax",
    "softmin",
    "hardshrink",
    "softshrink",
    "rrelu",
    "rrelu_",
    "threshold_",
    "selu_",
    "celu_",
    "gumbel_softmax",
]


relu = functional("relu")
relu6 = functional("relu6")
leaky_relu = functional("leaky_relu")
gelu = functional("gelu", inplace=False)
silu = functional("silu")
mish = functional("mish")
elu = functional("elu", hide=("scale", "input_scale"))
selu = functional("selu")
celu = functional("celu")
softplus = functional("softplus")
hardtanh = functional("hardtanh")
hardsigmoid = functional("hardsigmoid")
hardswish = functional("hardswish")
logsigmoid = functional("log_sigmoid", name="logsigmoid")
softsign = functional("softsign")
tanhshrink = functional("tanhshrink")
threshold = functional("threshold")
glu = functional("glu")
hardshrink = functional("hardshrink")
softshrink = functional("softshrink")
rrelu = functional("rrelu", hide=("generator",))
sigmoid = aten.sigmoid.entry
tanh = aten.tanh.entry


def relu_(input: Tensor) -> Tensor:
    """In-place relu."""
    return input.relu_()


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place leaky_relu."""
    return input.leaky_relu_(negative_slope)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place hardtanh."""
    return input.hardtanh_(min_val, max_val)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place elu."""
    return input.elu_(alpha)


def rrelu_(
    input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False
) -> Tensor:
    """In-place rrelu."""
    return aten.rrelu_(input, lower, upper, training)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place threshold."""
    return aten.threshold_(input, threshold, value)


def selu_(input: Tensor) -> Tensor:
    """In-place selu."""
    return aten.selu_(input)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place celu."""
    return aten.celu_(input, alpha)


def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """Samples from the Gumbel-softmax distribution over `dim`: softmax((logits + g) / tau) with
    g ~ Gumbel(0, 1); with `hard` a one-hot vector whose gradient is the soft sample's
    (straight-through)."""
    # -log(E) with E ~ Exp(1) is Gumbel(0, 1); E = -log(U) with U ~ U(0, 1]
    uniform = 1 - aten.rand(tuple(logits.shape), dtype=logits.dtype, device=logits.device)
    gumbels = -(-uniform.log()).log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = aten.zeros_like(logits).scatter(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to "
        f"include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """exp(x) / sum(exp(x)) along `dim` (computed in `dtype` if given)."""
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return input.softmax(dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """log(softmax(x)) along `dim`, computed stably."""
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return input.log_softmax(dim, dtype)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """softmax(-x)."""
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    return (-input).softmax(dim, dtype)
