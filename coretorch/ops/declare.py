"""Operator declarations: one `declare(schema, ...)` per op holds all the core knows about it.

    declare("softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor",
            impl=softplus, derivative=softplus_backward, saves=("self",))

The schema (`coretorch.dispatch.schema`) is the op's only statement of its arguments and
defaults. Each call is bound to it once, in the op's entry point, into the **argument record**:
a positional tuple in schema order (defaults filled, dims wrapped, pairs expanded, scalars as
Python numbers). Every layer receives that record positionally:

- the **meta rule** ``meta(*record) -> Spec`` (a ``(shape, dtype, device)`` tuple, or a list of
  them for several outputs) is the only place an op refuses arguments; it runs for every backend,
  so meta, cpu, cuda and third-party backends refuse exactly the same calls;
- a **structured kernel** ``kernel(out, *record)`` only fills `out` (allocated by the core from
  the Spec); one kernel serves the functional, in-place (``add_``) and ``out=`` forms (a kernel
  may carry a ``fresh_output_kernel`` attribute: the faster variant the functional form calls
  with the new output, which for an elementwise op (families unary, binary, ternary) the core
  lays out like its inputs, `coretorch.tensor.layout`). An op that
  declares ``precomputed=("name", ...)`` has a meta rule returning ``(spec, (values...))`` and
  kernels ``kernel(out, *record, *values)`` (PyTorch's structured-kernel ``precompute``);
- the **derivative** ``fn(ctx, *grads) -> tuple`` reads arguments by name (``ctx.self``,
  ``ctx.alpha``), the outputs as ``ctx.result`` when ``save_result=True``, and returns one entry
  per argument in schema order (None where there is none; fewer entries mean None for the rest).
  Gradients may keep the output's broadcast shape: autograd sums them down centrally.
  ``saves=("self",)`` names the arguments whose values it reads (checked for in-place changes);
- the **FLOP formula** ``fn(result, *record) -> int``.

Kinds: ``primitive`` (every backend implements it: the ops in `primitives()`), ``composite``
(``impl`` written with other ops, for every backend: with a `derivative` it is differentiated as
one op, otherwise through the ops it calls). A backend may still register a native kernel for a
composite to run it faster; it never has to.
"""

from __future__ import annotations

import collections
import re
from typing import Any, Callable, NamedTuple

from ..device import _registry as _device_registry
from ..dispatch.keys import DispatchKey
from ..dispatch.operator import Operator, check_kernel_signature
from ..dispatch.schema import FunctionSchema, parse_schema
from ..record_function import state as _rf_state, timed_kernel as _timed
from ..tensor.impl import _geometry, contiguous_geometry, device_key_bits
from ..tensor.layout import POINTWISE_FAMILIES, pointwise_strides
from ..tensor.tensor import Tensor

__all__ = [
    "OpDecl",
    "declare",
    "REGISTRY",
    "op_named",
    "primitives",
    "alloc",
    "Spec",
    "check_kernel_signature",
    "return_types",
    "check_no_internal_overlap",
    "renamed_error",
    "reraise_as",
    "RENAMED_ERRORS",
    "pointwise_operands",
]

PRIMITIVE, IMPLICIT, EXPLICIT = "primitive", "composite_implicit", "composite_explicit"
_KINDS = (PRIMITIVE, IMPLICIT, EXPLICIT)

REGISTRY: dict[str, "OpDecl"] = {}


class Spec(NamedTuple):
    """What a meta rule returns for one output (a plain ``(shape, dtype, device)`` tuple is the
    same thing)."""

    shape: tuple
    dtype: Any
    device: Any


class _ReturnTypes:
    """``coretorch.return_types.max`` and friends: the namedtuples of multi-output ops."""


return_types = _ReturnTypes()


