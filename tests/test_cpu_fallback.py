"""The boxed CPU fallback (coretorch/ops/cpu_fallback.py) on a backend registered in-process.

The backend `fbdev` registers only an allocator, host copies (read_numpy/write_numpy) and a
native ``fill_``, and opts into the fallback: every other op runs on cpu copies. Values are
checked against numpy (and analytic gradients); fallback counts, the one-time warning and the
profiler's FALLBACK regions are checked too.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import coretorch as ct
from coretorch import record_function as rf
from coretorch.device import device_types
from coretorch.library import Library
from coretorch.ops.cpu_fallback import (
    CPUFallbackWarning,
    cpu_fallback,
    fallback_counts,
    reset_fallback_warnings,
)
from coretorch.plugins import BackendInfo, BackendRegistry, _registration_snapshot, _rollback
from coretorch.tensor.storage import Allocator

DEV = "fbdev"


class _NumpyAllocator(Allocator):
    def raw_allocate(self, nbytes, device):
        buf = np.empty(nbytes, np.uint8)
        return buf, buf.__array_interface__["data"][0]


def _array(t) -> np.ndarray:
    d = t._dtype.numpy
    if 0 in t._shape:
        return np.empty(t._shape, d)
    return np.ndarray(
        t._shape,
        d,
        t._storage.data,
        t._offset * d.itemsize,
        tuple(s * d.itemsize for s in t._stride),
    )


FILLS: list = []  # the native fill_ kernel records each call


def _fill_(out, self, value):
    FILLS.append(value)
    _array(out)[...] = value.item() if isinstance(value, ct.Tensor) else value


@pytest.fixture(scope="module", autouse=True)
def fbdev():
    """Register the `fbdev` backend for this module, and roll it back afterwards."""
    if "cpu" not in device_types():
        pytest.skip("the cpu fallback needs the cpu backend")
    info = BackendInfo(name="fbdev-test", entry_point="tests.test_cpu_fallback")
    snapshot = _registration_snapshot()
    registry = BackendRegistry(info)
    registry.device_type(
        DEV,
        "FbDev",
        _NumpyAllocator(),
        read_numpy=lambda t: _array(t).copy(),
        write_numpy=lambda t, v: _array(t).__setitem__(Ellipsis, v),
    )
    registry.library("FbDev").impl("fill_", _fill_)
    registry.use_cpu_fallback("FbDev")
    yield
    _rollback(snapshot, info, registry)


@pytest.fixture(autouse=True)
def quiet():
    """Tests that check the warning enable it themselves."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CPUFallbackWarning)
        yield


def on_dev(values, dtype=None) -> ct.Tensor:
    return ct.tensor(np.asarray(values), dtype=dtype).to(DEV)


def host(t: ct.Tensor) -> np.ndarray:
    assert t.device == ct.device(DEV), f"expected a result on {DEV}, got {t.device}"
    return t.detach().to("cpu").numpy()


A = np.array([[1.5, -2.0, 3.0], [0.25, 4.0, -1.0]], dtype=np.float32)
B = np.array([2.0, -0.5, 3.5], dtype=np.float32)


# ---- functional, in-place, out= --------------------------------------------------------------


def test_functional_op_values_and_device():
    out = on_dev(A) * on_dev(B) + 1
    np.testing.assert_allclose(host(out), A * B + 1, rtol=1e-6)
    np.testing.assert_allclose(host(on_dev(A).exp()), np.exp(A), rtol=1e-6)


def test_calls_are_counted_per_op():
    x = on_dev(A)
    before = fallback_counts["aten::exp"], fallback_counts["aten::neg"]
    x.exp()
    x.exp()
    x.neg()
    assert (fallback_counts["aten::exp"], fallback_counts["aten::neg"]) == (
        before[0] + 2,
        before[1] + 1,
    )


def test_native_kernel_is_used_not_the_fallback():
    before = sum(fallback_counts.values())
    FILLS.clear()
    t = ct.full((2, 2), 3.0, device=DEV)
    assert FILLS == [3.0] and sum(fallback_counts.values()) == before
    np.testing.assert_array_equal(host(t), np.full((2, 2), 3.0, np.float32))


