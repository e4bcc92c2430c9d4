"""``coretorch-profile [options] script.py [args...]`` / ``coretorch-profile [options] -m module
[args...]``: run a program under the profiler, print the op table (and hints), write a Chrome
trace and, if asked, an HTML report, folded stacks and a memory timeline.
``coretorch-profile diff a.json b.json``: compare two traces.

Every output path is checked before the program runs. The program's exit code is propagated;
when it raises, the table and outputs are still written, then its traceback is shown (its own
frames only) and the exit code is 1. Steps (``ProfilerStep#N``) end at each optimizer step and
at each ``coretorch_profiler.step()`` call; ``--schedule wait,warmup,active`` records only some.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import runpy
import sys
import traceback

SORT_KEYS = (
    "cpu_time_total",
    "self_cpu_time_total",
    "cpu_time",
    "self_cpu_time",
    "device_time_total",
    "self_device_time_total",
    "cuda_time_total",
    "self_cuda_time_total",
    "count",
    "cpu_memory_usage",
    "self_cpu_memory_usage",
    "device_memory_usage",
    "self_device_memory_usage",
    "cuda_memory_usage",
    "self_cuda_memory_usage",
    "flops",
)
_WITH_VALUE = {
    "-o",
    "--output",
    "--sort",
    "--row-limit",
    "--device",
    "--schedule",
    "--html",
    "--stacks",
    "--memory-timeline",
}
PROG = "coretorch-profile"


def _parser() -> argparse.ArgumentParser:
    import coretorch

    from . import __version__

    p = argparse.ArgumentParser(
        prog=PROG,
        usage=f"{PROG} [options] script.py [args...] | {PROG} [options] -m module "
        f"[args...] | {PROG} diff a.json b.json [--fail-if-slower PCT]",
        description="Run a Python program under the coretorch profiler: prints the op table and "
        "hints, writes a Chrome trace (open it in https://ui.perfetto.dev or "
        "chrome://tracing) and, if asked, an HTML report.",
    )
    p.add_argument(
        "-o",
        "--output",
        default="trace.json",
        help="trace file (gzip-compressed if it ends in .gz; default: trace.json)",
    )
    p.add_argument("--html", metavar="PATH", help="write the HTML report to PATH")
    p.add_argument(
        "--stacks", metavar="PATH", help="write folded stacks (flamegraph.pl, speedscope) to PATH"
    )
    p.add_argument(
        "--memory-timeline",
        metavar="PATH",
        help="write the memory timeline by category (.json or .html) to PATH (implies --memory)",
    )
    p.add_argument(
        "--sort",
        default="cpu_time_total",
        choices=SORT_KEYS,
        metavar="KEY",
        help=f"sort the table by KEY, one of {', '.join(SORT_KEYS)} (default: cpu_time_total)",
    )
    p.add_argument(
        "--row-limit",
        type=int,
        default=20,
        metavar="N",
        help="rows in the table (default: 20; -1 for all)",
    )
    p.add_argument(
        "--record-shapes",
        action="store_true",
        help="record input shapes (the table groups by them)",
    )
    p.add_argument(
        "--memory",
        action="store_true",
        help="record allocations and frees (memory columns, summary, trace counters)",
    )
    p.add_argument("--flops", action="store_true", help="count FLOPs of the ops that declare them")
    p.add_argument(
        "--with-stack",
        action="store_true",
        help="record the Python source line of each op (and user Python functions)",
    )
    p.add_argument(
        "--with-modules",
        action="store_true",
        help="record each nn.Module forward and backward as a region (module tree)",
    )
    p.add_argument(
        "--detect-anomaly",
        action="store_true",
        help="stop at the first op (forward or backward) producing NaN/Inf",
    )
    p.add_argument(
        "--compat",
        action="store_true",
        help="run a PyTorch program as written: `import torch` gives coretorch "
        "(see python -m coretorch.compat)",
    )
    p.add_argument(
        "--device",
        metavar="DEVICE",
        help="default device of the program's tensors (e.g. meta, cpu)",
    )
    p.add_argument(
        "--schedule",
        metavar="WAIT,WARMUP,ACTIVE",
        help="record only steps wait+warmup .. wait+warmup+active-1 (a step ends "
        "at each optimizer step and at each coretorch_profiler.step())",
    )
    p.add_argument(
        "--version",
        action="version",
        version=f"{PROG} {__version__} (coretorch {coretorch.__version__})",
    )
    p.add_argument("-m", dest="module", metavar="module", help="run a library module as a script")
    return p


def _split(argv: list[str]) -> tuple[list[str], list[str]]:
    """Our options, then the program (script or -m module) and its arguments, untouched."""
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-m":
            return argv[: i + 2], argv[i + 2 :]
        if a == "--":
            return argv[:i], argv[i + 1 :]
        if not a.startswith("-") or a == "-":
            return argv[:i], argv[i:]
        i += 2 if a in _WITH_VALUE else 1
    return argv, []


def _parse_schedule(text: str, parser: argparse.ArgumentParser):
    from .schedule import schedule

    try:
        wait, warmup, active = (int(x) for x in text.split(","))
        return schedule(wait=wait, warmup=warmup, active=active, repeat=1)
    except ValueError as e:
        parser.error(
            f"--schedule: expected three integers wait,warmup,active with active >= 1, "
            f"got {text!r} ({e})"
        )


def _error(msg: str, code: int) -> int:
    print(f"{PROG}: error: {msg}", file=sys.stderr)
    return code


def _exit_code(e: SystemExit) -> int:
    c = e.code
    if c is None:
        return 0
    if isinstance(c, int):
        return c
    print(c, file=sys.stderr)
    return 1


def _is_ours(tb) -> bool:
    name = tb.tb_frame.f_globals.get("__name__") or ""
    return (
        name in (__name__, "runpy")
        or name == "coretorch"
        or name.startswith(("coretorch.", "coretorch_"))
    )


def _print_user_traceback(exc: BaseException) -> None:
    """The program's traceback without the launcher's frames; for an anomaly report, without
    coretorch's own frames after the user's last one either."""
    from .anomaly import AnomalyError

    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_globals.get("__name__") in (__name__, "runpy"):
        tb = tb.tb_next
    if isinstance(exc, AnomalyError):
        frames, t = [], tb
        while t is not None:
            frames.append(t)
            t = t.tb_next
        keep = max((i for i, t in enumerate(frames) if not _is_ours(t)), default=len(frames) - 1)
        summary = traceback.StackSummary.extract(
            ((t.tb_frame, t.tb_lineno) for t in frames[: keep + 1])
        )
        print("Traceback (most recent call last):", file=sys.stderr)
        print("".join(summary.format()), end="", file=sys.stderr)
        print("".join(traceback.format_exception_only(type(exc), exc)), end="", file=sys.stderr)
        return
    traceback.print_exception(type(exc), exc, tb)


def _run_program(script: str | None, module: str | None) -> None:
    """Run the user's program (its frames start below this one)."""
    if script:
        runpy.run_path(script, run_name="__main__")
    elif module:
        runpy.run_module(module, run_name="__main__", alter_sys=True)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``coretorch-profile``; returns the exit code."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["diff"]:
        return diff_main(argv[1:])
    ours, program = _split(argv)
    parser = _parser()
    opts = parser.parse_args(ours)
    if opts.module is None:
        if not program:
            parser.print_usage(sys.stderr)
            return _error("no script or -m module given", 2)
        script, prog_args = program[0], program[1:]
        if not os.path.isfile(script):
            return _error(f"can't open file '{script}': No such file or directory", 2)
    else:
        script, prog_args = None, program
        try:
            found = importlib.util.find_spec(opts.module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            return _error(f"No module named {opts.module}", 1)
    sched = _parse_schedule(opts.schedule, parser) if opts.schedule else None
    from .export import check_writable

    outputs = [
        (opts.output, "--output", "trace"),
        (opts.html, "--html", "report"),
        (opts.stacks, "--stacks", "stacks"),
        (opts.memory_timeline, "--memory-timeline", "memory timeline"),
    ]
    for path, flag, what in outputs:
        if path:
            try:
                check_writable(path, what)
            except OSError as e:
                return _error(f"{flag}: {e}", 2)
    if opts.memory_timeline and not opts.memory_timeline.endswith((".json", ".json.gz", ".html")):
        return _error(
            "--memory-timeline: expected a path ending in .json, .json.gz or .html, "
            f"got {opts.memory_timeline!r}",
            2,
        )

    import coretorch

    from ._frames import mark_launcher
    from .anomaly import detect_anomaly
    from .profiling import profile

    if opts.compat:
        from coretorch.compat import install

        install()
    if opts.device:
        try:
            from coretorch.device import get_device_type

            get_device_type(opts.device)  # a device type no backend provides fails here
            coretorch.set_default_device(opts.device)
        except (RuntimeError, ValueError) as e:
            return _error(f"--device: {e}", 2)
    mark_launcher(_run_program.__code__)
    prof = profile(
        record_shapes=opts.record_shapes,
        profile_memory=opts.memory or bool(opts.memory_timeline),
        with_stack=opts.with_stack,
        with_flops=opts.flops,
        with_modules=opts.with_modules,
        schedule=sched,
    )
    code = 0
    failure: BaseException | None = None
    saved_argv, saved_path0 = sys.argv[:], sys.path[0] if sys.path else None
    sys.argv = [script if script else opts.module, *prog_args]
    if sys.path:
        sys.path[0] = os.path.dirname(os.path.abspath(script)) if script else os.getcwd()
    try:
        with contextlib.ExitStack() as stack:
            if opts.detect_anomaly:
                stack.enter_context(detect_anomaly())
            stack.enter_context(prof)
            _run_program(script, opts.module)
    except SystemExit as e:
        code = _exit_code(e)
    except KeyboardInterrupt as e:
        code, failure = 130, e
    except BaseException as e:  # noqa: BLE001  (the program's error: report, then fail)
        code, failure = 1, e
    finally:
        sys.argv = saved_argv
        if saved_path0 is not None and sys.path:
            sys.path[0] = saved_path0
    try:
        _report(prof, opts, sched is not None)
    except Exception as e:  # noqa: BLE001  (our outputs failed: the program's outcome still shows)
        _error(f"writing the results failed: {type(e).__name__}: {e}", 1)
        code = code or 1
    if failure is not None:
        sys.stdout.flush()
        _print_user_traceback(failure)
    if code:
        print(f"{PROG}: the program exited with status {code}", file=sys.stderr)
    return code


def _report(prof, opts, scheduled: bool) -> None:
    try:
        result = prof.result
    except RuntimeError:
        msg = "no step was recorded"
        if scheduled:
            msg += (
                f" (the schedule recorded nothing after {prof.step_num} steps: steps are "
                "counted at optimizer.step() and coretorch_profiler.step())"
            )
        print(f"{PROG}: {msg}; no table or trace written", file=sys.stderr)
        return
    events = result.events()
    avgs = events.key_averages(group_by_input_shape=opts.record_shapes)
    print(avgs.table(sort_by=opts.sort, row_limit=opts.row_limit))
    if opts.with_modules:
        print(result.module_table())
    if prof.profile_memory:
        print(result.memory_summary())
    if opts.flops:
        print(result.flops_summary())
    hints = result.advice()
    if hints:
        print("Hints:")
        for h in hints:
            print(f"  - {h}")
        print()
    path = result.export_chrome_trace(opts.output)
    print(
        f"Trace written to {path} ({len(events)} events): open it in https://ui.perfetto.dev "
        f"or chrome://tracing"
    )
    if opts.stacks:
        print(f"Folded stacks written to {result.export_stacks(opts.stacks)}")
    if opts.memory_timeline:
        print(f"Memory timeline written to {result.export_memory_timeline(opts.memory_timeline)}")
    if opts.html:
        print(f"Report written to {result.export_html(opts.html)}")


def _percent(text: str) -> float:
    t = text.strip().rstrip("%")
    try:
        v = float(t)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a percentage such as 10% or 2.5, got {text!r}"
        ) from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected a percentage >= 0, got {text!r}")
    return v


