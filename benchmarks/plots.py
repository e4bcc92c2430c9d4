"""The ratio charts of docs/benchmarks.md: one PNG per benchmark script, drawn from the JSON the
scripts write with ``--json``.

    python benchmarks/plots.py            # draw from benchmarks/results/*.json
    python benchmarks/plots.py --run      # run the scripts first (minutes), then draw

Each chart shows, per case, coretorch's time over its peer's measured in the same run (below 1 is
faster), on a log scale, with the target where the script has one. matplotlib is a documentation
dependency (``make install`` installs it).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
IMAGES = HERE.parent / "docs" / "img"
# the scripts with a ratio table, and their arguments for --run (--quick where they have it)
SCRIPTS = {"ops.py": ["--quick"], "dispatch.py": [], "autograd.py": [], "train.py": ["--quick"]}


def run_scripts(results: Path) -> None:
    """Run every script in SCRIPTS with ``--json results/<name>.json``."""
    results.mkdir(parents=True, exist_ok=True)
    for script, args in SCRIPTS.items():
        out = results / f"{Path(script).stem}.json"
        print(f"running {script} ...", flush=True)
        # the exit status says whether targets were met; the JSON is written either way
        subprocess.run([sys.executable, str(HERE / script), *args, "--json", str(out)], check=False)
        if not out.exists():
            raise SystemExit(f"{script} wrote no {out}")


def draw(doc: dict, path: Path) -> None:
    """One horizontal bar per case: the time ratio; a tick at its target; a line at 1."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display
    import matplotlib.pyplot as plt

    rows = [r for r in doc["rows"] if r["peer"]]
    if not rows:
        raise ValueError(f"{doc['script']}: no row has a peer timing to compare with")
    names = [r["case"] for r in rows]
    ratios = [r["coretorch"] / r["peer"] for r in rows]
    met = [r["target"] is None or q <= r["target"] for r, q in zip(rows, ratios)]
    fig, ax = plt.subplots(figsize=(10, 0.5 * len(rows) + 1.6), dpi=100)
    ys = range(len(rows))
    ax.barh(ys, ratios, color=["#2e7d32" if ok else "#e65100" for ok in met], height=0.6)
    for y, r in zip(ys, rows):
        if r["target"] is not None:
            ax.plot([r["target"]] * 2, [y - 0.4, y + 0.4], color="black", linewidth=2)
    for y, q in zip(ys, ratios):
        ax.annotate(
            f"{q:.2f}x", (q, y), xytext=(4, 0), textcoords="offset points", va="center", fontsize=9
        )
    ax.axvline(1.0, color="grey", linestyle="--", linewidth=1)
    ax.set_xscale("log")
    lo, hi = min(ratios + [1.0]), max(ratios + [1.0] + [r["target"] or 1.0 for r in rows])
    ax.set_xlim(lo / 1.5, hi * 2.5)  # room for the labels
    ax.set_yticks(list(ys), names, fontsize=9)
    ax.invert_yaxis()
    ax.set_xlabel(f"coretorch time / {doc['peer']} time (log scale)")
    load = doc["machine"]["load_average"]
    ax.set_title(
        f"benchmarks/{doc['script']}, {doc['date']}: {doc['machine']['cpus']} cores, "
        f"load average {load[0]:g} to {load[1]:g}",
        fontsize=10,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, metadata={"Software": None})  # no version stamp: reruns differ less
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--run", action="store_true", help="run the benchmark scripts first")
    p.add_argument("--results", type=Path, default=RESULTS, help="folder of the scripts' JSON")
    p.add_argument("--out", type=Path, default=IMAGES, help="folder the PNGs go to")
    args = p.parse_args(argv)
    if args.run:
        run_scripts(args.results)
    found = sorted(args.results.glob("*.json"))
    if not found:
        print(f"no results in {args.results}: run with --run")
        return 1
    for f in found:
        out = args.out / f"benchmark-{f.stem}.png"
        draw(json.loads(f.read_text()), out)
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
