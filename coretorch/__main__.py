"""`python -m coretorch`: the discovered backends, their status, devices and op coverage.

python -m coretorch              backends, distributed backends, the primitive ops
python -m coretorch --ops NAME   how backend NAME runs every op and each of its forms
python -m coretorch --info       versions, backends, threads and BLAS: for a bug report
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coretorch", description=__doc__)
    parser.add_argument(
        "--ops",
        metavar="BACKEND",
        help="per-op table for this backend (name, "
        "device type or dispatch key): native / composite / fallback / missing",
    )
    parser.add_argument(
        "--info",
        action="store_true",
        help="versions, backends (and why any "
        "failed), thread settings and the BLAS in use: paste it into a bug report",
    )
    args = parser.parse_args(argv)
    if args.info:
        from coretorch.utils.collect_env import main as collect_env

        return collect_env()
    if args.ops:
        return _print_ops(args.ops)
    from rich.console import Console
    from rich.table import Table

    import coretorch
    from coretorch.ops import REGISTRY, primitives
    from coretorch.plugins import backends

    console = Console()
    table = Table(title=f"coretorch {coretorch.__version__} backends")
    for col in (
        "backend",
        "version",
        "status",
        "device type",
        "dispatch key",
        "kernels",
        "native primitives",
        "load time",
        "overrides",
    ):
        table.add_column(col)
    n_prims = len(primitives())
    for info in backends().values():
        status = info.status if not info.reason else f"{info.status}: {info.reason}"
        if info.status == "loaded" and info.reason:
            status = f"loaded ({info.reason})"
        style = {"loaded": "green", "failed": "red", "unavailable": "yellow"}.get(info.status, "")
        table.add_row(
            info.name,
            info.version or "?",
            f"[{style}]{status}[/]" if style else status,
            ", ".join(info.device_types) or "-",
            ", ".join(info.dispatch_keys) or "-",
            str(info.ops_implemented()),
            f"{info.primitives_native()}/{n_prims}"
            + (" (+ fallback)" if info.has_fallback() else ""),
            _load_time(info),
            _overrides(info),
        )
    if not backends():
        console.print(
            "[red]no coretorch backends are installed[/] (install coretorch-cpu-numba "
            "or coretorch-meta)"
        )
    console.print(table)
    _print_overrides(console, backends().values())
    console.print(
        f"{len(REGISTRY)} ops declared, {n_prims} primitives; "
        f"CORETORCH_BACKENDS limits which backends load."
    )
    console.print(
        f"primitives (what a backend implements natively; everything else is "
        f"composite): {', '.join(primitives())}",
        soft_wrap=False,
    )
    console.print("`python -m coretorch --ops NAME` lists how backend NAME runs every op.")
    _print_distributed_backends(console)
    return 0


def _load_time(info) -> str:
    """Seconds to import the plugin and run its hooks ("-" when it was not loaded)."""
    if info.status == "skipped":
        return "-"
    return f"{info.load_time * 1000:.0f} ms" if info.load_time < 1 else f"{info.load_time:.1f} s"


def _overrides(info) -> str:
    if not info.overrides:
        return "-"
    return ", ".join(info.overrides) + ("" if info.overrides_enabled else " (not allowed)")


def _print_overrides(console, infos) -> None:
    """One line per backend that replaces (or asks to replace) other backends' kernels."""
    from coretorch.plugins import ALLOW_OVERRIDES_ENV

    for info in infos:
        if not info.overrides:
            continue
        if info.overrides_enabled:
            console.print(
                f"{info.name} overrides: {', '.join(info.overrides)}",
                style="yellow",
                soft_wrap=True,
            )
        else:
            console.print(
                f"{info.name} asks to override: {', '.join(info.overrides)} (not "
                f"allowed; set {ALLOW_OVERRIDES_ENV}={info.name} to allow)",
                soft_wrap=True,
            )


def _print_distributed_backends(console) -> None:
    """The process-group backends (entry-point group coretorch.distributed_backends)."""
    from rich.table import Table

    from coretorch.distributed.plugins import distributed_backends

    table = Table(title="distributed (process-group) backends")
    for col in ("backend", "version", "status", "device types"):
        table.add_column(col)
    for info in distributed_backends().values():
        style = {"available": "green", "failed": "red", "unavailable": "yellow"}[info.status]
        status = f"{info.status}: {info.reason}" if info.reason else info.status
        table.add_row(
            info.name,
            info.version or "?",
            f"[{style}]{status}[/]",
            ", ".join(info.device_types) or "-",
        )
    if not distributed_backends():
        console.print("no distributed backends are installed (install coretorch-mpi)")
    else:
        console.print(table)


def _backend_key(name: str):
    """The dispatch key of a backend given by entry-point name, device type or key name."""
    from coretorch.dispatch.keys import DispatchKey
    from coretorch.plugins import backends

    for info in backends().values():
        if name == info.name or name in info.device_types or name in info.dispatch_keys:
            if not info.dispatch_keys:
                raise SystemExit(
                    f"backend {info.name!r} is {info.status}"
                    + (f": {info.reason}" if info.reason else "")
                )
            return DispatchKey.get(info.dispatch_keys[0])
    return DispatchKey.get(name)  # raises with a did-you-mean suggestion


def _print_ops(name: str) -> int:
    from collections import Counter

    from rich.console import Console
    from rich.table import Table

    import coretorch  # noqa: F401  (loads the backends)
    from coretorch.coverage import op_forms
    from coretorch.ops import REGISTRY

    try:
        key = _backend_key(name)
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    console = Console()
    table = Table(
        title=f"how {key.name} runs each op (native kernel, composite of other ops, "
        f"a boxed fallback, or missing)"
    )
    for col in ("op", "kind", "form", "status"):
        table.add_column(col)
    counts: Counter = Counter()
    for op_name in sorted(REGISTRY):
        decl = REGISTRY[op_name]
        for i, (form, status) in enumerate(op_forms(op_name, key)):
            counts[status] += 1
            style = {"native": "green", "fallback": "yellow", "missing": "red"}.get(status, "")
            table.add_row(
                op_name if i == 0 else "",
                decl.kind if i == 0 else "",
                form,
                f"[{style}]{status}[/]" if style else status,
            )
    console.print(table)
    console.print(", ".join(f"{n} {s}" for s, n in counts.most_common()) + " (forms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
