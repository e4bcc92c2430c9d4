"""LSTM language-model step: coretorch against PyTorch (CPU) in one run.

    .venv/bin/python benchmarks/rnn.py [--repeat N] [--quick] [--threads N]

One training step of PyTorch's word language model shape: embedding (10k vocabulary, 256),
2-layer LSTM with 256 hidden units, decoder Linear 256 -> 10k, sequence 35, batch 20,
cross-entropy, backward, gradient clipping, SGD update. Both libraries start from the same
weights; the two are timed alternately. Prints the median step times and the ratio
(coretorch / PyTorch), plus the same for the forward pass alone under no_grad.
"""

from __future__ import annotations

import argparse

import numpy as np
from _timing import alternating_medians

import coretorch as ct

VOCAB, EMB, HIDDEN, LAYERS, SEQ, BATCH = 10_000, 256, 256, 2, 35, 20


def _model(lib):
    class LM(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = lib.nn.Embedding(VOCAB, EMB)
            self.rnn = lib.nn.LSTM(EMB, HIDDEN, LAYERS, dropout=0.2)
            self.decoder = lib.nn.Linear(HIDDEN, VOCAB)

        def forward(self, x, hidden):
            out, hidden = self.rnn(self.encoder(x), hidden)
            return self.decoder(out).reshape(-1, VOCAB), hidden

    return LM()


def _setup(lib, state: dict):
    model = _model(lib)
    model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    rng = np.random.default_rng(1)
    x = lib.tensor(rng.integers(0, VOCAB, (SEQ, BATCH)))
    y = lib.tensor(rng.integers(0, VOCAB, (SEQ * BATCH,)))
    zeros = np.zeros((LAYERS, BATCH, HIDDEN), dtype=np.float32)
    hidden = (lib.tensor(zeros), lib.tensor(zeros))
    opt = lib.optim.SGD(model.parameters(), lr=0.1)

    def step():
        model.train()
        opt.zero_grad()
        out, _ = model(x, hidden)
        loss = lib.nn.functional.cross_entropy(out, y)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()

    def forward():
        model.eval()
        with lib.no_grad():
            model(x, hidden)

    return step, forward


def _limit_threads(torch, n: int) -> None:
    """Both libraries on `n` threads: PyTorch's intra-op pool, numpy's BLAS, numba's pool."""
    import numba
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(n)
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    threadpool_limits(n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="3 repeats")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="limit both libraries (BLAS, OpenMP, numba) to N threads",
    )
    args = parser.parse_args()
    repeat = 3 if args.quick else args.repeat
    import torch

    if args.threads:
        _limit_threads(torch, args.threads)
    state = {k: v.detach().numpy().copy() for k, v in _model(torch).state_dict().items()}
    rows = []
    for label, idx in (("train step", 0), ("forward (no_grad)", 1)):
        t_ct, t_pt = alternating_medians(
            _setup(ct, state)[idx], _setup(torch, state)[idx], repeat, warmup=2
        )
        rows.append((label, t_ct, t_pt))
    threads = f", {args.threads} thread(s)" if args.threads else ""
    print(
        f"LSTM LM: vocab {VOCAB}, {LAYERS}x LSTM {HIDDEN}, seq {SEQ}, batch {BATCH} "
        f"(median of {repeat}{threads})"
    )
    print(f"{'':20s} {'coretorch':>12s} {'PyTorch':>12s} {'ratio':>8s}")
    for label, a, b in rows:
        print(f"{label:20s} {a * 1e3:10.1f}ms {b * 1e3:10.1f}ms {a / b:7.2f}x")


if __name__ == "__main__":
    main()
