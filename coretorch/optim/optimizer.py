"""`Optimizer`: the base class of every optimizer (mirrors ``torch.optim.Optimizer``).

Holds `param_groups` (dicts with "params" and the hyper-parameters), per-parameter `state`, and
saves/loads both through `state_dict` with parameters replaced by their index, as PyTorch does.
Subclasses implement `step`, which runs under no_grad and updates parameters in place.
"""

from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain
from typing import Any, Callable

from ..autograd.grad_mode import enable_grad, no_grad
from ..nn.modules.module import RemovableHandle, zero_grads
from ..record_function import record_function, state as _rf_state
from ..tensor.tensor import Tensor

__all__ = [
    "Optimizer",
    "required",
    "step_with_hooks",
    "closure_loss",
    "check_non_negative",
    "reject_differentiable",
    "register_optimizer_step_pre_hook",
    "register_optimizer_step_post_hook",
]

# hooks run around every optimizer's step (PyTorch's global optimizer hooks)
_global_optimizer_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
_global_optimizer_post_hooks: OrderedDict[int, Callable] = OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    """``hook(optimizer, args, kwargs)`` runs before the step of every optimizer (before the
    optimizer's own pre-hooks). Returns a handle whose ``remove()`` unregisters it."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    """``hook(optimizer, args, kwargs)`` runs after the step of every optimizer (after the
    optimizer's own post-hooks). Returns a handle whose ``remove()`` unregisters it."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


class _RequiredParameter:
    """Singleton marking a hyper-parameter without a default (SGD's lr in old PyTorch)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    """Base class for optimizers: ``Optimizer(params, defaults)``.

    `params` is an iterable of tensors, of (name, tensor) pairs, or of dicts defining parameter
    groups (each may override the `defaults`).
    """

    def __init__(self, params, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._optimizer_step_post_hooks: OrderedDict[int, Callable] = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of "
                "Tensors or dicts, but got " + type(params).__name__
            )
        self.state: defaultdict[Tensor, Any] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(dict(group))

    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def __repr__(self) -> str:
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += "\n"
            s += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    # ---- groups ---------------------------------------------------------------------------
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters (a dict with "params" and optional hyper-parameters)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, "
                "but the ordering of tensors in sets will change between runs. "
                "Please use a list instead."
            )
        else:
            param_group["params"] = list(params)
        extracted, names = [], []
        for p in param_group["params"]:
            if isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str):
                names.append(p[0])
                extracted.append(p[1])
            else:
                extracted.append(p)
        if names and len(names) != len(extracted):
            raise ValueError(
                "all optimizer params should be with/without names. Some param names are missing"
            )
        param_group["params"] = extracted
        if names:
            param_group["param_names"] = names
        for p in extracted:
            if not isinstance(p, Tensor):
                raise TypeError(
                    f"optimizer can only optimize Tensors, but one of the params is "
                    f"{type(p).__name__}"
                )
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    f"parameter group didn't specify a value of required "
                    f"optimization parameter {name}"
                )
            param_group.setdefault(name, default)
        ids = [id(p) for p in extracted]
        if len(set(ids)) != len(ids):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in "
                "future, this will cause an error",
                stacklevel=3,
            )
        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
        if seen & set(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ---- gradients and stepping ----------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every optimized parameter (to None by default)."""
        params = chain.from_iterable(g["params"] for g in self.param_groups)
        if not _rf_state.active:
            zero_grads(params, set_to_none)
            return
        with record_function(f"Optimizer.zero_grad#{type(self).__name__}.zero_grad"):
            zero_grads(params, set_to_none)

    def step(self, closure: Callable[[], float] | None = None):
        """Perform one optimization step (re-evaluating the loss with `closure` if given)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    def register_step_pre_hook(self, hook: Callable):
        """``hook(optimizer, args, kwargs)`` runs before each step."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook: Callable):
        """``hook(optimizer, args, kwargs)`` runs after each step."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def _run_pre_hooks(self, args, kwargs) -> None:
        for hook in [
            *_global_optimizer_pre_hooks.values(),
            *self._optimizer_step_pre_hooks.values(),
        ]:
            res = hook(self, args, kwargs)
            if res is not None:
                raise RuntimeError("optimizer step pre-hooks must return None in coretorch")

    def _run_post_hooks(self, args, kwargs) -> None:
        for hook in [
            *self._optimizer_step_post_hooks.values(),
            *_global_optimizer_post_hooks.values(),
        ]:
            hook(self, args, kwargs)

    # ---- state dict -----------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: per-param state}, "param_groups": [group with "params" as
        indices]}``: parameters are referred to by their position across groups."""
        mapping: dict[int, int] = {}
        start = 0

        def pack_group(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            mapping.update(
                (id(p), i) for i, p in enumerate(group["params"], start) if id(p) not in mapping
            )
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack_group(g) for g in self.param_groups]
        packed_state = {
            mapping[id(k)]: v
            for k, v in self.state.items()
            if isinstance(k, Tensor) and id(k) in mapping
        }
        return {"state": packed_state, "param_groups": groups}

    @staticmethod
    def _process_value_according_to_param_policy(param: Tensor, value: Tensor, key) -> Tensor:
        # "step" stays as saved (PyTorch keeps it a float32 scalar); the rest follow the param.
        # Always a copy: a state shared with the source optimizer would be updated twice.
        if key == "step":
            out = value
        elif param.is_floating_point():
            out = value.to(dtype=param.dtype, device=param.device)
        else:
            out = value.to(device=param.device)
        return out.clone() if out is value else out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a `state_dict` (from this optimizer class over the same parameter layout)."""
        state_dict = dict(state_dict)
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        param_lens = (len(g["params"]) for g in groups)
        saved_lens = (len(g["params"]) for g in saved_groups)
        if any(p_len != s_len for p_len, s_len in zip(param_lens, saved_lens)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match "
                "the size of optimizer's group"
            )
        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in groups),
            )
        )

        def cast(param, value, key=None):
            if isinstance(value, Tensor):
                return self._process_value_according_to_param_policy(param, value, key)
            if isinstance(value, dict):
                return {k: cast(param, v, key=k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value

        state: defaultdict[Tensor, Any] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            key = int(k) if isinstance(k, str) and k.isdigit() else k
            if key in id_map:
                param = id_map[key]
                state[param] = cast(param, v)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        self.__setstate__(
            {
                "state": state,
                "param_groups": [update_group(g, ng) for g, ng in zip(groups, saved_groups)],
            }
        )


def step_with_hooks(step_fn):
    """Decorate an optimizer's step: no_grad, the registered pre/post step hooks (global ones
    included), and a ``Optimizer.step#<class>.step`` region while an observer records."""

    @functools.wraps(step_fn)
    def step(self, *args, **kwargs):
        if _rf_state.active:
            # post-hooks run after the region closes: a profiler's step boundary marked there
            # must not cut the region in two
            with record_function(f"Optimizer.step#{type(self).__name__}.step"):
                out = _hooked_step(self, step_fn, args, kwargs)
        else:
            out = _hooked_step(self, step_fn, args, kwargs)
        if self._optimizer_step_post_hooks or _global_optimizer_post_hooks:
            self._run_post_hooks(args, kwargs)
        return out

    return step


def _hooked_step(self, step_fn, args, kwargs):
    if self._optimizer_step_pre_hooks or _global_optimizer_pre_hooks:
        self._run_pre_hooks(args, kwargs)
    with no_grad():
        return step_fn(self, *args, **kwargs)


def closure_loss(closure):
    """Evaluate the closure (with grad enabled) and return its loss, or None."""
    if closure is None:
        return None
    with enable_grad():
        return closure()


_HYPERPARAM_LABELS = {"lr": "learning rate", "eps": "epsilon value"}


def check_non_negative(**hyperparams: float) -> None:
    """Raise ValueError("Invalid <name>: <value>") for the first hyper-parameter that is not
    >= 0 (NaN included), in argument order, with PyTorch's wording."""
    for name, value in hyperparams.items():
        if not 0.0 <= value:
            raise ValueError(f"Invalid {_HYPERPARAM_LABELS.get(name, name + ' value')}: {value}")


def reject_differentiable(optimizer_name: str, differentiable: bool) -> None:
    """coretorch has no differentiable optimizer steps: refuse ``differentiable=True``."""
    if differentiable:
        raise NotImplementedError(
            f"{optimizer_name}(differentiable=True) is not supported by coretorch"
        )
