"""What `Tensor`'s autograd methods run: hooks, retain_grad, `.data`, detach_ (the methods are
defined, with their documentation, on the class in `coretorch.tensor.tensor`)."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Callable

from ..dispatch.keys import AUTOGRAD_BIT
from ..tensor.impl import AutogradMeta, TensorImpl, requires_grad as _requires_grad
from .node import RemovableHandle, add_hook, gradient_edge

if TYPE_CHECKING:
    from ..tensor.tensor import Tensor

__all__ = [
    "register_hook",
    "register_post_accumulate_grad_hook",
    "retain_grad",
    "detach_",
    "get_data",
    "set_data",
    "move_retain",
]


def register_hook(self, hook: Callable) -> RemovableHandle:
    """``hook(grad) -> Tensor | None`` runs when this tensor's gradient is computed; a returned
    tensor replaces the gradient."""
    if not _requires_grad(self):
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    m = self._autograd
    if m.grad_fn is None:
        if m.hooks is None:
            m.hooks = {}
        return add_hook(m.hooks, hook)
    return add_hook(m.grad_fn._hook_set().tensor_pre, (m.output_nr, hook))


def register_post_accumulate_grad_hook(self, hook: Callable) -> RemovableHandle:
    """``hook(tensor)`` runs after a gradient was accumulated into this leaf's ``.grad``."""
    if not _requires_grad(self):
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    m = self._autograd
    if m.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if m.post_accumulate_grad_hooks is None:
        m.post_accumulate_grad_hooks = {}
    return add_hook(m.post_accumulate_grad_hooks, hook)


def retain_grad(self) -> None:
    """Make this non-leaf tensor keep its gradient in ``.grad`` after backward."""
    if not _requires_grad(self):
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    m = self._autograd
    if m.grad_fn is None or m.retains_grad:
        return
    m.retains_grad = True
    gradient_edge(self, m)
    m.grad_fn._hook_set().retain[m.output_nr] = weakref.ref(self)


def move_retain(t: TensorImpl, m: AutogradMeta) -> None:
    """An in-place op gave `t` a new grad_fn: its retained grad follows."""
    fn = m.grad_fn
    assert fn is not None, "move_retain: the in-place op recorded a grad_fn"
    fn._hook_set().retain[m.output_nr] = weakref.ref(t)


def detach_(self: TensorImpl) -> TensorImpl:
    """Cut this tensor from the graph in place: it becomes a leaf that doesn't require grad."""
    if self._base is not None and _requires_grad(self):
        raise RuntimeError("Can't detach views in-place. Use detach() instead.")
    m = self._autograd
    if m is not None:
        m.grad_fn, m.requires_grad, m.output_nr = None, False, 0
    self._keys &= ~AUTOGRAD_BIT
    return self


def get_data(self: Tensor) -> Tensor:
    """``Tensor.data``: a detached alias whose in-place changes autograd does not track."""
    t = self.detach()
    t._vc = [0]  # like PyTorch, changes through .data are invisible to autograd
    return t


def set_data(self, value) -> None:
    """``Tensor.data = value``: make this tensor use `value`'s storage, shape, dtype and device.

    Raises:
        TypeError: when `value` is not a Tensor.
        RuntimeError: when this tensor requires grad and `value` is not floating point.
    """
    if not isinstance(value, TensorImpl):
        raise TypeError(f"data must be a Tensor, not {type(value).__name__}")
    if value._device != self._device or value._dtype is not self._dtype:
        if _requires_grad(self) and not (value._dtype.is_floating_point or value._dtype.is_complex):
            raise RuntimeError(
                "data set to a tensor that requires gradients must be floating point"
            )
    self._storage, self._shape, self._stride = value._storage, value._shape, value._stride
    self._offset, self._dtype, self._device = value._offset, value._dtype, value._device
    self._cache = None
    keep = self._keys & AUTOGRAD_BIT
    self._keys = (value._keys & ~AUTOGRAD_BIT) | keep
