"""Write the primitive-op list into docs/writing-a-backend.md (between its `<!-- primitives -->`
markers), from `coretorch.ops.primitives()`: the list a backend author reads stays the one the
core uses. `make docs-primitives` runs it; `--check` exits 1 when the file is out of date.
"""

from __future__ import annotations

import pathlib
import sys

from _generated import write_or_check

GUIDE = pathlib.Path(__file__).resolve().parents[1] / "docs" / "writing-a-backend.md"
BEGIN, END = "<!-- primitives -->", "<!-- /primitives -->"


def primitives_block() -> str:
    """The markdown between the markers: the primitives grouped by family, with their schemas."""
    from coretorch.ops import REGISTRY, primitives

    by_family: dict[str, list[str]] = {}
    for name in primitives():
        by_family.setdefault(REGISTRY[name].family or "other", []).append(name)
    lines = [f"{len(primitives())} primitives:", ""]
    for family in sorted(by_family):
        names = ", ".join(f"`{n}`" for n in by_family[family])
        lines.append(f"- **{family}**: {names}")
    return "\n".join(lines)


def updated(text: str) -> str:
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{primitives_block()}\n{END}{tail}"


def main() -> int:
    return write_or_check(
        __doc__, GUIDE, lambda: updated(GUIDE.read_text()), "make docs-primitives"
    )


if __name__ == "__main__":
    sys.exit(main())
