"""The hook-based spectral_norm of older PyTorch (``torch.nn.utils.spectral_norm``):
``weight_orig`` parameter, ``weight_u``/``weight_v`` buffers and a forward pre-hook that runs
power iteration (in training) and divides by the estimated largest singular value."""

from __future__ import annotations

from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..modules.module import Module
from ..parameter import Parameter
from .weight_norm import remove_hook

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook of `spectral_norm`."""

    def __init__(
        self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        if n_power_iterations <= 0:
            raise ValueError(
                f"Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.name, self.dim = name, dim
        self.n_power_iterations, self.eps = n_power_iterations, eps

    def reshape_weight_to_matrix(self, weight):
        """The weight as a 2-D matrix with dimension `dim` first and the rest flattened."""
        if self.dim != 0:
            weight = weight.permute(
                (self.dim,) + tuple(d for d in range(weight.dim()) if d != self.dim)
            )
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module: Module, do_power_iteration: bool):
        """The weight divided by its largest singular value, estimated by power iteration when
        asked."""
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    F.normalize(weight_mat.t().mv(u), dim=0, eps=self.eps, out=v)
                    F.normalize(weight_mat.mv(v), dim=0, eps=self.eps, out=u)
                u, v = u.clone(), v.clone()
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        """Replace the hook's parameters and buffers on `module` by a plain normalized weight
        parameter."""
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(
        module: Module, name: str, n_power_iterations: int, dim: int, eps: float
    ) -> "SpectralNorm":
        """Add spectral normalization of parameter `name` to `module`; returns the hook.

        Raises:
            RuntimeError: when that parameter already has a spectral_norm hook.
        """
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two spectral_norm hooks on the same parameter {name}"
                )
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        with no_grad():
            weight_mat = fn.reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = F.normalize(weight.new_empty((h,)).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty((w,)).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Normalize ``module.<name>`` by its spectral norm before every forward (deprecated form;
    see ``parametrizations.spectral_norm``)."""
    if dim is None:
        dim = 1 if getattr(module, "transposed", False) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Replace the hook by a plain ``<name>`` parameter holding the normalized weight."""
    return remove_hook(module, SpectralNorm, "spectral_norm", name)
