"""`Parameter`: a tensor that a `Module` registers as one of its parameters."""

from __future__ import annotations

from ..dispatch.keys import AUTOGRAD_BIT
from ..tensor.impl import TensorImpl, new_impl
from ..tensor.tensor import Tensor

__all__ = ["Parameter", "Buffer", "is_parameter"]


class Parameter(Tensor):
    """A tensor that is a module parameter (mirrors ``torch.nn.Parameter``).

    ``Parameter(data, requires_grad=True)`` shares `data`'s storage and version counter (like
    ``data.detach()``) and requires grad by default. Assigning one as a `Module` attribute
    registers it in the module's parameters.
    """

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> "Parameter":
        if data is None:
            from ..ops import aten

            data = aten.empty(0)
        if not isinstance(data, TensorImpl):
            raise TypeError(f"Parameter(): expected data to be a Tensor, got {type(data).__name__}")
        if data.is_sparse:
            raise RuntimeError(
                "Parameter(): sparse_coo tensors are not supported as parameters; "
                "register the dense tensor (.to_dense()) or keep the sparse one "
                "as a buffer"
            )
        p = new_impl(
            cls,
            data._storage,
            data._shape,
            data._stride,
            data._offset,
            data._dtype,
            data._device,
            data._keys & ~AUTOGRAD_BIT,
            data._vc,
            None,
        )
        if requires_grad:
            p.requires_grad_(True)
        return p

    # the ignore: mypy finds the same signature as Tensor's incompatible (a dunder quirk)
    def __repr__(self, *, tensor_contents=None) -> str:  # type: ignore[override]
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        new = Parameter(self.detach().clone(), self.requires_grad)
        memo[id(self)] = new
        return new


class Buffer(Tensor):
    """A tensor that a `Module` registers as a buffer when assigned as an attribute (mirrors
    ``torch.nn.Buffer``): ``self.mask = nn.Buffer(t, persistent=False)`` is
    ``self.register_buffer("mask", t, persistent=False)``. It shares `data`'s storage and
    keeps its ``requires_grad``."""

    __slots__ = ()

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> "Buffer":
        if data is None:
            from ..ops import aten

            data = aten.empty(0)
        if not isinstance(data, TensorImpl):
            raise TypeError(f"Buffer(): expected data to be a Tensor, got {type(data).__name__}")
        kind = cls if persistent else _NonPersistentBuffer
        b = new_impl(
            kind,
            data._storage,
            data._shape,
            data._stride,
            data._offset,
            data._dtype,
            data._device,
            data._keys & ~AUTOGRAD_BIT,
            data._vc,
            None,
        )
        if data.requires_grad:
            b.requires_grad_(True)
        return b

    @property
    def persistent(self) -> bool:
        """Whether the buffer goes into the module's state_dict."""
        return not isinstance(self, _NonPersistentBuffer)


class _NonPersistentBuffer(Buffer):
    """A Buffer made with ``persistent=False`` (its class carries the flag: tensors have no
    attribute dict)."""

    __slots__ = ()


def is_parameter(obj) -> bool:
    """Whether `obj` is a Parameter."""
    return isinstance(obj, Parameter)
