"""Variable-length sequences for recurrent layers (mirrors ``torch.nn.utils.rnn``).

A `PackedSequence` holds the rows of every sequence in time-major order: step t contributes
``batch_sizes[t]`` rows, the sequences being sorted by decreasing length (`sorted_indices` maps
sorted position to the original batch index, `unsorted_indices` back). Packing and padding are
each one `index_select` with an index computed on the host, so gradients flow through both.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

import numpy as np

from ... import dtypes as _dt
from ...ops import aten
from ...ops.factories_public import tensor as _tensor
from ...tensor.tensor import Tensor, cast_method

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
]


def _long(values, device=None) -> Tensor:
    return _tensor(np.asarray(values, dtype=np.int64), dtype=_dt.int64, device=device)


class _PackedSequenceBase(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedSequenceBase):
    """The packed rows of a batch of variable-length sequences (made by `pack_padded_sequence`
    or `pack_sequence`; recurrent layers accept it as input and return one)."""

    def __new__(
        cls,
        data: Tensor,
        batch_sizes: Tensor | None = None,
        sorted_indices: Tensor | None = None,
        unsorted_indices: Tensor | None = None,
    ):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence "
                "should never be created manually. They should be instantiated by "
                "functions like pack_sequence and pack_padded_sequences in "
                "nn.utils.rnn."
            )
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs) -> "PackedSequence":
        """The same packing with `data` converted by ``Tensor.to(*args, **kwargs)`` (the index
        tensors follow data's device; batch_sizes stays on the CPU)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self

        def move(t):
            return None if t is None else t.to(data.device)

        return type(self)(
            data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices)
        )

    def cuda(self, *args, **kwargs) -> "PackedSequence":
        """A copy on the cuda device (or the one given)."""
        return self.to("cuda" if not args else args[0], **kwargs)

    def cpu(self, *args, **kwargs) -> "PackedSequence":
        """A copy on the cpu device."""
        return self.to("cpu")

    @property
    def is_cuda(self) -> bool:
        """True when the data is on a cuda device."""
        return self.data.device.type == "cuda"

    def is_pinned(self) -> bool:
        """Always False: a PackedSequence here is never in pinned memory."""
        return False


