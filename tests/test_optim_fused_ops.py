"""The ``_foreach_*`` and ``_fused_*_`` ops themselves: values against PyTorch's ops of the same
names, every kernel (the cpu backend's numba loop, the backend kit's array-API kernel, the
per-op composite) against the others, and their refusals."""

from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct
from coretorch.backend_kit import optim as kit
from coretorch.ops import REGISTRY, aten

torch = pytest.importorskip("torch")

SHAPES = [(4, 3), (5,), ()]


def _arrays(seed, low=-2.0, high=2.0, dtype=np.float32, shapes=SHAPES):
    rng = np.random.default_rng(seed)
    return [rng.uniform(low, high, s).astype(dtype) for s in shapes]


def _both(arrays, layout=None):
    """coretorch and torch tensors of the same values (coretorch ones transposed if asked)."""
    ours = []
    for a in arrays:
        if layout == "transposed" and a.ndim == 2:
            ours.append(ct.tensor(np.ascontiguousarray(a.T)).t())
        else:
            ours.append(ct.tensor(a.copy()))
    return ours, [torch.tensor(a.copy()) for a in arrays]


def _close(ours, theirs, rtol=1e-6, atol=1e-7):
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=rtol, atol=atol)


# ---- foreach ------------------------------------------------------------------------------


def _other(form, seed):
    if form == "scalar":
        return 0.75, 0.75
    if form == "scalar-list":
        return [0.5, -1.5, 2.0], [0.5, -1.5, 2.0]
    if form == "0-d-tensor":
        return ct.tensor(1.25), torch.tensor(1.25)
    return _both(_arrays(seed, 0.5, 2.0))


_FORMS = ["scalar", "scalar-list", "tensor-list", "0-d-tensor"]


@pytest.mark.parametrize(
    "name,form",
    [(n, f) for n in ("_foreach_add_", "_foreach_mul_", "_foreach_div_") for f in _FORMS]
    + [("_foreach_maximum_", f) for f in _FORMS[:3]],
)
def test_foreach_binary_matches_pytorch(name, form):
    ours, theirs = _both(_arrays(0), layout="transposed")
    o, t = _other(form, 1)
    getattr(aten, name)(ours, o)
    getattr(torch, name)(theirs, t)
    _close(ours, theirs)


def test_foreach_add_alpha_and_functional_forms_match_pytorch():
    ours, theirs = _both(_arrays(0))
    o, t = _both(_arrays(1))
    _close(aten._foreach_add(ours, o, alpha=-0.5), torch._foreach_add(theirs, t, alpha=-0.5))
    _close(aten._foreach_neg(ours), torch._foreach_neg(theirs))
    aten._foreach_add_(ours, o, alpha=2.5)
    torch._foreach_add_(theirs, t, alpha=2.5)
    _close(ours, theirs)


@pytest.mark.parametrize("weight", [0.25, 0.75, [0.1, 0.6, 0.9]])
def test_foreach_lerp_matches_pytorch(weight):
    ours, theirs = _both(_arrays(0))
    o, t = _both(_arrays(1))
    aten._foreach_lerp_(ours, o, weight)
    torch._foreach_lerp_(theirs, t, weight)
    _close(ours, theirs)


@pytest.mark.parametrize("value", [1, -0.5, [1.0, 2.0, -3.0]])
@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
def test_foreach_addc_matches_pytorch(name, value):
    ours, theirs = _both(_arrays(0))
    a, ta = _both(_arrays(1))
    b, tb = _both(_arrays(2, 0.5, 2.0))
    getattr(aten, f"_foreach_{name}_")(ours, a, b, value)
    getattr(torch, f"_foreach_{name}_")(theirs, ta, tb, value)
    _close(ours, theirs)
    if name == "addcmul":
        _close(
            aten._foreach_addcmul(ours, a, b, value), torch._foreach_addcmul(theirs, ta, tb, value)
        )


def test_foreach_sqrt_matches_pytorch():
    ours, theirs = _both(_arrays(0, 0.0, 4.0))
    _close(aten._foreach_sqrt(ours), torch._foreach_sqrt(theirs))
    aten._foreach_sqrt_(ours)
    torch._foreach_sqrt_(theirs)
    _close(ours, theirs)


