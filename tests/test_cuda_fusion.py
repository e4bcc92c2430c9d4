"""The cuda backend's fused elementwise kernels (`coretorch_cuda_cupy.fused`), checked without a
GPU, against eager cpu results (never against the code under test):

- the CUDA C++ rendering of every distinct chain of the OpInfo samples (every op with a scalar
  formula, every dtype a fused loop computes in) and of the special-value chains below compiles
  with nvcc as CuPy expands it: CuPy's headers, ``CArray`` / ``CIndexer``, ``-ftz=true``;
- the same bodies compiled by g++ as a host loop (a small header maps CUDA's math names to
  <cmath>) equal eager cpu on those samples and on NaN, +-inf, -0.0, rounding ties, negative
  integer powers, shifts by the bit width and more; a deliberately wrong rendering fails;
- on the cuda device (`test_on_cuda_*`): the special-value chains end to end, every layout
  (strided, broadcast, in place, partly overlapping, empty), and compiled training steps, which
  match eager cuda. They run in this process where cuda is usable (a GPU, or
  ``CORETORCH_CUDA_EMULATE=1``), else in a subprocess with emulation on (numpy stands in for
  CuPy: the kernels are then the numpy evaluation of the same programs).

Nothing here runs the CUDA kernels on a GPU unless one is present.
"""

from __future__ import annotations

import ast
import ctypes
import importlib.util
import math
import os
import shutil
import subprocess
import sys
import types
import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
from test_fusion import LAYOUTS, layout_operands, mul_kernel

import coretorch as ct
import coretorch.nn.functional as F
from coretorch import dtypes as dt, nn
from coretorch.compile.fusion import (
    VOCABULARY,
    Chain,
    ChainBuilder,
    FusionError,
    ScalarProgram,
    compile_chain,
    eager_chain,
    lower,
    validate,
)
from coretorch.ops.scalar_formulas import FORMULAS
from coretorch.plugins import backends
from coretorch.testing import assert_close
from coretorch.testing.conformance.test_fusion import _chain_of
from coretorch.testing.opinfo import OP_DB

pytestmark = pytest.mark.skipif(
    "cuda" not in backends(), reason="the coretorch-cuda-cupy backend is not installed"
)
fused = pytest.importorskip("coretorch_cuda_cupy.fused")

EMULATE = "CORETORCH_CUDA_EMULATE"
_FUSED_DTYPES = (dt.bool, dt.uint8, dt.int8, dt.int16, dt.int32, dt.int64, dt.float32, dt.float64)


def _usable() -> bool:
    return "cuda" in backends() and ct.cuda.is_available()


on_cuda = pytest.mark.skipif(
    not _usable(),
    reason=f"cuda is not usable in this process: test_on_cuda_* run in a subprocess with "
    f"{EMULATE}=1 (test_cuda_group_runs_emulated_in_a_subprocess)",
)


# ---- the chains: OpInfo samples and special values ----------------------------------------


class Case(NamedTuple):
    """A chain, its cpu input tensors, eager cpu's outputs and the tolerances."""

    label: str
    chain: Chain
    program: ScalarProgram
    ins: list
    expected: list
    rtol: float | None
    atol: float | None


def _case(label: str, chain: Chain, ins: list, rtol, atol) -> Case | None:
    try:
        program = lower(chain)
    except FusionError:
        return None  # the formula declines these arguments (integer division, ...)
    return Case(label, chain, program, ins, eager_chain(chain, ins), rtol, atol)


def _opinfo_cases() -> list[Case]:
    cases = []
    for o in OP_DB:
        if o.name not in FORMULAS:
            continue
        for d in o.dtypes:
            if d not in _FUSED_DTYPES:
                continue
            rtol, atol = o.tolerances(d)
            for i, sample in enumerate(o.sample_inputs("cpu", d)):
                c = _case(f"{o.name}-{d.name}-{i}", *_chain_of(o.name, sample), rtol, atol)
                if c is not None:
                    cases.append(c)
    return cases


_FLOATS = [math.nan, math.inf, -math.inf, -0.0, 0.0, 0.5, 1.5, 2.5, -0.5, -2.5, 1.0, -1.0]
_FLOATS += [3.7, -3.7, 1e-30, 1e30, 0.9999, -0.9999, 2.0, -3.0, 0.25]
_INTS = [-128, -9, -3, -2, -1, 0, 1, 2, 3, 7, 100, 127]
_SHIFTS = [-1, 0, 1, 7, 8, 15, 16, 31, 32, 63, 64]
_FLOAT_UNARY = (
    "abs acos acosh asin asinh atan atanh ceil cos cosh erf erfc erfinv exp expm1 floor log "
    "log10 log1p log2 neg relu round sigmoid sign signbit silu sin sinh sqrt tan tanh trunc"
).split()
_FLOAT_BINARY = "add sub mul div remainder fmod atan2 hypot maximum minimum eq lt le".split()
_INT_BINARY = "add sub mul maximum minimum eq lt le bitwise_and bitwise_or bitwise_xor".split()
_TOL = {dt.float32: (1e-5, 1e-6), dt.float64: (1e-12, 1e-300)}


