"""`opcheck`: check one op call of a backend against the op's declaration and the cpu result."""

from __future__ import annotations

from typing import Any

from .comparison import assert_close
from .make_tensor import same_layout_copy
from .trees import geometry, map_tensors, tensors_in

__all__ = ["opcheck", "OpCheckError"]


class OpCheckError(AssertionError):
    """An op call disagrees with its meta rule, its autograd registration or the cpu result."""


def _resolve(op) -> tuple[Any, Any, str]:
    """(callable, OpDecl or None, name) for an op name, Operator, OpDecl or plain function."""
    from ..ops import REGISTRY
    from ..ops.declare import OpDecl

    if isinstance(op, str):
        if op not in REGISTRY:
            raise ValueError(f"opcheck(): no op named {op!r} is declared in coretorch.ops")
        d = REGISTRY[op]
        return d.op, d, op
    if isinstance(op, OpDecl):
        return op.op, op, op.name
    decl = getattr(op, "decl", None)
    name = str(getattr(op, "name", None) or getattr(op, "__name__", repr(op)))
    if decl is not None and getattr(decl, "inplace_op", None) is op:
        return op, decl, decl.name + "_"
    return op, decl, name


def _copy_inputs(args, kwargs, device=None):
    """Copies of the tensor arguments with the same strides (on `device` if given)."""

    def cp(t):
        return same_layout_copy(t, device)

    return map_tensors(args, cp), map_tensors(kwargs, cp)


def _is_inplace(fn, decl) -> bool:
    return decl is not None and (
        decl.inplace_only or (decl.inplace_op is not None and fn is decl.inplace_op)
    )


def opcheck(op, *args, **kwargs) -> Any:
    """Run ``op(*args, **kwargs)`` and check it; returns the result.

    `op` is an op name, an Operator (``coretorch.ops.aten.add``), an OpDecl, or a Tensor method
    bound to an op. Checks, each raising `OpCheckError` naming the op and the check:

    1. meta rule: for structured ops, the outputs' shapes and dtypes equal those the op's meta
       rule declares, and their strides are contiguous (the core allocated them); for other ops,
       the outputs' (shape, dtype, strides) equal a run on meta copies of the inputs (skipped
       when the meta backend is not loaded or the op's output shape depends on data);
    2. autograd: a differentiable primitive declares a derivative formula; with float inputs
       requiring grad, its float outputs require grad and have a grad_fn (a
       non-differentiable op's outputs don't require grad);
    3. cpu: on a device other than cpu, the values equal the op run on cpu copies.
    In-place ops run on copies of the inputs (with their strides), so `args` are not mutated.
    """
    fn, decl, name = _resolve(op)
    c_args, c_kwargs = _copy_inputs(args, kwargs) if _is_inplace(fn, decl) else (args, kwargs)
    try:
        result = fn(*c_args, **c_kwargs)
    except Exception as e:
        raise OpCheckError(f"opcheck({name}): the call raised {type(e).__name__}: {e}") from e
    _check_meta(fn, decl, name, args, kwargs, result)
    _check_autograd(fn, decl, name, args, kwargs)
    _check_cpu(fn, name, args, kwargs, result)
    return result


