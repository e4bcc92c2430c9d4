"""The hook-based weight_norm of older PyTorch (``torch.nn.utils.weight_norm``, deprecated in
favor of ``parametrizations.weight_norm``): ``weight_g``/``weight_v`` parameters and a forward
pre-hook recomputing ``weight`` before every call."""

from __future__ import annotations

import warnings

from ..modules.module import Module
from ..parameter import Parameter
from .parametrizations import _norm_except_dim

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


class WeightNorm:
    """The forward pre-hook of `weight_norm` (``name = g · v / ‖v‖``)."""

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module):
        """The weight g * v / ||v|| from the module's `<name>_g` and `<name>_v` parameters."""
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return v * (g / _norm_except_dim(v, self.dim))

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> "WeightNorm":
        """Split parameter `name` of `module` into magnitude g and direction v; returns the hook.

        Raises:
            RuntimeError: when that parameter already has a weight_norm hook.
        """
        warnings.warn(
            "torch.nn.utils.weight_norm is deprecated in favor of "
            "torch.nn.utils.parametrizations.weight_norm.",
            FutureWarning,
            stacklevel=3,
        )
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(
                    f"Cannot register two weight_norm hooks on the same parameter {name}"
                )
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, fn.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        """Replace g and v on `module` by the plain weight parameter they compute."""
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Split ``module.<name>`` into a magnitude ``<name>_g`` and a direction ``<name>_v``
    (deprecated form; see ``parametrizations.weight_norm``)."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_hook(module: Module, kind: type, what: str, name: str) -> Module:
    """Remove the forward pre-hook of class `kind` for tensor `name` (undoing its change)."""
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, kind) and getattr(hook, "name", None) == name:
            hook.remove(module)  # type: ignore[attr-defined]  # the hook classes all have it
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"{what} of '{name}' not found in {module}")


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Fold the weight norm back into a plain ``<name>`` parameter."""
    return remove_hook(module, WeightNorm, "weight_norm", name)
