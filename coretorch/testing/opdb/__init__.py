"""OpInfo entries, one module per group of ops (mirroring coretorch/ops)."""
from __future__ import annotations

from . import factories, indexing, linalg, nn_ops, optim, pointwise, reductions, shape_ops, views

ALL_OPINFOS = [*pointwise.OPS, *reductions.OPS, *linalg.OPS, *shape_ops.OPS, *indexing.OPS,
               *nn_ops.OPS, *views.OPS, *factories.OPS, *optim.OPS]