class OpDecl:
    """Everything declared about one operator (see the module docstring)."""

    __slots__ = (
        "name",
        "schema",
        "meta",
        "kind",
        "family",
        "op",
        "inplace_op",
        "method",
        "function",
        "out",
        "returns",
        "derivative",
        "saves",
        "save_result",
        "flops",
        "differentiable",
        "inplace_only",
        "doc",
        "extra",
        "precomputed",
        "impl",
        "aliased_writes",
    )

    def __init__(
        self,
        name: str,
        schema: FunctionSchema,
        meta,
        kind: str,
        family: str,
        method: bool,
        function: bool,
        out: bool,
        differentiable: bool,
        inplace_only: bool,
        doc: str,
    ):
        self.name, self.schema, self.meta, self.kind, self.family = name, schema, meta, kind, family
        self.method, self.function, self.out = method, function, out
        self.differentiable, self.inplace_only, self.doc = differentiable, inplace_only, doc
        self.returns: Any = None  # the namedtuple class of a multi-output op
        self.derivative: Callable | None = None
        self.saves: tuple | None = None
        self.save_result = False
        self.flops: Callable | None = None
        self.extra: dict[str, Any] = {}
        self.precomputed: tuple = ()
        self.impl: Callable | None = None
        self.aliased_writes = False
        self.op: Operator = None  # type: ignore[assignment]  # declare() sets it right after
        self.inplace_op: Operator | None = None

    @property
    def structured(self) -> bool:
        """An op with a meta rule that returns tensors: backend kernels fill an output the core
        allocates from the Spec (for a composite, a backend's optional faster kernel has the
        same form)."""
        if self.meta is None:
            return False
        fs = self.schema
        return bool(fs.returns) and fs.returns[0].type.base == "Tensor"

    @property
    def argument_names(self) -> tuple:
        """The argument names of the schema, in order."""
        return self.schema.names

    def output_spec(self, *args, **kwargs):
        """The Spec (or list of Specs) the meta rule gives for a call ``op(*args, **kwargs)``:
        the call is bound to the schema first, as the dispatcher does. Raises what the op would
        raise for those arguments."""
        if self.meta is None:
            raise RuntimeError(f"{self.name} has no meta rule (its output depends on the data)")
        spec = self.meta(*self.op.bind(*args, **kwargs))
        return spec[0] if self.precomputed else spec

    def operators(self) -> list[Operator]:
        """The registered operators of this declaration: the op and its in-place variant, where
        they exist."""
        return [o for o in (self.op, self.inplace_op) if o is not None]

    def __repr__(self) -> str:
        return f"<OpDecl {self.schema} ({self.kind})>"


def declare(
    schema: str,
    meta: Callable | None = None,
    *,
    impl: Callable | None = None,
    family: str = "",
    method: bool = True,
    function: bool = True,
    inplace: bool = False,
    out: bool | None = None,
    differentiable: bool = True,
    derivative: Callable | None = None,
    saves: tuple | None = None,
    save_result: bool = False,
    flops: Callable | None = None,
    precomputed: tuple = (),
    doc: str = "",
    kind: str | None = None,
    aliased_writes: bool = False,
) -> OpDecl:
    """Declare the op described by `schema` (see the module docstring).

    meta: the meta rule; with no `impl` the op is a structured primitive.
    impl: the kernel of a composite, ``impl(*record)``, registered for every backend.
    inplace: also declare ``name_`` (written ``self`` in place, same kernel).
    out: give the functional form an ``out=`` argument (default: ops with a meta rule that
    return tensors).
    method / function: expose it as ``Tensor.name`` / ``coretorch.name``.
    aliased_writes: the op may write into a tensor whose elements share memory (an `expand`ed
    one), as PyTorch's fill_ may: every element gets the same value. Every other in-place and
    ``out=`` write into such a tensor raises (`check_no_internal_overlap`).
    """
    fs = parse_schema(schema)
    name = fs.name
    if name in REGISTRY:
        raise RuntimeError(f"op {name} is declared twice")
    if kind is None:
        kind = PRIMITIVE if impl is None else (EXPLICIT if derivative is not None else IMPLICIT)
    if kind not in _KINDS:
        raise ValueError(f"declare({name}): kind must be one of {_KINDS}")
    inplace_only = fs.is_inplace
    has_out = (
        (meta is not None and len(fs.returns) >= 1 and fs.returns[0].type.base == "Tensor")
        if out is None
        else out
    )
    has_out = has_out and not inplace_only
    d = OpDecl(
        name,
        fs,
        meta,
        kind,
        family,
        method,
        function,
        has_out,
        differentiable,
        inplace_only,
        doc or (impl.__doc__ if impl else "") or "",
    )
    d.flops, d.derivative, d.save_result = flops, derivative, save_result
    d.saves, d.precomputed, d.impl = saves, tuple(precomputed), impl
    d.aliased_writes = aliased_writes
    if derivative is not None and saves is not None:
        unknown = set(saves) - set(fs.names)
        if unknown:
            raise ValueError(
                f"declare({name}): saves names {sorted(unknown)}, which are not arguments of {fs}"
            )
    names = fs.return_names
    if names is not None:
        d.returns = collections.namedtuple(name, names)  # type: ignore[misc]  # named at run time
        d.returns.__module__ = "coretorch.return_types"
        setattr(return_types, name, d.returns)
    d.op = Operator(f"aten::{name}", fs, d.doc, has_out=has_out)
    d.op.decl = d
    if inplace and not inplace_only:
        d.inplace_op = Operator(f"aten::{name}_", fs.inplace_variant(), _inplace_doc(name, d.doc))
        d.inplace_op.decl = d
    if d.structured:
        d.op.adapt_backend_kernel = _inplace_adapter(d) if inplace_only else _functional_adapter(d)
        if d.inplace_op is not None:
            d.inplace_op.adapt_backend_kernel = _inplace_adapter(d)
    if impl is not None:
        check_kernel_signature(d.op, impl, "impl")
        key = (
            DispatchKey.CompositeImplicitAutograd
            if kind == IMPLICIT
            else DispatchKey.CompositeExplicitAutograd
        )
        run = _composite_kernel(d, impl)
        d.op.register(key, run)
        if d.inplace_op is not None:
            d.inplace_op.register(key, _composite_inplace(d, impl))
    REGISTRY[name] = d
    return d


