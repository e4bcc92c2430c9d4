"""Elementwise fusion, the backend-independent part: a chain of elementwise op calls becomes one
*scalar program* (what one output element is, in terms of one element of each input), which a
backend renders into a single loop (the cpu backend: one numba kernel, `coretorch_cpu_numba.fused`).

    b = ChainBuilder()
    x, y = b.input((4,), coretorch.float32), b.input((4,), coretorch.float32)
    t = b.call("mul", x, 2.0)
    u = b.call("add", t, y)
    kernel = compile_chain(b.chain([u]), "cpu")
    kernel([out], [x_tensor, y_tensor])        # out = x * 2 + y in one pass, no temporary

A chain (`Chain`) lists its tensor inputs' dtypes, its steps (`Step`: an op, its kernel arguments
with `In(k)` / `Val(j)` in place of tensors, the result dtype) and which step values are written
out. Inputs may have any strides and broadcast to the outputs' shape; Python numbers stay
numbers (run-time parameters of the kernel, so one compiled kernel serves every value).
`lower` composes the ops' scalar formulas (`coretorch.ops.scalar_formulas`) into the program:
each operand is cast to the op's compute dtype, each step's value is cast to its result dtype
(exactly where the eager kernels round), and every expression is checked against the scalar
language (`VOCABULARY`) before a backend sees it.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .. import dtypes as dt
from ..backend_kit.array_kit import scalar_as
from ..device import device as _device
from ..ops.declare import REGISTRY
from ..ops.scalar_formulas import FORMULAS, LIBM
from ..tensor.impl import contiguous_geometry, new_impl
from ..tensor.tensor import Tensor

__all__ = [
    "VOCABULARY",
    "Chain",
    "ChainBuilder",
    "FusedKernelBase",
    "FusionError",
    "In",
    "Operand",
    "ScalarProgram",
    "Step",
    "Val",
    "broadcast_strides",
    "compile_chain",
    "eager_chain",
    "fusable",
    "lower",
    "reads_ahead",
    "validate",
]


class FusionError(ValueError):
    """A chain that cannot become one fused kernel (the message says which step and why)."""


@dataclasses.dataclass(frozen=True, slots=True)
class In:
    """The chain's k-th tensor input (never equal to a `Val` of the same index)."""

    index: int


@dataclasses.dataclass(frozen=True, slots=True)
class Val:
    """The value of the chain's j-th step."""

    index: int


class Step(NamedTuple):
    """One elementwise op call: `args` are its kernel arguments after ``out`` (the argument record
    and any precomputed values) with `In` / `Val` for tensors; `dtype` is its result dtype."""

    op: str
    args: tuple
    dtype: Any


class Chain(NamedTuple):
    """Tensor inputs (their dtypes), steps in order, and the steps whose values are written out
    (one output tensor each, of that step's dtype and of the chain's full shape)."""

    inputs: tuple
    steps: tuple
    outputs: tuple


class ScalarProgram(NamedTuple):
    """A chain as straight-line scalar code, for a backend to wrap in a loop.

    inputs: ``(k, numpy dtype)`` of each tensor input read (element ``x{k}`` of array ``a{k}``);
    params: ``(name, numpy scalar)`` run-time parameters; lines: ``(name, expression)`` in order;
    outputs: ``(name, numpy dtype)`` written to output 0, 1, ...; ops: the fused ops, in order.
    """

    inputs: tuple
    params: tuple
    lines: tuple
    outputs: tuple
    ops: tuple

    def describe(self) -> str:
        """The fused ops, e.g. ``fused[mul, add, tanh]``."""
        return f"fused[{', '.join(self.ops)}]"

    def check_operands(self, outs, ins) -> None:
        """Refuse output and input tensors a kernel of this program cannot take (their number or
        dtypes differ from the program's); every backend's fused kernel checks with this."""
        where = self.describe()
        if len(outs) != len(self.outputs):
            raise ValueError(f"{where}: expected {len(self.outputs)} outputs, got {len(outs)}")
        for o, (_, d) in zip(outs, self.outputs):
            if o._dtype.numpy != d:
                raise TypeError(
                    f"{where}: an output of dtype {o._dtype.name} where the chain computes {d}"
                )
        for k, d in self.inputs:
            if ins[k]._dtype.numpy != d:
                raise TypeError(f"{where}: input {k} of dtype {ins[k]._dtype.name}, expected {d}")


# ---- the scalar language --------------------------------------------------------------------