def diff_main(argv: list[str]) -> int:
    """``coretorch-profile diff a.json b.json``: exit 1 if b is slower than `--fail-if-slower`
    allows, 2 on bad input, else 0."""
    p = argparse.ArgumentParser(
        prog=f"{PROG} diff",
        description="Compare two traces written by coretorch-profile "
        "(or export_chrome_trace): per step, module and op, the change in time, calls, FLOPs "
        "and memory, largest change first.",
    )
    p.add_argument("a", help="the baseline trace")
    p.add_argument("b", help="the trace to compare with it")
    p.add_argument(
        "--row-limit", type=int, default=30, metavar="N", help="rows in the table (default: 30)"
    )
    p.add_argument(
        "--fail-if-slower",
        type=_percent,
        metavar="PCT",
        help="exit with status 1 if b's step time (or whole time, without steps) "
        "is more than PCT percent above a's",
    )
    opts = p.parse_args(argv)
    from .diff import diff

    try:
        d = diff(opts.a, opts.b)
    except (OSError, ValueError) as e:
        return _error(f"diff: {e}", 2)
    print(d.table(row_limit=opts.row_limit))
    slower = 100 * d.slower_by
    if opts.fail_if_slower is not None and slower > opts.fail_if_slower:
        print(
            f"{PROG} diff: b is {slower:.1f}% slower than a (allowed: {opts.fail_if_slower:g}%)",
            file=sys.stderr,
        )
        return 1
    return 0
