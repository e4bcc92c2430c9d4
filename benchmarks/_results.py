"""The ``--json PATH`` option of the ratio benchmarks: the rows a script printed, written as JSON
for benchmarks/plots.py (which draws the ratio charts of docs/benchmarks.md)."""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path


def add_json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json",
        metavar="PATH",
        default=None,
        help="also write the measured rows to PATH as JSON (for plots.py)",
    )


class Results:
    """The rows of one benchmark script: each case's coretorch time beside its peer's (seconds),
    and the target on their ratio (coretorch's time over the peer's; None where only printed)."""

    def __init__(self, script: str, peer: str):
        self.script, self.peer = script, peer
        self.rows: list[dict] = []
        self._load_before = os.getloadavg()[0]

    def add(
        self, case: str, coretorch: float, peer: float | None, target: float | None = None
    ) -> None:
        self.rows.append({"case": case, "coretorch": coretorch, "peer": peer, "target": target})

    def write(self, path: str | None) -> None:
        """Write the rows to `path` (nothing when it is None: --json was not given)."""
        if path is None:
            return
        doc = {
            "script": self.script,
            "peer": self.peer,
            "rows": self.rows,
            "machine": {
                "cpus": os.cpu_count(),
                "python": platform.python_version(),
                "load_average": [round(self._load_before, 2), round(os.getloadavg()[0], 2)],
            },
            "date": time.strftime("%Y-%m-%d", time.gmtime()),
        }
        Path(path).write_text(json.dumps(doc, indent=1) + "\n")