def test_foreach_add_kernel_promotes_like_add_():
    """The kit kernel of _foreach_add_ (a direct backend kernel) computes each element as
    ``add_`` does, mixed dtypes included, and refuses what ``add_`` refuses."""
    xs = [ct.tensor([1.0, 2.0]), ct.tensor([1.0], dtype=ct.float64), ct.tensor([3, 4])]
    others = [ct.tensor([0.1, 0.2], dtype=ct.float64), ct.tensor([2.0]), ct.tensor([1, 1])]
    want = [x.clone().add_(o, alpha=3) for x, o in zip(xs, others)]
    aten._foreach_add_(xs, others, alpha=3)
    for x, w in zip(xs, want):
        assert x.dtype is w.dtype
        np.testing.assert_array_equal(x.numpy(), w.numpy())
    with pytest.raises(
        RuntimeError,
        match=r"_foreach_add_\(\): result type float32 can't be "
        r"cast to the desired output type int64",
    ):
        aten._foreach_add_([ct.tensor([1, 2])], 0.5)
    with pytest.raises(RuntimeError, match=r"on one device"):
        aten._foreach_add_([ct.zeros(2), ct.zeros(2, device="meta")], 1.0)


# ---- fused updates against torch._fused_*_ --------------------------------------------------


def _adam_args(lib_ours: bool, layout=None, dtype=np.float32, amsgrad=True):
    params = _arrays(0, dtype=dtype)
    grads = _arrays(1, dtype=dtype)
    m = _arrays(2, dtype=dtype)
    v = _arrays(3, 0.0, 1.0, dtype=dtype)
    vmax = _arrays(4, 0.0, 1.0, dtype=dtype)
    lists = [
        _both(x, layout if i == 0 else None) for i, x in enumerate((params, grads, m, v, vmax))
    ]
    steps = ([ct.tensor(3.0) for _ in SHAPES], [torch.tensor(3.0) for _ in SHAPES])
    pick = 0 if lib_ours else 1
    out = [lst[pick] for lst in lists]
    if not amsgrad:
        out[4] = []
    return out + [steps[pick]]


_ADAM_KW = dict(lr=0.05, beta1=0.8, beta2=0.99, weight_decay=0.1, eps=1e-8, maximize=True)


@pytest.mark.parametrize("layout", [None, "transposed"])
@pytest.mark.parametrize("name", ["_fused_adam_", "_fused_adamw_"])
def test_fused_adam_matches_pytorch(name, layout):
    """Contiguous lists run the numba loop, transposed parameters the kit's kernel."""
    ours, theirs = _adam_args(True, layout), _adam_args(False)
    getattr(aten, name)(*ours, amsgrad=True, **_ADAM_KW)
    getattr(torch, name)(*theirs, amsgrad=True, **_ADAM_KW)
    for a, b in zip(ours[:5], theirs[:5]):
        _close(a, b, rtol=2e-6)


def test_fused_sgd_and_adagrad_match_pytorch():
    for first in (True, False):
        ours = [_both(_arrays(i))[0] for i in range(3)]
        theirs = [_both(_arrays(i))[1] for i in range(3)]
        kw = dict(
            weight_decay=0.1,
            momentum=0.9,
            lr=0.1,
            dampening=0.2,
            nesterov=False,
            maximize=True,
            is_first_step=first,
        )
        aten._fused_sgd_(*ours, **kw)
        torch._fused_sgd_(*theirs, **kw)
        for a, b in zip(ours, theirs):
            _close(a, b)
    ours = [
        _both(_arrays(0))[0],
        _both(_arrays(1))[0],
        _both(_arrays(2, 0.0, 1.0))[0],
        [ct.tensor(2.0) for _ in SHAPES],
    ]
    theirs = [
        _both(_arrays(0))[1],
        _both(_arrays(1))[1],
        _both(_arrays(2, 0.0, 1.0))[1],
        [torch.tensor(2.0) for _ in SHAPES],
    ]
    kw = dict(lr=0.1, lr_decay=0.05, weight_decay=0.1, eps=1e-10, maximize=False)
    aten._fused_adagrad_(*ours, **kw)
    torch._fused_adagrad_(*theirs, **kw)
    for a, b in zip(ours[:3], theirs[:3]):
        _close(a, b)