def _grid(values: list, d) -> tuple:
    """All pairs of `values` as two (n, n) tensors of dtype `d` (the first varies by row)."""
    a = np.array(values, dtype=np.float64 if d.is_floating_point else np.int64)
    x, y = np.broadcast_arrays(a[:, None], a[None, :])
    return ct.tensor(x.copy(), dtype=d), ct.tensor(y.copy(), dtype=d)


def _call_case(label: str, op: str, ins: list, rtol: float, atol: float, *args, **kw):
    """The chain ``op(ins..., *args, **kw)`` (tensors first) written out."""
    b = ChainBuilder()
    refs = [b.input(t.shape, t.dtype) for t in ins]
    return _case(label, b.chain([b.call(op, *refs, *args, **kw)]), ins, rtol, atol)


def _special_cases() -> list[Case]:
    cases: list[Case | None] = []
    for d in (dt.float32, dt.float64):
        rtol, atol = _TOL[d]
        x = ct.tensor(_FLOATS, dtype=d)
        for op in _FLOAT_UNARY:
            cases.append(_call_case(f"{op}-{d.name}", op, [x], rtol, atol))
        cases.append(_call_case(f"gelu-tanh-{d.name}", "gelu", [x], rtol, atol, approximate="tanh"))
        cases.append(_call_case(f"gelu-{d.name}", "gelu", [x], rtol, atol))
        gx, gy = _grid(_FLOATS, d)
        for op in _FLOAT_BINARY:
            cases.append(_call_case(f"{op}-{d.name}", op, [gx, gy], rtol, atol))
        # (eager cpu's pow gives NaN or a wrong sign for a negative base to a power past
        # int64's range, where C's pow, numpy's and PyTorch's give +-0, 1 or inf)
        px, py = _grid([v for v in _FLOATS if abs(v) != 1e30], d)
        cases.append(_call_case(f"pow-{d.name}", "pow", [px, py], rtol, atol))
        for mode in ("floor", "trunc"):
            cases.append(
                _call_case(f"div-{mode}-{d.name}", "div", [gx, gy], rtol, atol, rounding_mode=mode)
            )
        cases.append(_call_case(f"add-alpha-{d.name}", "add", [gx, gy], rtol, atol, alpha=2.5))
        cases.append(_call_case(f"lerp-{d.name}", "lerp", [gx, gy], rtol, atol, 0.3))
        cases.append(_call_case(f"lerp-t-{d.name}", "lerp", [gx, gy, gy], rtol, atol))
        for op in ("addcmul", "addcdiv"):
            cases.append(_call_case(f"{op}-{d.name}", op, [gx, gy, gx], rtol, atol, value=-0.5))
        for e in (-3, -2, -1, 0, 1, 2, 3, 8, 9, 0.5, -0.5, 2.5):  # powi, 1 / powi and pow
            cases.append(_call_case(f"pow-{e}-{d.name}", "pow", [x], rtol, atol, e))
        b = ChainBuilder()
        X, Y = b.input(gx.shape, d), b.input(gy.shape, d)
        w = b.call("where", b.call("lt", X, Y), X, b.call("maximum", Y, 0.5))
        cases.append(_case(f"where-{d.name}", b.chain([w]), [gx, gy], rtol, atol))
    # casts: every dtype to every dtype (float -> integer only within range, where C and
    # numpy agree), float -> bool with NaN
    cast_src = {
        dt.float64: [-100.7, -1.5, -0.5, -0.0, 0.5, 1.5, 2.5, 99.9, 127.2],
        dt.float32: [math.nan, -math.inf, -1.5, -0.0, 0.5, 1e30],
        dt.int64: [-(2**63), -300, -129, -1, 0, 1, 255, 256, 300, 2**40 + 3, 2**63 - 1],
        dt.int32: [-(2**31), -1, 0, 1, 2**31 - 1],
        dt.int8: [-128, -1, 0, 1, 127],
        dt.uint8: [0, 1, 128, 255],
        dt.bool: [False, True],
    }
    for src_d, values in cast_src.items():
        for dst in _FUSED_DTYPES:
            if src_d is dt.float32 and dst is not dt.bool and not dst.is_floating_point:
                continue  # NaN, inf: C leaves them undefined
            src = ct.tensor(values, dtype=src_d)
            tgt = ct.zeros(len(values), dtype=dst)
            c = _call_case(f"copy-{src_d.name}-{dst.name}", "_copy_", [tgt, src], 0.0, 0.0)
            cases.append(c)
    for d in (dt.int64, dt.int32, dt.int16, dt.int8, dt.uint8):
        values = [v for v in _INTS if d is not dt.uint8 or v >= 0]
        gx, gy = _grid(values, d)
        for op in _INT_BINARY:
            cases.append(_call_case(f"{op}-{d.name}", op, [gx, gy], 0.0, 0.0))
        for op in ("neg", "abs", "sign", "bitwise_not", "floor", "round", "signbit"):
            if not (op == "neg" and d is dt.uint8):
                cases.append(_call_case(f"{op}-{d.name}", op, [gx], 0.0, 0.0))
        shifts = [s for s in _SHIFTS if d is not dt.uint8 or s >= 0]
        sx, sy = (ct.tensor(np.array(v), dtype=d) for v in np.meshgrid(values, shifts))
        for op in ("bitwise_left_shift", "bitwise_right_shift"):
            cases.append(_call_case(f"{op}-{d.name}", op, [sx, sy], 0.0, 0.0))
        cases.append(_call_case(f"pow-{d.name}", "pow", [gx, gy], 0.0, 0.0))  # ipow
        cases.append(_call_case(f"pow-2-{d.name}", "pow", [gx], 0.0, 0.0, 2))
    bx, by = _grid([0, 1], dt.int64)
    bx, by = bx.to(dt.bool), by.to(dt.bool)
    for op in ("add", "mul", "bitwise_and", "bitwise_or", "bitwise_xor", "eq", "lt", "le"):
        cases.append(_call_case(f"{op}-bool", op, [bx, by], 0.0, 0.0))
    cases.append(_call_case("bitwise_not-bool", "bitwise_not", [bx], 0.0, 0.0))
    cases.append(_call_case("pow-bool", "pow", [bx], 0.0, 0.0, False))
    cases.append(_call_case("where-bool", "where", [bx, by, bx], 0.0, 0.0))
    b = ChainBuilder()
    X = b.input((3,), dt.int64)
    filled = b.call("mul", b.call("fill_", X, 7), 3)  # fill_: the target is never read
    cases.append(_case("fill", b.chain([filled]), [ct.zeros(3, dtype=dt.int64)], 0.0, 0.0))
    return [c for c in cases if c is not None]


