"""Fused and foreach optimizers (``fused=`` / ``foreach=``): the same values as PyTorch's
optimizers and as coretorch's single-tensor path, to a few ulps, for every hyper-parameter
branch; state dicts and step counters as PyTorch keeps them; the implementation each setting
picks (one kernel call per group when fused)."""

from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct
from coretorch.record_function import RecordScope, add_thread_local_callback, remove_callback

torch = pytest.importorskip("torch")

SHAPES = [(5, 3), (7,), (2, 2, 2), ()]
STEPS = 4

# (optimizer, hyper-parameters) covering every branch of each update
CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, maximize=True)),
    ("Adam", dict(lr=0.1)),
    ("Adam", dict(lr=0.1, weight_decay=0.1, amsgrad=True, maximize=True, betas=(0.3, 0.9))),
    ("Adam", dict(lr=0.1, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.1, amsgrad=True)),
    ("RMSprop", dict(lr=0.01)),
    (
        "RMSprop",
        dict(lr=0.01, centered=True, momentum=0.9, weight_decay=0.1, maximize=True, alpha=0.3),
    ),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.2)),
    ("Adagrad", dict(lr=0.1, maximize=True)),
]
IMPLS = {"fused": dict(fused=True), "foreach": dict(foreach=True), "default": {}}
STATE_KEYS = (
    "exp_avg",
    "exp_avg_sq",
    "max_exp_avg_sq",
    "momentum_buffer",
    "square_avg",
    "grad_avg",
    "sum",
    "step",
)


def _case_id(case):
    name, kw = case
    return name + "-" + "-".join(f"{k}={v}" for k, v in kw.items())


def _data(dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(dtype) for s in SHAPES] for _ in range(STEPS)]
    return init, grads


def _run(lib, name, kwargs, data, steps=STEPS, **impl):
    init, grads = data
    params = [lib.tensor(a.copy(), requires_grad=True) for a in init]
    opt = getattr(lib.optim, name)(params, **kwargs, **impl)
    for gs in grads[:steps]:
        for p, g in zip(params, gs):
            p.grad = lib.tensor(g)
        opt.step()
    return params, opt


def _np(t):
    return np.array(t.detach().numpy() if hasattr(t, "detach") else t)


def _state_arrays(opt, params):
    return [{k: _np(v) for k, v in opt.state[p].items() if k in STATE_KEYS} for p in params]


def assert_ulps(actual, expected, maxulp=1, what=""):
    """Every value within `maxulp` units in the last place of the expected one."""
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape and a.dtype == e.dtype, what
    np.testing.assert_array_max_ulp(a, e, maxulp=maxulp)


def assert_like_torch(actual, expected, what=""):
    """PyTorch computes some intermediates in double precision: a few float32 ulps apart."""
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6, err_msg=what)


@pytest.mark.parametrize("impl", list(IMPLS))
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_matches_pytorch_and_the_single_tensor_path(case, impl):
    name, kw = case
    data = _data()
    ours, opt = _run(ct, name, kw, data, **IMPLS[impl])
    single, opt1 = _run(ct, name, kw, data, fused=False)
    theirs, topt = _run(torch, name, kw, data)
    for a, b, c in zip(ours, single, theirs):
        assert_ulps(_np(a), _np(b), what="against the single-tensor path")
        assert_like_torch(_np(a), _np(c), "against PyTorch")
    for sa, sb, sc in zip(
        _state_arrays(opt, ours), _state_arrays(opt1, single), _state_arrays(topt, theirs)
    ):
        assert sa.keys() == sc.keys()
        for k in sa:
            assert_ulps(sa[k], sb[k], what=k)
            assert_like_torch(sa[k], sc[k], k)


@pytest.mark.parametrize(
    "name,kw",
    [
        ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.1)),
        ("Adam", dict(lr=0.1, weight_decay=0.1, amsgrad=True)),
        ("AdamW", dict(lr=0.1)),
        ("Adagrad", dict(lr=0.1, lr_decay=0.01)),
    ],
)
def test_matches_pytorch_fused(name, kw):
    """PyTorch's own fused=True kernels give the same values (and the same step counters)."""
    data = _data()
    ours, opt = _run(ct, name, kw, data, fused=True)
    theirs, topt = _run(torch, name, kw, data, fused=True)
    for a, c in zip(ours, theirs):
        assert_like_torch(_np(a), _np(c))
    for sa, sc in zip(_state_arrays(opt, ours), _state_arrays(topt, theirs)):
        for k in sa:
            assert_like_torch(sa[k], sc[k], k)
            assert sa[k].dtype == sc[k].dtype, k


