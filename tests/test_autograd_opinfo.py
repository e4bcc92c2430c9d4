"""Autograd over the OpInfo database (finite-difference gradchecks of every differentiable op
are in the conformance suite, `test_ops_conformance.py::test_gradcheck`; this file adds):

- on data devices: each sample's input gradients equal PyTorch's for the same grad_output;
- on meta: backward runs and gives every input a gradient of its shape, dtype and device;
- double backward (create_graph) of every differentiable op: the gradients of the first-order
  gradients with respect to the inputs and the grad_outputs equal PyTorch's.
"""

from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct
from coretorch import dtypes as dt
from coretorch.testing.make_tensor import stable_rng
from coretorch.testing.opinfo import OP_DB, to_torch_args

F64 = dt.float64


def _declared(o) -> bool:
    try:
        o.decl
    except NotImplementedError:
        return False
    return True


GRAD_OPS = [o for o in OP_DB if _declared(o) and o.supports_autograd and F64 in o.dtypes]


def _leaves(args, tensor_type=ct.Tensor) -> list:
    """The tensors (coretorch's or torch's) that require grad in nested `args`."""
    out = []
    for a in args:
        if isinstance(a, tensor_type) and a.requires_grad:
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(_leaves(a, tensor_type))
    return out


def _float_outputs(res, tensor_type=ct.Tensor) -> list:
    """The outputs that require grad (only floating tensors can)."""
    res = res if isinstance(res, (tuple, list)) else (res,)
    return [r for r in res if isinstance(r, tensor_type) and r.requires_grad]


def _skip_sample(opinfo, s) -> bool:
    return (
        opinfo.data_dependent
        or s.name.startswith("data-dependent")
        or "nan" in s.name
        or "inf" in s.name
        or not getattr(s, "gradcheck", True)
    )


def _grad_outputs(outs, name: str, device):
    rng = stable_rng("grad_output", name)
    return [ct.tensor(rng.uniform(-1, 1, size=o.shape), dtype=o.dtype, device=device) for o in outs]


def _np(t):
    """A torch gradient as numpy (torch answers some zero gradients with a ZeroTensor)."""
    import torch

    if t._is_zerotensor():
        return torch.zeros_like(t).numpy()
    return t.detach().resolve_conj().numpy()  # a lazy conjugate has no numpy view


def _call(opinfo, fn, args, kwargs):
    """Call `fn` (the op or its torch reference); an in-place-only op (copy_, _index_put_) gets
    a non-leaf copy of `self`, since autograd forbids modifying a leaf that requires grad."""
    if opinfo.decl.inplace_only and args and getattr(args[0], "requires_grad", False):
        args = (args[0] * 1,) + tuple(args[1:])
    return fn(*args, **kwargs)


def _torch_and_ref(opinfo):
    """(torch, the op's torch reference); skips the test when either is missing."""
    torch = pytest.importorskip("torch")
    tref = opinfo.torch_ref
    if tref is None or opinfo.random:
        pytest.skip(f"{opinfo.name}: no torch reference")
    return torch, tref


@pytest.mark.parametrize("opinfo", GRAD_OPS, ids=[o.name for o in GRAD_OPS])
def test_gradients_match_torch(opinfo, data_device):
    torch, tref = _torch_and_ref(opinfo)
    checked = 0
    for s in opinfo.sample_inputs(data_device, F64, requires_grad=True):
        if _skip_sample(opinfo, s):
            continue
        leaves = _leaves(s.all_args())
        if not leaves:
            continue
        targs, tkw = to_torch_args(s.all_args()), to_torch_args(s.kwargs)
        try:
            tres = _call(opinfo, tref, targs, tkw)
        except Exception:  # noqa: BLE001 - a sample torch rejects is the forward suite's business
            continue
        outs = _float_outputs(_call(opinfo, opinfo.op, s.all_args(), s.kwargs))
        touts = _float_outputs(tres, torch.Tensor)
        if not outs or len(outs) != len(touts):
            continue
        gos = _grad_outputs(outs, opinfo.name, data_device)
        tleaves = _leaves(targs, torch.Tensor)
        try:
            tgrads = torch.autograd.grad(
                touts, tleaves, [torch.from_numpy(np.asarray(g)) for g in gos], allow_unused=True
            )
        except RuntimeError:  # torch's own backward rejects some samples (scatter, src > index)
            continue
        grads = ct.autograd.grad(outs, leaves, gos, allow_unused=True)
        for i, (g, tg, x) in enumerate(zip(grads, tgrads, leaves)):
            if tg is None or g is None:  # no gradient: the other side must be all zeros
                other = g if tg is None else tg
                assert (
                    other is None or not np.asarray(other if g is not None else _np(other)).any()
                ), f"{s}: input {i}"
                continue
            assert g.shape == x.shape and g.dtype is x.dtype
            np.testing.assert_allclose(
                np.asarray(g),
                _np(tg),
                rtol=1e-7,
                atol=1e-9,
                err_msg=f"{opinfo.name} {s}: gradient of input {i}",
            )
        checked += 1
    if not checked:
        pytest.skip(f"{opinfo.name}: no sample with a comparable torch gradient")


