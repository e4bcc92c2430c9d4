"""meshgrid, cartesian_prod and block_diag: tensors laid out on a grid, written with expand,
stack and cat (differentiated through them)."""

from __future__ import annotations

from typing import Any

from ..tensor.impl import shape_numel
from .declare import IMPLICIT, declare, op_named as _op
from .meta_rules import common_device, promote
from .shape_composites import tensor_varargs

__all__ = ["meshgrid", "cartesian_prod", "block_diag"]


def _grid_dims(op: str, tensors, indexing) -> tuple:
    """(grid shape, the dim each tensor varies along)."""
    if indexing not in (None, "ij", "xy"):
        raise RuntimeError(
            f'{op}(): indexing must be one of "xy" or "ij", but received: {indexing}'
        )
    for i, t in enumerate(tensors):
        if len(t._shape) > 1:
            raise RuntimeError(
                f"{op}(): Expected 0D or 1D tensor in the tensor list but got: "
                f"a {len(t._shape)}-D tensor at position {i}"
            )
    sizes = [shape_numel(t._shape) for t in tensors]
    along = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
        along[0], along[1] = 1, 0
    return tuple(sizes), along


def _meta_meshgrid(tensors, indexing):
    if not tensors:
        raise RuntimeError("meshgrid(): expects a non-empty TensorList")
    shape, _ = _grid_dims("meshgrid", tensors, indexing)
    return [(shape, t._dtype, t._device) for t in tensors]


def _meshgrid(tensors, indexing):
    """Grids (views) whose i-th varies along dim i (``indexing="xy"``: the first two swapped,
    as numpy's default); every grid has the shape of all the sizes."""
    shape, along = _grid_dims("meshgrid", tensors, indexing)
    out = []
    for t, d in zip(tensors, along):
        view = [1] * len(shape)
        view[d] = -1
        out.append(t.reshape(view).expand(shape))
    return tuple(out)


def _meta_cartesian_prod(tensors):
    for t in tensors:
        if len(t._shape) != 1:
            raise RuntimeError(
                f"cartesian_prod(): Expect a 1D vector, but got shape {list(t._shape)}"
            )
    if not tensors:
        raise RuntimeError("cartesian_prod(): expects a non-empty TensorList")
    if len(tensors) == 1:
        return tensors[0]._shape, tensors[0]._dtype, tensors[0]._device
    n = 1
    for t in tensors:
        n *= t._shape[0]
    return ((n, len(tensors)), tensors[0]._dtype, tensors[0]._device)


def _cartesian_prod(tensors):
    """Every combination of the 1-D tensors' elements, one per row (itertools.product order);
    a single tensor is returned as it is."""
    if len(tensors) == 1:
        return tensors[0]
    grids = _meshgrid(tensors, "ij")
    return _op("stack")([g.reshape(-1) for g in grids], 1)


def _meta_block_diag(tensors):
    for i, t in enumerate(tensors):
        if len(t._shape) > 2:
            raise RuntimeError(
                f"block_diag(): Input tensors must have 2 or fewer dimensions. "
                f"Input {i} has {len(t._shape)} dimensions"
            )
    blocks = [_as_block(t._shape) for t in tensors]
    shape = (sum(r for r, _ in blocks), sum(c for _, c in blocks)) if tensors else (1, 0)
    dtype = promote(*tensors) if tensors else None
    return (shape, dtype, common_device("block_diag", *tensors) if tensors else None)


def _as_block(shape: tuple) -> tuple:
    return (1, 1) if not shape else (1, shape[0]) if len(shape) == 1 else shape


def _block_diag(tensors):
    """The tensors (0-d and 1-D as one-row blocks) on the diagonal of a zero matrix."""
    shape, dtype, device = _meta_block_diag(tensors)
    if not tensors:
        return _op("zeros")(shape)
    rows, left = [], 0
    for t in tensors:
        r, c = _as_block(t._shape)
        block = t.reshape(r, c).to(dtype)
        zeros = _op("zeros")
        rows.append(
            _op("cat")(
                [
                    zeros((r, left), dtype=dtype, device=device),
                    block,
                    zeros((r, shape[1] - left - c), dtype=dtype, device=device),
                ],
                1,
            )
        )
        left += c
    return _op("cat")(rows, 0)


def _declare_all() -> None:
    comp: dict[str, Any] = dict(
        kind=IMPLICIT, family="shape", out=False, method=False, function=False
    )
    declare(
        "meshgrid(Tensor[] tensors, *, str? indexing=None) -> Tensor[]",
        _meta_meshgrid,
        impl=_meshgrid,
        **comp,
    )
    declare(
        "cartesian_prod(Tensor[] tensors) -> Tensor",
        _meta_cartesian_prod,
        impl=_cartesian_prod,
        **comp,
    )
    declare("block_diag(Tensor[] tensors) -> Tensor", _meta_block_diag, impl=_block_diag, **comp)


_declare_all()
meshgrid = tensor_varargs("meshgrid", _meshgrid.__doc__)
cartesian_prod = tensor_varargs("cartesian_prod", _cartesian_prod.__doc__)
block_diag = tensor_varargs("block_diag", _block_diag.__doc__)