def test_fused_adam_grad_scale_and_found_inf_match_pytorch():
    ours, theirs = _adam_args(True, amsgrad=False), _adam_args(False, amsgrad=False)
    aten._fused_adam_(
        *ours, amsgrad=False, grad_scale=ct.tensor(8.0), found_inf=ct.tensor(0.0), **_ADAM_KW
    )
    torch._fused_adam_(
        *theirs,
        amsgrad=False,
        grad_scale=torch.tensor(8.0),
        found_inf=torch.tensor(0.0),
        **_ADAM_KW,
    )
    for a, b in zip(ours[:4], theirs[:4]):  # the gradients too: unscaled in place
        _close(a, b)
    before = [p.clone() for p in ours[0]]
    aten._fused_adam_(*ours, amsgrad=False, found_inf=ct.tensor([1.0]), **_ADAM_KW)
    for a, b in zip(ours[0], before):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def _fused_lists(name, dtype=np.float32, layout=None):
    """Arguments of fused op `name` (lists and hyper-parameters), built fresh each call."""

    def lists(*specs):
        return [
            _both(_arrays(seed, lo, hi, dtype), layout if seed == 0 else None)[0]
            for seed, lo, hi in specs
        ]

    plain, positive = (-2.0, 2.0), (0.0, 1.0)
    steps = [ct.tensor(3.0) for _ in SHAPES]
    if name in ("_fused_adam_", "_fused_adamw_"):
        return lists((0, *plain), (1, *plain), (2, *plain), (3, *positive), (4, *positive)) + [
            steps
        ], dict(amsgrad=True, **_ADAM_KW)
    if name == "_fused_sgd_":
        return lists((0, *plain), (1, *plain), (2, *plain)), dict(
            weight_decay=0.1,
            momentum=0.9,
            lr=0.1,
            dampening=0.0,
            nesterov=True,
            maximize=False,
            is_first_step=False,
        )
    if name == "_fused_adagrad_":
        return lists((0, *plain), (1, *plain), (2, *positive)) + [steps], dict(
            lr=0.1, lr_decay=0.01, weight_decay=0.1, eps=1e-10, maximize=True
        )
    return lists((0, *plain), (1, *plain), (2, 4.0, 5.0), (3, *plain), (4, *plain)), dict(
        lr=0.01, alpha=0.9, eps=1e-8, weight_decay=0.1, momentum=0.5, centered=True, maximize=False
    )


FUSED = ["_fused_adam_", "_fused_adamw_", "_fused_sgd_", "_fused_adagrad_", "_fused_rmsprop_"]


@pytest.mark.parametrize("name", FUSED)
def test_every_fused_kernel_agrees_with_the_per_op_composite(name):
    """The cpu backend's kernel (numba loop; the kit's kernel for transposed parameters) and
    the backend kit's kernel called on its own give the per-op composite's values."""
    decl = REGISTRY[name]
    ref_lists, kw = _fused_lists(name)
    decl.impl(*decl.op.bind(*ref_lists, **kw))
    kit_fn = kit.KERNELS[name]
    for run in ("dispatch", "dispatch-transposed", "kit"):
        lists, _ = _fused_lists(name, layout="transposed" if run.endswith("transposed") else None)
        if run == "kit":
            kit_fn(*decl.op.bind(*lists, **kw))
        else:
            decl.op(*lists, **kw)
        for got, want in zip(lists, ref_lists):
            for a, b in zip(got, want):
                np.testing.assert_array_max_ulp(a.numpy(), b.numpy(), maxulp=2)


@pytest.mark.parametrize("name", ["_fused_adam_", "_fused_sgd_"])
def test_half_precision_runs_through_the_kit_kernel(name):
    """float16 lists (no numba arithmetic) compute in float32 and are written back once: the
    float32 result rounded to half."""
    decl = REGISTRY[name]
    half, kw = _fused_lists(name, np.float16)
    single = [[t.to(ct.float32) for t in ts] for ts in half]
    decl.op(*half, **kw)
    decl.op(*single, **kw)
    for h, s in zip(half[0], single[0]):
        assert h.dtype is ct.float16
        np.testing.assert_array_equal(h.numpy(), s.numpy().astype(np.float16))


def test_fused_ops_refuse_before_any_kernel_runs():
    """The meta rule checks every call (a backend kernel reading buffers of the wrong size
    would read out of bounds)."""
    p = [ct.zeros(4)]
    with pytest.raises(RuntimeError, match=r"expected grads\[0\] to have the shape of self\[0\]"):
        aten._fused_sgd_(
            p,
            [ct.zeros(3)],
            [],
            weight_decay=0.0,
            momentum=0.0,
            lr=0.1,
            dampening=0.0,
            nesterov=False,
            maximize=False,
            is_first_step=False,
        )
    with pytest.raises(RuntimeError, match=r"expected every parameter on one device"):
        aten._fused_sgd_(
            [ct.zeros(1), ct.zeros(1, device="meta")],
            [ct.zeros(1), ct.zeros(1, device="meta")],
            [],
            weight_decay=0.0,
            momentum=0.0,
            lr=0.1,
            dampening=0.0,
            nesterov=False,
            maximize=False,
            is_first_step=False,
        )
