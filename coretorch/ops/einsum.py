"""``einsum``: Einstein summation written with diagonal, sum, permute, reshape and bmm, so it
is differentiable and runs on every backend without a kernel of its own.

Each operand first takes the diagonal of repeated subscripts ("ii") and sums the subscripts no
one else needs; then operands are contracted two at a time, always the pair whose result is
smallest (the greedy order of opt_einsum), each contraction one batched matrix product.
Ellipsis dims ("...") broadcast, aligned from the right.
"""

from __future__ import annotations

import itertools

from .declare import declare
from .meta_rules import common_device

__all__ = ["parse_einsum", "einsum_impl"]

_ELLIPSIS_BASE = 0x2460  # private subscripts for ellipsis dims (never a letter a user writes)


def _fail(msg: str):
    raise RuntimeError(f"einsum(): {msg}")


def _terms(equation: str, n_ops: int) -> tuple[list[str], str | None]:
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > n_ops:
        _fail("fewer operands were provided than specified in the equation")
    if len(terms) < n_ops:
        _fail("more operands were provided than specified in the equation")
    for pos, ch in enumerate(eq):
        if not (ch.isascii() and ch.isalpha()) and ch not in ",.->":
            _fail(
                f"invalid subscript given at index {pos} in the equation string, subscripts "
                f"must be in [a-zA-Z]"
            )
    return terms, (rhs if arrow else None)


def _expand_ellipsis(term: str, ndim: int, i: int) -> list[str]:
    """The subscripts of operand i, its ellipsis replaced by one private subscript per dim
    (right-aligned, so operands with fewer ellipsis dims broadcast)."""
    if "..." not in term:
        if len(term) != ndim:
            _fail(
                f"the number of subscripts in the equation ({len(term)}) does not match the "
                f"number of dimensions ({ndim}) for operand {i} and no ellipsis was given"
            )
        return list(term)
    before, _, after = term.partition("...")
    if "." in before or "." in after:
        _fail(f"found more than one ellipsis or a stray '.' in the subscripts of operand {i}")
    n_ell = ndim - len(before) - len(after)
    if n_ell < 0:
        _fail(
            f"the number of subscripts in the equation ({len(before) + len(after)}) is more "
            f"than the number of dimensions ({ndim}) for operand {i}"
        )
    return list(before) + [chr(_ELLIPSIS_BASE - n_ell + k) for k in range(n_ell)] + list(after)


def parse_einsum(equation: str, shapes: list[tuple]):
    """(subscripts per operand, output subscripts, size per subscript) of an einsum call,
    refusing what PyTorch refuses."""
    if not shapes:
        _fail(
            "must specify the equation string and at least one operand, or at least one "
            "operand and its subscripts list"
        )
    terms, rhs = _terms(equation, len(shapes))
    subs = [_expand_ellipsis(t, len(s), i) for i, (t, s) in enumerate(zip(terms, shapes))]
    sizes: dict[str, int] = {}
    for i, (sub, shape) in enumerate(zip(subs, shapes)):
        for ch, n in zip(sub, shape):
            have = sizes.get(ch)
            if have is None or have == 1:
                sizes[ch] = n
            elif n != have and n != 1:
                what = f"subscript {ch}" if ch.isalpha() else "an ellipsis dim"
                _fail(
                    f"operands do not broadcast: {what} has size {have} and size {n} (operand {i})"
                )
    ellipsis = sorted((ch for ch in sizes if not ch.isalpha()), key=ord)
    if rhs is None:
        counts = {ch: sum(s.count(ch) for s in subs) for ch in sizes if ch.isalpha()}
        out = ellipsis + sorted(ch for ch, c in counts.items() if c == 1)
    else:
        if "..." in rhs:
            before, _, after = rhs.partition("...")
            out = list(before) + ellipsis + list(after)
        else:  # ellipsis dims not named in the output are summed
            out = list(rhs)
        for ch in out:
            if out.count(ch) > 1:
                _fail(f"output subscript {ch} appears more than once in the output")
            if ch not in sizes:
                _fail(
                    f"output subscript {ch} does not appear in the equation for any input operand"
                )
    return subs, out, sizes


def _meta_einsum(equation, tensors, path):
    shapes = [t._shape for t in tensors]
    _, out, sizes = parse_einsum(equation, shapes)
    first = tensors[0]
    for i, t in enumerate(tensors):
        if t._dtype is not first._dtype:
            _fail(
                f"expected all operands to have the same dtype, but operand 0 is "
                f"{first._dtype.name} and operand {i} is {t._dtype.name}"
            )
    return (tuple(sizes[ch] for ch in out), first._dtype, common_device("einsum", *tensors))


