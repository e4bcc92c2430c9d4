"""Tests of coretorch.testing itself: assert_close, make_tensor, the OpInfo database, opcheck and
the conformance table's op classification."""

from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct
from coretorch.dispatch.keys import DispatchKey
from coretorch.dispatch.operator import Operator, register_fallback
from coretorch.dispatch.schema import parse_schema
from coretorch.ops.cpu_fallback import cpu_fallback
from coretorch.ops.declare import OpDecl
from coretorch.testing import OpCheckError, assert_close, make_tensor, opcheck
from coretorch.testing.make_tensor import LAYOUTS
from coretorch.testing.opinfo import OP_DB, SampleInput, get_opinfo
from coretorch.testing.pytest_plugin import key_status, op_status

# ---- assert_close ---------------------------------------------------------------------------


def test_assert_close_passes_within_default_float32_tolerance():
    a = ct.tensor([1.0, 2.0, 3.0])
    assert_close(a, np.array([1.0, 2.0, 3.0 + 1e-6], np.float32))


def test_assert_close_reports_mismatch_like_torch():
    a = ct.tensor([1.0, 2.0, 3.0])
    with pytest.raises(AssertionError) as e:
        assert_close(a, np.array([1.0, 2.5, 3.0], np.float32))
    msg = str(e.value)
    assert "Tensor-likes are not close!" in msg
    assert "Mismatched elements: 1 / 3 (33.3%)" in msg
    assert "Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)" in msg
    assert "Greatest relative difference: 0.2 at index (1,) (up to 1.3e-06 allowed)" in msg


def test_assert_close_integers_are_exact():
    with pytest.raises(AssertionError, match="Tensor-likes are not equal!"):
        assert_close(ct.tensor([1, 2]), np.array([1, 3]))
    assert_close(ct.tensor([1, 2]), np.array([1, 2]))


def test_assert_close_checks_dtype_and_shape():
    with pytest.raises(AssertionError, match="attribute 'dtype' do not match"):
        assert_close(ct.tensor([1.0]), np.array([1.0]))
    assert_close(ct.tensor([1.0]), np.array([1.0]), check_dtype=False)
    with pytest.raises(AssertionError, match="attribute 'shape' do not match"):
        assert_close(ct.tensor([1.0, 2.0]), np.array([1.0], np.float32))


def test_assert_close_nan_handling_and_explicit_tolerances():
    a = ct.tensor([float("nan"), 1.0])
    b = np.array([float("nan"), 1.0], np.float32)
    with pytest.raises(AssertionError):
        assert_close(a, b)
    assert_close(a, b, equal_nan=True)
    assert_close(ct.tensor([1.0]), np.array([1.1], np.float32), rtol=0.2, atol=0.0)
    with pytest.raises(ValueError, match="Both 'rtol' and 'atol'"):
        assert_close(a, b, rtol=1e-3)


def test_assert_close_scalars_sequences_and_msg():
    assert_close(1.0, 1.0 + 1e-9)
    with pytest.raises(AssertionError, match="Scalars are not close"):
        assert_close(1.0, 1.1)
    with pytest.raises(AssertionError, match="attribute 'type'"):
        assert_close(1, 1.0)
    assert_close((ct.tensor([1, 2]), 3), (np.array([1, 2]), 3))
    with pytest.raises(AssertionError, match=r"item \[1\]"):
        assert_close([ct.tensor([1]), ct.tensor([2])], [np.array([1]), np.array([5])])
    with pytest.raises(AssertionError, match="^custom$"):
        assert_close(1, 2, msg="custom")
    with pytest.raises(AssertionError, match="prefix: Scalars"):
        assert_close(1, 2, msg=lambda m: "prefix: " + m)


def test_assert_close_meta_tensors_compare_metadata_only():
    assert_close(ct.zeros(2, 3, device="meta"), ct.ones(2, 3, device="meta"))
    with pytest.raises(AssertionError, match="shape"):
        assert_close(ct.zeros(2, 3, device="meta"), ct.ones(3, 2, device="meta"))