def test_warns_once_per_op():
    reset_fallback_warnings()
    x = on_dev(A)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CPUFallbackWarning)
        x.sin()
        x.sin()
        x.cos()
    msgs = [str(w.message) for w in caught if w.category is CPUFallbackWarning]
    assert len(msgs) == 2, msgs
    assert msgs[0].startswith("aten::sin has no kernel for this backend")
    assert "runs through the CPU fallback" in msgs[0]
    assert msgs[1].startswith("aten::cos ")
    assert all(w.filename == __file__ for w in caught), "the warning points at the user's line"


def test_inplace_op_writes_back_and_returns_self():
    x = on_dev(A)
    v = x._version
    r = x.mul_(on_dev(B))
    assert r is x and x._version == v + 1
    np.testing.assert_allclose(host(x), A * B, rtol=1e-6)


def test_inplace_op_on_a_strided_view_writes_through():
    x = on_dev(A)
    col = x[:, 1]
    assert not col.is_contiguous()
    col.mul_(10.0)
    want = A.copy()
    want[:, 1] *= 10
    np.testing.assert_allclose(host(x), want, rtol=1e-6)


def test_same_tensor_twice_keeps_aliasing():
    x = on_dev(A)
    x.add_(x)
    np.testing.assert_allclose(host(x), 2 * A)


def test_out_argument_written_and_resized():
    o = ct.empty(0, device=DEV)
    r = ct.sub(on_dev(A), on_dev(B), out=o)
    assert r is o and o.shape == (2, 3)
    np.testing.assert_allclose(host(o), A - B, rtol=1e-6)


def test_multiple_outputs_come_back_as_a_namedtuple():
    res = ct.max(on_dev(A), dim=1)
    assert res._fields == ("values", "indices")
    np.testing.assert_array_equal(host(res.values), A.max(axis=1))
    np.testing.assert_array_equal(host(res.indices), A.argmax(axis=1))


def test_data_dependent_output_shape():
    x = on_dev([[0.0, 1.0], [2.0, 0.0]])
    np.testing.assert_array_equal(host(ct.nonzero(x)), [[0, 1], [1, 0]])


def test_zero_dim_cpu_tensor_joins_but_other_cpu_tensors_raise():
    out = on_dev(A) * ct.tensor(2.0)
    np.testing.assert_allclose(host(out), A * 2)
    with pytest.raises(
        RuntimeError,
        match=r"sub\(\): expected all tensors to be on the same "
        r"device, got fbdev and cpu",
    ):
        ct.sub(on_dev(A), ct.tensor(B))


def test_errors_of_the_cpu_op_propagate():
    with pytest.raises(RuntimeError, match="cat"):
        ct.cat([on_dev(A), on_dev(np.ones((2, 2), np.float32))], dim=0)


def test_op_without_a_cpu_kernel_raises_naming_the_backend():
    lib = Library("test_cpu_fallback", "DEF")
    try:
        lib.define("only_meta(Tensor x) -> Tensor")
        lib.impl("only_meta", lambda x: x, "Meta")
        before = fallback_counts["test_cpu_fallback::only_meta"]
        with pytest.raises(
            NotImplementedError,
            match=r"Could not run 'test_cpu_fallback::only_meta' with arguments "
            r"from the 'FbDev' backend: .*no CPU kernel either.* "
            r"kernels for: Meta",
        ):
            ct.ops.test_cpu_fallback.only_meta(on_dev(A))
        assert fallback_counts["test_cpu_fallback::only_meta"] == before
    finally:
        lib._destroy()


def test_cpu_arguments_run_unchanged():
    a = ct.tensor(A)
    r = cpu_fallback(ct.ops.aten.add, None, ct.ops.aten.add.bind(a, a), {})
    assert r.device == ct.device("cpu")
    np.testing.assert_allclose(r.numpy(), 2 * A)


# ---- views and factories -------------------------------------------------------------------


def test_views_share_storage_and_never_fall_back():
    x = on_dev(A)
    before = sum(fallback_counts.values())
    views = [x.t(), x[1], x.view(3, 2), x.unsqueeze(0), x[:, ::2], x.expand(4, 2, 3)]
    assert sum(fallback_counts.values()) == before, "views are core composites"
    assert all(v._storage is x._storage and v.device == ct.device(DEV) for v in views)
    np.testing.assert_array_equal(host(views[0]), A.T)
    np.testing.assert_array_equal(host(views[4]), A[:, ::2])
    x.view(-1)[0:1].fill_(7.0)  # writing through a view reaches the base
    assert host(x)[0, 0] == 7.0


