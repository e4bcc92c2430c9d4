"""What would a 7B-parameter transformer need? Ask the meta device.

Builds the weights of a LLaMA-7B-shaped decoder as meta tensors (shapes and dtypes, no data),
runs one forward pass over a 2048-token sequence with ordinary coretorch ops (embedding, matmul,
RMSNorm, softmax attention, SiLU MLP, residual adds), prints the shapes it produces, and reads the
meta allocator's statistics: the memory the weights and the activations would take on a real
device. Nothing is computed and almost no memory is used.

    .venv/bin/python examples/meta_demo.py [--dtype float16] [--seq 2048] [--batch 1]
"""

from __future__ import annotations

import argparse
import math
import resource
import time

import coretorch as ct
import coretorch.nn.functional as F
from coretorch.device import get_device_type

# LLaMA-7B's shape
D_MODEL, N_LAYERS, N_HEADS, D_FF, VOCAB = 4096, 32, 32, 11008, 32000


def gib(nbytes: int) -> str:
    return f"{nbytes / 2**30:.2f} GiB"


def build_weights(dtype) -> dict[str, ct.Tensor]:
    """Every parameter of the model, on meta."""
    w = {
        "embed": ct.empty(VOCAB, D_MODEL, dtype=dtype),
        "norm": ct.empty(D_MODEL, dtype=dtype),
        "lm_head": ct.empty(VOCAB, D_MODEL, dtype=dtype),
    }
    for i in range(N_LAYERS):
        p = f"layers.{i}."
        for name in ("q", "k", "v", "o"):
            w[p + name] = ct.empty(D_MODEL, D_MODEL, dtype=dtype)
        w[p + "gate"] = ct.empty(D_FF, D_MODEL, dtype=dtype)
        w[p + "up"] = ct.empty(D_FF, D_MODEL, dtype=dtype)
        w[p + "down"] = ct.empty(D_MODEL, D_FF, dtype=dtype)
        w[p + "attn_norm"] = ct.empty(D_MODEL, dtype=dtype)
        w[p + "mlp_norm"] = ct.empty(D_MODEL, dtype=dtype)
    return w


def rms_norm(x, weight):
    return F.rms_norm(x, (D_MODEL,), weight, eps=1e-6)


def attention(x, w: dict, p: str, shapes: list | None):
    b, s, _ = x.shape
    hd = D_MODEL // N_HEADS

    def heads(t):
        return t.reshape(b, s, N_HEADS, hd).transpose(1, 2)

    q, k, v = (heads(x @ w[p + n].t()) for n in ("q", "k", "v"))
    scores = q @ k.transpose(-2, -1) / math.sqrt(hd)
    probs = ct.softmax(scores, dim=-1)
    out = (probs @ v).transpose(1, 2).reshape(b, s, D_MODEL) @ w[p + "o"].t()
    if shapes is not None:
        shapes += [
            ("q, k, v (per head)", q.shape),
            ("attention scores", scores.shape),
            ("softmax", probs.shape),
            ("attention out", out.shape),
        ]
    return out


def mlp(x, w: dict, p: str, shapes: list | None):
    hidden = ct.silu(x @ w[p + "gate"].t()) * (x @ w[p + "up"].t())
    out = hidden @ w[p + "down"].t()
    if shapes is not None:
        shapes += [("mlp hidden", hidden.shape), ("mlp out", out.shape)]
    return out


def forward(tokens, w: dict, shapes: list):
    x = ct.embedding(w["embed"], tokens)  # aten order, as torch.embedding(weight, indices)
    shapes.append(("embeddings", x.shape))
    for i in range(N_LAYERS):
        p = f"layers.{i}."
        record = shapes if i == 0 else None
        x = x + attention(rms_norm(x, w[p + "attn_norm"]), w, p, record)
        x = x + mlp(rms_norm(x, w[p + "mlp_norm"]), w, p, record)
    logits = rms_norm(x, w["norm"]) @ w["lm_head"].t()
    shapes.append(("logits", logits.shape))
    return logits


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="float16", choices=["float16", "float32"])
    parser.add_argument("--seq", type=int, default=2048)
    parser.add_argument("--batch", type=int, default=1)
    args = parser.parse_args()
    dtype = getattr(ct, args.dtype)
    allocator = get_device_type("meta").allocator
    t0 = time.perf_counter()
    with ct.device("meta"):
        weights = build_weights(dtype)
        n_params = sum(t.numel() for t in weights.values())
        weight_bytes = allocator.stats()["allocated_bytes"]
        allocator.reset_peak_stats()
        tokens = ct.zeros(args.batch, args.seq, dtype=ct.int64)
        shapes: list = []
        logits = forward(tokens, weights, shapes)
    elapsed = time.perf_counter() - t0
    stats = allocator.stats()

    print(
        f"LLaMA-7B-shaped decoder on the meta device ({args.dtype}, batch {args.batch}, "
        f"{args.seq} tokens)\n"
    )
    print(f"{'tensor':<22} shape")
    for name, shape in shapes:
        print(f"{name:<22} {tuple(shape)}")
    print(f"\nparameters             {n_params / 1e9:.2f} B in {len(weights)} tensors")
    print(f"weights would need     {gib(weight_bytes)}")
    print(
        f"forward peak would be  {gib(stats['peak_bytes'])} "
        f"(weights + {gib(stats['peak_bytes'] - weight_bytes)} of activations)"
    )
    print(f"meta allocator         {stats['num_allocs']} allocations, {stats['num_live']} live")
    print(
        f"this process used      "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB of real memory, "
        f"{elapsed:.2f} s"
    )
    print(f"\n{logits!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
