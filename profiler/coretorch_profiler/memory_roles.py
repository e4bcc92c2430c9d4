"""Memory categories, as PyTorch's memory profiler names them: parameter, optimizer state,
input, activation, gradient, temporary (and other).

Tensors whose role is known by identity at the end of a window (the parameters and buffers of
the modules seen, the optimizers' parameters, gradients and state) are found by storage address.
Every other allocation is categorized by where it happened and when it was freed: in a
DataLoader batch (input); in an optimizer step and outliving it (optimizer state); in a backward
node and outliving the backward pass (gradient); in the forward pass and freed by a backward
node (activation: saved for backward); anything freed sooner (temporary).
"""

from __future__ import annotations

from typing import Any, Iterable

from .raw import M_ADDR, M_BYTES

__all__ = ["CATEGORIES", "find_roles", "categorize"]

CATEGORIES = (
    "parameter",
    "optimizer state",
    "input",
    "activation",
    "gradient",
    "temporary",
    "other",
)


def _address(t) -> tuple[int, int, str] | None:
    st = getattr(t, "_storage", None)
    if st is None or not st.nbytes:
        return None
    return st.address, st.nbytes, st.device.type


def find_roles(
    modules: Iterable, optimizers: Iterable, memory: list[tuple]
) -> tuple[dict[int, str], dict[str, dict[str, int]]]:
    """({address: category} of the live tensors whose role is known, {device: {category:
    bytes}} of those allocated before the window)."""
    found: dict[int, tuple[str, int, str]] = {}

    def add(t, cat: str) -> None:
        a = _address(t) if t is not None else None
        if a is not None:
            found.setdefault(a[0], (cat, a[1], a[2]))

    for opt in optimizers:
        for g in opt.param_groups:
            for p in g["params"]:
                add(p, "parameter")
                add(p.grad, "gradient")
        for state in opt.state.values():
            for v in state.values() if isinstance(state, dict) else ():
                if hasattr(v, "_storage"):
                    add(v, "optimizer state")
    for m in modules:
        for p in m.parameters(recurse=False):
            add(p, "parameter")
            add(p.grad, "gradient")
        for b in m.buffers(recurse=False):
            add(b, "parameter")
    allocated_inside = {m[M_ADDR] for m in memory if m[M_BYTES] > 0}
    baseline: dict[str, dict[str, int]] = {}
    for addr, (cat, nbytes, dev) in found.items():
        if addr not in allocated_inside:
            d = baseline.setdefault(dev, {})
            d[cat] = d.get(cat, 0) + nbytes
    return {a: c for a, (c, _, _) in found.items()}, baseline


def categorize(allocs: list[dict[str, Any]], roles: dict[int, str]) -> None:
    """Set `category` on each allocation dict (keys: address, alive_at_end, context, survives,
    alive_at_backward), in place. `context` is where it was allocated: "input", "optimizer",
    "backward", "forward" or None (outside every region); `survives`: outlived its optimizer
    step (optimizer context) or its backward pass (backward context); `alive_at_backward`:
    still alive when the next backward pass began (forward context)."""
    for a in allocs:
        if a["alive_at_end"] and a["address"] in roles:
            a["category"] = roles[a["address"]]
            continue
        ctx = a["context"]
        if ctx == "input":
            cat = "input"
        elif ctx == "optimizer":
            cat = "optimizer state" if a["survives"] else "temporary"
        elif ctx == "backward":
            cat = "gradient" if a["survives"] else "temporary"
        elif ctx == "forward":
            cat = "activation" if a["alive_at_backward"] else "temporary"
        else:
            cat = "other"
        a["category"] = cat