def test_factories_need_only_allocator_and_fill():
    before = sum(fallback_counts.values())
    z, o = ct.zeros(2, 3, device=DEV), ct.ones(4, dtype=ct.int32, device=DEV)
    f, zl = ct.full((2,), 2.5, device=DEV), ct.zeros_like(z)
    assert sum(fallback_counts.values()) == before, "no fallback for fill-based factories"
    np.testing.assert_array_equal(host(z), np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(host(o), np.ones(4, np.int32))
    np.testing.assert_array_equal(host(f), [2.5, 2.5])
    np.testing.assert_array_equal(host(zl), np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(host(ct.eye(3, device=DEV)), np.eye(3, dtype=np.float32))


def test_factory_primitives_fall_back_and_land_on_the_device():
    np.testing.assert_array_equal(host(ct.arange(2, 9, 3, device=DEV)), [2, 5, 8])
    np.testing.assert_allclose(
        host(ct.linspace(0, 1, 5, device=DEV)), np.linspace(0, 1, 5, dtype=np.float32)
    )
    o = ct.empty(3, dtype=ct.int64, device=DEV)
    assert ct.arange(3, device=DEV, out=o) is o
    np.testing.assert_array_equal(host(o), [0, 1, 2])
    with ct.device(DEV):
        np.testing.assert_array_equal(host(ct.arange(4)), [0, 1, 2, 3])


def test_random_factories():
    ct.manual_seed(0)
    r = ct.randn(1000, device=DEV)
    u = ct.rand(1000, device=DEV)
    vals, uni = host(r), host(u)
    assert abs(vals.mean()) < 0.15 and 0.85 < vals.std() < 1.15
    assert uni.min() >= 0 and uni.max() < 1
    ct.manual_seed(0)
    np.testing.assert_array_equal(host(ct.randn(1000, device=DEV)), vals)


# ---- autograd --------------------------------------------------------------------------------


def test_autograd_through_the_fallback():
    a = on_dev(A).requires_grad_()
    b = on_dev(B).requires_grad_()
    loss = (a.exp() * b).sum()
    assert loss.grad_fn is not None and loss.device == ct.device(DEV)
    loss.backward()
    assert a.grad.device == ct.device(DEV) and b.grad.device == ct.device(DEV)
    np.testing.assert_allclose(host(a.grad), np.exp(A) * B, rtol=1e-5)
    np.testing.assert_allclose(host(b.grad), np.exp(A).sum(axis=0), rtol=1e-5)


def test_gradcheck_through_the_fallback():
    x = on_dev(np.array([[0.3, -1.2], [2.0, 0.7]]), dtype=ct.float64).requires_grad_()
    w = on_dev(np.array([0.5, -1.5]), dtype=ct.float64).requires_grad_()
    assert ct.autograd.gradcheck(lambda x, w: (x.tanh() @ w).exp(), (x, w))


def test_inplace_fallback_under_autograd():
    a = on_dev(A).requires_grad_()
    y = a * 1.0
    y.mul_(on_dev(B))  # in-place, through the fallback, on a non-leaf
    y.sum().backward()
    np.testing.assert_allclose(host(a.grad), np.broadcast_to(B, A.shape))


# ---- profiler --------------------------------------------------------------------------------


def test_fallback_region_encloses_the_copies_and_the_cpu_op():
    seen = []
    h = rf.add_thread_local_callback(
        lambda r: seen.append((r.scope, r.name, len(rf.open_regions())))
    )
    try:
        on_dev(A).exp()
    finally:
        rf.remove_callback(h)
    fb = [(d, n) for s, n, d in seen if s == rf.RecordScope.FALLBACK]
    assert fb == [(fb[0][0], "aten::exp (cpu fallback)")]
    inner = [(n, d) for s, n, d in seen if s == rf.RecordScope.FUNCTION and d > fb[0][0]]
    names = [n for n, _ in inner]
    assert "aten::exp" in names and "aten::_to_copy" in names, names


def test_profiler_shows_fallback_category():
    profiler = pytest.importorskip("coretorch_profiler")
    x = on_dev(A)
    with profiler.profile() as prof:
        x.cos()
    cats = {(e.name, e.category) for e in prof.events()}
    assert ("aten::cos (cpu fallback)", "fallback") in cats
    assert ("aten::cos", "cpu_op") in cats
