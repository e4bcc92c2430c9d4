"""Fused elementwise kernels on the cuda device: a `coretorch.compile.fusion.ScalarProgram`
rendered as the body of one `cupy.ElementwiseKernel` (CUDA C++), which broadcasts its inputs and
walks any strides itself. Run-time parameters are scalar kernel arguments, so one compiled kernel
serves every value; kernels are cached per rendered source (CuPy caches the binary on disk).

The body declares each line ``const auto name = expr;`` and assigns the outputs last, so an input
read and written element for element (in place) is read before it is written. The scalar
language maps to CUDA C++ as the cpu backend's numba rendering reads it: Python ``/`` is true
division (of integers too), ``//`` and ``%`` floor as numpy's do (the sign of the divisor),
casts are C casts except ``bool_(x)`` (``x != 0``) and float to a narrow integer, which goes
through int64 (-1.0 becomes 255 as uint8, as numpy and PyTorch give). Helpers the body needs
(``powi``, ``ipow``, the floor division...) are generic lambdas defined at its top: the body is
all CuPy compiles, it takes no preamble.

In emulation (``CORETORCH_CUDA_EMULATE=1``: numpy stands in for CuPy) `compile_program` gives
the same kernel object, evaluating the program on whole arrays (`fused_numpy`).
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Callable
from typing import Any

import numpy as np

from coretorch.compile.fusion import FusedKernelBase, reads_ahead
from coretorch.ops.scalar_formulas import LIBM

from . import array_module as am
from .fused_numpy import live_lines, numpy_function
from .tensor_view import as_xp

__all__ = ["CTYPES", "HELPERS", "FusedKernel", "compile_program", "render"]

# numpy dtype name -> the C type CuPy declares for it
CTYPES = {
    "bool": "bool",
    "uint8": "unsigned char",
    "int8": "signed char",
    "int16": "short",
    "int32": "int",
    "int64": "long long",
    "float32": "float",
    "float64": "double",
}

# the scalar language's functions that CUDA's math library has under the same name (overloaded
# for float and double, so float32 math stays float32)
_SAME = frozenset((*LIBM, "erfinv", "floor", "ceil", "trunc", "rint", "isnan", "abs"))
# two-argument functions: both arguments converted to their common type first (CUDA has no
# mixed float/double overloads)
_BINARY = ("atan2", "hypot", "fmod", "copysign", "pow")
_COMMON = "typedef decltype(a + b) T;"  # (T(0.5) == T(0) below: T is an integer type)

# generic lambdas the body defines when it uses them (name -> definition)
HELPERS: dict[str, str] = {
    **{
        f"_ct_{f}": f"auto _ct_{f} = [](auto a, auto b) {{ {_COMMON} return {f}((T)a, (T)b); }};"
        for f in _BINARY
    },
    # Python's true division: integers divide as doubles
    "_ct_truediv": (
        f"auto _ct_truediv = [](auto a, auto b) {{ {_COMMON} "
        "if constexpr (T(0.5) == T(0)) return (double)a / (double)b; else return a / b; };"
    ),
    # numpy's floor_divide / remainder (npy_divmod); integers: Python's, 0 for a zero divisor
    "_ct_floordiv": (
        f"auto _ct_floordiv = [](auto a, auto b) {{ {_COMMON} T x = a, y = b; "
        "if constexpr (T(0.5) == T(0)) { if (y == 0) return T(0); T q = x / y; "
        "if (x % y != 0 && ((x < 0) != (y < 0))) q -= 1; return q; } else { "
        "if (y == 0) return x / y; T m = fmod(x, y); T d = (x - m) / y; "
        "if (m != 0 && ((y < 0) != (m < 0))) d -= 1; "
        "if (d == 0) return copysign(T(0), x / y); "
        "T f = floor(d); if (d - f > T(0.5)) f += 1; return f; } };"
    ),
    "_ct_mod": (
        f"auto _ct_mod = [](auto a, auto b) {{ {_COMMON} T x = a, y = b; "
        "if constexpr (T(0.5) == T(0)) { if (y == 0) return T(0); T r = x % y; "
        "if (r != 0 && ((r < 0) != (y < 0))) r += y; return r; } else { "
        "T m = fmod(x, y); if (y == 0) return m; "
        "if (m != 0) { if ((y < 0) != (m < 0)) m += y; } else m = copysign(T(0), y); "
        "return m; } };"
    ),
    # float ** int64 n >= 0 by squaring (numba's and llvm's powi)
    "_ct_powi": (
        "auto _ct_powi = [](auto a, long long n) { decltype(a) r = 1; "
        "while (n) { if (n & 1) r *= a; n >>= 1; a *= a; } return r; };"
    ),
    # PyTorch's integer power: negative exponents give 0, 1 or -1; wraps as int64 does
    "_ct_ipow": (
        "auto _ct_ipow = [](long long b, long long e) -> long long { "
        "if (e < 0) return b == 1 ? 1 : (b == -1 ? ((e & 1) ? -1 : 1) : 0); "
        "unsigned long long r = 1, m = (unsigned long long)b; "
        "while (e) { if (e & 1) r *= m; m *= m; e >>= 1; } return (long long)r; };"
    ),
}

_BINOPS: dict[type, str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
}
_DIVISIONS: dict[type, str] = {ast.Div: "truediv", ast.FloorDiv: "floordiv", ast.Mod: "mod"}
_UNARY: dict[type, str] = {ast.USub: "-", ast.UAdd: "+", ast.Not: "!", ast.Invert: "~"}
_COMPARE: dict[type, str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
}
_INT64_MAX = (1 << 63) - 1


def _int_literal(v: int) -> str:
    if v <= _INT64_MAX:
        return f"{v}LL"
    return f"{v}ULL"  # only as -9223372036854775808 (negated below) or a wrapping constant


class _ToCuda:
    """A scalar-language expression as CUDA C++; `helpers` collects the lambdas it calls."""

    def __init__(self) -> None:
        self.helpers: set[str] = set()

    def expr(self, node: ast.AST) -> str:
        if isinstance(node, ast.Expression):
            return self.expr(node.body)
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool):
                return "true" if v else "false"
            if isinstance(v, int):
                return _int_literal(v)
            assert isinstance(v, float)  # the scalar language's constants are numbers
            return repr(v)
        if isinstance(node, ast.UnaryOp):
            o = node.operand
            if isinstance(node.op, ast.USub) and isinstance(o, ast.Constant):
                if type(o.value) is int and o.value == _INT64_MAX + 1:
                    return f"(-{_INT64_MAX}LL - 1LL)"
            return f"({_UNARY[type(node.op)]}{self.expr(o)})"
        if isinstance(node, ast.BinOp):
            a, b = self.expr(node.left), self.expr(node.right)
            div = _DIVISIONS.get(type(node.op))
            if div is not None:
                return self.call(f"_ct_{div}", [a, b])
            return f"({a} {_BINOPS[type(node.op)]} {b})"
        if isinstance(node, ast.BoolOp):
            join = " && " if isinstance(node.op, ast.And) else " || "
            return "(" + join.join(self.expr(v) for v in node.values) + ")"
        if isinstance(node, ast.Compare):
            terms, left = [], self.expr(node.left)
            for op, right in zip(node.ops, node.comparators):
                r = self.expr(right)
                terms.append(f"({left} {_COMPARE[type(op)]} {r})")
                left = r
            return terms[0] if len(terms) == 1 else "(" + " && ".join(terms) + ")"
        if isinstance(node, ast.IfExp):
            return f"({self.expr(node.test)} ? {self.expr(node.body)} : {self.expr(node.orelse)})"
        if isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Name)  # the scalar language calls by name
            return self.function(node.func.id, [self.expr(a) for a in node.args])
        raise AssertionError(f"{type(node).__name__} outside the scalar language")

    def call(self, helper: str, args: list[str]) -> str:
        self.helpers.add(helper)
        return f"{helper}({', '.join(args)})"

    def function(self, name: str, args: list[str]) -> str:
        if name == "bool_":
            return f"({args[0]} != 0)"
        ctype = CTYPES.get(name)
        if ctype is not None:
            if name in ("int64", "float32", "float64"):
                return f"(({ctype})({args[0]}))"
            return f"(({ctype})(long long)({args[0]}))"  # float -> narrow int via int64
        if name in _SAME:
            return f"{name}({args[0]})"
        return self.call(f"_ct_{name}", args)


def render(program) -> tuple[str, str, str]:
    """The `cupy.ElementwiseKernel` of `program`: ``(in_params, out_params, body)``. Inputs are
    ``x{k}``, parameters ``p{j}``, outputs ``out{j}``; the body is one statement a line."""
    to = _ToCuda()
    lines = [
        f"const auto {name} = {to.expr(ast.parse(expr, mode='eval'))};"
        for name, expr in live_lines(program)
    ]
    ins = [f"{np.dtype(d).name} x{k}" for k, d in program.inputs]
    ins += [f"{np.asarray(v).dtype.name} {name}" for name, v in program.params]
    outs = [f"{np.dtype(d).name} out{j}" for j, (_, d) in enumerate(program.outputs)]
    body = [f"// coretorch {program.describe()}"]
    body += [HELPERS[h] for h in sorted(to.helpers)]
    body += lines
    body += [f"out{j} = {name};" for j, (name, _) in enumerate(program.outputs)]
    return ", ".join(ins), ", ".join(outs), "\n".join(body)


_KERNELS: dict[tuple, Any] = {}


def _kernel(program) -> Any:
    """The `cupy.ElementwiseKernel` of `program`, or its numpy evaluation in emulation (both
    cached per source)."""
    if am.EMULATED:
        return numpy_function(program)
    src = render(program)
    k = _KERNELS.get(src)
    if k is None:
        name = "coretorch_fused_" + hashlib.sha256("\n".join(src).encode()).hexdigest()[:16]
        k = _KERNELS[src] = am.elementwise_kernel(*src, name)
    return k


class FusedKernel(FusedKernelBase):
    """One compiled chain on cuda: a `cupy.ElementwiseKernel`, or its numpy evaluation in
    emulation (see `FusedKernelBase` for the calling convention)."""

    def __init__(self, program, kernel: Any):
        super().__init__(program)
        self.kernel = kernel

    def __repr__(self) -> str:
        return f"<FusedKernel {self.program.describe()} on cuda>"

    def _prepare(self, outs, used) -> Callable[[], None]:
        """The arrays' views and the parameters, made once."""
        out_views = [as_xp(o) for o in outs]
        in_views = [as_xp(t) for t in used]
        if am.EMULATED:
            return _Evaluate(self.kernel, (*in_views, *self.params), out_views)
        # an input read ahead of the outputs it shares memory with is read through a copy
        # taken before each launch (the kernel would read what it wrote)
        shape = outs[0]._shape
        copies = [i for i, t in enumerate(used) if reads_ahead(t, outs, shape)]
        return _Launch(self.kernel, [*in_views, *self.params, *out_views], copies)


class _Launch:
    __slots__ = ("args", "copies", "kernel")

    def __init__(self, kernel: Any, args: list, copies: list[int]):
        self.kernel, self.args, self.copies = kernel, args, copies

    def __call__(self) -> None:
        args = list(self.args)
        for i in self.copies:
            args[i] = args[i].copy()
        self.kernel(*args)


class _Evaluate:
    __slots__ = ("args", "fn", "outs")

    def __init__(self, fn: Callable, args: tuple, outs: list):
        self.fn, self.args, self.outs = fn, args, outs

    def __call__(self) -> None:
        with np.errstate(all="ignore"):
            values = self.fn(*self.args)  # every value computed before any output is written
        for o, v in zip(self.outs, values):
            np.copyto(o, v, casting="unsafe")


def compile_program(program) -> FusedKernel:
    """The fused kernel of `program` (the cuda backend's ``extras["fuse"]``)."""
    return FusedKernel(program, _kernel(program))