def _inplace_doc(name: str, doc: str) -> str:
    """The docstring of ``name_``: what it writes, then `name`'s own."""
    return f"In-place form of `{name}`: the result is written into `self`.\n\n{doc}"


def _composite_kernel(d: OpDecl, impl: Callable) -> Callable:
    """The kernel of a composite: its meta rule checks the arguments first (so it refuses bad
    input with its own name on every backend, not the name of an op it calls), then `impl`
    runs; an ``out=`` tensor receives a copy of the result."""
    run = _composite_run(d, impl)
    if not d.inplace_only or d.aliased_writes:
        return run

    def checked(self, *rest, **kw):  # ``name_`` declared as such: it writes self
        _check_written(self)  # one tensor, or the list of a _foreach_*_ op
        return run(self, *rest, **kw)

    checked.__name__ = impl.__name__
    checked.__wrapped__ = impl  # type: ignore[attr-defined]  # a function attribute
    return checked


# the families whose composites compute new values (not factories, views or memory-format
# copies, whose strides are the point): their results are laid out as a native kernel's output
_COMPUTED_FAMILIES = POINTWISE_FAMILIES + ("activation", "reduction", "nn")


def _composite_run(d: OpDecl, impl: Callable) -> Callable:
    meta, name = d.meta, d.name
    if meta is None:

        def run(*record, **kwargs):
            try:
                return impl(*record, **kwargs)
            except RENAMED_ERRORS as e:
                reraise_as(e, name)
    elif d.precomputed:  # the meta rule's values (a view's geometry, ...) go to `impl` too

        def run(*record, out=None):  # type: ignore[misc]  # the variants differ in keywords
            try:
                res = impl(*record, *meta(*record)[1])
            except RENAMED_ERRORS as e:
                reraise_as(e, name)
            if out is None:
                return res
            return _copy_to_out(name, out, res)
    elif d.structured and d.family in _COMPUTED_FAMILIES:
        # a backend may run this op natively, giving a new output the core's layout: the
        # composite's result gets that layout too, so every backend returns the same strides
        operands = pointwise_operands(d)

        def run(*record, out=None):  # type: ignore[misc]  # the variants differ in keywords
            try:
                spec = meta(*record)
                res = impl(*record)
            except RENAMED_ERRORS as e:
                reraise_as(e, name)
            if out is None:
                if spec.__class__ is list:  # several outputs: row-major, as alloc makes them
                    outs = [_in_core_layout(r, record, None) for r in res]
                    return res.__class__(*outs) if hasattr(res, "_fields") else tuple(outs)
                if len(spec[0]) > 1:
                    return _in_core_layout(res, record, operands)
                return res
            return _copy_to_out(name, out, res)
    else:

        def run(*record, out=None):  # type: ignore[misc]  # the variants differ in keywords
            try:
                meta(*record)
                res = impl(*record)
            except RENAMED_ERRORS as e:
                reraise_as(e, name)
            if out is None:
                return res
            return _copy_to_out(name, out, res)

    run.__name__ = impl.__name__
    run.__wrapped__ = impl  # type: ignore[attr-defined]  # a function attribute
    return run