def _language_program() -> tuple[ScalarProgram, list, list]:
    """Scalar-language features no formula uses today (integer ``//``, ``%`` and ``/``, a
    chained comparison, ``and``, ``not`` of an integer, unary plus, int64's minimum as a
    literal): the program, its inputs and numpy's results."""
    i64, f64, b = np.dtype(np.int64), np.dtype(np.float64), np.dtype(np.bool_)
    lines = (
        ("v0", "int64(x0 // x1)"),
        ("v1", "int64(x0 % x1)"),
        ("v2", "float64(x0 / x1)"),
        ("v3", "bool_(x1 < x0 <= int64(5) and not x0 or x1 == p0)"),
        ("v4", "int64(+x0 + int64(-9223372036854775808))"),
        ("v5", "bool_(x0 != x1 >= int64(0))"),
    )
    outs = tuple((f"v{j}", d) for j, d in enumerate((i64, i64, f64, b, i64, b)))
    program = ScalarProgram(((0, i64), (1, i64)), (("p0", np.int64(3)),), lines, outs, ("x",))
    validate(program)
    x = np.array([-7, -7, 7, 7, 0, 5, -(2**63) + 1, 3, 0, -1], np.int64)
    y = np.array([2, -2, 2, -2, 3, 0, 2, 3, -5, 1], np.int64)
    with np.errstate(all="ignore"):  # numpy, as Python, floors; a zero divisor gives 0
        expected = [
            np.floor_divide(x, y),
            np.remainder(x, y),
            np.true_divide(x, y),
            ((y < x) & (x <= 5) & (x == 0)) | (y == 3),
            x + np.int64(-(2**63)),
            (x != y) & (y >= 0),
        ]
    return program, [x, y], expected


@pytest.fixture(scope="module")
def special_cases() -> list[Case]:
    return _special_cases()


