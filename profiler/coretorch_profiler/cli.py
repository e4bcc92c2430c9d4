"""``coretorch-profile [options] script.py [args...]`` / ``coretorch-profile [options] -m module
[args...]``: run a program under the profiler, print the op table, write a Chrome trace.

The program's exit code is propagated. When it raises, the table and trace are still written,
then its traceback is shown and the exit code is 1. With ``--schedule wait,warmup,active`` steps
are counted at each ``optimizer.step()`` (when coretorch.optim offers a step hook) and at each
``coretorch_profiler.step()`` call.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import runpy
import sys
import traceback

SORT_KEYS = ("cpu_time_total", "self_cpu_time_total", "cpu_time", "self_cpu_time", "count",
             "cpu_memory_usage", "self_cpu_memory_usage", "flops")
_WITH_VALUE = {"-o", "--output", "--sort", "--row-limit", "--device", "--schedule"}
PROG = "coretorch-profile"


def _parser() -> argparse.ArgumentParser:
    from . import __version__
    import coretorch
    p = argparse.ArgumentParser(
        prog=PROG, usage=f"{PROG} [options] script.py [args...] | {PROG} [options] -m module "
                         "[args...]",
        description="Run a Python program under the coretorch profiler: prints the op table and "
                    "writes a Chrome trace (open it in https://ui.perfetto.dev or "
                    "chrome://tracing).")
    p.add_argument("-o", "--output", default="trace.json",
                   help="trace file (gzip-compressed if it ends in .gz; default: trace.json)")
    p.add_argument("--sort", default="cpu_time_total", choices=SORT_KEYS, metavar="KEY",
                   help=f"sort the table by KEY, one of {', '.join(SORT_KEYS)} "
                        "(default: cpu_time_total)")
    p.add_argument("--row-limit", type=int, default=20, metavar="N",
                   help="rows in the table (default: 20; -1 for all)")
    p.add_argument("--record-shapes", action="store_true",
                   help="record input shapes (the table groups by them)")
    p.add_argument("--memory", action="store_true",
                   help="record allocations and frees (memory columns, summary, trace counters)")
    p.add_argument("--flops", action="store_true", help="count FLOPs of the ops that declare them")
    p.add_argument("--with-stack", action="store_true",
                   help="record the Python source line of each op")
    p.add_argument("--detect-anomaly", action="store_true",
                   help="stop at the first op (forward or backward) producing NaN/Inf")
    p.add_argument("--device", metavar="DEVICE",
                   help="default device of the program's tensors (e.g. meta, cpu)")
    p.add_argument("--schedule", metavar="WAIT,WARMUP,ACTIVE",
                   help="record only steps wait+warmup .. wait+warmup+active-1")
    p.add_argument("--version", action="version",
                   version=f"{PROG} {__version__} (coretorch {coretorch.__version__})")
    p.add_argument("-m", dest="module", metavar="module", help="run a library module as a script")
    return p


def _split(argv: list[str]) -> tuple[list[str], list[str]]:
    """Our options, then the program (script or -m module) and its arguments, untouched."""
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "-m":
            return argv[:i + 2], argv[i + 2:]
        if a == "--":
            return argv[:i], argv[i + 1:]
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
        parser.error(f"--schedule: expected three integers wait,warmup,active with active >= 1, "
                     f"got {text!r} ({e})")


def _error(msg: str, code: int) -> int:
    print(f"{PROG}: error: {msg}", file=sys.stderr)
    return code


@contextlib.contextmanager
def _optimizer_steps(prof):
    """Step `prof` after every optimizer step, when coretorch.optim offers a global hook."""
    handle = None
    try:
        from coretorch.optim import optimizer as _opt
        register = getattr(_opt, "register_optimizer_step_post_hook", None)
    except ImportError:
        register = None
    if register is not None:
        handle = register(lambda *a, **k: prof.step())
    try:
        yield register is not None
    finally:
        if handle is not None:
            handle.remove()


def _exit_code(e: SystemExit) -> int:
    c = e.code
    if c is None:
        return 0
    if isinstance(c, int):
        return c
    print(c, file=sys.stderr)
    return 1


def _print_user_traceback(exc: BaseException) -> None:
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_globals.get("__name__") in (__name__, "runpy"):
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``coretorch-profile``; returns the exit code."""
    argv = sys.argv[1:] if argv is None else argv
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

    import coretorch
    from .anomaly import detect_anomaly
    from .profiling import profile
    if opts.device:
        try:
            from coretorch.device import get_device_type
            get_device_type(opts.device)  # a device type no backend provides fails here
            coretorch.set_default_device(opts.device)
        except (RuntimeError, ValueError) as e:
            return _error(f"--device: {e}", 2)
    prof = profile(record_shapes=opts.record_shapes, profile_memory=opts.memory,
                   with_stack=opts.with_stack, with_flops=opts.flops, schedule=sched)
    code, failure = 0, None
    saved_argv, saved_path0 = sys.argv[:], sys.path[0] if sys.path else None
    sys.argv = [script if script else opts.module, *prog_args]
    if sys.path:
        sys.path[0] = os.path.dirname(os.path.abspath(script)) if script else os.getcwd()
    try:
        with contextlib.ExitStack() as stack:
            if opts.detect_anomaly:
                stack.enter_context(detect_anomaly())
            stack.enter_context(prof)
            stack.enter_context(_optimizer_steps(prof))
            if script:
                runpy.run_path(script, run_name="__main__")
            else:
                runpy.run_module(opts.module, run_name="__main__", alter_sys=True)
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
    _report(prof, opts, sched is not None)
    if failure is not None:
        sys.stdout.flush()
        _print_user_traceback(failure)
    return code


def _report(prof, opts, scheduled: bool) -> None:
    try:
        events = prof.events()
    except RuntimeError:
        msg = "no step was recorded"
        if scheduled:
            msg += (f" (the schedule recorded nothing after {prof.step_num} steps: steps are "
                    "counted at optimizer.step() and coretorch_profiler.step())")
        print(f"{PROG}: {msg}; no table or trace written", file=sys.stderr)
        return
    avgs = events.key_averages(group_by_input_shape=opts.record_shapes)
    print(avgs.table(sort_by=opts.sort, row_limit=opts.row_limit))
    if opts.memory:
        print(prof.memory_summary())
    if opts.flops:
        print(f"Total FLOPs: {prof.total_flops():,}")
    path = prof.export_chrome_trace(opts.output)
    print(f"Trace written to {path} ({len(events)} events): open it in https://ui.perfetto.dev "
          f"or chrome://tracing")
