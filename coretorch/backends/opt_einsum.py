"""``coretorch.backends.opt_einsum``: coretorch's einsum does not use the opt_einsum package to
order contractions, so it is reported unavailable and disabled."""

from __future__ import annotations

__all__ = ["is_available", "get_opt_einsum"]

enabled: bool = False
strategy = None


def is_available() -> bool:
    """False: coretorch does not use opt_einsum."""
    return False


def get_opt_einsum():
    """The opt_einsum module PyTorch would use: None here."""
    return None
