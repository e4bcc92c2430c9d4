"""Eight small PyTorch programs, each written once against a `torch` module passed in, so the same
code builds and trains with PyTorch (to record the expected losses) and with coretorch.

A program is `build(torch) -> {name: module}` (its modules, seeded weights come from the
committed file), `optimizers(torch, modules) -> [optimizer]`, `batches(rng, steps)` (numpy arrays,
the same for both frameworks) and `step(torch, modules, optimizers, batch) -> [loss, ...]`
(one training step; returns the losses it computed, as Python floats). Nothing here draws random
numbers from the framework: dropout is 0 and every sample (noise, actions) comes from the batch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Program:
    build: Callable
    optimizers: Callable
    batches: Callable
    step: Callable


def _sgd_step(losses, optimizers, clip=None):
    """Backward through the sum of `losses` and step every optimizer; `clip`, a
    (torch, parameters, max_norm), clips the gradients' norm before the step."""
    for opt in optimizers:
        opt.zero_grad()
    sum(losses).backward()
    if clip is not None:
        torch, parameters, max_norm = clip
        torch.nn.utils.clip_grad_norm_(parameters, max_norm)
    for opt in optimizers:
        opt.step()
    return [loss.item() for loss in losses]


def _token_loss(torch, logits, targets):
    """Cross-entropy of (..., vocabulary) `logits` against the token ids `targets`."""
    return torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.size(-1)), targets.reshape(-1)
    )


def _one_optimizer(module: str, optimizer: str, **options) -> Callable:
    """`optimizers` for a program that trains one module: `torch.optim.<optimizer>` over
    `modules[module]`'s parameters with `options`."""
    return lambda torch, m: [getattr(torch.optim, optimizer)(m[module].parameters(), **options)]


# --- a character GPT (minGPT's shape) ----------------------------------------------------------
V, T, D, H = 32, 16, 32, 2


