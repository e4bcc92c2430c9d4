"""Calling a module with other parameters and buffers (mirrors
``torch.nn.utils.stateless.functional_call`` and ``torch.func.functional_call``)."""

from __future__ import annotations

import contextlib
from typing import Any

__all__ = ["functional_call"]


def _owner(module, path: str):
    *parents, name = path.split(".")
    for p in parents:
        module = getattr(module, p)
    return module, name


@contextlib.contextmanager
def _swapped(module, tensors: dict, strict: bool, tie_weights: bool):
    known = dict(module.named_parameters(remove_duplicate=False))
    known.update(module.named_buffers(remove_duplicate=False))
    if tie_weights:  # a name sharing its tensor with a given one gets the same replacement
        tensors = dict(tensors)
        for name, t in list(tensors.items()):
            if name in known:
                for other, old in known.items():
                    if old is known[name] and other not in tensors:
                        tensors[other] = t
    unexpected = [k for k in tensors if k not in known]
    missing = [k for k in known if k not in tensors]
    if unexpected or (strict and missing):
        parts = []
        if unexpected:
            parts.append("Unexpected key(s): " + ", ".join(repr(k) for k in unexpected) + ".")
        if strict and missing:
            parts.append("Missing key(s): " + ", ".join(repr(k) for k in missing) + ".")
        raise RuntimeError(
            "Error(s) in reparametrizing for "
            + type(module).__name__
            + ":\n\t"
            + "\n\t".join(parts)
        )
    saved = []
    try:
        for path, t in tensors.items():
            owner, name = _owner(module, path)
            table = owner._parameters if name in owner._parameters else owner._buffers
            saved.append((table, name, table[name]))
            table[name] = t  # plain tensors in the tables: the call reads them as attributes
        yield
    finally:
        for table, name, old in reversed(saved):
            table[name] = old


def functional_call(
    module,
    parameter_and_buffer_dicts,
    args: Any = None,
    kwargs=None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
):
    """``module(*args, **kwargs)`` with the parameters and buffers named in
    `parameter_and_buffer_dicts` (a dict, or a sequence of dicts) standing in for the module's
    own for this call; the module is unchanged afterwards. Gradients flow to the given tensors.

    With `tie_weights`, a parameter the module shares under several names (tied weights) is
    replaced under all of them when one is given.

    Raises:
        RuntimeError: a name the module does not have; with `strict`, a parameter or buffer
            not given; a name given in two dicts.
    """
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, dict):
        dicts = [dicts]
    merged: dict = {}
    for d in dicts:
        for k, v in d.items():
            if k in merged:
                raise RuntimeError(
                    f"{k!r} appeared in multiple dictionaries; behavior of "
                    f"functional call is ambiguous"
                )
            merged[k] = v
    args = () if args is None else (args if isinstance(args, tuple) else (args,))
    with _swapped(module, merged, strict, tie_weights):
        return module(*args, **(kwargs or {}))
