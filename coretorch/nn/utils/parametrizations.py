"""Ready-made parametrizations (mirrors ``torch.nn.utils.parametrizations``): weight_norm and
spectral_norm, registered through `parametrize` with PyTorch's names
(``parametrizations.weight.original0/original1``; ``_u``/``_v`` buffers for spectral norm)."""

from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...tensor.tensor import Tensor
from .. import functional as F
from ..modules.module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """The 2-norm of `v` over every dim but `dim`, shaped to broadcast against `v` (over all
    dims, as a 0-d tensor, when `dim` is -1, as PyTorch's norm_except_dim)."""
    if dim == -1:
        return v.norm(2)
    if dim != 0:
        return _norm_except_dim(v.transpose(0, dim), 0).transpose(0, dim)
    shape = (v.shape[0],) + (1,) * (v.dim() - 1)
    return v.reshape(v.shape[0], -1).norm(2, 1).reshape(shape)


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrize ``module.<name>`` as g · v / ‖v‖ (norm over every dim but `dim`; over the
    whole tensor with dim=None), g in ``parametrizations.<name>.original0`` and v in
    ``original1``."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(
        self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [-{ndim}, "
                f"{ndim - 1}] but got {dim})"
            )
        if n_power_iterations <= 0:
            raise ValueError(
                f"Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty((h,)).normal_(0, 1)
            v = weight_mat.new_empty((w,)).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(
                (self.dim,) + tuple(d for d in range(weight.dim()) if d != self.dim)
            )
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        with no_grad():
            for _ in range(n_power_iterations):
                F.normalize(weight_mat.mv(self._v), dim=0, eps=self.eps, out=self._u)
                F.normalize(weight_mat.t().mv(self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def _is_transposed_conv(module: Module) -> bool:
    return bool(getattr(module, "transposed", False))


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Divide ``module.<name>`` by its largest singular value, estimated by power iteration
    (one step per forward in training mode; `dim` 1 for transposed convolutions, else 0)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if _is_transposed_conv(module) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """Not available: the orthogonal parametrization needs matrix_exp, QR and linear solves,
    which coretorch does not have yet."""
    raise NotImplementedError(
        "nn.utils.parametrizations.orthogonal() needs matrix_exp, the "
        "Cayley map or Householder products (linalg), which coretorch "
        "does not provide yet"
    )