def _gpt(torch):
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
            self.attn, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
            self.mlp = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D))
            self.register_buffer("mask", torch.tril(torch.ones(T, T)).view(1, 1, T, T))

        def forward(self, x):
            b, t, c = x.size()
            q, k, v = self.attn(self.ln1(x)).split(D, dim=2)
            q, k, v = (z.view(b, t, H, c // H).transpose(1, 2) for z in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = F.softmax(att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf")), dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
            x = x + self.proj(y)
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(V, D), nn.Embedding(T, D)
            self.blocks = nn.Sequential(Block(), Block())
            self.ln, self.head = nn.LayerNorm(D), nn.Linear(D, V, bias=False)

        def forward(self, idx):
            pos = torch.arange(idx.size(1))
            return self.head(self.ln(self.blocks(self.tok(idx) + self.pos(pos))))

    return {"gpt": GPT()}


def _gpt_step(torch, m, opts, batch):
    x, y = batch
    logits = m["gpt"](x)
    return _sgd_step([_token_loss(torch, logits, y)], opts)


def _text_batches(rng, steps):
    data = rng.integers(0, V, size=steps * 4 * (T + 1)).reshape(steps, 4, T + 1)
    return [(d[:, :-1], d[:, 1:]) for d in data]


CHAR_GPT = Program(
    _gpt, _one_optimizer("gpt", "AdamW", lr=1e-3, weight_decay=0.1), _text_batches, _gpt_step
)


# --- an LSTM word language model (PyTorch's word_language_model) ------------------------------
NTOK = 50


def _lstm(torch):
    nn = torch.nn

    class RNNModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Embedding(NTOK, 16)
            self.rnn = nn.LSTM(16, 32, num_layers=2)
            self.decoder = nn.Linear(32, NTOK)

        def forward(self, x, hidden):
            out, hidden = self.rnn(self.encoder(x), hidden)
            return self.decoder(out), hidden

    return {"lm": RNNModel()}


def _lstm_step(torch, m, opts, batch):
    x, y = batch
    model = m["lm"]
    zeros = torch.zeros(2, x.size(1), 32, dtype=model.decoder.weight.dtype)
    out, _ = model(x, (zeros, zeros))
    return _sgd_step([_token_loss(torch, out, y)], opts, clip=(torch, model.parameters(), 0.25))


def _word_batches(rng, steps):
    data = rng.integers(0, NTOK, size=(steps, 13, 4))
    return [(d[:-1], d[1:]) for d in data]


LSTM_LM = Program(_lstm, _one_optimizer("lm", "SGD", lr=0.5), _word_batches, _lstm_step)


# --- a VAE (PyTorch's examples/vae, on 64-pixel images) ----------------------------------------
def _vae(torch):
    nn, F = torch.nn, torch.nn.functional

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc21, self.fc22 = nn.Linear(64, 32), nn.Linear(32, 8), nn.Linear(32, 8)
            self.fc3, self.fc4 = nn.Linear(8, 32), nn.Linear(32, 64)

        def forward(self, x, eps):
            h = F.relu(self.fc1(x))
            mu, logvar = self.fc21(h), self.fc22(h)
            z = mu + eps * torch.exp(0.5 * logvar)
            return torch.sigmoid(self.fc4(F.relu(self.fc3(z)))), mu, logvar

    return {"vae": VAE()}


def _vae_step(torch, m, opts, batch):
    x, eps = batch
    recon, mu, logvar = m["vae"](x, eps)
    bce = torch.nn.functional.binary_cross_entropy(recon, x, reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return _sgd_step([bce + kld], opts)


VAE = Program(
    _vae,
    _one_optimizer("vae", "Adam", lr=1e-3),
    lambda rng, steps: [(rng.random((16, 64)), rng.standard_normal((16, 8))) for _ in range(steps)],
    _vae_step,
)


# --- a DCGAN (PyTorch's examples/dcgan, 8x8 images) --------------------------------------------
def _dcgan(torch):
    nn = torch.nn
    g = nn.Sequential(
        nn.ConvTranspose2d(8, 16, 4, 1, 0, bias=False),
        nn.BatchNorm2d(16),
        nn.ReLU(True),
        nn.ConvTranspose2d(16, 1, 4, 2, 1, bias=False),
        nn.Tanh(),
    )
    d = nn.Sequential(
        nn.Conv2d(1, 16, 4, 2, 1, bias=False),
        nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(16, 1, 4, 1, 0, bias=False),
        nn.Sigmoid(),
    )
    return {"G": g, "D": d}


def _dcgan_step(torch, m, opts, batch):
    real, noise = batch
    g, d = m["G"], m["D"]
    opt_g, opt_d = opts
    bce = torch.nn.BCELoss()
    ones = torch.ones(real.size(0), dtype=real.dtype)
    opt_d.zero_grad()
    fake = g(noise)
    err_d = bce(d(real).view(-1), ones) + bce(d(fake.detach()).view(-1), 0 * ones)
    err_d.backward()
    opt_d.step()
    opt_g.zero_grad()
    err_g = bce(d(fake).view(-1), ones)
    err_g.backward()
    opt_g.step()
    return [err_d.item(), err_g.item()]


DCGAN = Program(
    _dcgan,
    lambda torch, m: [
        torch.optim.Adam(m[k].parameters(), lr=2e-4, betas=(0.5, 0.999)) for k in ("G", "D")
    ],
    lambda rng, steps: [
        (np.tanh(rng.standard_normal((8, 1, 8, 8))), rng.standard_normal((8, 8, 1, 1)))
        for _ in range(steps)
    ],
    _dcgan_step,
)


# --- ResNet-18 on 32x32 images (torchvision's layout, widths 8-64) -----------------------------
def _resnet(torch):
    nn, F = torch.nn, torch.nn.functional

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
                )

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return F.relu(out + (x if self.downsample is None else self.downsample(x)))

    class ResNet18(nn.Module):
        def __init__(self, widths=(8, 16, 32, 64), classes=10):
            super().__init__()
            self.conv1 = nn.Conv2d(3, widths[0], 3, 1, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(widths[0])
            layers, cin = [], widths[0]
            for i, w in enumerate(widths):
                stride = 1 if i == 0 else 2
                layers.append(nn.Sequential(BasicBlock(cin, w, stride), BasicBlock(w, w, 1)))
                cin = w
            self.layer1, self.layer2, self.layer3, self.layer4 = layers
            self.fc = nn.Linear(widths[-1], classes)

        def forward(self, x):
            x = F.relu(self.bn1(self.conv1(x)))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))

    return {"resnet": ResNet18()}


def _classify_step(key):
    def step(torch, m, opts, batch):
        x, y = batch
        return _sgd_step([torch.nn.functional.cross_entropy(m[key](x), y)], opts)

    return step


RESNET18 = Program(
    _resnet,
    _one_optimizer("resnet", "SGD", lr=0.01, momentum=0.9, weight_decay=5e-4),
    lambda rng, steps: [
        (rng.standard_normal((4, 3, 32, 32)), rng.integers(0, 10, 4)) for _ in range(steps)
    ],
    _classify_step("resnet"),
)


# --- a GCN (Kipf & Welling) on a 20-node graph, dense normalized adjacency ---------------------
N_NODES = 20


def _gcn(torch):
    nn, F = torch.nn, torch.nn.functional

    class GCN(nn.Module):
        def __init__(self):
            super().__init__()
            self.w1, self.w2 = nn.Linear(8, 16), nn.Linear(16, 3)

        def forward(self, x, adj):
            return self.w2(adj @ F.relu(adj @ self.w1(x)))

    return {"gcn": GCN()}


def _graph_batches(rng, steps):
    a = (rng.random((N_NODES, N_NODES)) < 0.2).astype(np.float64)
    a = np.maximum(a, a.T) + np.eye(N_NODES)
    norm = 1.0 / np.sqrt(a.sum(1))
    adj = a * norm[:, None] * norm[None, :]
    x, y = rng.standard_normal((N_NODES, 8)), rng.integers(0, 3, N_NODES)
    return [(x, adj, y)] * steps


def _gcn_step(torch, m, opts, batch):
    x, adj, y = batch
    out = m["gcn"](x, adj)
    return _sgd_step([torch.nn.functional.cross_entropy(out[:12], y[:12])], opts)


GCN = Program(
    _gcn, _one_optimizer("gcn", "Adam", lr=0.01, weight_decay=5e-4), _graph_batches, _gcn_step
)


# --- REINFORCE (PyTorch's examples/reinforcement_learning) on a fixed set of episodes ----------
def _policy(torch):
    nn = torch.nn
    return {
        "policy": nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2), nn.Softmax(dim=-1))
    }