# function name -> number of arguments. Casts: C casts, except bool_(x), which is x != 0.
# powi(x, n): float x to int64 n >= 0 by repeated multiplication; ipow: PyTorch's integer power
# (negative exponents give 0, 1 or -1); pow: C's pow; rint: round half to even.
CASTS = {
    "bool": "bool_",
    "uint8": "uint8",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "float32": "float32",
    "float64": "float64",
}
VOCABULARY: dict[str, int] = {
    **{
        f: 1
        for f in (
            *LIBM,
            "erfinv",
            "floor",
            "ceil",
            "trunc",
            "rint",
            "isnan",
            "abs",
        )
    },
    **{f: 2 for f in ("atan2", "hypot", "fmod", "copysign", "pow", "powi", "ipow")},
    **{c: 1 for c in CASTS.values()},
}
_OPERATORS = (
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.FloorDiv,
    ast.Mod,
    ast.BitAnd,
    ast.BitOr,
    ast.BitXor,
    ast.LShift,
    ast.RShift,
    ast.USub,
    ast.UAdd,
    ast.Not,
    ast.Invert,
    ast.And,
    ast.Or,
    ast.Eq,
    ast.NotEq,
    ast.Lt,
    ast.LtE,
    ast.Gt,
    ast.GtE,
)
_NODES = (
    ast.Expression,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.IfExp,
    ast.Call,
    ast.Name,
    ast.Load,
    ast.Constant,
) + _OPERATORS


