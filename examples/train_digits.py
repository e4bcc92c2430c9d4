"""Train a small CNN on scikit-learn's bundled 8x8 digits (no download) with coretorch.

    python examples/train_digits.py                 # train, print test accuracy, save checkpoint
    python examples/train_digits.py --resume        # continue from the checkpoint
    python examples/train_digits.py --epochs 20 --batch-size 64 --lr 5e-3 --seed 1
    python examples/train_digits.py --compile       # the step captured once, then replayed

The script is PyTorch code with ``torch`` replaced by ``coretorch``: Dataset/DataLoader, an
nn.Sequential CNN, AdamW, a OneCycle schedule, and a checkpoint holding model + optimizer +
scheduler state (safetensors, written atomically).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time

import numpy as np
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

import coretorch as ct
import coretorch.nn as nn
import coretorch.nn.functional as F
from coretorch.utils.data import DataLoader, TensorDataset


def build_model(nn=nn) -> "nn.Sequential":
    """The CNN: conv(1→16) → pool → conv(16→32) → pool → linear(128→64) → linear(64→10).

    `nn` is the library's nn module, so the benchmark builds the same model with PyTorch.
    """
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * 2 * 2, 64),
        nn.ReLU(),
        nn.Dropout(0.1),
        nn.Linear(64, 10),
    )


def make_step(model, opt, loss_fn=F.cross_entropy):
    """One training step on a batch: zero the gradients, forward, loss, backward, update.
    Returns the loss (a tensor: reading it with ``float()`` is left to the caller, so that the
    step can be compiled whole)."""

    def step(xb, yb):
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        return loss

    return step


def digits_arrays() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's 1797 digits: (N, 64) float32 pixels in [0, 1] and (N,) int64 labels.

    Kept in ``$XDG_CACHE_HOME/coretorch/digits.npz`` (default ``~/.cache``) after the first
    load: importing scikit-learn takes longer than the whole training run."""
    home = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    cache = os.path.join(home, "coretorch", "digits.npz")
    try:
        with np.load(cache) as f:
            return f["x"], f["y"]
    except (OSError, KeyError, ValueError):
        pass
    from sklearn.datasets import load_digits

    digits = load_digits()
    x, y = (digits.data / 16.0).astype(np.float32), digits.target.astype(np.int64)
    with contextlib.suppress(OSError):  # a read-only home: no cache
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        tmp = f"{cache}.{os.getpid()}.tmp.npz"
        np.savez(tmp, x=x, y=y)
        os.replace(tmp, cache)
    return x, y


def load_data(seed: int, device: str):
    """The 1797 digits as (N, 1, 8, 8) float32 in [0, 1], split 80/20 with a seeded shuffle."""
    pixels, labels = digits_arrays()
    x = ct.tensor(pixels).reshape(-1, 1, 8, 8)
    y = ct.tensor(labels)
    perm = ct.randperm(len(y), generator=ct.Generator().manual_seed(seed))
    n_train = int(0.8 * len(y))
    train, test = perm[:n_train], perm[n_train:]
    return (
        TensorDataset(x[train].to(device), y[train].to(device)),
        TensorDataset(x[test].to(device), y[test].to(device)),
    )


def evaluate(model: nn.Module, loader: DataLoader) -> tuple[float, float]:
    """(mean loss, accuracy) over `loader`."""
    model.eval()
    correct = total = 0
    loss_sum = 0.0
    with ct.no_grad():
        for xb, yb in loader:
            logits = model(xb)
            loss_sum += float(F.cross_entropy(logits, yb, reduction="sum"))
            correct += int((logits.argmax(1) == yb).sum())
            total += len(yb)
    model.train()
    return loss_sum / total, correct / total


