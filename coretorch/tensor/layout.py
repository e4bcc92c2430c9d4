"""The memory layout of an elementwise op's output: PyTorch's TensorIterator rule.

A pointwise result follows its inputs' memory order: ``a.t() + b.t()`` is laid out like ``a.t()``
(a transposed, column-major result), so the kernel walks every operand in memory order instead of
striding across rows. The rule, as ATen's ``TensorIteratorBase`` applies it to a new output:

1. every operand contiguous: a row-major output;
2. every operand of the output's shape, non-overlapping and dense, all with the same strides:
   those strides;
3. otherwise the output's dims are sorted from innermost to outermost by the operands' strides
   (broadcast dims ignored, the first operand that tells two dims apart decides, equal strides go
   by size); the output is dense in that order (row-major when the order is the row-major one).

One rule in core for every backend, so the meta device and cpu agree on result strides.
"""

from __future__ import annotations

from .impl import TensorImpl

__all__ = [
    "pointwise_strides",
    "is_contiguous",
    "is_non_overlapping_and_dense",
    "POINTWISE_FAMILIES",
]

_T = TensorImpl
# the op families whose structured outputs follow this rule (declared with `family=`)
POINTWISE_FAMILIES = ("unary", "binary", "ternary")


def is_contiguous(shape: tuple, stride: tuple) -> bool:
    """Row-major with no gaps (size-1 dims ignored; an empty tensor is contiguous)."""
    expected = 1
    for n, s in zip(reversed(shape), reversed(stride)):
        if n == 0:
            return True
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


def is_non_overlapping_and_dense(shape: tuple, stride: tuple) -> bool:
    """Dense in some order of its dims (every element once, no gaps): PyTorch's test."""
    if len(shape) == 1:
        return shape[0] < 2 or stride[0] == 1
    if 0 in shape:
        return True
    expected = 1
    for s, n in sorted((s, n) for n, s in zip(shape, stride) if n > 1):
        if s != expected:
            return False
        expected *= n
    return True


def _full_strides(shape: tuple, t) -> list:
    """Operand `t`'s strides over the broadcast `shape` (0 in broadcast dims)."""
    off = len(shape) - len(t._shape)
    st = [0] * off
    for i, (n, s) in enumerate(zip(t._shape, t._stride)):
        st.append(0 if n == 1 and shape[off + i] != 1 else s)
    return st


def _swap(shape: tuple, strides: list, d0: int, d1: int) -> int:
    """1 when dim `d0` must move outside `d1`, -1 when it stays inside, 0 when no operand says."""
    for st in strides:
        s0, s1 = st[d0], st[d1]
        if s0 == 0 or s1 == 0:
            continue
        if s0 < s1:
            return -1
        if s0 > s1:
            return 1
        if shape[d0] > shape[d1]:
            return 1
    return 0


def _permuted_strides(shape: tuple, operands: list) -> tuple | None:
    """Rule 3: dense strides in the order the operands' strides give, None for row-major."""
    n = len(shape)
    strides = [_full_strides(shape, t) for t in operands]
    perm = list(range(n - 1, -1, -1))  # innermost first
    for i in range(1, n):  # insertion sort that leaves undecided pairs in place
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = _swap(shape, strides, perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    if perm == list(range(n - 1, -1, -1)):
        return None
    out = [0] * n
    step = 1
    for d in perm:
        out[d] = step
        step *= shape[d]
    return tuple(out)


def _votes_row_major(stride: tuple) -> bool:
    """Whether an operand with these strides can only keep a row-major order: its non-zero
    strides fall strictly from outer to inner dims (zeros, broadcast dims, abstain)."""
    prev = 0
    for s in stride:
        if s:
            if prev and s >= prev:
                return False
            prev = s
    return True


def pointwise_strides(shape: tuple, row_major: tuple, args: tuple, operands: tuple):
    """The strides of the output of shape `shape` of an elementwise op called with `args`
    (`operands`: the positions of its Tensor-typed arguments, in order), or None when they are
    the row-major `row_major`. Only called for outputs of two or more dims."""
    tensors = []
    same_shape = True
    plain = True  # no operand votes for another order: the common case, answered without sorting
    for i in operands:
        t = args[i]
        if t.__class__ is not _T and not isinstance(t, _T):
            same_shape = False  # a scalar operand: PyTorch wraps it as a 0-d tensor
            continue
        tensors.append(t)
        ts = t._shape
        if ts != shape:
            same_shape = False
        st = t._stride
        if plain and len(ts) > 1 and st is not row_major and not _votes_row_major(st):
            plain = False
    if plain or not tensors:
        return None
    if all(is_contiguous(t._shape, t._stride) for t in tensors):
        return None
    if same_shape:
        first = tensors[0]._stride
        if all(t._stride == first for t in tensors) and is_non_overlapping_and_dense(shape, first):
            return None if first == row_major else first
    return _permuted_strides(shape, tensors)
