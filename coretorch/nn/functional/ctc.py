"""ctc_loss of ``nn.functional``: the connectionist temporal classification loss (Graves et al.,
2006) by the forward (alpha) recursion in log space over the blank-extended targets, written
with coretorch ops so that autograd gives the gradient.

Unreachable states hold a large negative number instead of -inf, so that no gradient is
multiplied by NaN; a sample whose alignment is impossible gets an infinite loss (or zero with
`zero_infinity`). PyTorch's CTC gradient with respect to `log_probs` additionally contains the
term exp(log_probs) per sample (it assumes log_probs come from log_softmax, whose backward
cancels it); it is added here so gradients agree with PyTorch's at `log_probs` too.

A composite stand-in until a backend provides a native CTC kernel.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ...amp.autocast_mode import autocast_function
from ...ops import aten
from ...ops.factories_public import tensor as _tensor
from ...tensor.tensor import Tensor
from ._reduction import get_enum

__all__ = ["ctc_loss"]

_UNREACHABLE = -1e30
_INFINITE_ABOVE = 1e29


def _lengths(name: str, values, batch: int) -> list[int]:
    if isinstance(values, Tensor):
        if values.dtype.is_floating_point:
            raise RuntimeError(f"ctc_loss(): {name} must be integral, got {values.dtype.name}")
        values = values.reshape(-1).tolist()
    elif isinstance(values, int):
        values = [values]
    values = [int(v) for v in values]
    if len(values) != batch:
        raise RuntimeError(
            f"ctc_loss(): {name} must be of size batch_size ({batch}), got {len(values)}"
        )
    return values


def _extended_targets(
    targets: Tensor, target_lengths: list[int], blank: int, num_labels: int
) -> np.ndarray:
    """(N, 2*S_max + 1) labels with blanks between and around each target sequence."""
    batch = len(target_lengths)
    s_max = max(target_lengths) if target_lengths else 0
    t = np.asarray(targets.tolist(), dtype=np.int64)
    if t.ndim == 1:
        offsets = np.concatenate([[0], np.cumsum(target_lengths)]).astype(np.int64)
        if t.size < offsets[-1]:
            raise RuntimeError(
                f"ctc_loss(): the concatenated targets hold {t.size} labels but "
                f"target_lengths sum to {int(offsets[-1])}"
            )
        rows = [t[offsets[i] : offsets[i + 1]] for i in range(batch)]
    else:
        if t.shape[1] < s_max:
            raise RuntimeError(
                f"Expected tensor to have size at least {s_max} at dimension 1, "
                f"but got size {t.shape[1]} for argument #2 'targets' (while "
                f"checking arguments for ctc_loss_cpu)"
            )
        rows = [t[i, : target_lengths[i]] for i in range(batch)]
    ext = np.full((batch, 2 * s_max + 1), blank, dtype=np.int64)
    for i, row in enumerate(rows):
        if row.size and (row.min() < 0 or row.max() >= num_labels):
            raise RuntimeError(
                f"ctc_loss(): target labels must be in [0, {num_labels}), got {row.tolist()}"
            )
        ext[i, 1 : 2 * row.size : 2] = row
    return ext


@autocast_function("ctc_loss")
def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths,
    target_lengths,
    blank: int = 0,
    reduction: str = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """CTC loss of log-probabilities `log_probs` (T, N, C) — or (T, C) unbatched — against
    `targets` (N, S) padded or 1-D concatenated; 'mean' divides each loss by its target length
    and averages over the batch."""
    red = get_enum(reduction)
    if log_probs.dim() not in (2, 3):
        raise RuntimeError(
            f"ctc_loss(): expected log_probs of 2 or 3 dimensions (T, [N,] C), "
            f"got {list(log_probs.shape)}"
        )
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    steps, batch, num_labels = lp.shape
    if not 0 <= blank < num_labels:
        raise RuntimeError("blank must be in label range")
    in_lens = _lengths("input_lengths", input_lengths, batch)
    tgt_lens = _lengths("target_lengths", target_lengths, batch)
    for n in in_lens:
        if n > steps or n < 0:
            raise RuntimeError(
                f"Expected input_lengths to have value at most {steps}, but got "
                f"value {n} (while checking arguments for ctc_loss_cpu)"
            )
    if not batched and targets.dim() == 1 and targets.numel() >= tgt_lens[0]:
        targets = targets.unsqueeze(0)
    ext_np = _extended_targets(targets, tgt_lens, blank, num_labels)
    width = ext_np.shape[1]
    dev = lp.device
    ext = _tensor(ext_np, dtype=_dt.int64, device=dev)
    skip_np = np.zeros_like(ext_np, dtype=bool)
    skip_np[:, 2:] = (ext_np[:, 2:] != blank) & (ext_np[:, 2:] != ext_np[:, :-2])
    skip = _tensor(skip_np, dtype=_dt.bool, device=dev)
    # log-probabilities of the extended labels at every step: (T, N, width)
    lpe = lp.gather(2, ext.unsqueeze(0).expand(steps, batch, width))
    first = np.full((batch, width), _UNREACHABLE)
    first[:, 0] = 0.0
    first[:, 1] = [0.0 if n > 0 else _UNREACHABLE for n in tgt_lens]
    alpha = _tensor(first, dtype=lp.dtype, device=dev) + lpe[0]
    neg = aten.full((batch, 1), _UNREACHABLE, dtype=lp.dtype, device=dev)
    neg2 = aten.full((batch, 2), _UNREACHABLE, dtype=lp.dtype, device=dev)
    lens = _tensor(np.asarray(in_lens, dtype=np.int64), dtype=_dt.int64, device=dev)
    for t in range(1, max(in_lens) if in_lens else 0):
        a1 = aten.cat([neg, alpha.narrow(1, 0, width - 1)], 1)
        a2 = aten.cat([neg2, alpha.narrow(1, 0, width - 2)], 1) if width > 2 else neg2
        a2 = aten.where(skip, a2.narrow(1, 0, width), _UNREACHABLE)
        new = aten.stack([alpha, a1, a2], 0).logsumexp(0) + lpe[t]
        alpha = aten.where((lens > t).unsqueeze(1), new, alpha)
    last = _tensor(
        np.asarray([[2 * n, max(2 * n - 1, 0)] for n in tgt_lens], dtype=np.int64),
        dtype=_dt.int64,
        device=dev,
    )
    # an empty target ends in the first blank only: do not count it twice
    twice = _tensor(np.asarray([[False, n == 0] for n in tgt_lens]), dtype=_dt.bool, device=dev)
    ends = aten.where(twice, _UNREACHABLE, alpha.gather(1, last))
    loss = -ends.logsumexp(1)
    # PyTorch's extra gradient term exp(log_probs) over each sample's valid steps
    valid = (aten.arange(steps, device=dev).unsqueeze(1) < lens).to(lp.dtype).unsqueeze(-1)
    extra = (lp.exp() * valid).sum((0, 2))
    loss = loss + (extra - extra.detach())
    infinite = loss > _INFINITE_ABOVE
    if zero_infinity:
        loss = aten.where(infinite, 0.0, loss)
    else:
        loss = aten.where(infinite, float("inf"), loss)
    if red == 1:  # mean
        denom = _tensor(
            np.maximum(np.asarray(tgt_lens, dtype=np.float64), 1.0), dtype=lp.dtype, device=dev
        )
        return (loss / denom).mean()
    if red == 2:
        return loss.sum()
    return loss if batched else loss.squeeze(0)
