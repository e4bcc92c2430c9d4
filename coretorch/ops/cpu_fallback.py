"""The boxed CPU fallback a backend can opt into for the ops it has no kernel for.

``registry.use_cpu_fallback(key)`` in a backend's register hook makes every op without a kernel
at `key` run here: tensor arguments on the backend's device are copied to cpu, the op runs there,
results are copied back, and inputs the op mutated (in-place ops, out=) get their new values
copied back too. A factory (no tensor argument, ``device=`` naming the backend) is built on cpu
and moved. Each op warns once (`CPUFallbackWarning`); `fallback_counts` counts calls per op; when
a RecordFunction callback is active the whole call (copies included) is one FALLBACK region,
which the profiler shows with category ``fallback``.

Autograd needs nothing here: the Autograd key sits above the backend key, so the autograd kernel
has already recorded the op's derivative when the fallback runs (with Autograd excluded).
"""

from __future__ import annotations

import warnings
from collections import Counter

from .. import record_function as _rf
from ..device import device as _device, get_device_type
from ..dispatch.keys import DispatchKey
from ..frames import user_stacklevel
from ..tensor.tensor import Tensor
from .declare import RENAMED_ERRORS, _resize_out, reraise_as
from .meta_rules import resolve_device

__all__ = ["cpu_fallback", "fallback_counts", "reset_fallback_warnings", "CPUFallbackWarning"]

_T = Tensor
_CPU = _device("cpu")

fallback_counts: Counter = Counter()
"""Calls per op (``"aten::add"``) that ran through the CPU fallback in this process."""
_warned: set[str] = set()


class CPUFallbackWarning(UserWarning):
    """An op ran through the CPU fallback (copies to cpu and back) instead of a native kernel."""


def reset_fallback_warnings() -> None:
    """Warn again the next time each op falls back (the warning is otherwise once per op)."""
    _warned.clear()


class _Moved:
    """The cpu copies made for one call: original tensor -> (cpu copy, its version)."""

    __slots__ = ("by_id", "device")

    def __init__(self):
        self.by_id: dict[int, tuple[_T, _T, int]] = {}
        self.device = None

    def to_cpu(self, x):
        if isinstance(x, _T):
            if x._device.type == "cpu":
                return x
            hit = self.by_id.get(id(x))
            if hit is None:  # the same tensor passed twice gets one copy (x.add_(x) aliases)
                c = x.detach().to("cpu")
                hit = self.by_id[id(x)] = (x, c, c._vc[0])
                if self.device is None:
                    self.device = x._device
            return hit[1]
        if (x.__class__ is list or x.__class__ is tuple) and any(isinstance(e, _T) for e in x):
            return x.__class__(self.to_cpu(e) for e in x)
        return x

    def write_back(self) -> None:
        """Copy the new values of every input the op mutated on cpu into the original."""
        for orig, cpu_copy, version in self.by_id.values():
            if cpu_copy._vc[0] != version:
                if cpu_copy._shape != orig._shape:  # an out= tensor the op resized
                    _resize_out(orig, cpu_copy._shape)
                orig.copy_(cpu_copy)

    def back(self, r, device):
        """Results on `device`: a mutated input is returned as the original, new tensors moved."""
        if isinstance(r, _T):
            for orig, cpu_copy, _ in self.by_id.values():
                if r is cpu_copy:
                    return orig
            return r.to(device) if r._device.type == "cpu" else r
        if isinstance(r, tuple):
            items = tuple(self.back(e, device) for e in r)
            return r.__class__(*items) if hasattr(r, "_fields") else items
        if isinstance(r, list):
            return [self.back(e, device) for e in r]
        return r


def _has_tensor(values) -> bool:
    for v in values:
        if isinstance(v, _T) or (
            (v.__class__ is list or v.__class__ is tuple) and any(isinstance(e, _T) for e in v)
        ):
            return True
    return False


def _backend_device(args: tuple, kwargs: dict):
    """The device the call came from: its first non-cpu tensor, else ``device=``/the default."""
    for a in (*args, *kwargs.values()):
        for t in a if a.__class__ is list or a.__class__ is tuple else (a,):
            if isinstance(t, _T) and t._device.type != "cpu":
                return t._device
    return resolve_device(kwargs.get("device"))


