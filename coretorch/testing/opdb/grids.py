"""OpInfos of meshgrid, cartesian_prod and block_diag (coretorch/ops/grids.py)."""

from __future__ import annotations

import itertools

import numpy as np

from ... import dtypes as _dt
from ..opinfo import ALL, OpInfo, SampleInput
from .common import attach_error_cases, error_case


def _grid_samples(op, m, dtype):
    yield SampleInput([m.make((2,)), m.make((3,)), m.make((4,))], name="three")
    yield SampleInput([m.make((3,), layout="sliced"), m.make((1,))], name="sliced")
    if op.name == "meshgrid":
        yield SampleInput([m.make((3,)), m.make(())], name="0-d")
        yield SampleInput([m.make((2,)), m.make((3,))], (), dict(indexing="xy"), name="xy")
        yield SampleInput([m.make((2,)), m.make((3,))], (), dict(indexing="ij"), name="ij")


def _meshgrid_ref(ts, indexing="ij"):
    return tuple(g.copy() for g in np.meshgrid(*ts, indexing=indexing))


def _cartesian_prod_ref(ts):
    if len(ts) == 1:
        return ts[0]
    rows = list(itertools.product(*[t.reshape(-1) for t in ts]))
    return np.array(rows, dtype=ts[0].dtype).reshape(len(rows), len(ts))


def _block_diag_samples(op, m, dtype):
    yield SampleInput([m.make((2, 3)), m.make((1, 1)), m.make((3,)), m.make(())], name="mixed")
    yield SampleInput([m.make((2, 2), layout="transposed")], name="single")
    other = _dt.float64 if dtype is not _dt.float64 else _dt.int32
    yield SampleInput([m.make((2, 2)), m.make((1, 2), dtype=other)], name="promotes")


def _block_diag_ref(ts):
    blocks = [t.reshape(1, -1) if t.ndim < 2 else t for t in ts]
    dtype = np.result_type(*ts)
    out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), dtype)
    r = c = 0
    for b in blocks:
        out[r : r + b.shape[0], c : c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    return out


def _torch_varargs(name: str):
    def ref(ts, **kwargs):
        import torch

        return getattr(torch, name)(*ts, **kwargs)

    return ref


def _ts(*shapes):
    return lambda m: [m.make(s) for s in shapes]


OPS: list[OpInfo] = [
    OpInfo(
        "meshgrid",
        dtypes=ALL,
        ref=_meshgrid_ref,
        torch_ref=_torch_varargs("meshgrid"),
        sample_inputs_func=_grid_samples,
    ),
    OpInfo(
        "cartesian_prod",
        dtypes=ALL,
        ref=_cartesian_prod_ref,
        torch_ref=_torch_varargs("cartesian_prod"),
        sample_inputs_func=_grid_samples,
    ),
    OpInfo(
        "block_diag",
        dtypes=ALL,
        ref=_block_diag_ref,
        torch_ref=_torch_varargs("block_diag"),
        sample_inputs_func=_block_diag_samples,
    ),
]

_ERRORS = {
    "meshgrid": [
        error_case("2-d", _ts((2, 2), (3,)), match=r"meshgrid\(\): Expected 0D or 1D tensor"),
        error_case(
            "indexing",
            _ts((2,), (3,)),
            kwargs=dict(indexing="yx"),
            match=r"meshgrid\(\): indexing must be one of",
        ),
    ],
    "cartesian_prod": [
        error_case(
            "2-d",
            _ts((2, 2), (3,)),
            match=r"cartesian_prod\(\): Expect a 1D vector, but got "
            r"shape \[2, 2\]",
        )
    ],
    "block_diag": [
        error_case(
            "3-d",
            _ts((2, 2, 2)),
            match=r"block_diag\(\): Input tensors must have 2 or fewer "
            r"dimensions. Input 0 has 3 dimensions",
        )
    ],
}
attach_error_cases(OPS, _ERRORS)