def _check_meta(fn, decl, name, args, kwargs, result) -> None:
    from ..device import device_types

    if _is_inplace(fn, decl):
        return  # the output is self: its geometry is the input's
    if decl is not None and decl.structured:
        spec = decl.output_spec(*args, **kwargs)
        specs = spec if isinstance(spec, list) else [spec]
        outs = list(result) if isinstance(spec, list) else [result]
        if len(outs) != len(specs):
            raise OpCheckError(
                f"opcheck({name}): the meta rule declares {len(specs)} outputs, "
                f"the kernel returned {len(outs)}"
            )
        # a primitive's kernel fills a new tensor, row-major or (elementwise ops) laid out as
        # its inputs are; a composite may return a view
        strides = decl.kind == "primitive"
        for i, ((shape, dtype, _), out) in enumerate(zip(specs, outs)):
            got = (tuple(out._shape), out._dtype.name, tuple(out._stride) if strides else None)
            want = (
                tuple(shape),
                dtype.name,
                _new_output_strides(decl, tuple(shape), args, kwargs, len(specs) == 1)
                if strides
                else None,
            )
            if got != want:
                raise OpCheckError(
                    f"opcheck({name}): output {i} (shape, dtype, strides) is "
                    f"{got}, the meta rule says {want}"
                )
        return
    if "meta" not in device_types() or not tensors_in(result):
        return
    m_args, m_kwargs = _copy_inputs(args, kwargs, device="meta")
    try:
        meta_result = fn(*m_args, **m_kwargs)
    except NotImplementedError:
        return  # data-dependent output shape: meta cannot run it
    if geometry(meta_result) != geometry(result):
        raise OpCheckError(
            f"opcheck({name}): (shape, dtype, strides) {geometry(result)} "
            f"differ from the meta run's {geometry(meta_result)}"
        )


def _new_output_strides(decl, shape: tuple, args, kwargs, single: bool) -> tuple:
    """The strides of a new output of `shape`: row-major, or for a single-output elementwise op
    (with two or more dims) its inputs' layout by PyTorch's rule."""
    from ..ops.declare import pointwise_operands
    from ..tensor.impl import contiguous_strides
    from ..tensor.layout import pointwise_strides

    row_major = contiguous_strides(shape)
    operands = pointwise_operands(decl)
    if operands is None or len(shape) < 2 or not single:
        return row_major
    return pointwise_strides(shape, row_major, decl.op.bind(*args, **kwargs), operands) or row_major


def _check_autograd(fn, decl, name, args, kwargs) -> None:
    floats = [t for t in tensors_in((args, kwargs)) if t._dtype.is_floating_point]
    if not floats or decl is None:
        return
    if _is_inplace(fn, decl):
        return  # in-place on a leaf that requires grad is an error by design
    if decl.differentiable and decl.kind != "composite_implicit" and decl.derivative is None:
        raise OpCheckError(
            f"opcheck({name}): the op is differentiable but declares no "
            f"derivative formula (declare(..., derivative=...)); backward would "
            f"raise"
        )
    g_args, g_kwargs = _copy_inputs(args, kwargs)
    for t in tensors_in((g_args, g_kwargs)):
        if t._dtype.is_floating_point:
            t.requires_grad_(True)
    out = fn(*g_args, **g_kwargs)
    outs = [t for t in tensors_in(out) if t._dtype.is_floating_point]
    for i, t in enumerate(outs):
        if decl.differentiable and not t.requires_grad:
            raise OpCheckError(
                f"opcheck({name}): output {i} does not require grad although a "
                f"float input does: no autograd formula is registered for "
                f"{name} (declare(..., derivative=...)) or it is not recorded"
            )
        if decl.differentiable and t.grad_fn is None and not t.is_leaf:
            raise OpCheckError(f"opcheck({name}): output {i} requires grad but has no grad_fn")
        if not decl.differentiable and t.requires_grad:
            raise OpCheckError(
                f"opcheck({name}): the op is declared non-differentiable but "
                f"output {i} requires grad"
            )


def _check_cpu(fn, name, args, kwargs, result) -> None:
    from ..device import get_device_type

    tensors = tensors_in((args, kwargs))
    if not tensors:
        return
    dev = tensors[0]._device
    if dev.type == "cpu" or not get_device_type(dev).has_data:
        return
    cpu_args, cpu_kwargs = _copy_inputs(args, kwargs, device="cpu")
    expected = fn(*cpu_args, **cpu_kwargs)
    try:
        assert_close(map_tensors(result, lambda t: t.detach().to("cpu")), expected, equal_nan=True)
    except AssertionError as e:
        raise OpCheckError(
            f"opcheck({name}): the result on {dev} differs from the cpu result:\n{e}"
        ) from None