def main(argv: list[str] | None = None) -> float:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cpu", help="device to train on (default: cpu)")
    p.add_argument("--epochs", type=int, default=12, help="total epochs (default: 12)")
    p.add_argument("--batch-size", type=int, default=32, help="batch size (default: 32)")
    p.add_argument("--lr", type=float, default=1e-2, help="peak learning rate (default: 1e-2)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument(
        "--checkpoint",
        default="digits_checkpoint.safetensors",
        help="checkpoint path (default: ./digits_checkpoint.safetensors)",
    )
    p.add_argument("--resume", action="store_true", help="continue from --checkpoint")
    p.add_argument(
        "--compile",
        action="store_true",
        help="run the training step through coretorch.compile (same results)",
    )
    args = p.parse_args(argv)
    console = Console()

    ct.manual_seed(args.seed)
    train_ds, test_ds = load_data(args.seed, args.device)
    gen = ct.Generator().manual_seed(args.seed)
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, generator=gen)
    test_dl = DataLoader(test_ds, batch_size=256)

    model = build_model().to(args.device)
    opt = ct.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)

    def one_cycle(epochs: int):
        return ct.optim.lr_scheduler.OneCycleLR(
            opt, max_lr=args.lr, epochs=epochs, steps_per_epoch=len(train_dl)
        )

    sched = one_cycle(args.epochs)
    step = make_step(model, opt)
    if args.compile:
        step = ct.compile(step)  # the scheduler's lr and betas are read at each replay
    start_epoch = 0
    if args.resume:
        if not os.path.exists(args.checkpoint):
            raise SystemExit(f"--resume: no checkpoint at {args.checkpoint}")
        ck = ct.load(args.checkpoint, map_location=args.device)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["optimizer"])
        gen.set_state(ck["generator"])
        ct.set_rng_state(ck["rng"])
        start_epoch = ck["epoch"] + 1
        if ck["epochs"] == args.epochs:
            sched.load_state_dict(ck["scheduler"])
        elif args.epochs > start_epoch:
            # a longer run than the checkpoint planned: a fresh cycle over the remaining epochs
            sched = one_cycle(args.epochs - start_epoch)
        console.print(
            f"resumed from {args.checkpoint} after epoch {start_epoch} "
            f"(test accuracy then: {ck['test_accuracy']:.2%})"
        )

    console.print(
        f"coretorch {ct.__version__} · digits: {len(train_ds)} train / {len(test_ds)} "
        f"test · {sum(p.numel() for p in model.parameters())} parameters · "
        f"device {args.device}"
    )
    t0 = time.perf_counter()
    acc = evaluate(model, test_dl)[1] if start_epoch >= args.epochs else 0.0
    columns = (
        TextColumn("[bold]epoch {task.fields[epoch]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("loss {task.fields[loss]:.4f}"),
        TextColumn("test acc {task.fields[acc]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=False) as progress:
        for epoch in range(start_epoch, args.epochs):
            task = progress.add_task(
                "train",
                total=len(train_dl),
                epoch=f"{epoch + 1}/{args.epochs}",
                loss=float("nan"),
                acc="…",
            )
            running, seen = 0.0, 0
            for xb, yb in train_dl:
                loss = step(xb, yb)
                sched.step()
                running += float(loss) * len(yb)
                seen += len(yb)
                progress.update(task, advance=1, loss=running / seen)
            _, acc = evaluate(model, test_dl)
            progress.update(task, acc=f"{acc:.2%}")
            ct.save(
                {
                    "model": model.state_dict(),
                    "optimizer": opt.state_dict(),
                    "scheduler": sched.state_dict(),
                    "epoch": epoch,
                    "epochs": args.epochs,
                    "test_accuracy": acc,
                    "generator": gen.get_state(),
                    "rng": ct.get_rng_state(),
                },
                args.checkpoint,
            )
    elapsed = time.perf_counter() - t0
    console.print(
        f"[bold green]test accuracy: {acc:.2%}[/bold green] "
        f"({elapsed:.1f} s, checkpoint: {args.checkpoint})"
    )
    return acc


if __name__ == "__main__":
    main()
