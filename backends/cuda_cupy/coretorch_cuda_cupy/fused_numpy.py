"""A `coretorch.compile.fusion.ScalarProgram` evaluated with numpy on whole arrays: the cuda
backend's fused kernels in emulation (``CORETORCH_CUDA_EMULATE=1``), where no CUDA code runs.

Each line becomes one vectorized statement: ``a if c else b`` is ``np.where``, ``and`` / ``or``
/ ``not`` are logical ufuncs, casts are ``astype`` with C's semantics (``bool_(x)`` is
``x != 0``, float to a narrow integer goes through int64), and literals are numpy scalars of
C's literal types (int64, float64), so the arithmetic promotes as the CUDA rendering's does.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import numpy as np

from coretorch.ops.scalar_formulas import LIBM

from . import array_module as am

__all__ = ["live_lines", "numpy_function", "render_numpy"]

_I64 = np.dtype(np.int64)


def live_lines(program) -> list[tuple[str, str]]:
    """The program's lines that an output depends on (a step whose value nothing reads, such as
    the target of ``fill_``, is dropped)."""
    need = {name for name, _ in program.outputs}
    keep = []
    for name, expr in reversed(program.lines):
        if name in need:
            keep.append((name, expr))
            tree = ast.parse(expr, mode="eval")
            need.update(n.id for n in ast.walk(tree) if isinstance(n, ast.Name))
    return keep[::-1]


def _cast(x, d: np.dtype) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype.kind == "f" and d.kind in "iu" and d != _I64:
        a = a.astype(_I64)  # C's float -> narrow int: truncate to int64, then wrap
    return a.astype(d)


def _powi(a, n) -> np.ndarray:
    """a ** n for int64 n >= 0 by squaring, in a's dtype (as the CUDA and numba loops)."""
    a = np.asarray(a)
    n = np.asarray(n, _I64)
    r = np.ones(np.broadcast_shapes(a.shape, n.shape), a.dtype)
    while bool((n > 0).any()):
        r = np.where(n & 1, r * a, r)
        n = n >> 1
        a = a * a
    return r


def _ipow(b, e) -> np.ndarray:
    """PyTorch's integer power (negative exponents give 0, 1 or -1), wrapping as int64."""
    b, e = np.broadcast_arrays(np.asarray(b, _I64), np.asarray(e, _I64))
    r = np.ones(b.shape, _I64)
    m, k = b.copy(), np.where(e < 0, 0, e)
    while bool((k > 0).any()):
        r = np.where(k & 1, r * m, r)
        m = m * m
        k = k >> 1
    neg = np.where(b == 1, 1, np.where(b == -1, np.where(e % 2 == 0, 1, -1), 0))
    return np.where(e < 0, neg, r)


def _pow(a, b) -> np.ndarray:
    """C's pow. (numpy computes ``x ** 0.5`` for a scalar exponent as ``sqrt(x)``, which is NaN
    and -0.0 where pow gives +inf and +0.0: the exponent is passed as a whole array.)"""
    b = np.asarray(b)
    shape = np.broadcast_shapes(np.shape(a), b.shape)
    return np.power(a, np.array(np.broadcast_to(b, shape)))


def _special(name: str) -> Callable:
    def f(x):
        return getattr(am.special(), name)(x)

    return f


def _erfinv(x) -> np.ndarray:
    """scipy's erfinv, with the sign of a zero kept (erfinv(-0.0) is -0.0, as CUDA's)."""
    return np.where(np.asarray(x) == 0, x, am.special().erfinv(x))


