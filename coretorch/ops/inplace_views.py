"""PyTorch's in-place view ops (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``,
``as_strided_``; ``swapaxes_`` and ``swapdims_`` are aliases of ``transpose_``): the tensor
itself takes the shape and strides of the view the out-of-place op returns (same storage, no
data moved).

Autograd sees the change as the view op applied to the tensor's history: its ``grad_fn``
becomes the view's (``UnsqueezeBackward0`` after its old node), and its version counter moves
on, so a backward that saved the tensor with its old shape refuses to run instead of reading
it wrong. As in PyTorch, a leaf that requires grad cannot be changed in place while grad mode is
on.
"""

from __future__ import annotations

from ..autograd.grad_mode import is_grad_enabled
from ..tensor.impl import AutogradMeta
from ..tensor.tensor import Tensor

__all__ = ["INPLACE_VIEWS", "bind_inplace_views"]


def _become(self: Tensor, view: Tensor) -> Tensor:
    """`self` takes `view`'s geometry and autograd history (`view` is a view of `self`)."""
    m = self._autograd
    if m is not None and m.requires_grad and m.grad_fn is None and is_grad_enabled():
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    self._shape, self._stride, self._offset = view._shape, view._stride, view._offset
    self._cache = None  # the backend's cached array view has the old geometry
    vm = view._autograd
    if vm is not None and vm.grad_fn is not None:
        if m is None:
            m = self._autograd = AutogradMeta(True)
        m.grad_fn, m.output_nr = vm.grad_fn, vm.output_nr
    self._vc[0] += 1
    return self


def _make(name: str):
    def inplace_view(self, *args, **kwargs):
        return _become(self, getattr(self, name)(*args, **kwargs))

    inplace_view.__name__ = inplace_view.__qualname__ = name + "_"
    inplace_view.__doc__ = (
        f"In place: this tensor becomes ``self.{name}(...)`` (same storage, new shape and strides)."
    )
    return inplace_view


INPLACE_VIEWS = ("t", "transpose", "squeeze", "unsqueeze", "as_strided")


def bind_inplace_views(tensor_cls: type) -> None:
    """Set ``tensor_cls.<op>_`` for every op of `INPLACE_VIEWS` the class has."""
    for name in INPLACE_VIEWS:
        if hasattr(tensor_cls, name) and not hasattr(tensor_cls, name + "_"):
            setattr(tensor_cls, name + "_", _make(name))
