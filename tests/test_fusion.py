"""Elementwise fusion: lowering chains to scalar programs (checks and errors), and the cpu
backend's fused kernels on every layout (strided, broadcast, 0-d, aliased in place, partly
overlapping, multi-threaded), with several outputs of different dtypes, and the disk cache."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest

import coretorch as ct
from coretorch.compile.fusion import (
    Chain,
    ChainBuilder,
    FusionError,
    In,
    ScalarProgram,
    Step,
    Val,
    compile_chain,
    eager_chain,
    lower,
    validate,
)
from coretorch.testing import assert_close

fused_mod = pytest.importorskip("coretorch_cpu_numba.fused")


def _chain(shapes, dtype=ct.float32):
    """relu(x * y + 0.5) and (that < 0.25) over inputs of `shapes` (bitwise as eager)."""
    b = ChainBuilder()
    x, y = (b.input(s, dtype) for s in shapes)
    t = b.call("add", b.call("mul", x, y), 0.5)
    u = b.call("relu", t)
    return b.chain([u, b.call("lt", u, 0.25)])


def _run(chain, ins):
    expected = eager_chain(chain, ins)
    outs = [ct.empty(e.shape, dtype=e.dtype) for e in expected]
    compile_chain(chain, "cpu")(outs, ins)
    return outs, expected


# ---- lowering -----------------------------------------------------------------------------


def test_lowering_casts_where_eager_rounds_and_keeps_numbers_as_parameters():
    b = ChainBuilder()
    x = b.input((3,), ct.int32)
    r = b.call("mul", b.call("exp", x), 2.5)
    p = lower(b.chain([r]))
    assert p.ops == ("exp", "mul")
    assert p.lines == (("v0", "float32(exp(float32(x0)))"), ("v1", "float32(v0 * p0)"))
    assert [(n, v.dtype, float(v)) for n, v in p.params] == [("p0", np.float32, 2.5)]
    assert p.outputs == (("v1", np.dtype(np.float32)),)


def mul_kernel(value: float, device_type: str):
    """The fused kernel of ``x * value`` for a float64 `x` of 4 elements on `device_type`."""
    b = ChainBuilder()
    x = b.input((4,), ct.float64)
    return compile_chain(b.chain([b.call("mul", x, value)]), device_type)


def test_one_kernel_serves_every_scalar_value():
    k1, k2 = mul_kernel(3.0, "cpu"), mul_kernel(-7.0, "cpu")
    assert k1.module is k2.module
    x = ct.arange(4, dtype=ct.float64)
    out = ct.empty(4, dtype=ct.float64)
    k2([out], [x])
    assert out.tolist() == [0.0, -7.0, -14.0, -21.0]


def test_lowering_refuses_what_it_cannot_fuse():
    b = ChainBuilder()
    x = b.input((2,), ct.float16)
    with pytest.raises(FusionError, match=r"input 0: dtype float16 is not fused"):
        lower(b.chain([b.call("neg", x)]))
    b = ChainBuilder()
    x = b.input((2,), ct.float32)
    with pytest.raises(FusionError, match=r"step 0 \(sum\): the op has no scalar formula"):
        lower(b.chain([b.call("sum", x)]))
    b = ChainBuilder()
    x = b.input((2,), ct.int64)
    with pytest.raises(FusionError, match=r"step 0 \(div\): not fused for these arguments"):
        lower(b.chain([b.call("div", x, x, rounding_mode="floor")]))
    f32 = ct.float32
    with pytest.raises(FusionError, match=r"step 0 \(neg\): reads step 0, not computed"):
        lower(Chain((f32,), (Step("neg", (Val(0),), f32),), (0,)))
    with pytest.raises(FusionError, match=r"reads input 3 of 1"):
        lower(Chain((f32,), (Step("neg", (In(3),), f32),), (0,)))
    with pytest.raises(FusionError, match="writes no output"):
        lower(Chain((f32,), (Step("neg", (In(0),), f32),), ()))


@pytest.mark.parametrize(
    "expr,match",
    [
        ("x0.real", "Attribute is not in the scalar language"),
        ("open(x0)", r"open\(\) is not a function of the scalar language"),
        ("exp(x0, x0)", r"exp\(\) takes 1 positional argument"),
        ("y + 1", "'y' is not defined"),
        ("x0 + 'a'", "constant 'a' is not a number"),
        ("x0 +", "is not an expression"),
        ("[x0]", "List is not in the scalar language"),
    ],
)
def test_validate_refuses_expressions_outside_the_scalar_language(expr, match):
    p = ScalarProgram(
        ((0, np.dtype(np.float32)),), (), (("v0", expr),), (("v0", np.dtype(np.float32)),), ("neg",)
    )
    with pytest.raises(FusionError, match=match):
        validate(p)


# ---- the cpu kernels on every layout --------------------------------------------------------


LAYOUTS = ["contiguous", "transposed", "broadcast", "zero_dim", "expanded", "sliced", "empty"]


def layout_operands(case: str):
    """Two float32 operands (6x5 and something broadcasting to it) laid out as `case` says."""
    g = ct.Generator().manual_seed(0)
    x = ct.randn(6, 5, generator=g)
    y = ct.randn(6, 5, generator=g)
    if case == "transposed":
        x = ct.randn(5, 6, generator=g).t()
    elif case == "broadcast":
        y = ct.randn(5, generator=g)
    elif case == "zero_dim":
        y = ct.tensor(0.75)
    elif case == "expanded":
        y = ct.randn(6, 1, generator=g).expand(6, 5)
    elif case == "sliced":
        x = ct.randn(12, 10, generator=g)[::2, 1::2]
    elif case == "empty":
        x, y = ct.randn(0, 5), ct.randn(5)
    return x, y


@pytest.mark.parametrize("case", LAYOUTS)
def test_fused_kernel_matches_eager_on_every_layout(case):
    x, y = layout_operands(case)
    outs, expected = _run(_chain([x.shape, y.shape]), [x, y])
    assert_close(outs, expected, rtol=0, atol=0)
    assert outs[1].dtype == ct.bool


def test_fused_kernel_writes_in_place_over_its_input():
    x = ct.linspace(-2, 2, 12).reshape(3, 4)
    y = ct.full((4,), 0.5)
    chain = _chain([x.shape, y.shape])
    expected = eager_chain(chain, [x, y])
    flags = ct.empty(3, 4, dtype=ct.bool)
    compile_chain(chain, "cpu")([x, flags], [x, y])  # x is read and written, element for element
    assert_close([x, flags], expected, rtol=0, atol=0)


def test_fused_kernel_reads_a_partly_overlapping_input_before_writing():
    base = ct.arange(10, dtype=ct.float64)
    src, dst = base[:-1], base[1:]
    b = ChainBuilder()
    v = b.call("add", b.input((9,), ct.float64), 1.0)
    compile_chain(b.chain([v]), "cpu")([dst], [src])
    assert base.tolist() == [0.0] + [float(i + 1) for i in range(9)]


def test_bound_call_rereads_a_partly_overlapping_input_each_time():
    base = ct.zeros(6, dtype=ct.float64)
    b = ChainBuilder()
    v = b.call("add", b.input((5,), ct.float64), 1.0)
    run = compile_chain(b.chain([v]), "cpu").bind([base[1:]], [base[:-1]])
    run()
    run()  # reads what the first call wrote, as two eager calls would
    assert base.tolist() == [0.0, 1.0, 2.0, 2.0, 2.0, 2.0]


@pytest.mark.parametrize("transposed", [False, True])
def test_fused_kernel_above_the_parallel_threshold(transposed):
    from coretorch_cpu_numba.elementwise import PARALLEL_MIN

    n = 1 << 9
    assert n * n >= PARALLEL_MIN
    g = ct.Generator().manual_seed(1)
    x = ct.randn(n, n, generator=g)
    if transposed:
        x = x.t()
    y = ct.randn(n, generator=g)
    outs, expected = _run(_chain([x.shape, y.shape]), [x, y])
    assert_close(outs, expected, rtol=0, atol=0)


def test_bound_call_reads_the_current_values():
    x, y = ct.ones(4), ct.ones(4)
    chain = _chain([x.shape, y.shape])
    outs = [ct.empty(4), ct.empty(4, dtype=ct.bool)]
    run = compile_chain(chain, "cpu").bind(outs, [x, y])
    run()
    x.fill_(-1.0)
    run()
    assert_close(outs, eager_chain(chain, [x, y]), rtol=0, atol=0)


def test_fused_kernel_checks_operand_dtypes():
    chain = _chain([(4,), (4,)])
    kernel = compile_chain(chain, "cpu")
    with pytest.raises(TypeError, match="input 0 of dtype float64, expected float32"):
        kernel(
            [ct.empty(4), ct.empty(4, dtype=ct.bool)], [ct.ones(4, dtype=ct.float64), ct.ones(4)]
        )
    with pytest.raises(TypeError, match="an output of dtype float64"):
        kernel([ct.empty(4, dtype=ct.float64), ct.empty(4, dtype=ct.bool)], [ct.ones(4)] * 2)
    with pytest.raises(ValueError, match="expected 2 outputs, got 1"):
        kernel([ct.empty(4)], [ct.ones(4)] * 2)


def test_optimizer_update_chain_matches_eager_bitwise():
    """An Adam-style update: lerp, addcmul, sqrt, addcdiv fused into one kernel."""
    g = ct.Generator().manual_seed(2)
    p, grad, m, v = (ct.randn(33, generator=g, dtype=ct.float64) for _ in range(4))
    v = v.abs()
    b = ChainBuilder()
    P, G, M, V = (b.input((33,), ct.float64) for _ in range(4))
    m2 = b.call("lerp", M, G, 0.1)
    v2 = b.call("addcmul", b.call("mul", V, 0.999), G, G, value=0.001)
    denom = b.call("add", b.call("sqrt", v2), 1e-8)
    p2 = b.call("addcdiv", P, m2, denom, value=-0.01)
    chain = b.chain([p2, m2, v2])
    outs, expected = _run(chain, [p, grad, m, v])
    assert_close(outs, expected, rtol=0, atol=0)


def test_generated_kernels_are_cached_on_disk_across_processes(tmp_path):
    script = textwrap.dedent("""
        import coretorch as ct
        from coretorch.compile.fusion import ChainBuilder, compile_chain
        b = ChainBuilder()
        x = b.input((4,), ct.float32)
        k = compile_chain(b.chain([b.call("sigmoid", b.call("mul", x, 3.0))]), "cpu")
        k([ct.empty(4)], [ct.ones(4)])
        print(k.module.__file__, sum(k.module.flat.stats.cache_hits.values()))
    """)
    env = {**os.environ, "CORETORCH_FUSION_CACHE": str(tmp_path), "CORETORCH_BACKENDS": "cpu"}
    runs = [
        subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
        ).stdout.split()
        for _ in range(2)
    ]
    assert runs[0][0] == runs[1][0] and runs[0][0].startswith(str(tmp_path))
    assert runs[0][1] == "0", "the first process found a cached kernel in an empty cache"
    assert runs[1][1] == "1", "the second process compiled the kernel again"


def test_an_unwritable_cache_directory_falls_back_to_the_temp_dir(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    monkeypatch.setenv("CORETORCH_FUSION_CACHE", str(blocked / "sub"))
    b = ChainBuilder()
    x = b.input((3,), ct.float64)
    # a chain no other test compiles, so the module is written now
    kernel = compile_chain(b.chain([b.call("atan2", b.call("mul", x, 1.25), x)]), "cpu")
    assert kernel.module.__file__.startswith(
        os.path.join(tempfile.gettempdir(), f"coretorch-fused-{os.getuid()}")
    )
    out = ct.empty(3, dtype=ct.float64)
    kernel([out], [ct.ones(3, dtype=ct.float64)])
    assert_close(out, ct.full((3,), 0.8960553845713439, dtype=ct.float64))