# the casts of Tensor (``double()``, ``int()``, ...; not ``bool()``, as PyTorch's PackedSequence)
for _name in ("double", "float", "half", "long", "int", "short", "char", "byte"):
    setattr(PackedSequence, _name, cast_method(_name, getattr(Tensor, _name).dtype))


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation of 0..n-1 (None stays None)."""
    if permutation is None:
        return None
    p = np.asarray(permutation.tolist(), dtype=np.int64)
    inv = np.empty_like(p)
    inv[p] = np.arange(p.size)
    return _long(inv, permutation.device)


def _lengths_list(lengths) -> list[int]:
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1 or lengths.device.type != "cpu":
            raise RuntimeError(
                f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                f"{lengths.dim()}D {lengths.device} {lengths.dtype.name} tensor"
            )
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def pack_padded_sequence(
    input: Tensor, lengths, batch_first: bool = False, enforce_sorted: bool = True
) -> PackedSequence:
    """Pack a padded batch (T, B, *) — (B, T, *) with `batch_first` — of sequences of the given
    `lengths`. With `enforce_sorted` the lengths must be decreasing; otherwise the batch is
    sorted here and the permutation kept in the result."""
    lens = _lengths_list(lengths)
    if input.numel() == 0 and input.dim() > 0 and 0 in input.shape[:2]:
        raise RuntimeError("Cannot pack empty tensors.")
    batch = input.shape[0] if batch_first else input.shape[1]
    if len(lens) != batch:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got "
            f"{len(lens)} (batch_size={batch})"
        )
    if enforce_sorted:
        order = list(range(batch))
        if any(lens[i] < lens[i + 1] for i in range(batch - 1)):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when "
                "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                "pack_padded_sequence and/or pack_sequence to sidestep this "
                "requirement if you do not need ONNX exportability."
            )
        sorted_indices = None
    else:
        order = [int(i) for i in np.argsort(-np.asarray(lens), kind="stable")]
        sorted_indices = _long(order, input.device)
    slens = [lens[i] for i in order]
    if slens and slens[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element "
            "in 'lengths' that is <= 0"
        )
    steps = input.shape[1] if batch_first else input.shape[0]
    if slens[0] > steps:
        raise RuntimeError(
            f"pack_padded_sequence(): a length of {slens[0]} is longer than the "
            f"{steps} time steps of the input"
        )
    batch_sizes = [sum(1 for n in slens if n > t) for t in range(slens[0])]
    if batch_first:
        idx = [order[b] * steps + t for t, bs in enumerate(batch_sizes) for b in range(bs)]
    else:
        idx = [t * batch + order[b] for t, bs in enumerate(batch_sizes) for b in range(bs)]
    flat = input.reshape((steps * batch,) + tuple(input.shape[2:]))
    data = flat.index_select(0, _long(idx, input.device))
    return PackedSequence(data, _long(batch_sizes), sorted_indices, None)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """The inverse of `pack_padded_sequence`: the padded batch (T, B, *) (or (B, T, *)) in the
    original batch order, and the lengths (an int64 CPU tensor)."""
    data = sequence.data
    batch_sizes = [int(b) for b in sequence.batch_sizes.tolist()]
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                f"Expected total_length to be at least the length of the longest "
                f"sequence in input, but got total_length={total_length} and max "
                f"sequence length being {steps}"
            )
        steps = total_length
    batch = batch_sizes[0] if batch_sizes else 0
    lengths = [sum(1 for bs in batch_sizes if bs > b) for b in range(batch)]
    offsets = np.concatenate([[0], np.cumsum(batch_sizes)]).astype(np.int64)
    pad_row = int(offsets[-1])
    unsorted = (
        list(range(batch))
        if sequence.unsorted_indices is None
        else [int(i) for i in sequence.unsorted_indices.tolist()]
    )

    def pos(t: int, b: int) -> int:
        return int(offsets[t]) + b if t < len(batch_sizes) and b < batch_sizes[t] else pad_row

    if batch_first:
        idx = [pos(t, unsorted[j]) for j in range(batch) for t in range(steps)]
        shape = (batch, steps)
    else:
        idx = [pos(t, unsorted[j]) for t in range(steps) for j in range(batch)]
        shape = (steps, batch)
    fill = aten.full(
        (1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype, device=data.device
    )
    padded = aten.cat([data, fill], 0).index_select(0, _long(idx, data.device))
    out_lengths = _long([lengths[u] for u in unsorted])
    return padded.reshape(shape + tuple(data.shape[1:])), out_lengths


def pad_sequence(
    sequences, batch_first: bool = False, padding_value: float = 0.0, padding_side: str = "right"
) -> Tensor:
    """Stack tensors of shapes (L_i, *) into (L_max, B, *) (or (B, L_max, *)), padding each with
    `padding_value` on the `padding_side` ("right" or "left").

    Examples:
        >>> import coretorch
        >>> from coretorch.nn.utils.rnn import pad_sequence
        >>> pad_sequence([coretorch.tensor([1, 2, 3]), coretorch.tensor([4])], batch_first=True)
        tensor([[1, 2, 3],
                [4, 0, 0]])
    """
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    if not isinstance(sequences, Iterable):
        raise RuntimeError(
            f"pad_sequence: Expected iterable for input sequences, but got arg of "
            f"type: {type(sequences)}"
        )
    seqs = list(sequences)
    if padding_side not in ("left", "right"):
        raise ValueError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    trailing = tuple(seqs[0].shape[1:])
    for s in seqs:
        if tuple(s.shape[1:]) != trailing:
            raise RuntimeError(
                f"pad_sequence(): every sequence must have the trailing shape "
                f"{list(trailing)} of the first, got {list(s.shape)}"
            )
    longest = max(s.shape[0] for s in seqs)
    padded = []
    for s in seqs:
        missing = longest - s.shape[0]
        if missing:
            fill = aten.full((missing,) + trailing, padding_value, dtype=s.dtype, device=s.device)
            s = aten.cat([s, fill] if padding_side == "right" else [fill, s], 0)
        padded.append(s)
    return aten.stack(padded, 0 if batch_first else 1)


def unpad_sequence(
    padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False
) -> list[Tensor]:
    """The list of sequences (L_i, *) in a padded batch, cut to `lengths`."""
    seqs = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    lens = (
        _lengths_list(lengths)
        if not isinstance(lengths, Tensor)
        else [int(v) for v in lengths.tolist()]
    )
    return [seq[:n] for seq, n in zip(seqs.unbind(0), lens, strict=True)]


def pack_sequence(sequences: list[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of tensors (L_i, *) (decreasing lengths unless `enforce_sorted` is False)."""
    lengths = [int(v.size(0)) for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences of a PackedSequence, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
