"""Margin, embedding, Poisson, Gaussian and CTC losses against PyTorch (float64 values and
gradients for every reduction), their argument checks, and recorded values without PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
from nn_oracle import close, expected, seeded, to_ct, to_np, torch_or_skip

import coretorch as ct
import coretorch.nn as nn
import coretorch.nn.functional as F

REDUCTIONS = ("none", "mean", "sum")


def _compare(
    name: str,
    float_args: list,
    other_args: tuple = (),
    kwargs: dict | None = None,
    module_args: dict | None = None,
    forward_args: tuple | None = None,
):
    """F.<name> and nn.<Module> against PyTorch's for every reduction: values and gradients of
    the float arguments."""
    torch = torch_or_skip()
    kwargs = kwargs or {}
    for reduction in REDUCTIONS:
        ts = [a.clone().requires_grad_() for a in float_args]
        cs = [to_ct(a, True) for a in float_args]
        other_c = tuple(to_ct(o) if hasattr(o, "detach") else o for o in other_args)
        out_t = getattr(torch.nn.functional, name)(*ts, *other_args, reduction=reduction, **kwargs)
        kw_c = {k: to_ct(v) if hasattr(v, "detach") else v for k, v in kwargs.items()}
        out_c = getattr(F, name)(*cs, *other_c, reduction=reduction, **kw_c)
        close(out_c, out_t)
        w = torch.rand(out_t.shape, dtype=torch.float64) + 0.5
        (out_t * w).sum().backward()
        (out_c * to_ct(w)).sum().backward()
        for a, b in zip(cs, ts):
            close(a.grad, b.grad, atol=1e-11)
    if module_args is not None:
        mod_name, ctor = module_args["name"], module_args.get("ctor", {})
        ours = getattr(nn, mod_name)(
            **{k: to_ct(v) if hasattr(v, "detach") else v for k, v in ctor.items()}
        )
        theirs = getattr(torch.nn, mod_name)(**ctor)
        args = forward_args if forward_args is not None else tuple(float_args) + other_args
        close(ours(*(to_ct(a) if hasattr(a, "detach") else a for a in args)), theirs(*args))


def _randn(*shape, seed=0):
    torch = torch_or_skip()
    return torch.randn(*shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))


def _signs(*shape, seed=1):
    torch = torch_or_skip()
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(0, 2, shape, generator=g) * 2 - 1).double()


def test_margin_ranking_hinge_soft_margin():
    y = _signs(6)
    _compare(
        "margin_ranking_loss",
        [_randn(6), _randn(6, seed=1)],
        (y,),
        dict(margin=0.3),
        dict(name="MarginRankingLoss", ctor=dict(margin=0.3)),
    )
    _compare(
        "hinge_embedding_loss",
        [_randn(3, 4)],
        (_signs(3, 4),),
        dict(margin=0.7),
        dict(name="HingeEmbeddingLoss", ctor=dict(margin=0.7)),
    )
    _compare("soft_margin_loss", [_randn(3, 4)], (_signs(3, 4),), {}, dict(name="SoftMarginLoss"))


def test_multilabel_soft_margin_with_weight():
    torch = torch_or_skip()
    target = (_randn(4, 5, seed=3) > 0).double()
    weight = torch.rand(5, dtype=torch.float64)
    _compare("multilabel_soft_margin_loss", [_randn(4, 5)], (target,), dict(weight=weight))
    _compare(
        "multilabel_soft_margin_loss",
        [_randn(4, 5)],
        (target,),
        {},
        dict(name="MultiLabelSoftMarginLoss", ctor=dict(weight=weight)),
    )


def test_multi_margin_losses():
    torch = torch_or_skip()
    target = torch.tensor([0, 3, 1, 3])
    weight = torch.rand(5, dtype=torch.float64)
    for p in (1, 2):
        _compare(
            "multi_margin_loss", [_randn(4, 5)], (target,), dict(p=p, margin=0.8, weight=weight)
        )
    _compare("multi_margin_loss", [_randn(5)], (torch.tensor(2),), {})
    _compare(
        "multi_margin_loss",
        [_randn(4, 5)],
        (target,),
        {},
        dict(name="MultiMarginLoss", ctor=dict(p=2, weight=weight)),
    )
    ml_target = torch.tensor(
        [[3, 0, -1, 1, 1], [1, 2, 3, 4, 0], [-1, 0, 0, 0, 0], [4, 4, -1, 2, 2]]
    )
    _compare(
        "multilabel_margin_loss",
        [_randn(4, 5)],
        (ml_target,),
        {},
        dict(name="MultiLabelMarginLoss"),
    )
    _compare("multilabel_margin_loss", [_randn(5)], (torch.tensor([2, 0, -1, 0, 0]),), {})
    with pytest.raises(RuntimeError, match="target out of range"):
        F.multi_margin_loss(ct.randn(2, 3), ct.tensor([0, 3]))
    with pytest.raises(ValueError, match="only p == 1 and p == 2"):
        F.multi_margin_loss(ct.randn(2, 3), ct.tensor([0, 1]), p=3)


def test_cosine_embedding_and_triplet_losses():
    torch = torch_or_skip()
    y = _signs(4)
    _compare(
        "cosine_embedding_loss",
        [_randn(4, 5), _randn(4, 5, seed=2)],
        (y,),
        dict(margin=0.2),
        dict(name="CosineEmbeddingLoss", ctor=dict(margin=0.2)),
    )
    _compare(
        "cosine_embedding_loss",
        [_randn(5), _randn(5, seed=2)],
        (torch.tensor(-1.0),),
        dict(margin=-0.5),
    )
    trip = [_randn(4, 5), _randn(4, 5, seed=2), _randn(4, 5, seed=3)]
    for kw in (dict(), dict(margin=0.5, p=1.0, swap=True), dict(p=3.0, eps=1e-3)):
        _compare("triplet_margin_loss", trip, (), kw)
    _compare(
        "triplet_margin_loss",
        trip,
        (),
        {},
        dict(name="TripletMarginLoss", ctor=dict(margin=2.0, swap=True)),
    )

    def dist_t(a, b):
        return 1 - torch.nn.functional.cosine_similarity(a, b)

    def dist_c(a, b):
        return 1 - F.cosine_similarity(a, b)

    for swap in (False, True):
        ts = [t.clone().requires_grad_() for t in trip]
        cs = [to_ct(t, True) for t in trip]
        out_t = torch.nn.TripletMarginWithDistanceLoss(
            distance_function=dist_t, margin=0.4, swap=swap
        )(*ts)
        out_c = nn.TripletMarginWithDistanceLoss(distance_function=dist_c, margin=0.4, swap=swap)(
            *cs
        )
        close(out_c, out_t)
        out_t.backward()
        out_c.backward()
        for a, b in zip(cs, ts):
            close(a.grad, b.grad)
    with pytest.raises(RuntimeError, match="1D target tensor expects 2D input"):
        F.cosine_embedding_loss(ct.randn(5), ct.randn(5), ct.ones(2))
    with pytest.raises(ValueError, match="margin must be greater than 0"):
        F.triplet_margin_loss(ct.randn(2, 3), ct.randn(2, 3), ct.randn(2, 3), margin=0)


def test_poisson_and_gaussian_nll():
    torch = torch_or_skip()
    rate = torch.rand(3, 4, dtype=torch.float64) + 0.1
    counts = torch.randint(0, 5, (3, 4)).double()
    for kw in (dict(), dict(log_input=False, full=True), dict(full=True, eps=1e-3)):
        _compare("poisson_nll_loss", [rate], (counts,), kw)
    _compare(
        "poisson_nll_loss",
        [rate],
        (counts,),
        {},
        dict(name="PoissonNLLLoss", ctor=dict(log_input=False)),
    )
    var = torch.rand(3, 4, dtype=torch.float64) + 0.01
    _compare("gaussian_nll_loss", [_randn(3, 4), _randn(3, 4, seed=2), var], (), dict(full=True))
    _compare(
        "gaussian_nll_loss",
        [_randn(3, 4), _randn(3, 4, seed=2), torch.rand(3, dtype=torch.float64) * 1e-8],
        (),
        dict(eps=1e-4),
    )
    _compare(
        "gaussian_nll_loss",
        [_randn(3, 4), _randn(3, 4, seed=2), torch.rand(3, 1, dtype=torch.float64)],
        (),
        {},
        dict(name="GaussianNLLLoss", ctor=dict(full=True)),
    )
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(ct.randn(3, 4), ct.randn(3, 4), ct.rand(2, 2))
    with pytest.raises(ValueError, match="var has negative entry"):
        F.gaussian_nll_loss(ct.randn(3, 4), ct.randn(3, 4), -ct.ones(3, 4))


@pytest.mark.parametrize("padded_targets", [True, False])
def test_ctc_loss_matches_torch(padded_targets):
    torch = torch_or_skip()
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(12, 4, 6, dtype=torch.float64, generator=g, requires_grad=True)
    in_lens = torch.tensor([12, 9, 12, 5])
    tgt_lens = torch.tensor([4, 3, 0, 5])
    padded = torch.tensor([[1, 2, 2, 3, 0], [5, 5, 1, 0, 0], [0, 0, 0, 0, 0], [1, 2, 3, 4, 5]])
    targets = (
        padded if padded_targets else torch.cat([padded[i, :n] for i, n in enumerate(tgt_lens)])
    )
    for reduction in REDUCTIONS:
        for zero_inf in (False, True):
            lt = logits.detach().clone().requires_grad_()
            lc = to_ct(logits, True)
            lp_t = lt.log_softmax(2)
            lp_c = lc.log_softmax(2)
            lp_t.retain_grad()
            lp_c.retain_grad()
            out_t = torch.nn.functional.ctc_loss(
                lp_t,
                targets,
                in_lens,
                tgt_lens,
                blank=0,
                reduction=reduction,
                zero_infinity=zero_inf,
            )
            out_c = F.ctc_loss(
                lp_c,
                to_ct(targets),
                to_ct(in_lens),
                to_ct(tgt_lens),
                blank=0,
                reduction=reduction,
                zero_infinity=zero_inf,
            )
            close(out_c, out_t, rtol=1e-9)
            out_t.sum().backward()
            out_c.sum().backward()
            close(lp_c.grad, lp_t.grad, atol=1e-10)
            close(lc.grad, lt.grad, atol=1e-10)


def test_ctc_impossible_alignment_and_module():
    torch = torch_or_skip()
    lp = torch.randn(3, 1, 4, dtype=torch.float64).log_softmax(2)
    # three repeated labels need at least five steps
    tgt = torch.tensor([[2, 2, 2]])
    for zero_inf in (False, True):
        out_t = torch.nn.CTCLoss(zero_infinity=zero_inf, reduction="none")(lp, tgt, [3], [3])
        out_c = nn.CTCLoss(zero_infinity=zero_inf, reduction="none")(
            to_ct(lp), to_ct(tgt), [3], [3]
        )
        assert to_np(out_c).tolist() == to_np(out_t).tolist()
    unbatched = lp[:, 0]
    close(
        F.ctc_loss(to_ct(unbatched), ct.tensor([1, 3]), 3, 2),
        torch.nn.functional.ctc_loss(
            unbatched, torch.tensor([1, 3]), torch.tensor(3), torch.tensor(2)
        ),
    )
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        F.ctc_loss(to_ct(lp), to_ct(tgt), [3], [3], blank=4)
    with pytest.raises(RuntimeError, match="input_lengths to have value at most"):
        F.ctc_loss(to_ct(lp), to_ct(tgt), [4], [3])


# ---- recorded from PyTorch (runs without it) ---------------------------------------------------


def test_recorded_ctc_and_margin_losses():
    rec = expected()
    lp = ct.tensor(seeded((6, 2, 4), 12)).log_softmax(2).detach().requires_grad_()
    loss = F.ctc_loss(lp, ct.tensor([[1, 2, 2], [3, 1, 0]]), [6, 5], [3, 2], reduction="sum")
    loss.backward()
    np.testing.assert_allclose(float(loss), rec["ctc"]["loss"], rtol=1e-12)
    np.testing.assert_allclose(lp.grad.numpy(), rec["ctc"]["grad"], rtol=1e-10, atol=1e-12)
    x = ct.tensor(seeded((3, 4), 13))
    np.testing.assert_allclose(
        float(F.multi_margin_loss(x, ct.tensor([0, 3, 1]), p=2, margin=0.7)),
        rec["margin"]["multi_margin_p2"],
        rtol=1e-12,
    )
    got = F.multilabel_margin_loss(
        x, ct.tensor([[3, 0, -1, 1], [1, 2, 3, -1], [-1, 0, 0, 0]]), reduction="none"
    )
    np.testing.assert_allclose(to_np(got), rec["margin"]["multilabel_margin"], rtol=1e-12)