@pytest.mark.parametrize("impl", ["fused", "foreach"])
def test_float64_matches_pytorch(impl):
    data = _data(np.float64)
    kw = dict(lr=0.1, weight_decay=0.1, amsgrad=True)
    ours, _ = _run(ct, "Adam", kw, data, **IMPLS[impl])
    single, _ = _run(ct, "Adam", kw, data, fused=False)
    theirs, _ = _run(torch, "Adam", kw, data)
    for a, b, c in zip(ours, single, theirs):
        assert _np(a).dtype == np.float64
        assert_ulps(_np(a), _np(b))
        np.testing.assert_allclose(_np(a), _np(c), rtol=1e-12, atol=1e-14)


def test_capturable_is_accepted_and_changes_nothing():
    data = _data()
    a, _ = _run(ct, "Adam", dict(lr=0.1, capturable=True), data)
    b, _ = _run(ct, "Adam", dict(lr=0.1), data)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(_np(x), _np(y))


@pytest.mark.parametrize(
    "name,kw",
    [
        ("Adam", dict(lr=0.1, amsgrad=True)),
        ("SGD", dict(lr=0.1, momentum=0.9)),
        ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
        ("Adagrad", dict(lr=0.1)),
    ],
)
@pytest.mark.parametrize("resume", ["fused", "single"])
def test_state_dict_round_trip(name, kw, resume):
    """Two fused steps, a state_dict saved and loaded into a new optimizer (fused or not), two
    more steps: the values of four uninterrupted steps, and the step counters continue."""
    data = _data()
    straight, _ = _run(ct, name, kw, data, fused=True)
    init, grads = data
    params, opt = _run(ct, name, kw, (init, grads), steps=2, fused=True)
    saved = opt.state_dict()
    fresh = [p.detach().clone().requires_grad_(True) for p in params]
    opt2 = getattr(ct.optim, name)(fresh, **kw)
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["fused"] is True  # the saved group's setting, as PyTorch
    opt2.param_groups[0]["fused"] = resume == "fused"
    for gs in grads[2:]:
        for p, g in zip(fresh, gs):
            p.grad = ct.tensor(g)
        opt2.step()
    for a, b in zip(fresh, straight):
        assert_ulps(_np(a), _np(b))
    if name != "SGD":
        assert [float(opt2.state[p]["step"]) for p in fresh] == [float(STEPS)] * len(fresh)


def test_step_counters_follow_pytorch():
    """fused=True keeps "step" as a float32 tensor even under a float64 default dtype (as
    PyTorch's fused path); the other paths keep the default scalar dtype."""
    data = _data()
    prev = ct.get_default_dtype()
    ct.set_default_dtype(ct.float64)
    try:
        _, fused = _run(ct, "Adam", {}, data, steps=3, fused=True)
        _, default = _run(ct, "Adam", {}, data, steps=3)
    finally:
        ct.set_default_dtype(prev)
    for opt, dtype in ((fused, ct.float32), (default, ct.float64)):
        for state in opt.state.values():
            assert state["step"].dtype is dtype
            assert float(state["step"]) == 3.0


class _OpNames:
    """The names of the ops dispatched while it is active (a RecordFunction observer)."""

    def __enter__(self):
        self.names = []
        self.handle = add_thread_local_callback(
            lambda rf: self.names.append(rf.name), scopes={RecordScope.FUNCTION}
        )
        return self.names

    def __exit__(self, *exc):
        remove_callback(self.handle)


def _stepped_ops(params, opt):
    for p in params:
        p.grad = ct.ones_like(p)
    opt.step()  # creates the state
    with _OpNames() as names:
        opt.step()
    return names


def test_fused_step_is_one_kernel_call_per_group():
    params = [ct.zeros(s, requires_grad=True) for s in SHAPES * 5]
    names = _stepped_ops(params, ct.optim.Adam(params))
    assert sorted(names) == ["aten::_foreach_add_", "aten::_fused_adam_"]
    names = _stepped_ops(params, ct.optim.SGD(params, momentum=0.9))
    assert names == ["aten::_fused_sgd_"]


