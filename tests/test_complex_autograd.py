"""Complex autograd, PyTorch's convention: the gradient of a real loss with respect to a complex
tensor is dL/dreal + 1j * dL/dimag (the conjugate Wirtinger derivative, times 2), and a real
input fed into complex ops gets the real part. Checked by gradcheck (finite differences on the
real and imaginary parts) and against PyTorch's gradients."""

from __future__ import annotations

import types

import numpy as np
import pytest

import coretorch as ct
from coretorch.autograd import gradcheck


def _real(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return ct.tensor(rng.standard_normal(shape), requires_grad=True)


def _cplx(*shape, seed=1):
    rng = np.random.default_rng(seed)
    return ct.tensor(
        rng.standard_normal(shape) + 1j * rng.standard_normal(shape), requires_grad=True
    )


CASES = {
    "rfft-abs-sum": (lambda t: ct.fft.rfft(t).abs().sum(), lambda: (_real(6),)),
    "fft-real": (lambda t: ct.fft.fft(t, n=8), lambda: (_real(6),)),
    "fft-ortho": (lambda t: ct.fft.fft(t, norm="ortho"), lambda: (_cplx(5),)),
    "ifft-pad": (lambda t: ct.fft.ifft(t, n=7), lambda: (_cplx(5),)),
    "irfft": (lambda t: ct.fft.irfft(t, n=9, norm="forward"), lambda: (_cplx(5),)),
    "hfft": (lambda t: ct.fft.hfft(t), lambda: (_cplx(4),)),
    "ihfft": (lambda t: ct.fft.ihfft(t), lambda: (_real(6),)),
    "rfftn-irfftn": (lambda t: ct.fft.irfftn(ct.fft.rfftn(t) * 2), lambda: (_real(3, 4),)),
    "fft2-s": (lambda t: ct.fft.fft2(t, s=(4, 5)), lambda: (_real(3, 4),)),
    "real-imag": (lambda t: t.real * 2 - t.imag, lambda: (_cplx(5),)),
    "view_as_real": (lambda t: ct.view_as_real(t), lambda: (_cplx(2, 3),)),
    "view_as_complex": (lambda t: ct.view_as_complex(t.view(3, 2)), lambda: (_real(6),)),
    "abs": (lambda t: t.abs(), lambda: (_cplx(5),)),
    "mul": (lambda a, b: a * b, lambda: (_cplx(4), _cplx(4, seed=2))),
    "mul-real-complex": (lambda a, b: a * b, lambda: (_real(4), _cplx(4))),
    "add": (lambda a, b: a + b * 2, lambda: (_cplx(4), _real(4))),
    "div": (lambda a, b: a / b, lambda: (_cplx(4), _cplx(4, seed=2))),
    "exp-log-sqrt": (lambda t: t.exp() + t.log() * t.sqrt(), lambda: (_cplx(4),)),
    "pow": (lambda t: t**3, lambda: (_cplx(4),)),
    "matmul": (lambda a, b: a @ b, lambda: (_cplx(2, 3), _cplx(3, 2, seed=2))),
    "conj-angle": (lambda t: t.conj() * ct.angle(t), lambda: (_cplx(4),)),
    "polar": (
        lambda a, b: ct.polar(a, b),
        lambda: (_real(3).detach().abs().requires_grad_(), _real(3, seed=3)),
    ),
    "sum-mean": (lambda t: t.sum() + t.mean(), lambda: (_cplx(2, 3),)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name):
    fn, inputs = CASES[name]
    assert gradcheck(fn, inputs())


def _to_torch(torch, x):
    return torch.tensor(x.detach().numpy(), requires_grad=True)


@pytest.mark.parametrize(
    "name",
    [
        "rfft-abs-sum",
        "fft-real",
        "irfft",
        "hfft",
        "ihfft",
        "abs",
        "mul",
        "mul-real-complex",
        "div",
        "exp-log-sqrt",
        "matmul",
        "real-imag",
        "conj-angle",
        "rfftn-irfftn",
    ],
)
def test_gradients_match_pytorch(name):
    torch = pytest.importorskip("torch")
    fn, inputs = CASES[name]
    xs = inputs()
    out = fn(*xs)
    # a real loss of the (possibly complex) output, the same on both sides
    loss = (ct.view_as_real(out) if out.is_complex() else out).pow(2).sum()
    grads = ct.autograd.grad(loss, xs)
    tx = [_to_torch(torch, x) for x in xs]
    # the same lambda, run with torch in place of coretorch
    tout = types.FunctionType(fn.__code__, dict(fn.__globals__, ct=torch))(*tx).resolve_conj()
    tloss = (torch.view_as_real(tout) if tout.is_complex() else tout).pow(2).sum()
    tgrads = torch.autograd.grad(tloss, tx)
    for g, tg in zip(grads, tgrads):
        assert g.dtype.name == str(tg.dtype).split(".")[1]
        np.testing.assert_allclose(g.numpy(), tg.resolve_conj().numpy(), rtol=1e-9, atol=1e-9)


def test_real_input_gets_real_gradient():
    x = _real(6)
    ct.fft.rfft(x).abs().sum().backward()
    assert x.grad.dtype is ct.float64


def test_complex_loss_needs_explicit_gradient():
    z = _cplx(3)
    with pytest.raises(RuntimeError, match="real scalar outputs"):
        (z * 2).sum().backward()
