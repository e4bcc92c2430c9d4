"""Parametrizations (mirrors ``torch.nn.utils.parametrize``): a tensor of a module computed on
access from an unconstrained `original` through one or more modules.

``register_parametrization(m, "weight", P())`` moves ``m.weight`` to
``m.parametrizations.weight.original`` and makes ``m.weight`` a property returning
``P(original)``; assigning ``m.weight = X`` stores ``P.right_inverse(X)``. As in PyTorch, the
module's class is swapped for a subclass ``Parametrized<Class>`` holding the properties.
"""

from __future__ import annotations

import collections.abc
import copyreg
from contextlib import contextmanager
from copy import deepcopy
from typing import Callable, Sequence

from ...autograd.grad_mode import no_grad
from ...tensor.tensor import Tensor
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = [
    "cached",
    "ParametrizationList",
    "register_parametrization",
    "is_parametrized",
    "remove_parametrizations",
    "type_before_parametrizations",
    "transfer_parametrizations_and_params",
]

_cache_enabled = 0
_cache: dict = {}


@contextmanager
def cached():
    """Within this context each parametrized tensor is computed once and reused."""
    global _cache, _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module: Module, name: str, x) -> None:
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


def _maybe_set(dest: Tensor, src: Tensor) -> None:
    """Make `dest` hold `src`'s data (``dest.set_(src)``)."""
    dest.data = src


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order to `original` (or to `original0`,
    `original1`, ... when the first one's right_inverse returns several tensors)."""

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = tuple(original.shape), original.dtype
        with no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, collections.abc.Sequence)):
            raise ValueError(
                f"'right_inverse' must return a Tensor or a Sequence of tensors "
                f"(list, tuple...). Got {type(new).__name__}"
            )
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype is not new.dtype:
                raise ValueError(
                    f"When `right_inverse` outputs one tensor, it may not change the "
                    f"dtype.\noriginal.dtype: {original.dtype}\n"
                    f"right_inverse(original).dtype: {new.dtype}"
                )
            if original.device != new.device:
                raise ValueError(
                    f"When `right_inverse` outputs one tensor, it may not change the "
                    f"device.\noriginal.device: {original.device}\n"
                    f"right_inverse(original).device: {new.device}"
                )
            if new is not original:
                with no_grad():
                    _maybe_set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ValueError(
                        f"'right_inverse' must return a Tensor or a Sequence of "
                        f"tensors (list, tuple...). Got element {i} of the "
                        f"sequence with type {type(part).__name__}."
                    )
                if isinstance(original, Parameter):
                    part = Parameter(part.detach(), original.requires_grad)
                else:
                    part = part.detach().requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", part)
        if not self.unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
            if z.dtype is not original_dtype:
                raise ValueError(
                    f"Registering a parametrization may not change the dtype of the "
                    f"tensor, unless `unsafe` flag is enabled.\nunparametrized "
                    f"dtype: {original_dtype}\nparametrized dtype: {z.dtype}"
                )
            if tuple(z.shape) != original_shape:
                raise ValueError(
                    f"Registering a parametrization may not change the shape of the "
                    f"tensor, unless `unsafe` flag is enabled.\nunparametrized "
                    f"shape: {list(original_shape)}\nparametrized shape: "
                    f"{list(z.shape)}"
                )

    def right_inverse(self, value: Tensor) -> None:
        """Store `value` by running the right inverses backwards into `original`."""
        with no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(
                        f"parametrization {type(module).__name__} does not implement right_inverse."
                    )
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(
                        f"`right_inverse` should return a tensor. Got {type(value).__name__}"
                    )
                if value.dtype is not self.original.dtype:
                    raise ValueError(
                        f"The tensor returned by `right_inverse` has dtype "
                        f"{value.dtype} while `original` has dtype "
                        f"{self.original.dtype}"
                    )
                _maybe_set(self.original, value)
            else:
                if not isinstance(value, collections.abc.Sequence):
                    raise ValueError(
                        f"'right_inverse' must return a sequence of tensors. Got "
                        f"{type(value).__name__}."
                    )
                if len(value) != self.ntensors:
                    raise ValueError(
                        f"'right_inverse' must return a sequence of tensors of "
                        f"length {self.ntensors}. Got a sequence of length "
                        f"{len(value)}."
                    )
                for i, tensor in enumerate(value):
                    original_i = getattr(self, f"original{i}")
                    if tensor.dtype is not original_i.dtype:
                        raise ValueError(
                            f"Tensor {i} returned by `right_inverse` has dtype "
                            f"{tensor.dtype} while `original{i}` has dtype "
                            f"{original_i.dtype}"
                        )
                    _maybe_set(original_i, tensor)

    def forward(self) -> Tensor:
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _inject_new_class(module: Module) -> None:
    """Swap `module`'s class for a ``Parametrized<Class>`` subclass to hold the properties."""
    cls = module.__class__

    def default_deepcopy(self, memo):
        obj = memo.get(id(self), None)
        if obj is not None:
            return obj
        replica = self.__new__(self.__class__)
        memo[id(self)] = replica
        replica.__dict__ = deepcopy(self.__dict__, memo)
        for slot in copyreg._slotnames(self.__class__):  # type: ignore[attr-defined]  # private
            if hasattr(self, slot):
                setattr(replica, slot, deepcopy(getattr(self, slot), memo))
        return replica

    def getstate(self):
        raise RuntimeError(
            "Serialization of parametrized modules is only supported through state_dict()."
        )

    dct: dict[str, Callable] = {"__getstate__": getstate}
    if not hasattr(cls, "__deepcopy__"):
        dct["__deepcopy__"] = default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), dct)