def _composite_inplace(d: OpDecl, impl: Callable) -> Callable:
    """``name_`` of a composite: compute the functional result, write it into `self`."""
    meta, name = d.meta, d.name + "_"

    def run(self, *rest):
        check_no_internal_overlap(self)
        try:
            if meta is not None:
                spec = meta(self, *rest)
                _check_inplace_spec(name, self, spec[0] if d.precomputed else spec)
            res = impl(self, *rest)
        except RENAMED_ERRORS as e:
            reraise_as(e, name)
        return self.copy_(res)

    run.__name__ = name
    return run


# ---- errors name the op the user called ---------------------------------------------------------

# the types an op raises for bad arguments (the ones renamed; anything else passes through)
RENAMED_ERRORS = (RuntimeError, IndexError, ValueError, TypeError, NotImplementedError)
_OP_PREFIX = re.compile(r"(\w+)\(\): ")


def renamed_error(e: BaseException, name: str) -> BaseException:
    """`e` as op `name` raises it: a message that starts with another op's name (one that
    `name` is written with, or a meta rule helper it shares, such as addmm's mm check) names
    `name` instead, with the same type and traceback. Anything else is returned unchanged."""
    args = e.args
    if type(e) not in RENAMED_ERRORS or len(args) != 1 or args[0].__class__ is not str:
        return e
    m = _OP_PREFIX.match(args[0])
    if m is None or m.group(1) == name or m.group(1) == name.rstrip("_"):
        return e
    return type(e)(f"{name}(): {args[0][m.end() :]}").with_traceback(e.__traceback__)


def reraise_as(e: BaseException, name: str):
    """Raise `e` (caught while running op `name`) as `name` raises it (`renamed_error`)."""
    r = renamed_error(e, name)
    if r is e:
        raise e
    raise r from None


def _copy_to_out(name: str, out, res):
    _check_written(out)
    if isinstance(res, tuple):
        outs = _check_out(name, out, [(r._shape, r._dtype, r._device) for r in res])
        for o, r in zip(outs, res):
            o.copy_(r)
        return outs
    _check_out(name, out, (res._shape, res._dtype, res._device))
    return out.copy_(res)


def op_named(name: str) -> Operator:
    """The Operator of declared op `name` (look it up when called: it may be declared later)."""
    return REGISTRY[name].op


def primitives() -> list[str]:
    """Names of the ops a backend implements natively (everything else is composite)."""
    return sorted(n for n, d in REGISTRY.items() if d.kind == PRIMITIVE)


def _contract_error(name: str, kernel: Callable, what: str) -> RuntimeError:
    return RuntimeError(f"{name}(): the kernel {getattr(kernel, '__qualname__', kernel)!r} {what}")


# ---- writes into self-overlapping tensors -------------------------------------------------------

_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a "
    "single memory location. Please clone() the tensor before performing the operation."
)


def check_no_internal_overlap(t) -> None:
    """PyTorch's refusal to write into a tensor whose elements share memory: a dimension of size
    > 1 with stride 0 (what `expand` makes). The `0 in` test keeps ordinary tensors at one
    tuple scan."""
    if 0 in t._stride and 0 not in t._shape:  # an empty tensor has no elements to share
        for n, s in zip(t._shape, t._stride):
            if s == 0 and n > 1:
                raise RuntimeError(_OVERLAP)


def _check_written(out) -> None:
    """`check_no_internal_overlap` for an ``out=`` argument or a written list of tensors."""
    if isinstance(out, Tensor):
        check_no_internal_overlap(out)
    elif isinstance(out, (tuple, list)):
        for o in out:
            if isinstance(o, Tensor):
                check_no_internal_overlap(o)


# ---- output allocation ------------------------------------------------------------------------

_new = object.__new__


