"""Guards: what must still hold for a captured step to be replayed.

Two kinds, checked on every call:

- the **input signature** (`signature`): per tensor argument its shape, strides, dtype, device
  and requires_grad, every other argument by value (or identity), and the grad mode. It is the
  key of the variant cache: a new signature records a new variant;
- the **state guard** (`StateGuard`), over the modules and optimizers the function reaches
  (arguments, closure, globals it names, attributes of a bound method's object): each
  parameter and buffer is still the same tensor with the same storage, each gradient is still
  None or not (and the same tensor where the step reads it), each optimizer still has the same
  parameters, hyper-parameters (lr, momentum, ...) and state tensors. A failed state guard
  re-records the variant; the reason names the guard.

Values are not guarded: replayed kernels read the buffers' current contents, so a parameter
changed in place between calls (``load_state_dict``, ``p.data.copy_(...)``) is simply read.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import CodeType
from typing import Any

from ..autograd.grad_mode import is_grad_enabled
from ..tensor.tensor import Tensor, _autograd_meta

__all__ = ["StateGuard", "describe_mismatch", "discover", "flatten", "signature"]

_PLAIN = (int, float, bool, str, type(None))


def flatten(obj: Any, out: list) -> Any:
    """Append the tensors of `obj` (nested tuples, lists and dicts) to `out`; returns a template
    in which each tensor is replaced by its index in `out`."""
    if isinstance(obj, Tensor):
        out.append(obj)
        return _Leaf(len(out) - 1)
    if isinstance(obj, (tuple, list)):
        items = [flatten(x, out) for x in obj]
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a namedtuple
            return _Node(type(obj), items, named=True)
        return _Node(type(obj), items)
    if isinstance(obj, dict):
        return _Node(dict, [(k, flatten(v, out)) for k, v in obj.items()])
    return obj


class _Leaf:
    __slots__ = ("i",)

    def __init__(self, i: int):
        self.i = i


class _Node:
    __slots__ = ("items", "kind", "named")

    def __init__(self, kind: type, items: list, named: bool = False):
        self.kind, self.items, self.named = kind, items, named


def rebuild(template: Any, leaves: list) -> Any:
    """The inverse of `flatten`: the template with leaf i replaced by ``leaves[i]``."""
    if isinstance(template, _Leaf):
        return leaves[template.i]
    if isinstance(template, _Node):
        if template.kind is dict:
            return {k: rebuild(v, leaves) for k, v in template.items}
        items = [rebuild(x, leaves) for x in template.items]
        if template.named:
            return template.kind(*items)
        return template.kind(items)
    return template


def _describe_value(v: Any) -> Any:
    if isinstance(v, Tensor):
        return ("tensor", v._shape, v._stride, v._dtype, v._device, v.requires_grad)
    if isinstance(v, _PLAIN):
        return (type(v), v)
    if isinstance(v, (tuple, list)):
        return (type(v), tuple(_describe_value(x) for x in v))
    if isinstance(v, dict):
        return (dict, tuple((k, _describe_value(x)) for k, x in v.items()))
    return ("object", id(v))


def signature(args: tuple, kwargs: dict) -> tuple:
    """The variant key of a call: argument descriptions and the grad mode."""
    key = [_describe_value(a) for a in args]
    if kwargs:
        key.append(tuple((k, _describe_value(v)) for k, v in sorted(kwargs.items())))
    key.append(is_grad_enabled())
    return tuple(key)


def _explain_arg(where: str, old: Any, new: Any) -> str | None:
    if old == new:
        return None
    if old[0] == "tensor" and new[0] == "tensor":
        names = ("shape", "strides", "dtype", "device", "requires_grad")
        for n, a, b in zip(names, old[1:], new[1:]):
            if a != b:
                return f"{where}: {n} {a} -> {b}"
    if old[0] == "object":
        return f"{where}: a different object"
    return f"{where}: {old[-1]!r} -> {new[-1]!r}"


def describe_mismatch(old: tuple, new: tuple) -> str:
    """Which guard of signature `old` fails for `new` (for the re-record warning)."""
    if old[-1] != new[-1]:
        return (
            f"grad mode: {'enabled' if old[-1] else 'disabled'} -> "
            f"{'enabled' if new[-1] else 'disabled'}"
        )
    if len(old) != len(new):
        return f"number of arguments: {len(old) - 1} -> {len(new) - 1}"
    for i, (a, b) in enumerate(zip(old[:-1], new[:-1])):
        why = _explain_arg(f"argument {i}", a, b)
        if why is not None:
            return why
    return "arguments changed"


# ---- what the function reaches -----------------------------------------------------------------


def _names(code: CodeType) -> set[str]:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, CodeType):
            names |= _names(c)
    return names


def discover(fn: Any, args: tuple, kwargs: dict) -> tuple[list, list, list]:
    """The modules, optimizers and leaf tensors that require grad the function reaches (see
    the module docstring): lists of ``(name, module)`` (every submodule, named by its path from
    where it was found, e.g. ``model.0``), of optimizers and of ``(name, tensor)``."""
    from ..nn.modules.module import Module
    from ..optim.optimizer import Optimizer

    modules: dict[int, tuple[str, Any]] = {}
    optims: dict[int, Any] = {}
    leaves: dict[int, tuple[str, Tensor]] = {}

    def visit(obj: Any, label: str, depth: int) -> None:
        if isinstance(obj, Tensor):
            if obj.requires_grad and obj.grad_fn is None:  # a leaf outside any module
                leaves.setdefault(id(obj), (label, obj))
        elif isinstance(obj, Module):
            for path, m in obj.named_modules():
                modules.setdefault(id(m), (f"{label}.{path}" if path else label, m))
        elif isinstance(obj, Optimizer):
            optims.setdefault(id(obj), obj)
        elif depth > 0 and isinstance(obj, (list, tuple)):
            for i, x in enumerate(obj[:64]):
                visit(x, f"{label}[{i}]", depth - 1)
        elif depth > 0 and isinstance(obj, dict):
            for k, x in list(obj.items())[:64]:
                visit(x, f"{label}[{k!r}]", depth - 1)
        elif (
            depth > 0
            and hasattr(obj, "__dict__")
            and not isinstance(obj, type)
            and not callable(obj)
            and not isinstance(obj, Tensor)
        ):
            for k, x in list(vars(obj).items())[:64]:
                visit(x, f"{label}.{k}", depth - 1)

    roots: list[tuple[str, Any]] = [(f"argument {i}", a) for i, a in enumerate(args)]
    roots += list(kwargs.items())
    target = getattr(fn, "__func__", fn)
    if not hasattr(target, "__code__"):  # a module (or other callable object) compiled itself
        roots.append(("self", fn))
    self = getattr(fn, "__self__", None)
    if self is not None:
        roots.append(("self", self))
        if hasattr(self, "__dict__"):
            roots += [(f"self.{k}", x) for k, x in vars(self).items()]
    code = getattr(target, "__code__", None)
    if code is not None:
        g = target.__globals__
        roots += [(n, g[n]) for n in sorted(_names(code)) if n in g]
        for name, cell in zip(code.co_freevars, target.__closure__ or ()):
            try:
                roots.append((name, cell.cell_contents))
            except ValueError:  # an empty cell
                pass
    for label, r in roots:
        visit(r, label, 2)
    return list(modules.values()), list(optims.values()), list(leaves.values())


# ---- the state guard ---------------------------------------------------------------------------


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, tuple) and isinstance(b, tuple):  # Adam's betas
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return isinstance(a, _PLAIN) and type(a) is type(b) and a == b


class StateGuard:
    """The state a capture saw on entry (see the module docstring)."""

    def __init__(self, modules: list, optimizers: list, leaves: Sequence = ()):
        self.slots: list[tuple[dict, str, Any, Any, str]] = []  # (dict, key, tensor, storage, name)
        names: dict[int, str] = {}
        for label, m in modules:
            for d in (m._parameters, m._buffers):
                for k, t in d.items():
                    where = f"{label}.{k}"
                    self.slots.append((d, k, t, None if t is None else t._storage, where))
                    if t is not None:
                        names.setdefault(id(t), where)
        self.params: list[Tensor] = []
        seen: set[int] = set()
        for label, t in leaves:
            seen.add(id(t))
            self.params.append(t)
            names.setdefault(id(t), label)
            self.slots.append(({"t": t}, "t", t, t._storage, label))
        for _, m in modules:
            for t in m._parameters.values():
                if t is not None and id(t) not in seen:
                    seen.add(id(t))
                    self.params.append(t)
        self.optims: list[tuple[Any, list, list, list]] = []
        for o in optimizers:
            groups = [tuple((k, v) for k, v in g.items() if k != "params") for g in o.param_groups]
            params = [tuple(g["params"]) for g in o.param_groups]
            for ps in params:
                for p in ps:
                    if id(p) not in seen:
                        seen.add(id(p))
                        self.params.append(p)
            states = [
                (p, o.state.get(p), _state_values(o.state.get(p))) for ps in params for p in ps
            ]
            self.optims.append((o, groups, params, states))
        self.names = names
        self.live: dict[tuple[int, int], set] = {}  # hyper-parameters replay reads (hyperparams)
        self.grads_entry = [_grad(p) for p in self.params]
        self.grads_read: list[tuple[Tensor, Tensor]] = []  # set by `watch_grads`
        self.grads_exit: list[tuple[Tensor, Tensor | None]] = []

    def name(self, t: Tensor) -> str:
        """The name this guard gives `t` in messages (``model.0.weight``)."""
        return self.names.get(id(t), f"a tensor of shape {list(t._shape)}")

    def watch_grads(self, program_storages: set[int]) -> None:
        """After the capture: entry gradients the program touches must stay the same tensors;
        note the gradients the step leaves (a replay sets them back)."""
        self.grads_read = [
            (p, g)
            for p, g in zip(self.params, self.grads_entry)
            if g is not None and id(g._storage) in program_storages
        ]
        self.grads_exit = [(p, _grad(p)) for p in self.params]

    def check(self) -> str | None:
        """None when every guard holds, else the first that fails."""
        for d, k, t, s, where in self.slots:
            now = d.get(k)
            if now is not t:
                return f"{where} was replaced"
            if now is not None and now._storage is not s:
                return f"the storage of {where} changed"
        for p, g in zip(self.params, self.grads_entry):
            if (_grad(p) is None) is not (g is None):
                return (
                    f"the grad of {self.name(p)} is {'None' if g is not None else 'set'} "
                    f"(was {'set' if g is not None else 'None'} when recorded)"
                )
        for p, g in self.grads_read:
            if _grad(p) is not g:
                return f"the grad of {self.name(p)} was replaced"
        for o, groups, params, states in self.optims:
            kind = type(o).__name__
            if len(o.param_groups) != len(groups):
                return f"{kind}: the number of param_groups changed"
            for i, (g, old) in enumerate(zip(o.param_groups, groups)):
                live = self.live.get((id(o), i), ())
                for k, v in old:
                    now = g.get(k)
                    if k in live:  # read at replay; only turning zero or non-zero matters
                        if k != "betas" and bool(now) is not bool(v):
                            return f"{kind}.param_groups[{i}][{k!r}]: {v!r} -> {now!r}"
                    elif not _same(now, v):
                        return f"{kind}.param_groups[{i}][{k!r}]: {v!r} -> {now!r}"
                now = g["params"]
                if (
                    len(g) != len(old) + 1
                    or len(now) != len(params[i])
                    or any(a is not b for a, b in zip(now, params[i]))
                ):
                    return f"{kind}.param_groups[{i}] changed"
            for p, st, values in states:
                now = o.state.get(p)
                if now is not st or (st is not None and _state_values(st) != values):
                    return f"{kind}.state of {self.name(p)} changed"
        return None

    def restore(self) -> None:
        """Set the gradients back to what the recorded step left."""
        for p, g in self.grads_exit:
            if _grad(p) is not g:  # a frozen parameter may have no autograd meta (both None)
                _autograd_meta(p).grad = g


def _grad(p: Tensor):
    m = p._autograd
    return None if m is None else m.grad


def _state_values(st: dict | None) -> tuple | None:
    if st is None:
        return None
    return tuple((k, id(v) if isinstance(v, Tensor) else v) for k, v in st.items())