def test_foreach_and_single_tensor_paths_run_per_op_math():
    params = [ct.zeros(s, requires_grad=True) for s in SHAPES]
    foreach = _stepped_ops(params, ct.optim.Adam(params, foreach=True))
    assert "aten::_fused_adam_" not in foreach and "aten::_foreach_lerp_" in foreach
    single = _stepped_ops(params, ct.optim.Adam(params, fused=False))
    assert single.count("aten::lerp_") == len(params) and "aten::_foreach_lerp_" not in single


def test_the_cpu_kernel_walks_every_buffer_in_one_loop_call(monkeypatch):
    from coretorch_cpu_numba.kernels import optim as cpu_optim

    loops = cpu_optim._optim_loops()
    calls = []
    real = loops.update
    monkeypatch.setattr(loops, "update", lambda *a: (calls.append(a[2].shape[0]), real(*a)))
    params = [ct.zeros(s, requires_grad=True) for s in SHAPES * 3]
    opt = ct.optim.Adam(params)
    for p in params:
        p.grad = ct.ones_like(p)
    opt.step()
    assert calls == [len(params)]


def test_default_is_per_op_where_the_backend_has_no_fused_kernel():
    """meta registers no fused kernel: the default takes the single-tensor path there and
    fused=True refuses with PyTorch's message."""
    params = [ct.zeros(3, device="meta", requires_grad=True)]
    names = _stepped_ops(params, ct.optim.Adam(params))
    assert "aten::_fused_adam_" not in names and "aten::lerp_" in names
    opt = ct.optim.Adam(params, fused=True)
    with pytest.raises(
        RuntimeError,
        match=r"`fused=True` requires all the params to be "
        r"floating point Tensors of supported devices: "
        r"\[.*'cpu'.*\] but .*float32 and meta",
    ):
        opt.step()


def test_fused_refuses_integer_params_and_foreach_together():
    p = ct.zeros(3, dtype=ct.int64)
    p.grad = ct.ones(3, dtype=ct.int64)
    with pytest.raises(RuntimeError, match=r"`fused=True` requires .* but .*int64 and cpu"):
        ct.optim.SGD([p], lr=0.1, fused=True).step()
    with pytest.raises(RuntimeError, match=r"`fused` and `foreach` cannot be `True` together"):
        ct.optim.Adam([ct.zeros(2, requires_grad=True)], fused=True, foreach=True)


def test_sgd_buffers_start_from_the_gradient_when_a_parameter_joins_late():
    """A parameter whose first gradient arrives after the others' (its momentum buffer is
    created then): the values PyTorch gives."""
    init, grads = _data()
    results = []
    for lib, impl in ((ct, dict(fused=True)), (ct, dict(foreach=True)), (torch, {})):
        params = [lib.tensor(a.copy(), requires_grad=True) for a in init]
        opt = lib.optim.SGD(params, lr=0.1, momentum=0.9, dampening=0.2, **impl)
        for step, gs in enumerate(grads):
            for i, (p, g) in enumerate(zip(params, gs)):
                p.grad = lib.tensor(g) if (i > 0 or step >= 2) else None
            opt.step()
        results.append([_np(p) for p in params])
    for ours in results[:2]:
        for a, c in zip(ours, results[2]):
            assert_like_torch(a, c)


def test_grad_scaler_attributes_reach_the_fused_update():
    """grad_scale divides the gradients (in place), found_inf == 1 skips the update and leaves
    the step counters as they were (PyTorch's fused contract for GradScaler)."""
    init, grads = _data()
    out = {}
    for lib in (ct, torch):
        params = [lib.tensor(a.copy(), requires_grad=True) for a in init]
        opt = lib.optim.Adam(params, lr=0.1, fused=True)
        opt.grad_scale = lib.tensor(4.0)
        opt.found_inf = lib.tensor(0.0)
        for p, g in zip(params, grads[0]):
            p.grad = lib.tensor(g)
        opt.step()
        opt.found_inf = lib.tensor(1.0)
        for p, g in zip(params, grads[1]):
            p.grad = lib.tensor(g)
        opt.step()
        out[lib.__name__] = (
            [_np(p) for p in params],
            [_np(p.grad) for p in params],
            [float(opt.state[p]["step"]) for p in params],
        )
    (a, ga, sa), (c, gc, sc) = out["coretorch"], out["torch"]
    for x, y in zip(a + ga, c + gc):
        assert_like_torch(x, y)
    assert sa == sc == [1.0] * len(init)