@pytest.fixture(scope="module")
def all_cases(special_cases) -> list[Case]:
    return _opinfo_cases() + special_cases


# assert_close's defaults (an OpInfo entry's tolerances of None)
_DEFAULT_TOL = {np.dtype(np.float32): (1.3e-6, 1e-5), np.dtype(np.float64): (1e-7, 1e-7)}


# ops whose result for a tie of -0.0 and 0.0 is either zero: the formula keeps the first
# operand where numpy's ufunc may keep the second (PyTorch does not specify it)
_EITHER_ZERO = ("maximum", "minimum")


def _mismatch(label: str, got: np.ndarray, want: np.ndarray, rtol, atol) -> str | None:
    """None if `got` equals `want` (floats within tolerance, NaN equal to NaN, zeros of the
    same sign), else what differs."""
    if got.dtype != want.dtype:
        return f"{label}: dtype {got.dtype}, expected {want.dtype}"
    if want.dtype.kind == "f":
        if rtol is None:
            rtol, atol = _DEFAULT_TOL[want.dtype]
        ok = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
        if not label.startswith(_EITHER_ZERO):
            ok &= (want != 0) | (np.signbit(got) == np.signbit(want))
    else:
        ok = got == want
    if ok.all():
        return None
    at = np.argwhere(~ok)[:4].tolist()
    return (
        f"{label}: {int((~ok).sum())} of {ok.size} differ, at {at}: "
        f"{got[~ok][:4]} != {want[~ok][:4]}"
    )


# ---- the host loop: the rendered bodies compiled with g++ ----------------------------------

# CUDA's math functions that <cmath> lacks (erfinv: Giles' approximation refined by two Newton
# steps on erf), and C++'s overloads of the rest in the global namespace, as CUDA has them
_HOST_HEADER = r"""
#include <cmath>
#include <cstdlib>
using namespace std;
static double erfinv(double y) {
  if (y != y || y < -1.0 || y > 1.0) return NAN;
  if (y == 1.0 || y == -1.0) return y * INFINITY;
  double w = -log((1.0 - y) * (1.0 + y)), p;
  if (w < 5.0) {
    w -= 2.5;
    const double c[] = {2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
      0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941};
    p = c[0]; for (int k = 1; k < 9; ++k) p = c[k] + p * w;
  } else {
    w = sqrt(w) - 3.0;
    const double c[] = {-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
      0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682};
    p = c[0]; for (int k = 1; k < 9; ++k) p = c[k] + p * w;
  }
  double r = p * y;
  for (int k = 0; k < 2; ++k) r -= (erf(r) - y) / (1.1283791670955126 * exp(-r * r));
  return r;
}
static float erfinv(float y) { return (float)erfinv((double)y); }
"""


def _decls(params: str) -> list[tuple[str, str]]:
    """``"float32 x0, int64 p0"`` -> ``[("float", "x0"), ("long long", "p0")]``."""
    return [(fused.CTYPES[d], n) for d, n in (p.split() for p in params.split(", ") if p)]


def _host_function(name: str, src: tuple[str, str, str]) -> str:
    """The body in a host loop ``name(n, args)``: args[j] points at the j-th array (inputs,
    then outputs) or parameter, each read as CuPy's kernel reads them."""
    ins, outs, body = src
    args = _decls(ins) + _decls(outs)
    head = []
    for j, (c, n) in enumerate(args):
        if n[0] == "p":
            head.append(f"  const {c} {n} = *(const {c}*)a[{j}];")
        else:
            head.append(f"  {c}* _raw_{n} = ({c}*)a[{j}];")
    loads = [f"    const {c} &{n} = _raw_{n}[i];" for c, n in _decls(ins) if n[0] == "x"]
    loads += [f"    {c} &{n} = _raw_{n}[i];" for c, n in _decls(outs)]
    return "\n".join(
        [f'extern "C" void {name}(long long n, void** a) {{', *head]
        + ["  for (long long i = 0; i < n; ++i) {", *loads, body, "  }", "}"]
    )