@pytest.mark.parametrize("opinfo", GRAD_OPS, ids=[o.name for o in GRAD_OPS])
def test_backward_shapes_on_meta(opinfo):
    from coretorch.device import device_types

    if "meta" not in device_types():
        pytest.skip("the meta backend is not loaded")
    ran = 0
    for s in opinfo.sample_inputs("meta", F64, requires_grad=True):
        if opinfo.data_dependent or s.name.startswith("data-dependent") or not s.gradcheck:
            continue
        leaves = _leaves(s.all_args())
        if not leaves:
            continue
        outs = _float_outputs(_call(opinfo, opinfo.op, s.all_args(), s.kwargs))
        if not outs:
            continue
        gos = [ct.ones(o.shape, dtype=o.dtype, device="meta") for o in outs]
        grads = ct.autograd.grad(outs, leaves, gos, allow_unused=True)
        for i, (g, x) in enumerate(zip(grads, leaves)):
            if g is None:
                continue
            assert (tuple(g.shape), g.dtype, g.device) == (tuple(x.shape), x.dtype, x.device), (
                f"{opinfo.name} {s}: gradient of input {i}"
            )
        ran += 1
    if not ran:
        pytest.skip(f"{opinfo.name}: no sample to differentiate on meta")


@pytest.mark.parametrize("opinfo", GRAD_OPS, ids=[o.name for o in GRAD_OPS])
def test_double_backward_matches_torch(opinfo, data_device):
    torch, tref = _torch_and_ref(opinfo)
    for s in opinfo.sample_inputs(data_device, F64, requires_grad=True):
        if _skip_sample(opinfo, s):
            continue
        leaves = _leaves(s.all_args())
        targs, tkw = to_torch_args(s.all_args()), to_torch_args(s.kwargs)
        try:
            tres = _call(opinfo, tref, targs, tkw)
        except Exception:  # noqa: BLE001
            continue
        outs = _float_outputs(_call(opinfo, opinfo.op, s.all_args(), s.kwargs))
        touts = _float_outputs(tres, torch.Tensor)
        if not leaves or not outs or len(outs) != len(touts):
            continue
        # the grad_outputs require grad too (as in gradgradcheck), so linear ops are covered
        gos = [g.requires_grad_() for g in _grad_outputs(outs, opinfo.name, data_device)]
        tleaves = _leaves(targs, torch.Tensor)
        tgos = [torch.from_numpy(np.array(np.asarray(g.detach()))).requires_grad_() for g in gos]
        try:
            tgrads = torch.autograd.grad(touts, tleaves, tgos, create_graph=True, allow_unused=True)
        except RuntimeError:
            continue
        grads = ct.autograd.grad(outs, leaves, gos, create_graph=True, allow_unused=True)
        pairs = [
            (g, tg)
            for g, tg in zip(grads, tgrads)
            if g is not None and tg is not None and g.requires_grad and tg.requires_grad
        ]
        if not pairs:
            continue
        # d/d inputs of sum(first-order grads * weights)
        ws = _grad_outputs([g for g, _ in pairs], opinfo.name + "/2", data_device)
        try:
            tsecond = torch.autograd.grad(
                [tg for _, tg in pairs],
                tleaves + tgos,
                [torch.from_numpy(np.asarray(w)) for w in ws],
                allow_unused=True,
            )
        except RuntimeError:  # torch has no double backward for some ops (hardsigmoid)
            continue
        second = ct.autograd.grad([g for g, _ in pairs], leaves + gos, ws, allow_unused=True)
        for i, (g2, tg2) in enumerate(zip(second, tsecond)):
            if tg2 is None:
                assert g2 is None or not np.asarray(g2).any()
                continue
            if g2 is None:
                assert not _np(tg2).any(), f"{opinfo.name} {s}: no second-order gradient"
                continue
            np.testing.assert_allclose(
                np.asarray(g2),
                _np(tg2),
                rtol=1e-7,
                atol=1e-9,
                err_msg=f"{opinfo.name} {s}: 2nd-order grad of input {i}",
            )
        return
    pytest.skip(f"{opinfo.name}: no sample with a second derivative to compare")
