"""OpInfos of stft / istft (coretorch/ops/stft.py): numpy references (np.pad, strided frames,
numpy.fft, overlap-add written out)."""

from __future__ import annotations

from typing import Literal

import numpy as np

from ... import dtypes as _dt
from ..opinfo import ErrorInput, OpInfo, SampleInput
from .scans import holds_data

_NP_PAD: dict[str, Literal["reflect", "edge", "wrap", "constant"]] = {
    "reflect": "reflect",
    "replicate": "edge",
    "circular": "wrap",
    "constant": "constant",
}
_TOL = {_dt.float32: (1e-4, 1e-4), _dt.complex64: (1e-4, 1e-4)}


def _hann(m, n: int, dtype):
    return m.make((n,), dtype=dtype, values=0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n))


def _full_window(window, n_fft: int, win: int, dtype):
    w = np.ones(win, dtype) if window is None else window
    left = (n_fft - win) // 2
    return np.concatenate([np.zeros(left, w.dtype), w, np.zeros(n_fft - win - left, w.dtype)])


def _stft_ref(
    x,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    pad_mode="reflect",
    normalized=False,
    onesided=None,
    return_complex=None,
):
    hop, win = hop_length or n_fft // 4, win_length or n_fft
    xb = x if x.ndim == 2 else x[None]
    if center:
        xb = np.pad(xb, ((0, 0), (n_fft // 2, n_fft // 2)), mode=_NP_PAD[pad_mode])
    n_frames = 1 + (xb.shape[-1] - n_fft) // hop
    frames = np.stack([xb[:, t * hop : t * hop + n_fft] for t in range(n_frames)], 1)
    frames = frames * _full_window(window, n_fft, win, x.dtype)
    norm: Literal["ortho", "backward"] = "ortho" if normalized else "backward"
    one = not np.iscomplexobj(frames) if onesided is None else onesided
    spec = (np.fft.rfft if one else np.fft.fft)(frames, axis=-1, norm=norm).swapaxes(-1, -2)
    spec = spec.astype(np.complex64 if x.dtype in (np.float32, np.complex64) else np.complex128)
    spec = spec if x.ndim == 2 else spec[0]
    return np.stack([spec.real, spec.imag], -1) if return_complex is False else spec


def _istft_ref(
    s,
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    normalized=False,
    onesided=None,
    length=None,
    return_complex=False,
):
    hop, win = hop_length or n_fft // 4, win_length or n_fft
    sb = s if s.ndim == 3 else s[None]
    one = sb.shape[-2] != n_fft if onesided is None else onesided
    norm: Literal["ortho", "backward"] = "ortho" if normalized else "backward"
    spec = sb.swapaxes(-1, -2)
    frames = np.fft.irfft(spec, n_fft, norm=norm) if one else np.fft.ifft(spec, n_fft, norm=norm)
    if not return_complex:
        frames = frames.real
    w = _full_window(window, n_fft, win, frames.real.dtype)
    n_frames = frames.shape[-2]
    total = n_fft + hop * (n_frames - 1)
    y = np.zeros(sb.shape[:1] + (total,), frames.dtype)
    env = np.zeros(total)
    for t in range(n_frames):
        y[:, t * hop : t * hop + n_fft] += frames[:, t] * w
        env[t * hop : t * hop + n_fft] += w * w
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (total - n_fft // 2 if center else total)
    y = y[:, start : min(end, total)] / env[start : min(end, total)]
    if end > total:
        y = np.concatenate([y, np.zeros(y.shape[:1] + (end - total,), y.dtype)], -1)
    y = y.astype(s.real.dtype if not return_complex else s.dtype)
    return y if s.ndim == 3 else y[0]


def _stft_samples(op, m, dtype):
    real = dtype.to_real()
    yield SampleInput(m.make((40,)), (16,), dict(return_complex=True), name="1-d-rect")
    yield SampleInput(
        m.make((2, 30)),
        (8,),
        dict(window=_hann(m, 8, real), return_complex=True),
        name="batch-hann",
    )
    yield SampleInput(
        m.make((33,)),
        (12,),
        dict(
            hop_length=5,
            win_length=10,
            window=_hann(m, 10, real),
            center=False,
            return_complex=True,
        ),
        name="win-hop-no-center",
    )
    for mode in ("constant", "replicate", "circular"):
        yield SampleInput(
            m.make((20,)), (8,), dict(pad_mode=mode, return_complex=True), name=f"pad-{mode}"
        )
    yield SampleInput(
        m.make((24,)),
        (8,),
        dict(normalized=True, onesided=False, return_complex=True),
        name="normalized-twosided",
    )
    yield SampleInput(m.make((24,)), (8,), dict(return_complex=False), name="real-view")


def _stft_errors(op, m, dtype):
    if not dtype.is_complex:
        yield ErrorInput(
            SampleInput(m.make((20,)), (8,), name="no-return-complex"),
            RuntimeError,
            "requires the return_complex parameter be given for real inputs",
        )
    yield ErrorInput(
        SampleInput(m.make((2, 2, 20)), (8,), dict(return_complex=True), name="3-d"),
        RuntimeError,
        "expected a 1D or 2D tensor",
    )
    yield ErrorInput(
        SampleInput(
            m.make((20,)), (8,), dict(win_length=9, return_complex=True), name="win-length"
        ),
        RuntimeError,
        r"expected 0 < win_length <= n_fft",
    )
    yield ErrorInput(
        SampleInput(
            m.make((20,)), (8,), dict(window=m.make((5,)), return_complex=True), name="window"
        ),
        RuntimeError,
        "expected a 1D window tensor of size equal to win_length",
    )


def _istft_samples(op, m, dtype):
    real = dtype.to_real()
    yield SampleInput(m.make((9, 6)), (16,), dict(window=_hann(m, 16, real)), name="hann")
    yield SampleInput(
        m.make((2, 5, 7)), (8,), dict(window=_hann(m, 8, real), length=30), name="batch-length-pads"
    )
    yield SampleInput(
        m.make((5, 9)),
        (8,),
        dict(hop_length=3, window=_hann(m, 8, real), length=20),
        name="hop-length-trims",
    )
    yield SampleInput(
        m.make((8, 6)),
        (8,),
        dict(window=_hann(m, 8, real), onesided=False, return_complex=True, normalized=True),
        name="twosided-complex",
    )
    yield SampleInput(
        m.make((9, 5)), (16,), dict(hop_length=16, center=False), name="rect-no-overlap"
    )


def _istft_errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make((7, 6)), (16,), name="freqs"),
        RuntimeError,
        "expected the frequency dimension",
    )
    if holds_data(m):  # a refusal that reads the window's values
        window = m.make((16,), dtype=_dt.float64, values=np.zeros(16))
        yield ErrorInput(
            SampleInput(
                m.make((9, 5)),
                (16,),
                dict(hop_length=4, center=False, window=window),
                name="data-dependent-nola",
            ),
            RuntimeError,
            "window overlap add min",
        )


OPS: list[OpInfo] = [
    OpInfo(
        "stft",
        dtypes=(_dt.float32, _dt.float64, _dt.complex64, _dt.complex128),
        ref=_stft_ref,
        sample_inputs_func=_stft_samples,
        error_inputs_func=_stft_errors,
        grad_dtypes=(_dt.float64, _dt.complex128),
        tol=_TOL,
    ),
    OpInfo(
        "istft",
        dtypes=(_dt.complex64, _dt.complex128),
        ref=_istft_ref,
        sample_inputs_func=_istft_samples,
        error_inputs_func=_istft_errors,
        grad_dtypes=(_dt.complex128,),
        tol=_TOL,
    ),
]