_RENAMED = {f: f"arc{f[1:]}" for f in ("asin", "acos", "atan", "asinh", "acosh", "atanh")}
_NAMESPACE: dict = {
    **{f: getattr(np, _RENAMED.get(f, f)) for f in LIBM if f not in ("erf", "erfc")},
    **{f: getattr(np, f) for f in ("floor", "ceil", "trunc", "rint", "isnan", "abs")},
    **{f: _special(f) for f in ("erf", "erfc")},
    "erfinv": _erfinv,
    "atan2": np.arctan2,
    "hypot": np.hypot,
    "fmod": np.fmod,
    "copysign": np.copysign,
    "pow": _pow,
    "powi": _powi,
    "ipow": _ipow,
    "_cast": _cast,
    "_np": np,
}
_CASTS = ("uint8", "int8", "int16", "int32", "int64", "float32", "float64")
_UFUNCS: dict[type, str] = {
    ast.Div: "true_divide",
    ast.FloorDiv: "floor_divide",
    ast.Mod: "remainder",
    ast.USub: "negative",
    ast.Not: "logical_not",
    ast.Invert: "invert",
    ast.And: "logical_and",
    ast.Or: "logical_or",
}


class _ToNumpy(ast.NodeTransformer):
    """Rewrites a scalar-language expression into whole-array numpy calls."""

    @staticmethod
    def _np(name: str, *args: ast.expr) -> ast.Call:
        fn = ast.Attribute(ast.Name("_np", ast.Load()), name, ast.Load())
        return ast.Call(fn, list(args), [])

    def visit_Constant(self, node: ast.Constant):
        v = node.value
        if isinstance(v, bool):
            return self._np("bool_", node)
        if isinstance(v, int):  # int64, or uint64 past it (only ever negated into its minimum)
            return self._np("int64" if v <= np.iinfo(np.int64).max else "uint64", node)
        return self._np("float64", node)

    def visit_BinOp(self, node: ast.BinOp):
        self.generic_visit(node)
        ufunc = _UFUNCS.get(type(node.op))
        return self._np(ufunc, node.left, node.right) if ufunc else node

    def visit_UnaryOp(self, node: ast.UnaryOp):
        self.generic_visit(node)
        ufunc = _UFUNCS.get(type(node.op))
        return self._np(ufunc, node.operand) if ufunc else node

    def visit_BoolOp(self, node: ast.BoolOp):
        self.generic_visit(node)
        ufunc = _UFUNCS[type(node.op)]
        acc = node.values[0]
        for v in node.values[1:]:
            acc = self._np(ufunc, acc, v)
        return acc

    def visit_Compare(self, node: ast.Compare):
        self.generic_visit(node)
        terms, left = [], node.left
        for op, right in zip(node.ops, node.comparators):
            terms.append(ast.Compare(left, [op], [right]))
            left = right
        acc: ast.expr = terms[0]
        for t in terms[1:]:
            acc = self._np("logical_and", acc, t)
        return acc

    def visit_IfExp(self, node: ast.IfExp):
        self.generic_visit(node)
        return self._np("where", node.test, node.body, node.orelse)

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        assert isinstance(node.func, ast.Name)  # the scalar language calls by name
        name = node.func.id
        if name == "bool_":
            return self._np("not_equal", node.args[0], ast.Constant(0))
        if name in _CASTS:
            d = self._np("dtype", ast.Constant(name))
            return ast.Call(ast.Name("_cast", ast.Load()), [node.args[0], d], [])
        return node


def render_numpy(program) -> str:
    """The Python source of ``run(x..., p...) -> (output values)`` evaluating `program`."""
    args = [f"x{k}" for k, _ in program.inputs] + [name for name, _ in program.params]
    lines = [f"def run({', '.join(args)}):"]
    for name, expr in live_lines(program):
        tree = _ToNumpy().visit(ast.parse(expr, mode="eval"))
        lines.append(f"    {name} = {ast.unparse(ast.fix_missing_locations(tree))}")
    outs = "".join(f"{name}, " for name, _ in program.outputs)
    lines.append(f"    return ({outs})")
    return "\n".join(lines)


_FUNCTIONS: dict[str, Callable] = {}


def numpy_function(program) -> Callable:
    """``run(*inputs, *params)``: the output values of `program` on whole arrays (cached per
    source)."""
    src = render_numpy(program)
    fn = _FUNCTIONS.get(src)
    if fn is None:
        namespace = dict(_NAMESPACE)
        exec(compile(src, "<coretorch fused (numpy)>", "exec"), namespace)
        fn = _FUNCTIONS[src] = namespace["run"]
    return fn
