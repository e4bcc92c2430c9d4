"""The command line every generator in tools/ shares: write the generated file, or with
``--check`` exit 1 (saying how to regenerate it) when the committed file differs."""

from __future__ import annotations

import argparse
import pathlib
from typing import Callable


def write_or_check(
    doc: str, path: pathlib.Path, make_text: Callable[[], str], regenerate: str
) -> int:
    """Run the generator whose module docstring is `doc`: `make_text()` is the file's new
    content; `regenerate` is the command that rewrites it (named in the --check message)."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--check", action="store_true", help=f"exit 1 if {path.name} is out of date")
    args = p.parse_args()
    text = make_text()
    if args.check:
        if not path.exists() or path.read_text() != text:
            print(f"{path} is out of date: run `{regenerate}`")
            return 1
        return 0
    path.write_text(text)
    return 0