def _check_expression(expr: str, known: set, where: str) -> set:
    """The names `expr` reads; FusionError unless it is in the scalar language and reads only
    `known` names."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise FusionError(f"{where}: {expr!r} is not an expression ({e.msg})") from None
    used = set()
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            raise FusionError(
                f"{where}: {type(node).__name__} is not in the scalar language ({expr!r})"
            )
        if isinstance(node, ast.Constant) and type(node.value) not in (int, float, bool):
            raise FusionError(f"{where}: constant {node.value!r} is not a number ({expr!r})")
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", None)
            if not isinstance(node.func, ast.Name) or name not in VOCABULARY:
                raise FusionError(
                    f"{where}: {ast.unparse(node.func)}() is not a function of "
                    f"the scalar language ({expr!r})"
                )
            if node.keywords or len(node.args) != VOCABULARY[name]:
                raise FusionError(
                    f"{where}: {name}() takes {VOCABULARY[name]} positional argument(s) ({expr!r})"
                )
        elif isinstance(node, ast.Name) and node.id not in VOCABULARY:
            if node.id not in known:
                raise FusionError(f"{where}: {node.id!r} is not defined ({expr!r})")
            used.add(node.id)
    return used


def validate(program: ScalarProgram) -> set:
    """Check every line of `program` (FusionError naming the line); the names it reads."""
    known = {f"x{k}" for k, _ in program.inputs} | {name for name, _ in program.params}
    used: set = set()
    for name, expr in program.lines:
        used |= _check_expression(expr, known, f"line {name}")
        known.add(name)
    for name, _ in program.outputs:
        if name not in known:
            raise FusionError(f"output {name!r} is not computed")
    return used


# ---- lowering a chain -----------------------------------------------------------------------

_UNFUSABLE_DTYPES = (dt.float16, dt.bfloat16)


class Operand(str):
    """A formula's operand: its expression; `value` is the Python number of a scalar operand
    (None for a tensor); `dtype` its dtype before the cast to the compute dtype."""

    value: Any = None
    dtype: Any = None


def _operand(expr: str, value, dtype) -> Operand:
    o = Operand(expr)
    o.value, o.dtype = value, dtype
    return o


def _kind(d) -> str:
    if d is dt.bool:
        return "b"
    if d.is_floating_point:
        return "f"
    return "i" if d.is_signed else "u"


def _cast(expr: str, d) -> str:
    return f"{CASTS[d.name]}({expr})"


class _Lowering:
    """The program being built: parameters, lines, and the value names of the steps."""

    def __init__(self):
        self.params: list = []
        self.lines: list = []
        self.temps = 0

    def param(self, value, d) -> str:
        v = scalar_as(value, d.numpy)
        for name, have in self.params:
            if have.dtype == v.dtype and (have == v or (np.isnan(have) and np.isnan(v))):
                return name
        name = f"p{len(self.params)}"
        self.params.append((name, v))
        return name

    def let(self, expr: str) -> str:
        name = f"t{self.temps}"
        self.temps += 1
        self.lines.append((name, expr))
        return name


class _Context:
    """The ``c`` a scalar formula receives (see `coretorch.ops.scalar_formulas`)."""

    def __init__(self, low: _Lowering, d):
        self._low, self.dtype, self.kind = low, d, _kind(d)

    def lit(self, v) -> str:
        """A literal of the compute dtype (integers wrap as the dtype does)."""
        if self.kind == "b":
            return repr(bool(v))
        return _cast(repr(scalar_as(v, self.dtype.numpy).item()), self.dtype)

    def param(self, v, d=None) -> str:
        """A run-time parameter holding `v` in the compute dtype (or `d`)."""
        return self._low.param(v, d or self.dtype)

    def let(self, expr: str) -> str:
        """A temporary holding `expr` (for a value a formula reads twice)."""
        return self._low.let(expr)


def _step_where(i: int, step: Step) -> str:
    return f"step {i} ({step.op})"


def _check_dtype(d, where: str) -> None:
    if d in _UNFUSABLE_DTYPES or d.name not in CASTS:
        raise FusionError(f"{where}: dtype {d.name} is not fused (no fused loop computes in it)")


def lower(chain: Chain) -> ScalarProgram:
    """`chain` as a validated `ScalarProgram` (FusionError naming the step that cannot fuse)."""
    for k, d in enumerate(chain.inputs):
        _check_dtype(d, f"input {k}")
    low = _Lowering()
    names: list = []  # value name of each step
    dtypes: list = []  # result dtype of each step
    for i, step in enumerate(chain.steps):
        where = _step_where(i, step)
        formula = FORMULAS.get(step.op)
        if formula is None:
            raise FusionError(f"{where}: the op has no scalar formula")
        _check_dtype(step.dtype, where)
        metas = []
        for a in step.args:
            if isinstance(a, In):
                if not 0 <= a.index < len(chain.inputs):
                    raise FusionError(f"{where}: reads input {a.index} of {len(chain.inputs)}")
                metas.append(chain.inputs[a.index])
            elif isinstance(a, Val):
                if not 0 <= a.index < i:
                    raise FusionError(f"{where}: reads step {a.index}, not computed before it")
                metas.append(dtypes[a.index])
            else:
                metas.append(a)
        compute = formula.compute(step.dtype, *metas)
        _check_dtype(compute, where)
        ctx = _Context(low, compute)
        operands = []
        for pos, (a, m) in enumerate(zip(step.args, metas)):
            if isinstance(a, (In, Val)):
                expr = f"x{a.index}" if isinstance(a, In) else names[a.index]
                if m is not compute and pos not in formula.raw:
                    expr = _cast(expr, compute)
                operands.append(_operand(expr, None, m))
            elif isinstance(a, (bool, int, float)) and _is_operand(step.op, pos):
                operands.append(_operand(ctx.param(a), a, compute))
            else:
                operands.append(a)
        expr = formula.expr(ctx, *operands)
        if expr is None:
            raise FusionError(f"{where}: not fused for these arguments (dtype {compute.name})")
        name = f"v{i}"
        low.lines.append((name, _cast(expr, step.dtype)))
        names.append(name)
        dtypes.append(step.dtype)
    if not chain.outputs:
        raise FusionError("the chain writes no output")
    outputs = []
    for j in chain.outputs:
        if not 0 <= j < len(names):
            raise FusionError(f"output {j} names no step of {len(names)}")
        outputs.append((names[j], dtypes[j].numpy))
    program = ScalarProgram(
        (), tuple(low.params), tuple(low.lines), tuple(outputs), tuple(s.op for s in chain.steps)
    )
    used = validate(
        program._replace(inputs=tuple((k, d.numpy) for k, d in enumerate(chain.inputs)))
    )
    return program._replace(
        inputs=tuple((k, d.numpy) for k, d in enumerate(chain.inputs) if f"x{k}" in used),
        params=tuple(p for p in low.params if p[0] in used),
    )


def _is_operand(op: str, pos: int) -> bool:
    """Whether argument `pos` of `op` is a ``Tensor|Scalar`` operand (a Python number there is a
    value the formula computes with, as opposed to a parameter such as alpha)."""
    args = REGISTRY[op].schema.arguments
    return pos < len(args) and args[pos].type.is_tensor


def fusable(step: Step, input_dtypes: tuple) -> bool:
    """Whether `step`, reading tensors of `input_dtypes` (for its `In` arguments), lowers."""
    try:
        lower(Chain(tuple(input_dtypes), (step,), (0,)))
    except FusionError:
        return False
    return True


# ---- backends ---------------------------------------------------------------------------------


def compile_chain(chain: Chain, device_type: str) -> Callable:
    """One fused kernel for `chain` on `device_type`: ``kernel(outs, ins)`` writes the output
    tensors `outs` from the input tensors `ins` (in the chain's order). The backend provides the
    compiler as its device type's ``extras["fuse"]`` (given the `ScalarProgram`)."""
    from ..device import _registry

    entry = _registry.get(device_type)
    fuse = entry.extras.get("fuse") if entry is not None else None
    if fuse is None:
        raise FusionError(f"the {device_type} backend does not fuse elementwise kernels")
    return fuse(lower(chain))


class FusedKernelBase:
    """What every backend's fused kernel does alike. ``kernel(outs, ins)`` writes the output
    tensors `outs` (all of the chain's full shape, any strides) from the chain's input tensors
    `ins` (any strides, broadcasting to that shape); ``kernel.bind(outs, ins)`` checks them once
    and returns the prepared call, for a replay that runs it again and again. A backend
    implements `_prepare(outs, used)`: `used` are the inputs the program reads (`used` indices,
    its ``x{k}``), the shape has elements, and `params` are its run-time parameters' values."""

    def __init__(self, program: ScalarProgram):
        self.program = program
        self.used = tuple(k for k, _ in program.inputs)
        self.params = tuple(v for _, v in program.params)

    def bind(self, outs, ins) -> Callable[[], None]:
        """The call of this kernel on these tensors, its arguments prepared once."""
        self.program.check_operands(outs, ins)
        if 0 in outs[0]._shape:
            return _nothing
        return self._prepare(outs, [ins[k] for k in self.used])

    def _prepare(self, outs: list, used: list) -> Callable[[], None]:
        raise NotImplementedError(f"{type(self).__name__} does not implement _prepare")

    def __call__(self, outs, ins) -> None:
        self.bind(outs, ins)()


def _nothing() -> None:
    pass


def broadcast_strides(t, shape: tuple) -> list[int]:
    """`t`'s element strides over `shape` (which it broadcasts to): 0 along broadcast and
    size-1 dimensions."""
    lead = len(shape) - len(t._shape)
    return [0] * lead + [0 if n == 1 else s for n, s in zip(t._shape, t._stride)]


def reads_ahead(t, outs, shape: tuple) -> bool:
    """Whether input `t` shares memory with one of the outputs `outs` other than element for
    element over `shape`: a fused loop would then read elements it already wrote, so `t` must
    be read through a copy taken before each run."""
    st = broadcast_strides(t, shape)
    return any(
        t._storage is o._storage and (t._offset != o._offset or st != broadcast_strides(o, shape))
        for o in outs
    )


# ---- building chains from op calls ------------------------------------------------------------

_SHAPE_ONLY = _device("meta")


class ChainBuilder:
    """Builds a `Chain` from op calls on symbolic values: each call is bound to the op's schema
    and its meta rule gives the result's shape and dtype (on shape-only tensors, so the rules
    refuse exactly what eager refuses)."""

    def __init__(self):
        self.inputs: list = []
        self.steps: list = []
        self._meta: dict = {}

    def _tensor(self, shape, d):
        # shape and dtype only (meta rules read nothing else): no backend needs to be loaded
        shape = tuple(shape)
        return new_impl(
            Tensor,
            None,  # type: ignore[arg-type]  # shape-only: no storage
            shape,
            contiguous_geometry(shape)[1],
            0,
            d,
            _SHAPE_ONLY,
            0,
        )

    def input(self, shape, d) -> In:
        """A new tensor input of `shape` and dtype `d`."""
        ref = In(len(self.inputs))
        self.inputs.append(d)
        self._meta[ref] = self._tensor(shape, d)
        return ref

    def call(self, op: str, *args, **kwargs) -> Val:
        """A step calling `op` (its functional form; `_copy_` and `fill_` give a new value)."""
        decl = REGISTRY[op]
        metas = [self._meta[a] if isinstance(a, (In, Val)) else a for a in args]
        record = decl.op.bind(*metas, **kwargs)
        spec = decl.meta(*record)
        extra = ()
        if decl.precomputed:
            spec, extra = spec
        by_id = {id(m): a for a, m in zip(args, metas) if isinstance(a, (In, Val))}
        step_args = tuple(by_id.get(id(r), r) for r in record) + tuple(extra)
        ref = Val(len(self.steps))
        self.steps.append(Step(op, step_args, spec[1]))
        self._meta[ref] = self._tensor(spec[0], spec[1])
        return ref

    def shape(self, ref) -> tuple:
        """The shape of input or value `ref`."""
        return tuple(self._meta[ref]._shape)

    def chain(self, outputs) -> Chain:
        """The chain writing the values `outputs`."""
        return Chain(tuple(self.inputs), tuple(self.steps), tuple(v.index for v in outputs))


def eager_chain(chain: Chain, ins: list) -> list:
    """The chain run op by op, eagerly (what the fused kernel must equal): the output tensors.
    In-place ops (``_copy_``, ``fill_``) write a copy of their target."""
    vals: list = []

    def resolve(a):
        if isinstance(a, In):
            return ins[a.index]
        return vals[a.index] if isinstance(a, Val) else a

    for step in chain.steps:
        decl = REGISTRY[step.op]
        schema = decl.schema
        record = [resolve(a) for a in step.args[: len(schema.arguments)]]
        if schema.is_inplace:
            record[0] = record[0].clone()
        args = [v for a, v in zip(schema.arguments, record) if not a.kwarg_only]
        kwargs = {a.name: v for a, v in zip(schema.arguments, record) if a.kwarg_only}
        vals.append(decl.op(*args, **kwargs))
    return [vals[j] for j in chain.outputs]