def test_assert_close_matches_torch_tolerances():
    torch = pytest.importorskip("torch")
    for actual, expected in ((np.float32(1.0), 1.0 + 1.2e-6), (np.float64(1.0), 1.0 + 2e-7)):
        t_ok = True
        try:
            torch.testing.assert_close(
                torch.tensor(actual), torch.tensor(expected, dtype=torch.tensor(actual).dtype)
            )
        except AssertionError:
            t_ok = False
        ours = True
        try:
            assert_close(ct.tensor(np.array(actual)), np.array(expected, np.asarray(actual).dtype))
        except AssertionError:
            ours = False
        assert ours == t_ok


# ---- make_tensor ----------------------------------------------------------------------------


@pytest.mark.parametrize("layout", LAYOUTS)
def test_make_tensor_layouts_keep_shape_and_are_deterministic(layout):
    a = make_tensor(3, 4, dtype=ct.float32, device="cpu", layout=layout)
    b = make_tensor(3, 4, dtype=ct.float32, device="cpu", layout=layout)
    assert a.shape == (3, 4)
    assert a.is_contiguous() == (layout == "contiguous")
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_make_tensor_range_and_exclude_zero():
    t = make_tensor(200, dtype=ct.int64, device="cpu", low=-2, high=2, exclude_zero=True)
    v = np.asarray(t)
    assert v.min() >= -2 and v.max() < 2 and (v != 0).all()
    f = make_tensor(200, dtype=ct.float64, device="cpu", low=0.5, high=1.0)
    assert (np.asarray(f) >= 0.5).all() and (np.asarray(f) < 1.0).all()


# ---- the OpInfo database ------------------------------------------------------------------


def test_opinfo_entries_are_unique_and_have_dtypes():
    names = [o.name for o in OP_DB]
    assert len(names) == len(set(names)), "duplicate OpInfo entries"
    assert all(o.dtypes for o in OP_DB)
    assert all(
        o.ref is not None or o._torch_ref is not None or o.random
        for o in OP_DB
        if o._torch_ref is None
    ), "an OpInfo with no reference at all"


def _shape_of(x):
    if hasattr(x, "_shape"):
        return (tuple(x._shape), x._dtype.name, tuple(x._stride))
    if isinstance(x, (list, tuple)):
        return tuple(_shape_of(y) for y in x)
    if isinstance(x, dict):
        return tuple((k, _shape_of(v)) for k, v in sorted(x.items()))
    return repr(x) if not hasattr(x, "type") else str(x)


def test_samples_are_deterministic_and_device_independent():
    """The meta check pairs samples by position: they must match across devices and runs."""
    for o in OP_DB:
        d = o.dtypes[0]
        a = [
            (s.name, _shape_of(s.all_args()), _shape_of(s.kwargs).__len__())
            for s in o.sample_inputs("cpu", d)
        ]
        b = [
            (s.name, _shape_of(s.all_args()), _shape_of(s.kwargs).__len__())
            for s in o.sample_inputs("meta", d)
        ]
        assert a == b, o.name
        assert a, f"{o.name} has no samples"
        first = next(iter(o.sample_inputs("cpu", d)))
        again = next(iter(o.sample_inputs("cpu", d)))
        if hasattr(first.input, "_shape") and first.input.numel():
            np.testing.assert_array_equal(np.asarray(first.input), np.asarray(again.input))


def test_samples_cover_noncontiguous_and_zero_size_for_unary_ops():
    names = {s.name for s in get_opinfo("exp").sample_inputs("cpu", ct.float32)}
    assert {"0-d", "transposed", "sliced", "expanded", "zero-size"} <= names


def test_sample_input_repr_names_shapes_and_strides():
    s = SampleInput(
        make_tensor(3, 4, dtype=ct.float32, device="cpu", layout="transposed"),
        (2,),
        {"dim": 1},
        "demo",
    )
    r = repr(s)
    assert "demo" in r and "Tensor[3, 4]:float32" in r and "stride=(1, 3)" in r and "dim=1" in r


# ---- opcheck --------------------------------------------------------------------------------


def _meta_same(self):
    return (self._shape, self._dtype, self._device)


def _fake_op(name: str, kernel, differentiable=True):
    """An op declared outside the registry (so the coverage test never sees it)."""
    schema = parse_schema(f"{name}(Tensor self) -> Tensor")
    d = OpDecl(
        name, schema, _meta_same, "primitive", "", True, True, False, differentiable, False, ""
    )
    d.op = Operator(f"coretorch_testing::{name}", schema)
    d.op.decl = d
    d.op.register(DispatchKey.get("CPU"), kernel)
    return d


