""" "Did you mean" suggestions for names a user typed (device types, dispatch keys, backends)."""

from __future__ import annotations

import difflib
from typing import Iterable

__all__ = ["did_you_mean"]


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """``" Did you mean 'CPU'?"`` for the candidate closest to `name`, or ``""`` if none is close.

    Matching ignores case, so ``"cpu"`` suggests ``"CPU"``; an exact match is never suggested.
    """
    by_lower: dict[str, str] = {}
    for c in candidates:
        if c != name:
            by_lower.setdefault(c.lower(), c)
    found = difflib.get_close_matches(str(name).lower(), list(by_lower), n=1, cutoff=0.6)
    return f" Did you mean '{by_lower[found[0]]}'?" if found else ""
