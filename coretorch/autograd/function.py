"""Custom differentiable functions: ``class F(coretorch.autograd.Function)`` with static
``forward(ctx, ...)`` and ``backward(ctx, *grads)``, used as ``F.apply(...)``.

The `ctx` is the backward node itself (as in PyTorch: ``y.grad_fn`` is an ``FBackward``).
"""

from __future__ import annotations

import functools
from typing import Any

from ..dispatch.keys import AUTOGRAD_BIT
from ..dispatch.tls import local_keys
from ..record_function import next_sequence_nr
from ..tensor.impl import AutogradMeta, TensorImpl, requires_grad as _requires_grad
from ..tensor.tensor import Tensor
from .grad_mode import no_grad
from .node import FREED_MESSAGE, Node, gradient_edge, init_node, materialize, version_error

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable"]


class FunctionCtx:
    """Methods available on `ctx` inside forward/setup_context."""

    to_save: tuple
    dirty_tensors: tuple
    non_differentiable: tuple
    materialize_grads: bool

    def save_for_backward(self, *tensors) -> None:
        """Save tensors (or None) for backward; read them back with `saved_tensors`."""
        for t in tensors:
            if t is not None and not isinstance(t, TensorImpl):
                raise TypeError(
                    f"save_for_backward can only save variables, but argument "
                    f"{tensors.index(t)} is of type {type(t).__name__}"
                )
        self.to_save = tensors

    def mark_dirty(self, *tensors) -> None:
        """Declare inputs that forward modified in place."""
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Declare outputs that have no gradient (e.g. indices)."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """With False, backward receives None (not zeros) for outputs that got no gradient."""
        self.materialize_grads = bool(value)


class BackwardCFunction(FunctionCtx, Node):
    """The node of one `Function.apply` call (and its `ctx`)."""

    _name = "BackwardCFunction"
    _fn_cls: type[Function]  # the Function subclass (set per subclass)

    def _init(self) -> None:
        self.to_save = ()
        self.dirty_tensors = ()
        self.non_differentiable = ()
        self.materialize_grads = True
        self._saved: tuple | None = None
        self._freed = False
        self._out_meta: tuple = ()
        self._n_inputs = 0
        self.needs_input_grad: tuple = ()

    @property
    def saved_tensors(self) -> tuple:
        """The tensors the forward passed to ``ctx.save_for_backward``.

        Raises:
            RuntimeError: when the graph was already freed by a backward pass, or a saved tensor
                was modified in place after it was saved.
        """
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        if self._saved is None:
            return tuple(self.to_save)
        for t, v in self._saved:
            if t is not None and t._vc[0] != v:
                raise version_error(t, v)
        return tuple(t for t, _ in self._saved)

    saved_variables = saved_tensors

    def apply(self, grads: list) -> list:
        """Run the Function's ``backward`` on `grads`.

        Returns one gradient (or None) per forward input.

        Raises:
            RuntimeError: when the graph was freed or backward returned the wrong number of
            gradients.
            TypeError: when backward returned something other than a Tensor or None.
        """
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        if self.materialize_grads:
            grads = materialize(grads, self._out_meta)
        res = self._fn_cls.backward(self, *grads)
        if not isinstance(res, tuple):
            res = (res,)
        n = self._n_inputs
        if len(res) != n:
            if len(res) > n and all(r is None for r in res[n:]):
                res = res[:n]
            else:
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of "
                    f"gradients (expected {n}, got {len(res)})"
                )
        for i, (r, e) in enumerate(zip(res, self._edges)):
            if r is not None and not isinstance(r, TensorImpl):
                raise TypeError(
                    f"function {self.name()} returned a gradient of type "
                    f"{type(r).__name__} at position {i}; expected a Tensor or None"
                )
        return res

    def release(self) -> None:
        self._saved = None
        self.to_save = ()
        self._freed = True


class Function:
    """Base class of custom autograd functions (mirrors ``torch.autograd.Function``).

    Subclasses define static ``forward(ctx, *args, **kwargs)`` (or ``forward(*args)`` plus
    ``setup_context(ctx, inputs, output)``) and ``backward(ctx, *grad_outputs)`` returning one
    gradient (or None) per forward positional argument. Call ``F.apply(*args)``.

    Examples:
        >>> import coretorch
        >>> class Cube(coretorch.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x ** 3
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         x, = ctx.saved_tensors
        ...         return 3 * x ** 2 * grad
        >>> x = coretorch.tensor([1., 2.], requires_grad=True)
        >>> y = Cube.apply(x)
        >>> y
        tensor([1., 8.], grad_fn=<CubeBackward>)
        >>> y.sum().backward()
        >>> x.grad
        tensor([ 3., 12.])
    """

    _backward_cls: type = BackwardCFunction

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        name = cls.__name__ + "Backward"
        cls._backward_cls = type(name, (BackwardCFunction,), {"_name": name, "_fn_cls": cls})

    def __init__(self, *args, **kwargs) -> None:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is "
            "deprecated. Please use new-style autograd function with static "
            "forward method."
        )

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        """Compute the outputs from the inputs; override in a subclass.

        With `setup_context` defined, the signature is ``forward(*args)``; otherwise
        ``forward(ctx, *args)`` and the context is the first argument.

        Raises:
            NotImplementedError: when not overridden.
        """
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
        """Save what backward needs on `ctx` from the forward's `inputs` and `output` (optional).

        Raises:
            NotImplementedError: when not overridden and forward does not take ctx.
        """
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        """Gradients of the inputs from the gradients of the outputs; override in a subclass.

        Return one Tensor (or None) per forward input.

        Raises:
            NotImplementedError: when not overridden.
        """
        raise NotImplementedError(
            "You must implement either the backward or vjp method for "
            "your custom autograd.Function to use it with backward "
            "mode AD."
        )

    vjp = backward

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run forward (with grad recording off) and record the backward node."""
        if cls is Function:
            raise RuntimeError("Function.apply must be called on a subclass of Function")
        ctx: BackwardCFunction = object.__new__(cls._backward_cls)
        init_node(ctx, (), 0, next_sequence_nr())
        ctx._init()
        needs = tuple(isinstance(a, TensorImpl) and _requires_grad(a) for a in args)
        ctx.needs_input_grad = needs
        ctx._n_inputs = len(args)
        record = not local_keys.exclude & AUTOGRAD_BIT and any(needs)
        if record:
            ctx._edges = tuple(
                gradient_edge(a, a._autograd) if r else None for a, r in zip(args, needs)
            )
        with no_grad():
            if cls.setup_context is not Function.setup_context:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        if not record:
            return outputs
        return _record(ctx, args, outputs)


def _record(ctx: BackwardCFunction, args: tuple, outputs: Any) -> Any:
    single = not isinstance(outputs, tuple)
    outs = [outputs] if single else list(outputs)
    non_diff = {id(t) for t in ctx.non_differentiable}
    dirty = {id(t) for t in ctx.dirty_tensors}
    arg_ids = {id(a) for a in args if isinstance(a, TensorImpl)}
    for t in ctx.dirty_tensors:
        m = t._autograd
        if m is not None and m.grad_fn is None and m.requires_grad:
            raise RuntimeError(
                "a leaf Variable that requires grad has been used in an in-place "
                f"operation ({ctx.name()})."
            )
        if t._base is not None and _requires_grad(t):
            raise NotImplementedError(
                f"{ctx.name()}: mark_dirty on a view is not supported by "
                f"coretorch autograd; modify the base tensor instead"
            )
    meta: list[tuple | None] = []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            meta.append(None)
            continue
        meta.append((o._shape, o._dtype, o._device))
        if id(o) in non_diff:
            if id(o) not in arg_ids:
                o._keys &= ~AUTOGRAD_BIT
            continue
        if id(o) in arg_ids and id(o) not in dirty:
            o = outs[i] = o.detach()  # an input returned as-is becomes a new tensor (alias)
        if not (o._dtype.is_floating_point or o._dtype.is_complex):
            continue
        m = o._autograd
        if m is None:
            o._autograd = AutogradMeta(False, ctx, i)
        else:
            m.grad_fn, m.output_nr = ctx, i
        o._keys |= AUTOGRAD_BIT
    ctx.n_outputs = len(outs)
    ctx._out_meta = tuple(meta)
    if ctx.to_save:
        ctx._saved = tuple((t, None if t is None else t._vc[0]) for t in ctx.to_save)
    return outs[0] if single else tuple(outs)


def once_differentiable(fn):
    """Mark a backward as not differentiable: it runs with grad recording off."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)

    return wrapper
