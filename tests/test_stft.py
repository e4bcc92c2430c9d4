"""stft / istft against PyTorch (same windows, hops, padding modes, normalization), the
round trip, and gradients through them."""

from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct
from coretorch.autograd import gradcheck

CASES = [
    dict(n_fft=16),
    dict(n_fft=16, hop_length=5, win_length=12),
    dict(n_fft=15, center=False),
    dict(n_fft=16, normalized=True, onesided=False),
    dict(n_fft=8, pad_mode="constant"),
    dict(n_fft=8, pad_mode="replicate"),
    dict(n_fft=8, pad_mode="circular"),
]


def _hann(n: int) -> np.ndarray:
    return 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)  # torch.hann_window(n)


@pytest.mark.parametrize("kw", CASES, ids=str)
@pytest.mark.parametrize("windowed", [False, True])
def test_stft_istft_match_pytorch(kw, windowed):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((2, 50))
    w = _hann(kw.get("win_length", kw["n_fft"])) if windowed else None
    wc = None if w is None else ct.tensor(w)
    wt = None if w is None else torch.tensor(w)
    got = ct.stft(ct.tensor(x), window=wc, return_complex=True, **kw).numpy()
    want = torch.stft(torch.tensor(x), window=wt, return_complex=True, **kw).numpy()
    np.testing.assert_allclose(got, want, atol=1e-10)
    if windowed and kw.get("center", True):
        inv = {k: v for k, v in kw.items() if k != "pad_mode"}
        back = ct.istft(ct.tensor(want), window=wc, length=50, **inv).numpy()
        np.testing.assert_allclose(
            back, torch.istft(torch.tensor(want), window=wt, length=50, **inv).numpy(), atol=1e-10
        )
        np.testing.assert_allclose(back, x, atol=1e-10)  # perfect reconstruction


def test_stft_shapes_and_real_view():
    x = ct.randn(40)
    assert ct.stft(x, 8, return_complex=True).shape == (5, 21)
    assert x.stft(8, return_complex=False).shape == (5, 21, 2)
    with pytest.raises(RuntimeError, match="return_complex parameter be given"):
        ct.stft(x, 8)


def test_gradients_through_stft_and_istft():
    x = ct.tensor(np.random.default_rng(1).standard_normal(24), requires_grad=True)
    w = ct.tensor(_hann(8))
    assert gradcheck(lambda t: ct.stft(t, 8, window=w, return_complex=True).abs().sum(), (x,))
    assert gradcheck(
        lambda t: ct.istft(ct.stft(t, 8, window=w, return_complex=True), 8, window=w, length=24),
        (x,),
    )
