"""Helpers shared by the linear-algebra OpInfo modules: matrices of a kind (general,
well-conditioned, symmetric positive-definite, triangular), numpy references applied per matrix
of a batch, singular / eigen vectors with canonical signs, and torch.linalg references."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt

# PyTorch's linalg refuses the low-precision floats ("Low precision dtypes not supported"), and so
# does coretorch's
LINALG_DTYPES = (_dt.float32, _dt.float64)
TOL = {_dt.float32: (1e-4, 1e-4), _dt.float64: (1e-7, 1e-9)}


def matrix(m, shape, kind: str = "general", layout: str = "contiguous", grad: bool = True):
    """A (batch of) matrices of `kind`: general (entries in [-1, 1)), invertible (well-
    conditioned: + n I), spd (A A^T + n I), sym, upper / lower (triangular, well-conditioned).
    grad=False: never requires grad (a forward-only sample of an op whose derivative refuses
    it)."""
    return m.make(
        tuple(shape),
        values=matrix_values(m, shape, kind),
        layout=layout,
        requires_grad=None if grad else False,
    )


def matrix_values(m, shape, kind: str = "general") -> np.ndarray:
    """The numpy values `matrix` places (drawn from the maker's stream: the same on every
    device)."""
    shape = tuple(shape)
    a = m.rng.uniform(-1, 1, size=shape)
    n = shape[-1] if shape else 1
    if kind == "invertible":  # tall / wide: full rank, well-conditioned
        a = a + n * np.eye(*shape[-2:])
    elif kind == "spd":
        a = a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    elif kind == "sym":
        a = a + np.swapaxes(a, -1, -2)
    elif kind == "upper":
        a = np.triu(a) + 2 * np.eye(n)
    elif kind == "lower":
        a = np.tril(a) + 2 * np.eye(n)
    return a


def per_matrix(fn, *arrays, n_out: int = 1):
    """`fn` (one matrix per argument -> `n_out` arrays) over the broadcast batch of `arrays`
    (their last two dims are the matrices), results stacked."""
    batch = np.broadcast_shapes(*(a.shape[:-2] for a in arrays))
    views = [np.broadcast_to(a, batch + a.shape[-2:]) for a in arrays]
    results = [fn(*(a[idx] for a in views)) for idx in np.ndindex(*batch)]
    if n_out == 1:
        results = [(r,) for r in results]
    outs = []
    for i in range(n_out):
        if results:
            outs.append(
                np.stack([np.asarray(r[i]) for r in results]).reshape(
                    batch + np.asarray(results[0][i]).shape
                )
            )
        else:
            outs.append(np.zeros(batch, dtype=arrays[0].dtype))
    return outs[0] if n_out == 1 else tuple(outs)


def np_column_signs(V):
    """+-1 per column: the sign of its largest-magnitude entry (the backend kit's rule)."""
    idx = np.argmax(np.abs(V), axis=-2)[..., None, :]
    s = np.sign(np.take_along_axis(V, idx, axis=-2))
    return np.where(s == 0, 1, s).astype(V.dtype)


def torch_column_signs(V):
    """The same rule on a torch tensor (detached: a choice of sign, not a function of A)."""
    import torch

    Vd = V.detach()
    idx = Vd.abs().argmax(-2, keepdim=True)
    s = torch.sign(Vd.gather(-2, idx))
    return torch.where(s == 0, torch.ones_like(s), s)


def canonical_svd(u, s, vh, signs, cat):
    """(U, S, Vh) with each column of U scaled by its canonical sign and Vh's rows alike (the
    extra rows of a full Vh by their own signs); numpy or torch arrays (`signs`, `cat`)."""
    sign = signs(u)
    k = s.shape[-1]
    top = vh[..., :k, :] * sign[..., :k].swapaxes(-1, -2)
    rest = vh[..., k:, :]
    if rest.shape[-2]:
        rest = rest * signs(rest.swapaxes(-1, -2)).swapaxes(-1, -2)
    return u * sign, s, cat([top, rest], -2)


def torch_linalg(name: str):
    """A torch reference calling ``torch.linalg.<name>`` (torch imported late)."""

    def ref(*a, **k):
        import torch

        return getattr(torch.linalg, name)(*a, **k)

    return ref


def t(*shape, kind: str = "general", dtype=None):
    """An error-case tensor builder (`error_case` calls it with the maker)."""
    if dtype is not None:
        return lambda m: m.make(shape, dtype=dtype)
    return lambda m: matrix(m, shape, kind) if len(shape) >= 2 else m.make(shape)
