"""ParameterList and ParameterDict: containers whose entries are registered as parameters
(tensors are wrapped in `Parameter`), so ``parameters()``, ``state_dict()`` and optimizers see
them under the keys "0", "1", ... or the dict's keys."""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Mapping

from ...tensor.tensor import Tensor
from ..parameter import Parameter
from .container import _index, _update_dict
from .module import Module

__all__ = ["ParameterList", "ParameterDict"]


def _as_parameter(value: Any) -> Any:
    """A plain tensor becomes a Parameter (as PyTorch's containers do); others stay."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _describe(key, value) -> str:
    if isinstance(value, Tensor):
        size = "x".join(str(s) for s in value.shape)
        device = f" ({value.device})" if value.device.type != "cpu" else ""
        kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
        return f"  ({key}): {kind} containing: [{value.dtype} of size {size}{device}]"
    return f"  ({key}): Object of type: {type(value).__name__}"


class ParameterList(Module):
    """A list of parameters (tensors are wrapped in Parameter), registered as "0", "1", ..."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__([self[i] for i in range(len(self))[idx]])
        return getattr(self, str(_index(idx, len(self))))

    def __setitem__(self, idx: int, param: Any) -> None:
        setattr(self, str(_index(idx, len(self))), _as_parameter(param))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable[Any]) -> "ParameterList":
        return self.extend(parameters)

    def append(self, value: Any) -> "ParameterList":
        """Append `value` (a tensor becomes a Parameter); returns self."""
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable[Any]) -> "ParameterList":
        """Append every value of `values`; returns self. Raises TypeError when `values` is not an
        iterable (or is a str or a Tensor)."""
        if isinstance(values, (str, bytes, Tensor)) or not hasattr(values, "__iter__"):
            raise TypeError(
                f"ParameterList.extend should be called with an iterable, but got "
                f"{type(values).__name__}"
            )
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_describe(k, p) for k, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters (tensors are wrapped in Parameter) under string keys."""

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict keys must be strings, got {type(key).__name__}")
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def __or__(self, other: "ParameterDict") -> "ParameterDict":
        out = self.copy()
        out.update(other)
        return out

    def copy(self) -> "ParameterDict":
        """A new ParameterDict holding the same parameters."""
        return ParameterDict((k, self[k]) for k in self._keys)

    def setdefault(self, key: str, default: Any = None) -> Any:
        """The value under `key`, first storing `default` there when it is absent."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Remove every entry."""
        for k in list(self._keys):
            del self[k]

    def pop(self, key: str) -> Any:
        """Remove and return the value under `key`."""
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple[str, Any]:
        """Remove and return the last inserted (key, value) pair."""
        k = list(self._keys)[-1]
        return k, self.pop(k)

    def get(self, key: str, default: Any = None) -> Any:
        """The value under `key`, or `default` when it is absent."""
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> "ParameterDict":
        """A new ParameterDict with every key of `keys` mapped to `default`."""
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        """The keys, in insertion order."""
        return self._keys.keys()

    def items(self):
        """The (key, value) pairs, in insertion order."""
        return [(k, self[k]) for k in self._keys]

    def values(self):
        """The values, in insertion order."""
        return [self[k] for k in self._keys]

    def update(self, parameters: Any) -> None:
        """Add or replace entries from a mapping, a ParameterDict or an iterable of (key, value)
        pairs; raises ValueError for an element that is not a pair."""
        _update_dict(self, parameters, (Mapping, ParameterDict), "ParameterDict", "value")

    def extra_repr(self) -> str:
        return "\n".join(_describe(k, p) for k, p in self.items())

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterDict should not be called.")