def _episode_batches(rng, steps):
    """Per step one episode of 10 states; the uniforms decide the actions from the policy."""
    return [(rng.standard_normal((10, 4)), rng.random(10)) for _ in range(steps)]


def _reinforce_step(torch, m, opts, batch):
    states, uniforms = batch
    probs = m["policy"](states)
    dist = torch.distributions.Categorical(probs)
    actions = (uniforms.to(probs.dtype) < probs[:, 1].detach()).long()
    rewards = (actions == (states[:, 0] > 0).long()).to(probs.dtype)  # reward: match a sign
    gamma, returns, r = 0.99, [], 0.0
    for reward in reversed(rewards.tolist()):
        r = reward + gamma * r
        returns.insert(0, r)
    returns = torch.tensor(returns, dtype=probs.dtype)
    returns = (returns - returns.mean()) / (returns.std() + 1e-6)
    loss = -(dist.log_prob(actions) * returns).sum()
    return _sgd_step([loss], opts)


REINFORCE = Program(
    _policy, _one_optimizer("policy", "Adam", lr=1e-2), _episode_batches, _reinforce_step
)


# --- a Transformer sequence-to-sequence model (copy-reverse task) ------------------------------
SV = 12


def _seq2seq(torch):
    nn = torch.nn

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_emb, self.tgt_emb = nn.Embedding(SV, 16), nn.Embedding(SV, 16)
            self.transformer = nn.Transformer(
                d_model=16,
                nhead=2,
                num_encoder_layers=1,
                num_decoder_layers=1,
                dim_feedforward=32,
                dropout=0.0,
                batch_first=True,
            )
            self.out = nn.Linear(16, SV)

        def forward(self, src, tgt):
            mask = nn.Transformer.generate_square_subsequent_mask(
                tgt.size(1), dtype=self.out.weight.dtype
            )
            h = self.transformer(self.src_emb(src), self.tgt_emb(tgt), tgt_mask=mask)
            return self.out(h)

    return {"seq2seq": Seq2Seq()}


def _seq2seq_step(torch, m, opts, batch):
    src, tgt = batch
    logits = m["seq2seq"](src, tgt[:, :-1])
    return _sgd_step([_token_loss(torch, logits, tgt[:, 1:])], opts)


def _copy_batches(rng, steps):
    src = rng.integers(1, SV, size=(steps, 4, 6))
    tgt = np.concatenate([np.zeros((steps, 4, 1), np.int64), src[:, :, ::-1]], axis=2)
    return list(zip(src, tgt))


SEQ2SEQ = Program(
    _seq2seq, _one_optimizer("seq2seq", "Adam", lr=1e-3), _copy_batches, _seq2seq_step
)


PROGRAMS: dict[str, Program] = {
    "char_gpt": CHAR_GPT,
    "lstm_lm": LSTM_LM,
    "vae": VAE,
    "dcgan": DCGAN,
    "resnet18": RESNET18,
    "gcn": GCN,
    "reinforce": REINFORCE,
    "seq2seq": SEQ2SEQ,
}
STEPS = 10
DTYPES = ("float64", "float32")
