"""The short-time Fourier transform and its inverse, as PyTorch's ``torch.stft`` / ``istft``:
composites of views, the window product and the transforms of ``coretorch.fft``.

stft: the signal (1-D, or a batch of them) is padded by n_fft // 2 at each end when `center`
(`pad_mode` "reflect", "replicate", "circular" or "constant"), cut into frames of n_fft samples
`hop_length` apart (``unfold``, a view), each multiplied by the window (zero-padded to n_fft,
centred) and transformed: one-sided (rfft) for real input and window unless ``onesided=False``.
The result is (batch, frequencies, frames), complex, or its real view with ``return_complex=False``.

istft inverts it by overlap-add (``index_add``) of the inverse-transformed, windowed frames,
divided by the overlap-added squared window, then trimmed to the signal (`length`).
"""

from __future__ import annotations

from .. import dtypes as dt
from .declare import REGISTRY, declare
from .linalg_common import holds_data

__all__: list[str] = []

_PAD_MODES = ("reflect", "replicate", "circular", "constant")


def _op(name: str):
    return REGISTRY[name].op.entry


def _window_spec(op: str, n_fft: int, hop_length, win_length, window) -> tuple[int, int]:
    """(hop_length, win_length) with PyTorch's defaults, checked against n_fft and the window."""
    if n_fft <= 0:
        raise RuntimeError(f"{op}(): expected 0 < n_fft, but got n_fft={n_fft}")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if hop <= 0:
        raise RuntimeError(f"{op}(): expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"{op}(): expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (len(window._shape) != 1 or window._shape[0] != win):
        raise RuntimeError(
            f"{op}(): expected a 1D window tensor of size equal to win_length="
            f"{win}, but got window with size {list(window._shape)}"
        )
    return hop, win


def _full_window(x, n_fft: int, win: int, window):
    """The window zero-padded (centred) to n_fft points; all ones when None."""
    real = x._dtype.to_real() if x._dtype.is_complex else x._dtype
    if window is None:
        window = x.new_ones((win,), dtype=real)
    if win == n_fft:
        return window
    left = (n_fft - win) // 2
    return _op("cat")([window.new_zeros((left,)), window, window.new_zeros((n_fft - win - left,))])


# ---- stft ---------------------------------------------------------------------------------------


def _padded(x, p: int, mode: str):
    """`x` padded by `p` samples at both ends of its last dim, as ``F.pad``'s `mode`."""
    if p == 0:
        return x
    n = x._shape[-1]
    if mode == "reflect":
        left, right = x.narrow(-1, 1, p).flip(-1), x.narrow(-1, n - 1 - p, p).flip(-1)
    elif mode == "replicate":
        edge = x._shape[:-1] + (p,)
        left, right = x.narrow(-1, 0, 1).expand(edge), x.narrow(-1, n - 1, 1).expand(edge)
    elif mode == "circular":
        left, right = x.narrow(-1, n - p, p), x.narrow(-1, 0, p)
    else:
        left = right = x.new_zeros(x._shape[:-1] + (p,))
    return _op("cat")([left, x, right], -1)


def _meta_stft(
    self,
    n_fft,
    hop_length,
    win_length,
    window,
    center,
    pad_mode,
    normalized,
    onesided,
    return_complex,
):
    nd = len(self._shape)
    if nd not in (1, 2):
        raise RuntimeError(
            f"stft(): expected a 1D or 2D tensor, but got a tensor with {nd} dimensions"
        )
    if return_complex is None and not (
        self._dtype.is_complex or (window is not None and window._dtype.is_complex)
    ):
        raise RuntimeError(
            "stft(): requires the return_complex parameter be given for real "
            "inputs, and will further require that return_complex=True in a "
            "future PyTorch release."
        )
    if pad_mode not in _PAD_MODES:
        raise RuntimeError(f"stft(): pad_mode must be one of {_PAD_MODES}, got '{pad_mode}'")
    d = self._dtype
    if not (d in (dt.float32, dt.float64) or d.is_complex):
        raise RuntimeError(f"stft(): expected a float32, float64 or complex input, got {d.name}")
    hop, _ = _window_spec("stft", n_fft, hop_length, win_length, window)
    if (
        center
        and pad_mode in ("reflect", "circular")
        and n_fft // 2 >= self._shape[-1] + (pad_mode == "circular")
    ):
        raise RuntimeError(
            f"stft(): padding size {n_fft // 2} should be less than the signal "
            f"length {self._shape[-1]} for pad_mode='{pad_mode}'"
        )
    length = self._shape[-1] + (2 * (n_fft // 2) if center else 0)
    if not 0 < n_fft <= length:
        raise RuntimeError(f"stft(): expected 0 < n_fft <= {length}, but got n_fft={n_fft}")
    complex_in = d.is_complex or (window is not None and window._dtype.is_complex)
    if onesided and complex_in:
        raise RuntimeError("stft(): Cannot have onesided output if window or input is complex")
    one = not complex_in if onesided is None else onesided
    freqs = n_fft // 2 + 1 if one else n_fft
    shape = self._shape[:-1] + (freqs, 1 + (length - n_fft) // hop)
    c = d.to_complex() if not d.is_complex else d
    if return_complex is False:
        return (shape + (2,), c.to_real(), self._device)
    return (shape, c, self._device)


def _stft(
    self,
    n_fft,
    hop_length,
    win_length,
    window,
    center,
    pad_mode,
    normalized,
    onesided,
    return_complex,
):
    """The short-time Fourier transform of `input` (see the module docstring)."""
    hop, win = _window_spec("stft", n_fft, hop_length, win_length, window)
    x = self if len(self._shape) == 2 else self.unsqueeze(0)
    if center:
        x = _padded(x, n_fft // 2, pad_mode)
    frames = x.unfold(-1, n_fft, hop) * _full_window(self, n_fft, win, window)
    complex_in = frames._dtype.is_complex
    norm = "ortho" if normalized else "backward"
    if (not complex_in) if onesided is None else onesided:
        spec = _op("fft_rfft")(frames, None, -1, norm)
    else:
        spec = _op("fft_fft")(frames, None, -1, norm)
    spec = spec.transpose(-1, -2)
    if len(self._shape) == 1:
        spec = spec.squeeze(0)
    return _op("view_as_real")(spec.contiguous()) if return_complex is False else spec


# ---- istft --------------------------------------------------------------------------------------


def _istft_geometry(self, n_fft, hop_length, win_length, window, center, onesided, length):
    """(hop, win, frames, signal length before trimming, start, end) of an istft call."""
    hop, win = _window_spec("istft", n_fft, hop_length, win_length, window)
    nd = len(self._shape)
    if nd not in (2, 3) or not self._dtype.is_complex:
        raise RuntimeError(
            f"istft(): expected a 2D or 3D complex tensor, got {nd}D {self._dtype.name}"
        )
    freqs, frames = self._shape[-2], self._shape[-1]
    one = (freqs != n_fft) if onesided is None else onesided
    if one and freqs != n_fft // 2 + 1:
        raise RuntimeError(
            f"istft(): expected the frequency dimension (3rd to the last) of the "
            f"input tensor to match n_fft / 2 + 1 when onesided=True, but got "
            f"{freqs}"
        )
    if not one and freqs != n_fft:
        raise RuntimeError(
            f"istft(): expected the frequency dimension of the input tensor to "
            f"match n_fft when onesided=False, but got {freqs}"
        )
    if frames < 1:
        raise RuntimeError("istft(): input tensor cannot be empty")
    total = n_fft + hop * (frames - 1)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = total - n_fft // 2 if center else total
    return hop, win, frames, total, start, end, one


def _meta_istft(
    self,
    n_fft,
    hop_length,
    win_length,
    window,
    center,
    normalized,
    onesided,
    length,
    return_complex,
):
    *_, start, end, one = _istft_geometry(
        self, n_fft, hop_length, win_length, window, center, onesided, length
    )
    if return_complex and one:
        raise RuntimeError("istft(): cannot have onesided output if return_complex=True")
    real = self._dtype.to_real()
    return (
        self._shape[:-2] + (max(end - start, 0),),
        self._dtype if return_complex else real,
        self._device,
    )


def _overlap_add(frames, hop: int, total: int):
    """sum over frames t of frames[..., t, :] placed at t * hop, in a signal of `total` samples."""
    n_frames, n_fft = frames._shape[-2], frames._shape[-1]
    ar = _op("arange")
    idx = (
        ar(n_frames, device=frames._device).unsqueeze(1) * hop + ar(n_fft, device=frames._device)
    ).reshape(-1)
    out = frames.new_zeros(frames._shape[:-2] + (total,))
    return out.index_add(-1, idx, frames.reshape(frames._shape[:-2] + (n_frames * n_fft,)))


def _istft(
    self,
    n_fft,
    hop_length,
    win_length,
    window,
    center,
    normalized,
    onesided,
    length,
    return_complex,
):
    """The inverse short-time Fourier transform of `input` by overlap-add (see the module
    docstring)."""
    hop, win, n_frames, total, start, end, one = _istft_geometry(
        self, n_fft, hop_length, win_length, window, center, onesided, length
    )
    x = self if len(self._shape) == 3 else self.unsqueeze(0)
    norm = "ortho" if normalized else "backward"
    spec = x.transpose(-1, -2)
    frames = (
        _op("fft_irfft")(spec, n_fft, -1, norm) if one else _op("fft_ifft")(spec, n_fft, -1, norm)
    )
    if not return_complex and frames._dtype.is_complex:
        frames = _op("real")(frames)
    w = _full_window(self, n_fft, win, window)
    y = _overlap_add(frames * w, hop, total)
    envelope = _overlap_add((w * w).expand((n_frames, n_fft)), hop, total)
    stop = min(end, total)
    y, envelope = y.narrow(-1, start, stop - start), envelope.narrow(-1, start, stop - start)
    if holds_data(envelope) and bool((envelope.abs() < 1e-11).any()):
        raise RuntimeError(
            "istft(): window overlap add min: 1e-11; the window's overlap-add is "
            "zero somewhere (NOLA condition), so the signal cannot be recovered"
        )
    y = y / envelope
    if end > total:
        y = _op("cat")([y, y.new_zeros(y._shape[:-1] + (end - total,))], -1)
    return y.squeeze(0) if len(self._shape) == 2 else y


declare(
    "stft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, "
    "Tensor? window=None, bool center=True, str pad_mode='reflect', bool normalized=False, "
    "bool? onesided=None, bool? return_complex=None) -> Tensor",
    _meta_stft,
    impl=_stft,
    family="fft",
    out=False,
)
declare(
    "istft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, "
    "Tensor? window=None, bool center=True, bool normalized=False, bool? onesided=None, "
    "int? length=None, bool return_complex=False) -> Tensor",
    _meta_istft,
    impl=_istft,
    family="fft",
    out=False,
)