def alloc(shape: tuple, dtype, device) -> Tensor:
    """A new contiguous tensor on `device`, allocated through its backend's allocator (every
    op output is made here)."""
    geometry = _geometry.get(shape)
    if geometry is None:
        geometry = contiguous_geometry(shape)
    kind = device.type
    entry = _device_registry.get(kind)
    if entry is None:
        from ..device import get_device_type

        entry = get_device_type(device)  # raises the "no backend loaded" error
    nbytes = geometry[0] * dtype.itemsize
    try:
        storage = entry.allocator.allocate(nbytes, device)
    except (MemoryError, ValueError, OverflowError):
        # numpy's MemoryError / "Maximum allowed dimension exceeded" name neither the tensor
        # nor the op: say what was asked for, as PyTorch's allocator error does
        raise RuntimeError(
            f"can't allocate memory on {device}: you tried to allocate "
            f"{nbytes} bytes for a tensor of size {list(shape)} and dtype "
            f"{dtype.name}"
        ) from None
    # new_impl inlined: ~0.8k instructions less per op output (benchmarks/instructions.py
    # --layers, "alloc (and free) of the output")
    t = _new(Tensor)
    t._storage, t._shape, t._stride, t._offset = storage, shape, geometry[1], 0
    t._dtype, t._device, t._keys = dtype, device, device_key_bits[kind]
    t._vc = [0]
    t._autograd = t._base = t._cache = None
    return t


def can_cast(from_dtype, to_dtype) -> bool:
    """PyTorch's same-kind rule for writing results: no float->int, no non-bool->bool."""
    return from_dtype.category <= to_dtype.category


def _check_out(name: str, out, spec):
    if spec.__class__ is list:
        if not isinstance(out, (tuple, list)) or len(out) != len(spec):
            raise TypeError(f"{name}(): expected out= to be a tuple of {len(spec)} tensors")
        return tuple(_check_out(name, o, s) for o, s in zip(out, spec))
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    shape, dtype, device = spec
    if out._device != device:
        raise RuntimeError(
            f"{name}(): Expected out tensor to be on device {device}, but got out on {out._device}"
        )
    if not can_cast(dtype, out._dtype):
        raise RuntimeError(
            f"{name}(): result type {dtype.name} can't be cast to the desired "
            f"output type {out._dtype.name}"
        )
    if out._shape != shape:
        _resize_out(out, shape)
    out._vc[0] += 1
    return out


def _resize_out(t: Tensor, shape: tuple) -> None:
    """Give `t` a fresh contiguous buffer of `shape` (what PyTorch does to a wrong-sized out=)."""
    fresh = alloc(shape, t._dtype, t._device)
    t._storage, t._shape, t._stride, t._offset = fresh._storage, shape, fresh._stride, 0
    t._cache = None


def _allocate(spec):
    if spec.__class__ is list:
        return tuple(alloc(*s) for s in spec)
    return alloc(*spec)


_RETURNED = "returned a value: a structured kernel fills `out` and returns None"


def _run_into_out(name: str, kernel: Callable, out, spec, args, extra):
    """``out=``: check `out` against the Spec, then fill it. Kernels always see an output of
    the result dtype: for an `out` of another dtype the core computes into a temporary and
    copies it over (with PyTorch's casting)."""
    _check_written(out)
    res = _check_out(name, out, spec)
    outs = res if isinstance(res, tuple) else (res,)
    specs = spec if spec.__class__ is list else [spec]
    temps = [
        o if o._dtype is s[1] else alloc(o._shape, s[1], o._device) for o, s in zip(outs, specs)
    ]
    target = tuple(temps) if isinstance(res, tuple) else temps[0]
    r = (
        kernel(target, *args, *extra)
        if not _rf_state.active
        else _timed(kernel, (target, *args, *extra))
    )
    if r is not None:
        raise _contract_error(name, kernel, _RETURNED)
    for o, t in zip(outs, temps):
        if t is not o:
            _copy_(o, t)
    return res


def _copy_(dst, src) -> None:
    REGISTRY["_copy_"].op.entry(dst, src)


def pointwise_operands(d: OpDecl) -> tuple | None:
    """The positions of the Tensor arguments of an elementwise op (its output takes their
    memory layout: `pointwise_strides`), None for other ops."""
    if d.family not in POINTWISE_FAMILIES:
        return None
    return tuple(i for i, a in enumerate(d.schema.arguments) if "Tensor" in a.type.base)


def _follow_layout(res, args, operands) -> None:
    """Give the new output `res` of an elementwise op its inputs' memory layout."""
    st = pointwise_strides(res._shape, res._stride, args, operands)
    if st is not None:
        res._stride = st


