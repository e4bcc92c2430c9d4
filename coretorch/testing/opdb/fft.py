"""OpInfos of ``coretorch.fft`` (coretorch/ops/fft.py); numpy.fft references.

Samples cover even and odd lengths, `n` / `s` that trim and that zero-pad, every `norm`, other
dims than the last, non-contiguous inputs and integer inputs (computed in the default dtype).
Gradients are checked in float64 for real inputs and complex128 for complex ones.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ... import dtypes as _dt
from ..opinfo import ErrorInput, OpInfo, SampleInput

COMPLEX = (_dt.complex64, _dt.complex128)
REAL = (_dt.float32, _dt.float64)
GRADS = (_dt.float64, _dt.complex128)
_TOL = {_dt.float32: (1e-4, 1e-4), _dt.complex64: (1e-4, 1e-4)}
_NORMS = (None, "backward", "forward", "ortho")


def _single(x) -> bool:
    return x.dtype in (np.float32, np.complex64) or x.dtype.kind in "iub"


def _as(result, x, kind: str):
    """numpy's result in coretorch's dtype: single precision in, single precision out."""
    single = _single(x)
    if kind == "complex":
        return result.astype(np.complex64 if single else np.complex128)
    return result.real.astype(np.float32 if single else np.float64)


def _ref(name: str, kind: str):
    def ref(x, n=None, dim=None, norm=None, *, s=None):
        import scipy.fft  # numpy.fft has no hfft2 / hfftn / ihfft2 / ihfftn

        fn = getattr(np.fft, name, None) or getattr(scipy.fft, name)
        if name[-1] not in "2n":  # one-dimensional: n along axis
            return _as(fn(x, n, -1 if dim is None else dim, norm), x, kind)
        if dim is None and s is not None:
            dim = tuple(range(x.ndim - len(s), x.ndim))
        if s is not None:  # -1: the input's size
            s = [x.shape[d] if k == -1 else k for k, d in zip(s, dim)]
        if dim is None and name.endswith("2"):
            dim = (-2, -1)
        return _as(fn(x, s, dim, norm), x, kind)

    ref.__name__ = f"_{name}_ref"
    return ref


def _samples_1d(op, m, dtype):
    yield SampleInput(m.make((8,)), name="even")
    yield SampleInput(m.make((7,)), name="odd")
    yield SampleInput(m.make((5, 6)), kwargs=dict(dim=0), name="dim0")
    yield SampleInput(m.make((3, 6), layout="transposed"), kwargs=dict(n=10), name="pad-n")
    yield SampleInput(m.make((2, 9), layout="sliced"), kwargs=dict(n=5, dim=-1), name="trim-n")
    for norm in _NORMS[1:]:
        yield SampleInput(m.make((2, 6)), kwargs=dict(norm=norm), name=f"norm-{norm}")
    if op.name not in ("fft_irfft", "fft_hfft"):  # their default n would be 0
        yield SampleInput(m.make((1,)), name="one-point")


def _samples_nd(op, m, dtype):
    two = op.name.endswith("2")
    yield SampleInput(m.make((4, 6)), name="2-d")
    yield SampleInput(m.make((2, 3, 5)), name="3-d")
    yield SampleInput(m.make((3, 4, 6), layout="sliced"), kwargs=dict(s=(5, 4)), name="s")
    yield SampleInput(m.make((3, 4, 5)), kwargs=dict(dim=(0, 2)), name="dims")
    yield SampleInput(m.make((4, 5)), kwargs=dict(s=(3, 8), dim=(1, 0)), name="s-dims-reordered")
    for norm in _NORMS[1:]:
        yield SampleInput(m.make((3, 4)), kwargs=dict(norm=norm), name=f"norm-{norm}")
    if not two:
        yield SampleInput(m.make((3, 4, 2)), kwargs=dict(s=(3, -1)), name="s-minus-one")


def _errors_1d(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make((4,)), kwargs=dict(norm="bad"), name="norm"),
        ValueError,
        "Invalid normalization mode",
    )
    yield ErrorInput(
        SampleInput(m.make((4,)), kwargs=dict(n=0), name="n=0"),
        RuntimeError,
        r"Invalid number of data points \(0\) specified",
    )
    yield ErrorInput(
        SampleInput(m.make((4,), dtype=_dt.float16), name="half"),
        RuntimeError,
        "Unsupported dtype float16",
    )
    if op.name in ("fft_rfft", "fft_ihfft"):
        yield ErrorInput(
            SampleInput(m.make((4,), dtype=_dt.complex64), name="complex-input"),
            RuntimeError,
            "expects a real input tensor",
        )
    if op.name in ("fft_irfft", "fft_hfft"):
        yield ErrorInput(
            SampleInput(m.make((1,)), name="default-n-0"),
            RuntimeError,
            r"Invalid number of data points \(0\) specified",
        )


def _errors_nd(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make((3, 4)), kwargs=dict(s=(2,), dim=(0, 1)), name="s-dim-lengths"),
        RuntimeError,
        "dim and shape arguments must have the same length",
    )
    yield ErrorInput(
        SampleInput(m.make((3, 4)), kwargs=dict(dim=(0, 0)), name="repeated-dim"),
        RuntimeError,
        "FFT dims must be unique",
    )


def _fftfreq_samples(op, m, dtype):
    yield SampleInput(5, (), dict(dtype=dtype, device=m.device), name="odd")
    yield SampleInput(8, (0.25,), dict(dtype=dtype, device=m.device), name="even-spacing")
    yield SampleInput(1, (), dict(dtype=dtype, device=m.device), name="one")


def _freq_ref(name: str):
    def ref(n, d=1.0, *, dtype=None, device=None, **_):
        return getattr(np.fft, name)(n, d).astype(dtype or np.float32)

    return ref


def _shift_samples(op, m, dtype):
    yield SampleInput(m.make((7,)), name="odd")
    yield SampleInput(m.make((4, 6)), name="all-dims")
    yield SampleInput(m.make((3, 5)), kwargs=dict(dim=1), name="dim")
    yield SampleInput(m.make((3, 4, 5), layout="sliced"), kwargs=dict(dim=(0, -1)), name="dims")


def _shift_ref(name: str):
    def ref(x, dim=None):
        return getattr(np.fft, name)(x, axes=dim)

    return ref


# ---- the primitives (numpy references with explicit scales) -------------------------------------


def _scaled(y, x_shape, out_shape, dim, normalization):
    n = int(np.prod([max(x_shape[d], out_shape[d]) for d in dim])) if dim else 1
    return y * (1.0, 1.0 / np.sqrt(n), 1.0 / n)[normalization]


def _c2c_ref(x, dim, normalization, forward):
    # unscaled both ways ("backward" scales only the inverse, "forward" only the forward)
    unscaled: Literal["backward", "forward"] = "backward" if forward else "forward"
    y = (np.fft.fftn if forward else np.fft.ifftn)(x, axes=dim, norm=unscaled) if dim else x
    return _as(_scaled(y, x.shape, x.shape, dim, normalization), x, "complex")


def _r2c_ref(x, dim, normalization, onesided):
    y = (np.fft.rfftn if onesided else np.fft.fftn)(x, axes=dim)
    return _as(_scaled(y, x.shape, x.shape, dim, normalization), x, "complex")


def _c2r_ref(x, dim, normalization, last_dim_size):
    s = [x.shape[d] for d in dim[:-1]] + [last_dim_size]
    y = np.fft.irfftn(x, s=s, axes=dim, norm="forward")
    return _as(_scaled(y, x.shape, y.shape, dim, normalization), x, "real")


def _c2c_samples(op, m, dtype):
    for mode in (0, 1, 2):
        yield SampleInput(m.make((4, 6)), ([1], mode, True), name=f"forward-{mode}")
        yield SampleInput(m.make((3, 4, 5)), ([0, 2], mode, False), name=f"inverse-{mode}")


def _r2c_samples(op, m, dtype):
    for mode in (0, 1, 2):
        yield SampleInput(m.make((4, 7)), ([0, 1], mode, True), name=f"onesided-{mode}")
        yield SampleInput(m.make((4, 6)), ([1], mode, False), name=f"twosided-{mode}")


def _c2r_samples(op, m, dtype):
    for mode in (0, 1, 2):
        yield SampleInput(m.make((4, 4)), ([1], mode, 6), name=f"even-{mode}")
        yield SampleInput(m.make((3, 4)), ([0, 1], mode, 7), name=f"odd-{mode}")


def _entries() -> list:
    ops = []
    dtypes: tuple[_dt.dtype, ...]
    for name, kind, dtypes in (
        ("fft", "complex", COMPLEX + REAL + (_dt.int64,)),
        ("ifft", "complex", COMPLEX + REAL + (_dt.int64,)),
        ("rfft", "complex", REAL + (_dt.int64,)),
        ("ihfft", "complex", REAL + (_dt.int64,)),
        ("irfft", "real", COMPLEX + REAL),
        ("hfft", "real", COMPLEX + REAL),
    ):
        ops.append(
            OpInfo(
                f"fft_{name}",
                dtypes=dtypes,
                ref=_ref(name, kind),
                torch_ref=_torch_fft(name),
                sample_inputs_func=_samples_1d,
                error_inputs_func=_errors_1d,
                grad_dtypes=GRADS,
                tol=_TOL,
            )
        )
    for name, kind, dtypes in (
        ("fft2", "complex", COMPLEX + REAL),
        ("fftn", "complex", COMPLEX + REAL),
        ("ifft2", "complex", COMPLEX + REAL),
        ("ifftn", "complex", COMPLEX + REAL),
        ("rfft2", "complex", REAL),
        ("rfftn", "complex", REAL),
        ("irfft2", "real", COMPLEX),
        ("irfftn", "real", COMPLEX),
        ("hfft2", "real", COMPLEX),
        ("hfftn", "real", COMPLEX),
        ("ihfft2", "complex", REAL),
        ("ihfftn", "complex", REAL),
    ):
        ops.append(
            OpInfo(
                f"fft_{name}",
                dtypes=dtypes,
                ref=_ref(name, kind),
                torch_ref=_torch_fft(name),
                sample_inputs_func=_samples_nd,
                error_inputs_func=_errors_nd,
                grad_dtypes=GRADS,
                tol=_TOL,
            )
        )
    for name in ("fftfreq", "rfftfreq"):
        ops.append(
            OpInfo(
                f"fft_{name}",
                dtypes=REAL,
                ref=_freq_ref(name),
                torch_ref=_torch_fft(name),
                sample_inputs_func=_fftfreq_samples,
                supports_autograd=False,
            )
        )
    for name in ("fftshift", "ifftshift"):
        ops.append(
            OpInfo(
                f"fft_{name}",
                dtypes=REAL + COMPLEX + (_dt.int64,),
                ref=_shift_ref(name),
                torch_ref=_torch_fft(name),
                sample_inputs_func=_shift_samples,
                grad_dtypes=GRADS,
            )
        )
    ops += [
        OpInfo(
            "_fft_c2c",
            dtypes=COMPLEX,
            ref=_c2c_ref,
            sample_inputs_func=_c2c_samples,
            grad_dtypes=(_dt.complex128,),
            tol=_TOL,
        ),
        OpInfo(
            "_fft_r2c",
            dtypes=REAL,
            ref=_r2c_ref,
            sample_inputs_func=_r2c_samples,
            grad_dtypes=(_dt.float64,),
            tol=_TOL,
        ),
        OpInfo(
            "_fft_c2r",
            dtypes=COMPLEX,
            ref=_c2r_ref,
            sample_inputs_func=_c2r_samples,
            grad_dtypes=(_dt.complex128,),
            tol=_TOL,
        ),
    ]
    return ops


def _torch_fft(name: str):
    """``torch.fft.<name>`` (torch imported late)."""

    def ref(*args, **kwargs):
        import torch

        return getattr(torch.fft, name)(*args, **kwargs)

    return ref


OPS: list[OpInfo] = _entries()
