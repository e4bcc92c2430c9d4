"""``coretorch.functional``: PyTorch's ``torch.functional`` helpers whose arguments are
variadic (``einsum(eq, a, b)``, ``chain_matmul(a, b, c)``) or whose result depends on a flag
(``lu(A, get_infos=True)``), written over the declared operators."""

from __future__ import annotations

from .ops.declare import REGISTRY

__all__ = ["einsum", "chain_matmul", "lu"]


def _op(name: str):
    return REGISTRY[name].op.entry


def einsum(equation: str, *operands):
    """Einstein summation: ``einsum("ij,jk->ik", a, b)`` (the operands may also be given as
    one list). Contracted pairwise in the cheapest greedy order; differentiable."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return _op("einsum")(equation, list(operands))


def chain_matmul(*matrices):
    """The product of 2-D matrices, multiplied in the cheapest order (deprecated in PyTorch
    for ``linalg.multi_dot``)."""
    return _op("chain_matmul")(list(matrices))


def lu(A, pivot: bool = True, get_infos: bool = False):
    """(LU, pivots) of A = P L U, plus the LAPACK infos when get_infos (``torch.lu``)."""
    LU, pivots, infos = _op("linalg_lu_factor_ex")(A, pivot=pivot)
    return (LU, pivots, infos) if get_infos else (LU, pivots)