def _in_core_layout(res, args, operands):
    """`res` (a composite's new result) laid out as the core lays out a native kernel's output
    (`_follow_layout`, else row-major): a copy only when its inputs' layouts made it differ."""
    shape, st = res._shape, res._stride
    if len(shape) < 2:
        return res
    row_major = contiguous_geometry(shape)[1]
    if operands is None:
        if st is row_major:
            return res
        want = row_major
    else:
        want = pointwise_strides(shape, row_major, args, operands) or row_major
    if st == want or any(
        a.__class__ is res.__class__ and a._storage is res._storage for a in args
    ):  # already so, or a view of an argument: kept
        return res
    fresh = alloc(shape, res._dtype, res._device)
    fresh._stride = want
    _copy_(fresh, res)
    return fresh


def _functional_adapter(d: OpDecl):
    meta, name, returns, pre = d.meta, d.name, d.returns, bool(d.precomputed)
    operands = pointwise_operands(d)

    def adapt(kernel: Callable, key: DispatchKey) -> Callable:
        # a backend kernel may carry a variant for the new outputs made here (see
        # `fresh_output_kernel` in the module docstring)
        fresh = getattr(kernel, "fresh_output_kernel", kernel)
        if not pre:

            def structured(*args, out=None):
                try:
                    spec = meta(*args)
                except RENAMED_ERRORS as e:
                    reraise_as(e, name)
                if out is not None:
                    res = _run_into_out(name, kernel, out, spec, args, ())
                    return returns(*res) if returns is not None else res
                if spec.__class__ is list:
                    res = tuple(alloc(*s) for s in spec)
                else:
                    res = alloc(*spec)
                    if operands is not None and len(spec[0]) > 1:
                        _follow_layout(res, args, operands)
                r = fresh(res, *args) if not _rf_state.active else _timed(fresh, (res, *args))
                if r is not None:
                    raise _contract_error(name, kernel, _RETURNED)
                if returns is not None:
                    return returns(*res)
                return res
        else:

            def structured(*args, out=None):
                try:
                    spec, extra = meta(*args)
                except RENAMED_ERRORS as e:
                    reraise_as(e, name)
                if out is not None:
                    res = _run_into_out(name, kernel, out, spec, args, extra)
                else:
                    res = _allocate(spec)
                    if operands is not None and spec.__class__ is not list and len(spec[0]) > 1:
                        _follow_layout(res, args, operands)
                    r = (
                        fresh(res, *args, *extra)
                        if not _rf_state.active
                        else _timed(fresh, (res, *args, *extra))
                    )
                    if r is not None:
                        raise _contract_error(name, kernel, _RETURNED)
                return returns(*res) if returns is not None else res

        structured.__name__ = f"{name}_{key.name}"
        structured.out_kernel = kernel  # type: ignore[attr-defined]  # a function attribute
        return structured

    return adapt


def _no_check(t) -> None:
    pass


def _check_inplace_spec(name: str, self, spec) -> None:
    shape, dtype, _ = spec
    if shape != self._shape:
        raise RuntimeError(
            f"{name}(): output with shape {list(self._shape)} doesn't "
            f"match the broadcast shape {list(shape)}"
        )
    if not can_cast(dtype, self._dtype):
        raise RuntimeError(
            f"{name}(): result type {dtype.name} can't be cast to the "
            f"desired output type {self._dtype.name}"
        )


def _inplace_adapter(d: OpDecl):
    meta, pre = d.meta, bool(d.precomputed)
    name = d.name if d.inplace_only else d.name + "_"
    check_overlap = _no_check if d.aliased_writes else check_no_internal_overlap

    def adapt(kernel: Callable, key: DispatchKey) -> Callable:
        def structured_(self, *args):
            check_overlap(self)
            try:
                spec = meta(self, *args)
            except RENAMED_ERRORS as e:
                reraise_as(e, name)
            extra = ()
            if pre:
                spec, extra = spec
            _check_inplace_spec(name, self, spec)
            dtype = spec[1]
            target = self if dtype is self._dtype else alloc(self._shape, dtype, self._device)
            r = (
                kernel(target, self, *args, *extra)
                if not _rf_state.active
                else _timed(kernel, (target, self, *args, *extra))
            )
            if r is not None:
                raise _contract_error(name, kernel, _RETURNED)
            if target is not self:
                _copy_(self, target)
            self._vc[0] += 1
            return self

        structured_.__name__ = f"{name}_{key.name}"
        structured_.out_kernel = kernel  # type: ignore[attr-defined]  # a function attribute
        return structured_

    return adapt
