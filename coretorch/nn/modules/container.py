"""Containers: Sequential, ModuleList, ModuleDict (and the deprecated Container)."""

from __future__ import annotations

import operator
import warnings
from collections import OrderedDict
from itertools import chain, groupby, islice
from typing import Iterable, Iterator, Mapping

from .module import Module, _addindent

__all__ = ["Container", "Sequential", "ModuleList", "ModuleDict"]


def _index(idx, size: int) -> int:
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range")
    return idx % size


def _update_dict(target: Module, source, mappings: tuple, owner: str, value: str) -> None:
    """ModuleDict/ParameterDict.update: `source` is one of `mappings` (its keys in order) or an
    iterable of (key, `value`) pairs, each checked."""
    if isinstance(source, mappings):
        for key in source.keys():
            target[key] = source[key]
        return
    for j, pair in enumerate(source):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ValueError(
                f"{owner} update sequence element #{j} should be a "
                f"(key, {value}) pair, got {type(pair).__name__}"
            )
        target[pair[0]] = pair[1]


def _renumber(container: Module, modules: list[Module]) -> None:
    """Re-register `modules` as the children "0", "1", ... of `container`, as PyTorch does
    after a deletion or insertion."""
    container._modules.clear()
    for i, m in enumerate(modules):
        container._modules[str(i)] = m


class Container(Module):
    """Deprecated: a Module holding the keyword-argument modules as children."""

    def __init__(self, **kwargs: Module) -> None:
        super().__init__()
        warnings.warn(
            "nn.Container is deprecated. All of it's functionality is now implemented "
            "in nn.Module. Subclass that instead.",
            stacklevel=2,
        )
        for key, value in kwargs.items():
            self.add_module(key, value)


class Sequential(Module):
    """Modules called in order, each on the previous one's output: ``Sequential(a, b, c)`` or
    ``Sequential(OrderedDict(name=module, ...))``."""

    def __init__(self, *args) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _get_item_by_idx(self, iterator, idx):
        return next(islice(iterator, _index(idx, len(self)), None))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._get_item_by_idx(iter(self._modules.values()), idx)

    def __setitem__(self, idx, module: Module) -> None:
        key = self._get_item_by_idx(iter(self._modules.keys()), idx)
        setattr(self, key, module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._get_item_by_idx(iter(self._modules.keys()), idx))
        _renumber(self, list(self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __add__(self, other: "Sequential") -> "Sequential":
        if not isinstance(other, Sequential):
            raise ValueError(
                f"add operator supports only objects of Sequential class, but "
                f"{type(other)} is given."
            )
        ret = Sequential()
        for m in chain(self, other):
            ret.append(m)
        return ret

    def append(self, module: Module) -> "Sequential":
        """Append `module` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> "Sequential":
        """Insert `module` before position `index`; raises AssertionError for a non-Module and
        IndexError for an index out of [-len, len]."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        mods = list(self._modules.values())
        mods.insert(index, module)
        _renumber(self, mods)
        return self

    def extend(self, sequential: Iterable[Module]) -> "Sequential":
        """Append every module of `sequential`; returns self."""
        for layer in sequential:
            self.append(layer)
        return self

    def pop(self, key) -> Module:
        """Remove and return the module at `key` (an index)."""
        v = self[key]
        del self[key]
        return v

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules, registered as children "0", "1", ..."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self += modules

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self)))]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, str(_index(idx, len(self))), module)

    def __delitem__(self, idx) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, str(_index(idx, len(self))))
        _renumber(self, list(self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> "ModuleList":
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> "ModuleList":
        combined = ModuleList()
        for m in chain(self, other):
            combined.append(m)
        return combined

    def insert(self, index: int, module: Module) -> None:
        """Insert `module` before position `index` (renumbering the modules after it)."""
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(mods):
            self.add_module(str(i), m)

    def append(self, module: Module) -> "ModuleList":
        """Append `module` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key) -> Module:
        """Remove and return the module at `key` (an index); the rest are renumbered."""
        v = self[key]
        del self[key]
        return v

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        """Append every module of `modules`; returns self. Raises TypeError when `modules` is not
        an iterable (or is a str)."""
        if isinstance(modules, (str, bytes)) or not hasattr(modules, "__iter__"):
            raise TypeError(
                f"ModuleList.extend should be called with an iterable, but got "
                f"{type(modules).__name__}"
            )
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self

    def __repr__(self) -> str:
        """Like PyTorch: runs of identical reprs are shown once as ``(0-2): 3 x Linear(...)``."""
        if not self._modules:
            return self._get_name() + "()"
        lines, start = [], 0
        for r, run in groupby(repr(item) for item in self):
            n = sum(1 for _ in run)
            line = f"({start}): {r}" if n == 1 else f"({start}-{start + n - 1}): {n} x {r}"
            lines.append(_addindent(line, 2))
            start += n
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            "ModuleList is a container and has no forward(); iterate over it and call its modules"
        )


class ModuleDict(Module):
    """An ordered dict of modules, registered as children under their keys."""

    def __init__(self, modules: Mapping[str, Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove and return the module under `key`."""
        v = self[key]
        del self[key]
        return v

    def keys(self):
        """The keys, in insertion order."""
        return self._modules.keys()

    def items(self):
        """The (key, module) pairs, in insertion order."""
        return self._modules.items()

    def values(self):
        """The modules, in insertion order."""
        return self._modules.values()

    def update(self, modules) -> None:
        """Add or replace modules from a mapping or from an iterable of (key, module) pairs; raises
        ValueError for an element that is not a pair."""
        _update_dict(self, modules, (Mapping,), "ModuleDict", "module")

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            "ModuleDict is a container and has no forward(); index it and call its modules"
        )