_WRONG_SHAPE = _fake_op("wrong_shape_double", lambda self: (self * 2).reshape(-1))
_RIGHT = _fake_op(
    "right_double", lambda self: (self * 2).detach() if self.requires_grad else self * 2
)


def test_opcheck_passes_a_correct_op(device):
    a = make_tensor(3, 4, dtype=ct.float32, device=device)
    b = make_tensor(4, dtype=ct.float32, device=device, layout="sliced")
    out = opcheck("add", a, b)
    assert out.shape == (3, 4)
    opcheck(ct.ops.aten.mul, a, 2.0)
    opcheck("transpose", a, 0, 1)


def test_opcheck_inplace_does_not_mutate_inputs():
    a = make_tensor(3, dtype=ct.float32, device="cpu")
    before = np.array(np.asarray(a))
    res = opcheck(ct.ops.aten.add_, a, 1.0)
    np.testing.assert_array_equal(np.asarray(a), before)
    np.testing.assert_allclose(np.asarray(res), before + 1)


def test_opcheck_catches_output_disagreeing_with_meta_rule():
    x = make_tensor(2, 3, dtype=ct.float32, device="cpu")
    with pytest.raises(OpCheckError, match=r"wrong_shape_double.*\(shape, dtype, strides\)"):
        opcheck(_WRONG_SHAPE, x)


def test_opcheck_catches_missing_autograd():
    x = make_tensor(2, 3, dtype=ct.float32, device="cpu")
    with pytest.raises(OpCheckError, match="declares no derivative formula"):
        opcheck(_RIGHT, x)
    opcheck(_RIGHT, make_tensor(2, 3, dtype=ct.int64, device="cpu"))


def test_opcheck_reports_a_failing_call():
    with pytest.raises(OpCheckError, match="add.*raised RuntimeError"):
        opcheck("add", ct.zeros(2), ct.zeros(3))


# ---- conformance table classification --------------------------------------------------------


def test_op_status_classifies_ops():
    assert op_status("add", "cpu") in ("native", "missing")
    assert op_status("reshape", "cpu") == "composite"
    assert op_status("add", "meta") == "native"
    assert op_status("no_such_op", "cpu") == "undeclared"


def test_key_status_sees_fallbacks():
    key = DispatchKey.backend("CoretorchTestingFallbackKey")
    assert key_status("add", key) == "missing"
    register_fallback(key, cpu_fallback)
    try:
        assert key_status("add", key) == "fallback"
        assert key_status("matmul", key) == "composite"
    finally:
        register_fallback(key, None)
    assert key_status("add", key) == "missing"


# ---- the conformance bookkeeping under pytest-xdist ------------------------------------------


def test_xdist_workers_hand_their_conformance_bookkeeping_to_the_controller():
    """A worker's (op, device) records, None devices (tests without one) mixed with named ones,
    reach the controller's summary through its workeroutput; the controller merges them."""
    import types

    from coretorch.testing import pytest_plugin as plugin

    def config():
        c = types.SimpleNamespace(
            stash=pytest.Stash(),
            getoption=lambda name, default=None: None,
            addinivalue_line=lambda name, line: None,
        )
        plugin.pytest_configure(c)
        return c

    worker, out = config(), {}
    worker.workeroutput = out
    worker.stash[plugin._RAN].update({("add", "cpu"), ("add", None), ("exp", "meta")})
    worker.stash[plugin._FAILED].add(("addcmul", "cpu"))
    worker.stash[plugin._CALLED][("addcmul", "cpu")] = {"add", "mul"}
    plugin.pytest_sessionfinish(types.SimpleNamespace(config=worker))

    controller = config()
    controller.stash[plugin._RAN].add(("sum", "cpu"))
    node = types.SimpleNamespace(config=controller, workeroutput=out)
    plugin.pytest_testnodedown(node, None)
    assert controller.stash[plugin._RAN] == {
        ("sum", "cpu"),
        ("add", "cpu"),
        ("add", None),
        ("exp", "meta"),
    }
    assert controller.stash[plugin._FAILED] == {("addcmul", "cpu")}
    assert controller.stash[plugin._CALLED] == {("addcmul", "cpu"): {"add", "mul"}}