def _inject_property(module: Module, tensor_name: str) -> None:
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def get_parametrized(self) -> Tensor:
        parametrization = self.parametrizations[tensor_name]
        if _cache_enabled:
            key = (id(module), tensor_name)
            tensor = _cache.get(key)
            if tensor is None:
                tensor = parametrization()
                _cache[key] = tensor
            return tensor
        return parametrization()

    def set_original(self, value: Tensor) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether `module` has any parametrization (or one on `tensor_name`)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def _check_same(what: str, tensor_name: str, y: Tensor, x) -> None:
    if not isinstance(x, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
    if x.dtype is not y.dtype:
        raise ValueError(
            f"Registering a parametrization may not change the dtype of the tensor, "
            f"unless the `unsafe` flag is enabled.\nmodule.{tensor_name}.dtype: "
            f"{y.dtype}\n{what}.dtype: {x.dtype}"
        )
    if tuple(x.shape) != tuple(y.shape):
        raise ValueError(
            f"Registering a parametrization may not change the shape of the tensor, "
            f"unless the `unsafe` flag is enabled.\nmodule.{tensor_name}.shape: "
            f"{list(y.shape)}\n{what}.shape: {list(x.shape)}"
        )


def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    """Make ``module.<tensor_name>`` the output of `parametrization` applied to the stored
    original (a second registration chains after the first)."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            _check_same(
                f"parametrization(module.{tensor_name})", tensor_name, y, parametrization(y)
            )
            if hasattr(parametrization, "right_inverse"):
                try:
                    z = parametrization.right_inverse(parametrization(y))
                except NotImplementedError:
                    pass
                else:
                    _check_same("parametrization.right_inverse", tensor_name, y, z)
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = parametrizations
    else:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a "
            f"parametrized element with name '{tensor_name}'"
        )
    return module


def remove_parametrizations(
    module: Module, tensor_name: str, leave_parametrized: bool = True
) -> Module:
    """Undo the parametrizations of `tensor_name`: it becomes a plain parameter (or buffer)
    again, holding the current parametrized value (or the original with
    ``leave_parametrized=False``)."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
                _maybe_set(original, t)
    else:
        if not leave_parametrized:
            raise ValueError(
                "Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                "that is parametrized in terms of a sequence of tensors."
            )
        with no_grad():
            t = getattr(module, tensor_name)
        original = Parameter(t.detach()) if parametrizations.original0.requires_grad else t.detach()
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class before parametrizations swapped it."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(
    from_module: Module, to_module: Module, tensor_name: str | None = None
) -> Module:
    """Register on `to_module` the parametrizations of `from_module` (all, or those of
    `tensor_name`), with `to_module`'s originals set to `from_module`'s."""
    if not is_parametrized(from_module):
        return to_module
    names = [tensor_name] if tensor_name is not None else list(from_module.parametrizations.keys())
    for name in names:
        source = from_module.parametrizations[name]
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name).detach()))
        for param_func in source:
            register_parametrization(to_module, name, param_func)
        target = to_module.parametrizations[name]
        if source.is_tensor:
            target.original = source.original
        else:
            for i in range(source.ntensors):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
    return to_module
