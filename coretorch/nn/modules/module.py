"""`Module`: the base class of every layer (mirrors ``torch.nn.Module``).

Parameters, buffers and submodules are registered by attribute assignment and kept in ordered
dicts; iterators, ``state_dict``/``load_state_dict``, ``to``, ``train``/``eval`` and forward hooks
work over that registry.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict, namedtuple
from typing import Any, Callable, Iterator

from ...autograd.grad_mode import no_grad
from ...tensor.impl import TensorImpl
from ...tensor.tensor import Tensor
from ..parameter import Buffer, Parameter

__all__ = [
    "Module",
    "RemovableHandle",
    "register_module_forward_pre_hook",
    "register_module_forward_hook",
]

from ...utils.hooks import RemovableHandle  # noqa: E402  (re-exported: nn's hooks return it)

_IncompatibleKeys = namedtuple(  # type: ignore[name-match]  # PyTorch's repr names it so
    "IncompatibleKeys", ["missing_keys", "unexpected_keys"]
)


# hooks run around every module's forward (PyTorch's global module hooks); `_global_hooks_on`
# is the one flag Module.__call__ checks
_global_forward_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
_global_forward_hooks: OrderedDict[int, Callable] = OrderedDict()
_global_forward_hooks_with_kwargs: set[int] = set()
_global_forward_hooks_always_called: set[int] = set()
_global_hooks_on = False


class _GlobalHookHandle(RemovableHandle):
    def remove(self) -> None:
        global _global_hooks_on
        super().remove()
        _global_hooks_on = bool(_global_forward_pre_hooks or _global_forward_hooks)


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    """``hook(module, args)`` runs before the forward of every module (before the module's own
    pre-hooks); a non-None return replaces the arguments."""
    global _global_hooks_on
    handle = _GlobalHookHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    _global_hooks_on = True
    return handle


def register_module_forward_hook(
    hook: Callable, *, with_kwargs: bool = False, always_call: bool = False
) -> RemovableHandle:
    """``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with `with_kwargs`)
    runs after the forward of every module (before the module's own hooks); a non-None return
    replaces the output. With `always_call` it also runs (with output None) when forward
    raises."""
    global _global_hooks_on
    handle = _GlobalHookHandle(
        _global_forward_hooks,
        _global_forward_hooks_with_kwargs,
        _global_forward_hooks_always_called,
    )
    _global_forward_hooks[handle.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs.add(handle.id)
    if always_call:
        _global_forward_hooks_always_called.add(handle.id)
    _global_hooks_on = True
    return handle


def _addindent(s: str, n: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + line for line in lines[1:])


def zero_grads(params, set_to_none: bool = True) -> None:
    """Reset the ``.grad`` of each of `params`: to None, or zeroed in place (detached first when
    it has a grad_fn), as ``Module.zero_grad`` and ``Optimizer.zero_grad`` do."""
    for p in params:
        g = p.grad
        if g is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            if g.grad_fn is not None:
                g = g.detach()
                p.grad = g
            else:
                g.requires_grad_(False)
            g.zero_()


class Module:
    """Base class for all neural network modules; subclasses define `forward`.

    Assigning a `Parameter`, a `Module` or (through `register_buffer`) a tensor as an attribute
    registers it, so that `parameters()`, `state_dict()`, `to()` and friends see it.
    """

    training: bool
    _version = 1
    dump_patches = False
    call_super_init = False

    def __init__(self, *args, **kwargs) -> None:
        if args or kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got unexpected arguments "
                f"{args or ''}{kwargs or ''}"
            )
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = set()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = set()
        d["_forward_hooks_always_called"] = set()

    def forward(self, *input):
        """Define the computation of the module; every subclass overrides it."""
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    # ---- registration ---------------------------------------------------------------------
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register a tensor that is state but not a parameter (BatchNorm's running_mean).
        Non-persistent buffers are left out of the state_dict."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name("buffer", name)
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, TensorImpl):
            raise TypeError(
                f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                f"(Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register `param` (a Parameter or None) under `name`."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name("parameter", name)
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                f"(coretorch.nn.Parameter or None required)"
            )
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                f"parameters must be created explicitly. To express '{name}' as a "
                f"function of another Tensor, compute the value in the forward() "
                f"method."
            )
        self._parameters[name] = param

    def add_module(self, name: str, module: "Module | None") -> None:
        """Register `module` as a child under `name`."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name or name == "":
            raise KeyError(
                f'module name can\'t contain ".", got: {name}'
                if name
                else 'module name can\'t be empty string ""'
            )
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> "Module":
        """The submodule at dotted path `target` ("" is self)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            mod = _typed_attr(mod, item, Module, "nn.Module")
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path `target`."""
        module_path, _, name = target.rpartition(".")
        return _typed_attr(self.get_submodule(module_path), name, Parameter, "nn.Parameter")

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path `target`."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return mod._buffers[name]

    # ---- attribute protocol ---------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove_name(name, d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    f"(coretorch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _remove_name(name, d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as child module "
                    f"'{name}' (coretorch.nn.Module or None expected)"
                )
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer):
            if buffers is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            _remove_name(name, d, self._parameters, self._modules)
            self.register_buffer(name, value, value.persistent)
            return
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, TensorImpl):
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as buffer "
                    f"'{name}' (Tensor or None expected)"
                )
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = (
            list(object.__dir__(self))
            + list(self._parameters)
            + list(self._modules)
            + list(self._buffers)
        )
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    # ---- iterators ------------------------------------------------------------------------
    def _named_members(
        self, get_members_fn, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ):
        memo = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) pairs, each shared parameter once."""
        return self._named_members(
            lambda m: m._parameters.items(), prefix, recurse, remove_duplicate
        )

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The parameters of this module (and of its submodules when `recurse`), each once."""
        return (p for _, p in self.named_parameters(recurse=recurse))

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """(dotted name, buffer) pairs; None buffers are skipped."""
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """The buffers of this module (and of its submodules when `recurse`)."""
        return (b for _, b in self.named_buffers(recurse=recurse))

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        """The (name, module) pairs of the direct submodules, each module once."""
        memo = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in memo:
                memo.add(id(m))
                yield name, m

    def children(self) -> Iterator["Module"]:
        """The direct submodules, each once."""
        for _, m in self.named_children():
            yield m

    def named_modules(
        self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, "Module"]]:
        """(dotted name, module) for self and every descendant, depth first."""
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self) -> Iterator["Module"]:
        """This module and all its submodules, recursively, each once."""
        for _, m in self.named_modules():
            yield m

    # ---- modes and conversion -------------------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        """Set training mode on self and every descendant (Dropout, BatchNorm depend on it)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> "Module":
        """Put the module in evaluation mode (``train(False)``); returns self."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        """Set `requires_grad` of every parameter; returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to None by default, as PyTorch)."""
        zero_grads(self.parameters(), set_to_none)

    def apply(self, fn: Callable[["Module"], None]) -> "Module":
        """Call `fn` on every submodule (children first) and then on self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn: Callable[[Tensor], Tensor]) -> "Module":
        for m in self.children():
            m._apply(fn)
        with no_grad():
            for p in self._parameters.values():
                if p is None:
                    continue
                new = fn(p)
                if new is not p:
                    p.data = new  # the parameter object (and its identity) stays
                g = p.grad
                if g is not None:
                    new_g = fn(g)
                    if new_g is not g:
                        p.grad = None
                        p.grad = new_g
            for k, b in self._buffers.items():
                if b is not None:
                    self._buffers[k] = fn(b)
        return self

    def to(self, *args, **kwargs) -> "Module":
        """Move and/or cast parameters and buffers in place: ``to(device)``, ``to(dtype)``,
        ``to(device, dtype)``, ``to(tensor)``. Only floating point tensors change dtype."""
        from ...ops.methods import _parse_to

        device, dtype, _ = _parse_to("Module.to", args, kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(
                f"nn.Module.to only accepts floating point dtypes, but got desired dtype={dtype}"
            )

        def convert(t):
            return t.to(device, dtype if t.is_floating_point() else None)

        return self._apply(convert)

    def to_empty(self, *, device, recurse: bool = True) -> "Module":
        """Move parameters and buffers to `device` without copying their values (the way out of
        the meta device: allocate, then initialize or load a state dict)."""
        from ...ops import aten

        return self._apply(lambda t: aten.empty_like(t, device=device))

    def cpu(self) -> "Module":
        """Move every parameter, gradient and buffer to the CPU; returns self."""
        return self._apply(lambda t: t.cpu())

    def share_memory(self) -> "Module":
        """Move parameters, their gradients and buffers to shared memory (see
        ``Tensor.share_memory_``), so processes given this module train the same weights."""
        return self._apply(lambda t: t.share_memory_())

    def cuda(self, device=None) -> "Module":
        """Move every parameter, gradient and buffer to cuda `device`; returns self."""
        return self._apply(lambda t: t.cuda(device))

    def type(self, dst_type) -> "Module":
        """Convert every parameter, gradient and buffer to `dst_type`; returns self."""
        return self._apply(lambda t: t.type(dst_type))

    def float(self) -> "Module":
        """Cast the floating-point parameters and buffers to float32; returns self."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> "Module":
        """Cast the floating-point parameters and buffers to float64; returns self."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> "Module":
        """Cast the floating-point parameters and buffers to float16; returns self."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> "Module":
        """Cast floating point parameters and buffers to bfloat16."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    # ---- state dict -----------------------------------------------------------------------
    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()

    def state_dict(
        self, *args, destination: dict | None = None, prefix: str = "", keep_vars: bool = False
    ) -> "dict[str, Tensor]":
        """An ordered dict of every parameter and persistent buffer by dotted name (detached
        tensors sharing memory with the module's)."""
        if args:
            # PyTorch's deprecated positional form: state_dict(destination, prefix, keep_vars)
            if len(args) > 3:
                raise TypeError(
                    f"state_dict() takes at most 3 positional arguments "
                    f"(destination, prefix, keep_vars), got {len(args)}"
                )
            destination = args[0]
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
        assert destination is not None
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(
                    destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars
                )
        return destination

    def _load_from_state_dict(
        self,
        state_dict,
        prefix,
        local_metadata,
        strict,
        missing_keys,
        unexpected_keys,
        error_msgs,
        assign=False,
    ) -> None:
        persistent = {
            k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set
        }
        local_state = {
            k: v
            for k, v in itertools.chain(self._parameters.items(), persistent.items())
            if v is not None
        }
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected '
                    f"Tensor-like object from checkpoint but received "
                    f"{type(value)}"
                )
                continue
            if param._shape == () and value._shape == (1,):
                value = value[0]  # as PyTorch: a 1-element 1-d entry loads into a 0-d one
            if value._shape != param._shape:
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape "
                    f"{value.shape} from checkpoint, the shape in current model "
                    f"is {param.shape}."
                )
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            new = Parameter(value.to(param._device), param.requires_grad)
                        else:
                            new = value.to(param._device)
                        setattr(self, name, new)
                    else:
                        param.copy_(value)
            except Exception as e:
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions '
                    f"in the model are {param.shape} and whose dimensions in the "
                    f"checkpoint are {value.shape}, an exception occurred : "
                    f"{e.args}."
                )
        if strict:
            for key in state_dict:
                if key.startswith(prefix):
                    parts = key[len(prefix) :].split(".", 1)
                    if len(parts) > 1:
                        if parts[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif parts[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy parameters and buffers from `state_dict` into this module.

        With `strict`, keys must match exactly; missing and unexpected keys are reported by name
        in a RuntimeError (shape mismatches always are). Returns ``(missing_keys,
        unexpected_keys)``. With `assign`, the module takes the loaded tensors instead of copying.
        """
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []

        def load(module: Module, prefix: str = "") -> None:
            module._load_from_state_dict(
                state_dict, prefix, {}, True, missing, unexpected, errors, assign
            )
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")

        load(self)
        if strict:
            if unexpected:
                errors.insert(
                    0,
                    "Unexpected key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in unexpected)
                    ),
                )
            if missing:
                errors.insert(
                    0,
                    "Missing key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in missing)
                    ),
                )
        if errors:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(
                    self._get_name(), "\n\t".join(errors)
                )
            )
        return _IncompatibleKeys(missing, unexpected)

    # ---- hooks and calling ----------------------------------------------------------------
    def register_forward_pre_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """``hook(module, args)`` (or ``hook(module, args, kwargs)`` with `with_kwargs`) runs
        before forward; a non-None return replaces the arguments."""
        handle = RemovableHandle(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs.add(handle.id)
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(
        self,
        hook: Callable,
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """``hook(module, args, output)`` (or ``hook(module, args, kwargs, output)``) runs after
        forward; a non-None return replaces the output."""
        handle = RemovableHandle(
            self._forward_hooks, self._forward_hooks_with_kwargs, self._forward_hooks_always_called
        )
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs.add(handle.id)
        if always_call:
            self._forward_hooks_always_called.add(handle.id)
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def __call__(self, *args, **kwargs):
        if not (_global_hooks_on or self._forward_pre_hooks or self._forward_hooks):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args, kwargs):
        for hook in list(_global_forward_pre_hooks.values()):
            res = hook(self, args)
            if res is not None:
                args = res if isinstance(res, tuple) else (res,)
        for hid, hook in list(self._forward_pre_hooks.items()):
            if hid in self._forward_pre_hooks_with_kwargs:
                res = hook(self, args, kwargs)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise RuntimeError(
                            f"forward pre-hook must return None or a tuple of "
                            f"(new_args, new_kwargs), but got {res}."
                        )
                    args, kwargs = res
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        hook_sets = (
            (
                _global_forward_hooks,
                _global_forward_hooks_with_kwargs,
                _global_forward_hooks_always_called,
            ),
            (
                self._forward_hooks,
                self._forward_hooks_with_kwargs,
                self._forward_hooks_always_called,
            ),
        )
        called = set()
        try:
            out = self.forward(*args, **kwargs)
            for hooks, with_kwargs, _ in hook_sets:
                for hid, hook in list(hooks.items()):
                    called.add(hid)
                    if hid in with_kwargs:
                        res = hook(self, args, kwargs, out)
                    else:
                        res = hook(self, args, out)
                    if res is not None:
                        out = res
            return out
        except Exception:
            for hooks, with_kwargs, always in hook_sets:
                for hid, hook in list(hooks.items()):
                    if hid in always and hid not in called:
                        try:
                            if hid in with_kwargs:
                                hook(self, args, kwargs, None)
                            else:
                                hook(self, args, None)
                        except Exception:
                            pass
            raise

    # ---- repr -----------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """One-line description of this module's settings, shown inside its repr."""
        return ""

    def _get_name(self) -> str:
        return self.__class__.__name__

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({k}): " + _addindent(repr(m), 2) for k, m in self._modules.items()]
        lines = extra_lines + child_lines
        s = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                s += extra_lines[0]
            else:
                s += "\n  " + "\n  ".join(lines) + "\n"
        return s + ")"


def _typed_attr(mod: Module, name: str, cls: type, kind: str):
    """``getattr(mod, name)``, with AttributeErrors naming what is missing or is not a `kind`."""
    if not hasattr(mod, name):
        raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
    value = getattr(mod, name)
    if not isinstance(value, cls):
        raise AttributeError(f"`{name}` is not an {kind}")
    return value


def _remove_name(name: str, *dicts_or_sets) -> None:
    """Drop `name` from each dict or set that holds it (an attribute changing registry)."""
    for ds in dicts_or_sets:
        if isinstance(ds, dict):
            ds.pop(name, None)
        else:
            ds.discard(name)


def _check_name(kind: str, name) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