def _check_cpu_kernel(op, args: tuple, kwargs: dict) -> None:
    """Raise the missing-kernel error naming the backend when cpu cannot run `op` either."""
    cpu = DispatchKey._by_name.get("CPU")
    if cpu is not None and op._entry_for(cpu) is not None:
        return
    key = get_device_type(_backend_device(args, kwargs)).dispatch_key
    why = (
        "there is no CPU kernel either"
        if cpu is not None
        else "no cpu backend is loaded (install coretorch-cpu-numba)"
    )
    raise NotImplementedError(
        f"Could not run '{op.qualname}' with arguments from the "
        f"'{key.name}' backend: it has no kernel there, and its CPU "
        f"fallback cannot run it because {why}. '{op.name}' has kernels "
        f"for: {', '.join(op.kernel_keys()) or 'none'}"
    )


def _run(op, args: tuple, kwargs: dict):
    decl = op.decl
    if decl is not None and decl.structured:
        # the checks a native kernel gets from the core (devices, shapes, dtypes), on the
        # original arguments, so mixing devices raises here as it would natively
        try:
            decl.meta(*args, **{k: v for k, v in kwargs.items() if k != "out"})
        except RENAMED_ERRORS as e:  # named as the native kernel's adapter names it
            reraise_as(e, op.name)
    moved = _Moved()
    cpu_args = [moved.to_cpu(a) for a in args]
    cpu_kwargs = {k: moved.to_cpu(v) for k, v in kwargs.items()}
    target = moved.device
    requested = _argument(op, "device", args, kwargs)
    if requested is not None:  # a factory naming the backend: build on cpu, move
        _set_argument(op, "device", _CPU, cpu_args, cpu_kwargs)
        # the cpu copy stays a plain tensor: BackendSelect makes the moved result the leaf
        # that requires grad (moving a cpu leaf would give a non-leaf)
        if _argument(op, "requires_grad", args, kwargs):
            _set_argument(op, "requires_grad", False, cpu_args, cpu_kwargs)
        target = target or _device(requested)
    if target is None and not _has_tensor(args) and not _has_tensor(kwargs.values()):
        target = resolve_device(None)  # a factory relying on the default device
    with _CPU:  # factories called inside the op default to cpu too
        result = op.call_record(tuple(cpu_args), cpu_kwargs)
    if target is None or target.type == "cpu":
        return result
    moved.write_back()
    return moved.back(result, target)


def _position(op, name: str) -> int | None:
    fs = op.schema
    if fs is None or name not in fs.names:
        return None
    return fs.argument(name).index


def _argument(op, name: str, args: tuple, kwargs: dict):
    """The value of argument `name` in a call record (positional, or a keyword)."""
    at = _position(op, name)
    return args[at] if at is not None and at < len(args) else kwargs.get(name)


def _set_argument(op, name: str, value, args: list, kwargs: dict) -> None:
    at = _position(op, name)
    if at is not None and at < len(args):
        args[at] = value
    else:
        kwargs[name] = value


def cpu_fallback(op, keyset, args: tuple, kwargs: dict):
    """Boxed fallback ``fn(op, keyset_below, args, kwargs)``: run `op` on cpu copies of the
    arguments, write mutated inputs back, and return the results on the original device."""
    _check_cpu_kernel(op, args, kwargs)
    name = op.qualname
    fallback_counts[name] += 1
    if name not in _warned:
        _warned.add(name)
        warnings.warn(
            f"{name} has no kernel for this backend and runs through the CPU fallback "
            f"(arguments are copied to cpu and back); register a native kernel to "
            f"avoid the copies",
            CPUFallbackWarning,
            stacklevel=user_stacklevel(),
        )
    if _rf.state.active:
        if _rf.state.capture is not None:
            _rf.state.capture.unreplayable(op.name, "it runs through the CPU fallback")
        rf = _rf.RecordFunction(f"{name} (cpu fallback)", _rf.RecordScope.FALLBACK, args, kwargs)
        if rf._cbs:
            with rf:
                rf.outputs = _run(op, args, kwargs)
            return rf.outputs
    return _run(op, args, kwargs)
