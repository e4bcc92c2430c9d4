"""Training steps used by the coretorch.compile tests and benchmarks: each case builds a seeded
model, optimizer and batches, and a step function ``step(x, y) -> loss`` that runs forward,
backward and the optimizer update."""

from __future__ import annotations

import math
from collections.abc import Callable

import coretorch as ct
import coretorch.nn.functional as F
from coretorch import nn

__all__ = ["CASES", "Case", "batchnorm_mlp", "digits_cnn", "gpt_block", "lstm", "mlp"]


class Case:
    """A model, its optimizer, a list of batches and the step that trains on one batch."""

    def __init__(self, model: nn.Module, opt, batches: list, step: Callable):
        self.model, self.opt, self.batches, self.step = model, opt, batches, step


def _example():
    """examples/train_digits.py as a module (its model and its training step)."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "examples" / "train_digits.py"
    spec = importlib.util.spec_from_file_location("_train_digits", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _sgd_step(model, opt, loss_fn):
    return _example().make_step(model, opt, loss_fn)


def mlp(dtype=ct.float64, n_batches: int = 4, **opt_kw) -> Case:
    """MLP 32-64-10, batch 32, SGD with momentum."""
    ct.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)).to(dtype)
    opt = ct.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, **opt_kw)
    batches = [(ct.randn(32, 32, dtype=dtype), ct.randint(0, 10, (32,))) for _ in range(n_batches)]
    return Case(model, opt, batches, _sgd_step(model, opt, F.cross_entropy))


def digits_cnn(dtype=ct.float64, n_batches: int = 4, batch: int = 32) -> Case:
    """examples/train_digits.py's CNN (conv, pool, dropout) with AdamW, on 8x8 images."""
    ct.manual_seed(0)
    model = _example().build_model().to(dtype)
    opt = ct.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=1e-4)
    batches = [
        (ct.rand(batch, 1, 8, 8, dtype=dtype), ct.randint(0, 10, (batch,)))
        for _ in range(n_batches)
    ]
    return Case(model, opt, batches, _sgd_step(model, opt, F.cross_entropy))


class Block(nn.Module):
    """A GPT-style block: LayerNorm, causal self-attention, GELU MLP, dropout."""

    def __init__(self, d: int = 16, heads: int = 2, p: float = 0.1):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.drop = nn.Dropout(p)
        self.head = nn.Linear(d, 8)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        mask = ct.ones(t, t, dtype=ct.bool).tril()
        att = self.drop(F.softmax(att.masked_fill(~mask, float("-inf")), dim=-1))
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.drop(self.proj(y))
        x = x + self.drop(self.out(F.gelu(self.fc(self.ln2(x)))))
        return self.head(x).mean(1)


def gpt_block(dtype=ct.float64, n_batches: int = 4) -> Case:
    ct.manual_seed(0)
    model = Block().to(dtype)
    opt = ct.optim.AdamW(model.parameters(), lr=1e-3)
    batches = [(ct.randn(4, 6, 16, dtype=dtype), ct.randint(0, 8, (4,))) for _ in range(n_batches)]
    return Case(model, opt, batches, _sgd_step(model, opt, F.cross_entropy))


class LSTMHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 12, batch_first=True)
        self.fc = nn.Linear(12, 1)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1]).squeeze(1)


def lstm(dtype=ct.float64, n_batches: int = 4) -> Case:
    ct.manual_seed(0)
    model = LSTMHead().to(dtype)
    opt = ct.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    batches = [(ct.randn(3, 5, 8, dtype=dtype), ct.randn(3, dtype=dtype)) for _ in range(n_batches)]
    return Case(model, opt, batches, _sgd_step(model, opt, F.mse_loss))


def batchnorm_mlp(dtype=ct.float64, n_batches: int = 4) -> Case:
    ct.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 20), nn.BatchNorm1d(20), nn.ReLU(), nn.Linear(20, 3)).to(
        dtype
    )
    opt = ct.optim.Adam(model.parameters(), lr=1e-2)
    batches = [(ct.randn(16, 10, dtype=dtype), ct.randint(0, 3, (16,))) for _ in range(n_batches)]
    return Case(model, opt, batches, _sgd_step(model, opt, F.cross_entropy))


CASES = {
    "mlp": mlp,
    "digits_cnn": digits_cnn,
    "gpt_block": gpt_block,
    "lstm": lstm,
    "batchnorm_mlp": batchnorm_mlp,
}