def _take_diagonals(t, sub: list[str]):
    """Collapse repeated subscripts of one operand to their diagonal."""
    while True:
        dup = next((ch for ch in sub if sub.count(ch) > 1), None)
        if dup is None:
            return t, sub
        i = sub.index(dup)
        j = sub.index(dup, i + 1)
        t = t.diagonal(0, i, j)
        sub = [c for k, c in enumerate(sub) if k not in (i, j)] + [dup]


def _sum_unneeded(t, sub: list[str], needed: set):
    dims = [k for k, ch in enumerate(sub) if ch not in needed]
    if not dims:
        return t, sub
    return t.sum(dims), [ch for ch in sub if ch in needed]


def _numel(letters, sizes) -> int:
    n = 1
    for ch in letters:
        n *= sizes[ch]
    return n


def _contract(a, la, b, lb, keep: set, sizes: dict):
    """a (subscripts la) times b (lb), summing their shared subscripts not in `keep`: one bmm
    over (batch, a-only x shared) @ (batch, shared x b-only)."""
    batch = [ch for ch in la if ch in lb and ch in keep]
    shared = [ch for ch in la if ch in lb and ch not in keep]
    a_only = [ch for ch in la if ch not in lb]
    b_only = [ch for ch in lb if ch not in la]

    def arrange(t, sub, order):
        t = t.permute([sub.index(ch) for ch in order]) if order != sub else t
        return t.expand(tuple(sizes[ch] for ch in order))  # broadcast size-1 dims

    nb, ni, nk, nj = (_numel(x, sizes) for x in (batch, a_only, shared, b_only))
    a3 = arrange(a, la, batch + a_only + shared).reshape(nb, ni, nk)
    b3 = arrange(b, lb, batch + shared + b_only).reshape(nb, nk, nj)
    out = a3.bmm(b3).reshape(tuple(sizes[ch] for ch in batch + a_only + b_only))
    return out, batch + a_only + b_only


def _result_size(la, lb, keep, sizes) -> int:
    letters = {ch for ch in la + lb if ch in keep or not (ch in la and ch in lb)}
    return _numel(letters, sizes)


def einsum_impl(equation: str, tensors):
    """einsum as a composite: diagonals, early sums, then pairwise contractions in a greedy
    smallest-result order."""
    subs, out, sizes = parse_einsum(equation, [t._shape for t in tensors])
    ops = [_take_diagonals(t, list(s)) for t, s in zip(tensors, subs)]

    def needed_by_others(i: int) -> set:
        return set(out).union(*(set(s) for k, (_, s) in enumerate(ops) if k != i))

    ops = [_sum_unneeded(t, s, needed_by_others(i)) for i, (t, s) in enumerate(ops)]
    while len(ops) > 1:
        best = None
        for i, j in itertools.combinations(range(len(ops)), 2):
            keep = set(out).union(*(set(s) for k, (_, s) in enumerate(ops) if k not in (i, j)))
            cost = _result_size(ops[i][1], ops[j][1], keep, sizes)
            if best is None or cost < best[0]:
                best = (cost, i, j, keep)
        assert best is not None  # two operands at least: one pair
        _, i, j, keep = best
        (a, la), (b, lb) = ops[i], ops[j]
        a, la = _sum_unneeded(a, la, keep | set(lb))
        b, lb = _sum_unneeded(b, lb, keep | set(la))
        merged = _contract(a, la, b, lb, keep, sizes)
        ops = [o for k, o in enumerate(ops) if k not in (i, j)] + [merged]
    t, sub = _sum_unneeded(ops[0][0], ops[0][1], set(out))
    t = t.permute([sub.index(ch) for ch in out]) if sub != out else t
    return t.expand(tuple(sizes[ch] for ch in out))


def _einsum(equation, tensors, path):
    """Einstein summation over `tensors` as `equation` says ("ij,jk->ik", "bii->bi",
    "...ij,...jk"; no "->": the subscripts appearing once, sorted)."""
    return einsum_impl(equation, tensors).contiguous()


def _declare_all() -> None:
    declare(
        "einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor",
        _meta_einsum,
        impl=_einsum,
        family="linalg",
        method=False,
    )


_declare_all()