class HostKernels:
    """The rendered bodies of `programs`, compiled by g++ into one library."""

    def __init__(self, programs: list[ScalarProgram], where: Path):
        self.names: dict[tuple, str] = {}
        parts = [_HOST_HEADER]
        for p in programs:
            src = fused.render(p)
            if src not in self.names:
                self.names[src] = f"k{len(self.names)}"
                parts.append(_host_function(self.names[src], src))
        cpp, lib = where / "fused_host.cpp", where / "fused_host.so"
        cpp.write_text("\n".join(parts))
        # -fwrapv: signed integers wrap, as on the GPU (and in numba, numpy)
        cmd = ["g++", "-O0", "-std=c++17", "-fwrapv", "-shared", "-fPIC", str(cpp), "-o", str(lib)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, f"g++ rejects the rendered bodies:\n{r.stderr[-6000:]}"
        self.lib = ctypes.CDLL(str(lib))

    def run(self, program: ScalarProgram, ins: list, shape: tuple) -> list[np.ndarray]:
        """The outputs of `program` on numpy inputs `ins` (all of the chain's, by index)."""
        fn = getattr(self.lib, self.names[fused.render(program)])
        arrays = [
            np.ascontiguousarray(np.broadcast_to(ins[k], shape), dtype=d) for k, d in program.inputs
        ]
        params = [np.array(v) for _, v in program.params]
        outs = [np.empty(shape, d) for _, d in program.outputs]
        ptrs = [a.ctypes.data for a in (*arrays, *params, *outs)]
        fn(ctypes.c_longlong(math.prod(shape)), (ctypes.c_void_p * len(ptrs))(*ptrs))
        return outs


def _check_on_host(kernels: HostKernels, cases: list[Case]) -> list[str]:
    failures = []
    for c in cases:
        want = [e.numpy() for e in c.expected]
        got = kernels.run(c.program, [t.numpy() for t in c.ins], want[0].shape)
        for j, (g, w) in enumerate(zip(got, want)):
            m = _mismatch(f"{c.label} output {j}", g, w, c.rtol, c.atol)
            if m is not None:
                failures.append(m)
    return failures


needs_gxx = pytest.mark.skipif(
    shutil.which("g++") is None,
    reason="g++ is not installed: the host check of the rendered "
    "CUDA bodies needs it (apt-get install g++)",
)


@needs_gxx
def test_rendered_bodies_run_on_the_host_equal_eager_cpu(all_cases, tmp_path):
    """Every OpInfo sample's chain and every special-value chain: the rendered body, run as a
    host loop, equals eager cpu."""
    kernels = HostKernels([c.program for c in all_cases], tmp_path)
    failures = _check_on_host(kernels, all_cases)
    assert not failures, f"{len(failures)} mismatches:\n" + "\n".join(failures[:12])
    assert len(kernels.names) > 300 and len(all_cases) > 2000  # the sweep ran


def test_the_checked_programs_cover_the_scalar_language(all_cases):
    """The programs the host and nvcc checks compile call every function of the scalar
    language, use every operator and syntax, and read and write every fused dtype."""
    programs = [c.program for c in all_cases] + [_language_program()[0]]
    used: set[str] = set()
    dtypes: set[str] = set()
    for p in programs:
        dtypes |= {np.dtype(d).name for _, d in (*p.inputs, *p.outputs)}
        for _, expr in p.lines:
            for node in ast.walk(ast.parse(expr, mode="eval")):
                if isinstance(node, ast.Call):
                    used.add(getattr(node.func, "id", ""))
                used.add(type(node).__name__)
                used.add(type(getattr(node, "op", None)).__name__)
                used.update(type(op).__name__ for op in getattr(node, "ops", ()))
    syntax = "IfExp BoolOp And Or Not Invert USub UAdd Div FloorDiv Mod LShift RShift BitAnd"
    syntax += " BitOr BitXor Eq NotEq Lt LtE Gt GtE"
    missing = (set(VOCABULARY) | set(syntax.split())) - used
    assert not missing, f"no checked program uses {sorted(missing)}"
    assert dtypes == {d.name for d in _FUSED_DTYPES}


def _check_language(outs: list) -> None:
    _, _, expected = _language_program()
    failures = [
        _mismatch(f"output {j}", np.asarray(g), w, 0.0, 0.0)
        for j, (g, w) in enumerate(zip(outs, expected))
    ]
    failures = [f for f in failures if f is not None]
    assert not failures, "\n".join(failures)


@needs_gxx
def test_language_features_no_formula_uses_run_on_the_host(tmp_path):
    program, ins, _ = _language_program()
    _check_language(HostKernels([program], tmp_path).run(program, ins, ins[0].shape))


def test_language_features_no_formula_uses_evaluate_in_numpy():
    from coretorch_cuda_cupy.fused_numpy import numpy_function

    program, ins, _ = _language_program()
    with np.errstate(all="ignore"):
        _check_language(numpy_function(program)(*ins, *(v for _, v in program.params)))


_MUTATIONS = {
    # round half away from zero instead of to even
    "rint": ("round-float64", lambda s: s.replace("rint(", "round(")),
    # integer power giving 0 for every negative exponent (PyTorch: 1 ** -n == 1, ...)
    "ipow": ("pow-int64", lambda s: s.replace("? -1 : 1) : 0)", "? 0 : 0) : 0)")),
    # numpy's remainder without the divisor's sign
    "mod": ("remainder-float32", lambda s: s.replace("m += y;", "m += 0;")),
    # bool_(x) as x > 0 (C's cast to bool is x != 0)
    "bool": ("copy-float64-bool", lambda s: s.replace("!= 0)", "> 0)")),
}


@needs_gxx
@pytest.mark.parametrize("mutation", sorted(_MUTATIONS))
def test_a_wrong_rendering_fails_the_host_check(special_cases, mutation, tmp_path, monkeypatch):
    label, mutate = _MUTATIONS[mutation]
    case = next(c for c in special_cases if c.label == label)
    real = fused.render

    def wrong(program):
        ins, outs, body = real(program)
        return ins, outs, mutate(body)

    assert mutate(real(case.program)[2]) != real(case.program)[2]
    monkeypatch.setattr(fused, "render", wrong)
    assert _check_on_host(HostKernels([case.program], tmp_path), [case])


# ---- nvcc: the rendered kernels compile as CuPy expands them ---------------------------------


def _cupy_include() -> Path | None:
    spec = importlib.util.find_spec("cupy")
    if spec is None or not spec.submodule_search_locations:
        return None
    inc = Path(next(iter(spec.submodule_search_locations))) / "_core" / "include"
    return inc if (inc / "cupy" / "carray.cuh").exists() else None


# what CuPy prepends to every kernel it compiles (cupy/_core/core.pyx: cupy_header_list)
_CUPY_HEADERS = ("cupy/complex.cuh", "cupy/carray.cuh", "cupy/atomics.cuh", "cupy/math_constants.h")


def _cupy_kernel(name: str, src: tuple[str, str, str]) -> str:
    """The `cupy.ElementwiseKernel` source CuPy generates for 1-d contiguous operands."""
    ins, outs, body = src
    arrays = [(c, n) for c, n in _decls(ins) if n[0] == "x"]
    params = [f"const CArray<{c}, 1, 1, 1> _raw_{n}" for c, n in arrays]
    params += [f"const {c} {n}" for c, n in _decls(ins) if n[0] == "p"]
    params += [f"CArray<{c}, 1, 1, 1> _raw_{n}" for c, n in _decls(outs)]
    loads = [f"const {c} &{n} = _raw_{n}[_ind.get()];" for c, n in arrays]
    loads += [f"{c} &{n} = _raw_{n}[_ind.get()];" for c, n in _decls(outs)]
    return "\n".join(
        [f'extern "C" __global__ void {name}({", ".join(params)}, CIndexer<1> _ind) {{']
        + ["  CUPY_FOR(i, _ind.size()) {", "    _ind.set(i);", *loads, body + ";", "  }", "}"]
    )


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc (the CUDA toolkit) is not installed")
def test_rendered_kernels_compile_with_nvcc(all_cases, tmp_path):
    """Every distinct rendering (every function of the scalar language, every dtype) compiles
    to PTX for sm_80 with CuPy's headers and options, without a warning (other than the
    formulas' range checks of unsigned values against 0). ``-G`` skips NVVM's optimizer (the
    front end, overload resolution and code generation all run): ~500 kernels in ~3 s."""
    inc = _cupy_include()
    if inc is None:
        pytest.skip("CuPy's kernel headers (cupy/_core/include) are not installed")
    programs = [c.program for c in all_cases] + [_language_program()[0]]
    srcs = {fused.render(p): None for p in programs}
    parts = [f"#include <{h}>" for h in _CUPY_HEADERS]
    parts += [_cupy_kernel(f"coretorch_fused_{i}", s) for i, s in enumerate(srcs)]
    cu = tmp_path / "fused.cu"
    cu.write_text("\n".join(parts))
    cmd = ["nvcc", "--ptx", "-arch=compute_80", "-std=c++17", "-ftz=true", "-G", f"-I{inc}"]
    cmd += ["-diag-suppress", "186"]  # "pointless comparison of unsigned integer with zero"
    r = subprocess.run([*cmd, str(cu), "-o", str(tmp_path / "fused.ptx")], capture_output=True)
    assert r.returncode == 0, f"nvcc rejects the rendered kernels:\n{r.stderr.decode()[-6000:]}"
    ptx = (tmp_path / "fused.ptx").read_text()
    assert ptx.count(".entry coretorch_fused_") == len(srcs) > 300
    assert "warning" not in r.stderr.decode(), r.stderr.decode()[-3000:]


# ---- the rendering ---------------------------------------------------------------------------


def test_render_passes_numbers_as_kernel_arguments():
    def program(value):
        b = ChainBuilder()
        x = b.input((4,), dt.float32)
        return lower(b.chain([b.call("sigmoid", b.call("mul", x, value))]))

    src = fused.render(program(3.0))
    assert src == fused.render(program(-7.5))  # one compiled kernel serves every value
    assert src[:2] == ("float32 x0, float32 p0", "float32 out0")
    assert "3.0" not in src[2] and src[2].endswith("\nout0 = v1;")


# ---- on the cuda device: emulated in this process, or a real GPU -----------------------------


def _to_cuda(ts: list) -> list:
    return [t.to("cuda") for t in ts]


@on_cuda
def test_on_cuda_special_values_equal_eager_cpu(special_cases):
    failures = []
    for c in special_cases:
        kernel = compile_chain(c.chain, "cuda")
        outs = [ct.empty(e.shape, dtype=e.dtype, device="cuda") for e in c.expected]
        kernel(outs, _to_cuda(c.ins))
        for j, (g, w) in enumerate(zip(outs, c.expected)):
            m = _mismatch(f"{c.label} output {j}", g.cpu().numpy(), w.numpy(), c.rtol, c.atol)
            if m is not None:
                failures.append(m)
    assert not failures, f"{len(failures)} mismatches:\n" + "\n".join(failures[:12])


def _relu_chain(shapes, d=dt.float32) -> Chain:
    """relu(x * y + 0.5) and (that < 0.25) over inputs of `shapes`."""
    b = ChainBuilder()
    x, y = (b.input(s, d) for s in shapes)
    u = b.call("relu", b.call("add", b.call("mul", x, y), 0.5))
    return b.chain([u, b.call("lt", u, 0.25)])


@on_cuda
@pytest.mark.parametrize("case", LAYOUTS)
def test_on_cuda_every_layout_matches_eager_cuda(case):
    x, y = layout_operands(case)
    x, y = x.to("cuda"), y.to("cuda")
    chain = _relu_chain([x.shape, y.shape])
    expected = eager_chain(chain, [x, y])
    outs = [ct.empty(e.shape, dtype=e.dtype, device="cuda") for e in expected]
    compile_chain(chain, "cuda")(outs, [x, y])
    assert_close(outs, expected, rtol=0, atol=0)


@on_cuda
def test_on_cuda_in_place_and_overlapping_writes():
    x = ct.linspace(-2, 2, 12, device="cuda").reshape(3, 4)
    y = ct.full((4,), 0.5, device="cuda")
    chain = _relu_chain([x.shape, y.shape])
    expected = eager_chain(chain, [x, y])
    flags = ct.empty(3, 4, dtype=ct.bool, device="cuda")
    compile_chain(chain, "cuda")([x, flags], [x, y])  # x read and written element for element
    assert_close([x, flags], expected, rtol=0, atol=0)
    base = ct.zeros(6, dtype=ct.float64, device="cuda")
    b = ChainBuilder()
    v = b.call("add", b.input((5,), ct.float64), 1.0)
    run = compile_chain(b.chain([v]), "cuda").bind([base[1:]], [base[:-1]])
    run()
    run()  # each call reads what the one before wrote, as two eager calls would
    assert base.tolist() == [0.0, 1.0, 2.0, 2.0, 2.0, 2.0]


class _ElementByElement:
    """Stands in for the `cupy.ElementwiseKernel` in emulation: ``kernel(*ins, *params,
    *outs)`` walks the elements in order, each read just before it is written (as GPU threads
    may), with numpy's evaluation of one element."""

    def __init__(self, program: ScalarProgram):
        from coretorch_cuda_cupy.fused_numpy import numpy_function

        self.fn = numpy_function(program)
        self.nin = len(program.inputs) + len(program.params)

    def __call__(self, *args) -> None:
        ins, outs = args[: self.nin], args[self.nin :]
        for idx in np.ndindex(outs[0].shape):
            values = self.fn(*(np.broadcast_to(a, outs[0].shape)[idx] for a in ins))
            for o, v in zip(outs, values):
                o[idx] = v


@on_cuda
def test_on_cuda_launch_reads_overlapping_inputs_through_a_copy(monkeypatch):
    """The launch path (what runs on a GPU), with an element-by-element kernel: arguments in
    CuPy's order, an input that overlaps an output other than element for element copied
    before each launch, one read and written in place not copied."""
    if not ct.cuda.is_emulated():
        pytest.skip("on a GPU the other test_on_cuda_* launch the real kernels")
    monkeypatch.setattr(fused, "am", types.SimpleNamespace(EMULATED=False))  # (fused's view)
    b = ChainBuilder()
    x, y = b.input((5,), ct.float64), b.input((), ct.float64)
    program = lower(b.chain([b.call("add", b.call("mul", x, 2.0), y)]))
    kernel = fused.FusedKernel(program, _ElementByElement(program))
    base = ct.arange(6, dtype=ct.float64, device="cuda")
    run = kernel.bind([base[1:]], [base[:-1], ct.tensor(1.0, dtype=ct.float64, device="cuda")])
    run()
    assert base.tolist() == [0.0, 1.0, 3.0, 5.0, 7.0, 9.0]  # 2 * old + 1, not 2 * new + 1
    run()
    assert base.tolist() == [0.0, 1.0, 3.0, 7.0, 11.0, 15.0]
    inplace = ct.arange(5, dtype=ct.float64, device="cuda")
    kernel([inplace], [inplace, ct.tensor(-1.0, dtype=ct.float64, device="cuda")])
    assert inplace.tolist() == [-1.0, 1.0, 3.0, 5.0, 7.0]


@on_cuda
def test_on_cuda_kernels_check_dtypes_and_serve_every_value():
    k1, k2 = mul_kernel(3.0, "cuda"), mul_kernel(-7.0, "cuda")
    assert k1.kernel is k2.kernel and "on cuda" in repr(k1)
    out = ct.empty(4, dtype=ct.float64, device="cuda")
    k2([out], [ct.arange(4, dtype=ct.float64, device="cuda")])
    assert out.tolist() == [0.0, -7.0, -14.0, -21.0]
    with pytest.raises(TypeError, match="input 0 of dtype float32, expected float64"):
        k1([out], [ct.ones(4, device="cuda")])
    with pytest.raises(TypeError, match="an output of dtype float32"):
        k1([ct.empty(4, device="cuda")], [ct.ones(4, dtype=ct.float64, device="cuda")])
    with pytest.raises(ValueError, match="expected 1 outputs, got 2"):
        k1([out, out], [out])


def _train(compiled: bool, opt_cls, steps: int = 12, **opt_kw):
    ct.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(ct.float64)
    model = model.to("cuda")
    opt = opt_cls(model.parameters(), **opt_kw)
    batches = [
        (ct.randn(8, 16, dtype=ct.float64).to("cuda"), ct.randint(0, 4, (8,)).to("cuda"))
        for _ in range(3)
    ]

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    fn = ct.compile(step, fuse=True) if compiled else step
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no re-record, no fallback
        losses = [fn(*batches[i % len(batches)]).item() for i in range(steps)]
    return losses, [p.detach().cpu() for p in model.parameters()], fn


@on_cuda
@pytest.mark.parametrize(
    "opt_cls,kw",
    [
        (ct.optim.SGD, {"lr": 0.05, "momentum": 0.9}),
        (ct.optim.RMSprop, {"lr": 1e-3, "foreach": False}),
    ],
    ids=["sgd", "rmsprop-per-parameter"],
)
def test_on_cuda_compiled_training_matches_eager(opt_cls, kw):
    from coretorch.compile.fusion_pass import FusedCall

    eager_losses, eager_params, _ = _train(False, opt_cls, **kw)
    losses, params, step = _train(True, opt_cls, **kw)
    for a, b in zip(losses, eager_losses):
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0), (losses, eager_losses)
    for p, q in zip(params, eager_params):
        assert_close(p, q, rtol=1e-10, atol=1e-12)
    program = next(iter(step.variants.values())).replayer.program
    fused_steps = [s for s in program.steps if s.op.startswith("fused::")]
    assert fused_steps and all(isinstance(s.fn, FusedCall) for s in fused_steps)
    assert all(isinstance(s.fn.kernel, fused.FusedKernel) for s in fused_steps)


@pytest.mark.skipif(_usable(), reason="cuda is usable here: test_on_cuda_* ran in this process")
def test_cuda_group_runs_emulated_in_a_subprocess():
    """test_on_cuda_* with numpy standing in for CuPy (`make test`'s second run covers only
    the conformance suite and test_cuda_backend.py)."""
    env = {k: v for k, v in os.environ.items() if k not in (EMULATE, "CORETORCH_BACKENDS")}
    env[EMULATE] = "1"
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-k", "test_on_cuda_"]
    cmd += ["-W", "ignore::pytest.PytestAssertRewriteWarning", __file__]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stdout[-8000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and "skipped" not in r.stdout, r.stdout[-3000:]
