"""Measure coretorch against PyTorch's own operator database (``op_db``).

    python tools/opdb_yardstick.py [-o docs/op-coverage.md] [--samples 6] [--only NAME ...]
                                                                       (``make op-coverage``)

For every entry of ``torch.testing._internal.common_methods_invocations.op_db`` the tool looks
for coretorch's equivalent at the same path (``torch.X`` -> ``coretorch.X``, ``torch.linalg.X``
-> ``coretorch.linalg.X``, ``torch.nn.functional.X`` -> ``coretorch.nn.functional.X``, then the
entry's aliases, then the method ``Tensor.X``), runs the entry's sample inputs (float32, float64
and int64 where the entry supports them; a bounded number per entry) on both, converted through
numpy, and compares the outputs; for entries that support autograd it also compares the
gradients of the sum of the outputs in float64. Every sample runs under a time limit inside
try/except, so one failure never stops the run.

Needs PyTorch (and its test-suite dependency ``expecttest``) installed: PyTorch is the reference
only, never a dependency of coretorch. The helpers above ``main`` (name mapping, conversion,
comparison) need neither and are unit-tested without them.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import time
import types
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import numpy as np

# Entries whose outputs are random or uninitialized: only shapes and dtypes are compared.
NONDETERMINISTIC = (
    "rand",
    "normal",
    "bernoulli",
    "dropout",
    "multinomial",
    "uniform",
    "empty",
    "cauchy",
    "exponential",
    "geometric",
    "log_normal",
    "randn",
    "randint",
    "rrelu",
    "new_empty",
)
# Relative and absolute tolerance per dtype name (float32 a little looser than PyTorch's own
# defaults: the two libraries may sum in a different order).
TOLERANCES = {
    "float16": (1e-3, 1e-3),
    "bfloat16": (1.6e-2, 1e-2),
    "float32": (1e-4, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1e-4, 1e-5),
    "complex128": (1e-7, 1e-7),
}
GRAD_TOLERANCE = (1e-6, 1e-7)


# ---------------------------------------------------------------------------------------------
# name mapping (no torch needed)


def resolve_path(root: Any, dotted: str) -> Any | None:
    """``getattr`` along ``dotted`` starting at `root` (None where a part is missing)."""
    obj = root
    for part in dotted.split("."):
        if not part:
            return None
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def candidate_paths(name: str, aliases: Iterable[str] = ()) -> list[str]:
    """The paths under the library root an op_db entry may have, in order of preference:
    the entry's own name (``linalg.norm``, ``nn.functional.relu``), then its aliases.
    ``_refs``-style private prefixes are kept as given."""
    out = []
    for n in (name, *aliases):
        n = n[len("torch.") :] if n.startswith("torch.") else n
        if n not in out:
            out.append(n)
    return out


@dataclass
class Equivalent:
    """How the coretorch side of an entry is called: ``kind`` is ``function`` (``fn(input,
    *args)``; also PyTorch's own wrapper with ``torch`` bound to coretorch) or ``method``
    (``getattr(input, name)(*args)``; an attribute such as ``T`` is read, not called)."""

    kind: str
    path: str
    fn: Any = None

    def call(self, inp, args, kwargs):
        if self.kind == "method":
            attr = getattr(inp, self.path)
            return attr(*args, **kwargs) if callable(attr) else attr
        return self.fn(inp, *args, **kwargs)


def rebind(fn: types.FunctionType, module_name: str, module: Any) -> types.FunctionType:
    """A copy of `fn` whose global `module_name` is `module`: PyTorch's op wrappers
    (``lambda x, n: torch.polygamma(n, x)``) then call coretorch with the same argument order."""
    env = dict(fn.__globals__)
    env[module_name] = module
    out = types.FunctionType(fn.__code__, env, fn.__name__, fn.__defaults__, fn.__closure__)
    out.__kwdefaults__ = fn.__kwdefaults__
    return out


def find_equivalent(
    root: Any,
    tensor_cls: type,
    name: str,
    aliases: Iterable[str] = (),
    method_name: str | None = None,
) -> Equivalent | None:
    """coretorch's equivalent of an op_db entry: a function at the same path (or an alias's
    path), else the Tensor method of the entry's method variant, else None."""
    for path in candidate_paths(name, aliases):
        fn = resolve_path(root, path)
        if callable(fn) and not isinstance(fn, type):
            return Equivalent("function", path, fn)
    for m in (method_name, name):
        if m and "." not in m and getattr(tensor_cls, m, None) is not None:
            return Equivalent("method", m)
    return None


# (values, indices) results where PyTorch's choice among equal elements is its own
TIE_BREAKING = frozenset({"kthvalue", "topk"})


# (eigenvalues, eigenvectors) results: each eigenvector is defined up to its sign
SIGN_FREE = frozenset({"linalg.eigh"})


def _sign_fixed(vectors: np.ndarray) -> np.ndarray:
    """Eigenvectors (the columns) with the sign that makes each column's largest entry
    positive."""
    if vectors.size == 0:
        return vectors
    pick = np.take_along_axis(vectors, np.abs(vectors).argmax(axis=-2)[..., None, :], -2)
    return vectors * np.where(pick < 0, -1, 1)


def is_nondeterministic(name: str) -> bool:
    """Entries whose values cannot be compared (random or uninitialized outputs)."""
    base = name.rsplit(".", 1)[-1]
    return any(word in base for word in NONDETERMINISTIC)


# ---------------------------------------------------------------------------------------------
# comparison (no torch needed)


def compare_arrays(
    expected: np.ndarray,
    actual: np.ndarray,
    dtype_name: str | None = None,
    tol: tuple | None = None,
) -> str | None:
    """None when `actual` matches `expected` (shape, dtype kind and values within the dtype's
    tolerance, NaNs equal); otherwise a one-line reason."""
    expected, actual = np.asarray(expected), np.asarray(actual)
    if expected.shape != actual.shape:
        return f"shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    if expected.dtype != actual.dtype:
        return f"dtype {actual.dtype} != {expected.dtype}"
    if expected.size == 0:
        return None
    if expected.dtype.kind in "biu":
        if not np.array_equal(expected, actual):
            return f"values differ ({_ndiff(expected != actual)} of {expected.size})"
        return None
    rtol, atol = tol or TOLERANCES.get(dtype_name or expected.dtype.name, (1e-5, 1e-6))
    ok = np.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
    if not ok.all():
        with np.errstate(invalid="ignore"):
            err = np.nanmax(np.abs(np.where(ok, 0, actual - expected)))
        return f"values differ ({_ndiff(~ok)} of {expected.size}, max abs error {err:.3g})"
    return None


def _ndiff(mask) -> int:
    return int(np.count_nonzero(mask))


def compare_outputs(
    expected, actual, to_numpy: Callable, tol: tuple | None = None, values: bool = True
) -> str | None:
    """Compare a (possibly nested) output: tensors through `to_numpy` (which returns None for
    what is not a tensor), sequences element-wise, numbers by value."""
    e_arr, a_arr = to_numpy(expected), to_numpy(actual)
    if e_arr is not None or a_arr is not None:
        if e_arr is None or a_arr is None:
            return f"got {type(actual).__name__}, expected {type(expected).__name__}"
        if not values:
            if e_arr.shape != a_arr.shape:
                return f"shape {a_arr.shape} != {e_arr.shape}"
            return None if e_arr.dtype == a_arr.dtype else f"dtype {a_arr.dtype} != {e_arr.dtype}"
        return compare_arrays(e_arr, a_arr, tol=tol)
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)) or len(actual) != len(expected):
            return f"got {type(actual).__name__} of {_len(actual)}, expected {len(expected)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            why = compare_outputs(e, a, to_numpy, tol, values)
            if why:
                return f"output {i}: {why}"
        return None
    if isinstance(expected, (bool, int, float, complex)) and not isinstance(expected, bool):
        if not isinstance(actual, (int, float, complex, np.number)) or isinstance(actual, bool):
            return f"got {type(actual).__name__}, expected {type(expected).__name__}"
        if values and not (
            actual == expected
            or (
                isinstance(expected, float)
                and math.isclose(actual, expected, rel_tol=1e-6, abs_tol=1e-7)
            )
            or (expected != expected and actual != actual)
        ):
            return f"{actual!r} != {expected!r}"
        return None
    if values and expected != actual:
        return f"{actual!r} != {expected!r}"
    return None


def _len(x) -> str:
    return str(len(x)) if hasattr(x, "__len__") else "-"


def first_line(exc: BaseException) -> str:
    """``Type: first line of the message``, cut to a readable length."""
    msg = str(exc).strip().splitlines()
    text = f"{type(exc).__name__}: {msg[0] if msg else ''}"
    return text if len(text) <= 160 else text[:157] + "..."


class SampleTimeout(Exception):
    """A sample ran past its time limit."""


class time_limit:
    """Raise `SampleTimeout` in the main thread after `seconds` (SIGALRM; no-op elsewhere)."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.active = hasattr(signal, "setitimer")

    def _raise(self, *_):
        raise SampleTimeout(f"sample took over {self.seconds:g}s")

    def __enter__(self):
        if self.active:
            self.previous = signal.signal(signal.SIGALRM, self._raise)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
        return self

    def __exit__(self, *exc):
        if self.active:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
        return False


# ---------------------------------------------------------------------------------------------
# results


@dataclass
class EntryResult:
    """What was measured for one op_db entry."""

    name: str
    equivalent: str | None = None
    value_ok: int = 0
    value_total: int = 0
    grad_ok: int = 0
    grad_total: int = 0
    first_error: str | None = None
    first_grad_error: str | None = None
    seconds: float = 0.0

    @property
    def label(self) -> str:
        return self.name


@dataclass
class Summary:
    """Totals over every entry."""

    results: list = field(default_factory=list)

    def totals(self) -> dict:
        present = [r for r in self.results if r.equivalent]
        return {
            "entries": len(self.results),
            "names": len({r.name.split(" ")[0] for r in self.results}),
            "equivalent": len(present),
            "equivalent_names": len({r.name.split(" ")[0] for r in present}),
            "value_ok": sum(r.value_ok for r in present),
            "value_total": sum(r.value_total for r in present),
            "grad_ok": sum(r.grad_ok for r in present),
            "grad_total": sum(r.grad_total for r in present),
        }


def percent(ok: int, total: int) -> str:
    return f"{100.0 * ok / total:.1f}%" if total else "n/a"


def render_markdown(summary: Summary, settings: str) -> str:
    """docs/op-coverage.md: the totals, then the missing entries and the failing ones."""
    t = summary.totals()
    lines = [
        "# Op coverage against PyTorch's operator database",
        "",
        "Generated by `make op-coverage` (`tools/opdb_yardstick.py`); do not edit by hand.",
        "",
        "PyTorch's test suite describes its operators in `op_db` "
        "(`torch.testing._internal.common_methods_invocations`): each entry has sample inputs, "
        "supported dtypes and whether it is differentiable. Each entry is looked up in coretorch "
        "at the same path (`torch.X` -> `coretorch.X`, `torch.linalg.X` -> `coretorch.linalg.X`, "
        "aliases, then the method `Tensor.X`); its samples run on both libraries and the outputs "
        "(and, in float64, the gradients of their sum) are compared.",
        "",
        f"Settings: {settings}.",
        "",
        "| measure | value |",
        "|---|---|",
        f"| entries with an equivalent | {t['equivalent']} of {t['entries']} |",
        f"| names with an equivalent | {t['equivalent_names']} of {t['names']} |",
        f"| sample values that agree | {percent(t['value_ok'], t['value_total'])} "
        f"({t['value_ok']} of {t['value_total']}) |",
        f"| gradients that agree | {percent(t['grad_ok'], t['grad_total'])} "
        f"({t['grad_ok']} of {t['grad_total']}) |",
        "",
    ]
    failing = [
        r
        for r in summary.results
        if r.equivalent and (r.value_ok < r.value_total or r.grad_ok < r.grad_total)
    ]
    lines += [
        f"## Entries with failing samples ({len(failing)})",
        "",
        "| entry | values | gradients | first error |",
        "|---|---|---|---|",
    ]
    for r in sorted(failing, key=lambda r: r.name):
        err = (r.first_error or r.first_grad_error or "").replace("|", "\\|")
        lines.append(
            f"| `{r.name}` | {r.value_ok}/{r.value_total} | {r.grad_ok}/{r.grad_total} | {err} |"
        )
    missing = sorted(r.name for r in summary.results if not r.equivalent)
    lines += [
        "",
        f"## Entries without an equivalent ({len(missing)})",
        "",
        ", ".join(f"`{n}`" for n in missing),
        "",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# the run (needs torch)


class Runner:
    """Runs op_db entries against coretorch; `torch` and `ct` are the two libraries."""

    def __init__(self, torch, ct, samples: int, grad_samples: int, seconds: float):
        self.torch, self.ct = torch, ct
        self.samples, self.grad_samples, self.seconds = samples, grad_samples, seconds
        self.dtype_map = {
            getattr(torch, n): getattr(ct, n)
            for n in (
                "float16",
                "bfloat16",
                "float32",
                "float64",
                "int8",
                "int16",
                "int32",
                "int64",
                "uint8",
                "bool",
                "complex64",
                "complex128",
            )
            if hasattr(ct, n)
        }
        self.formats = {}
        for n in ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format"):
            if hasattr(ct, n):
                self.formats[getattr(torch, n)] = getattr(ct, n)

    # conversion torch -> coretorch
    def to_ct(self, x, grad: bool = False):
        torch, ct = self.torch, self.ct
        if isinstance(x, torch.Tensor):
            if x.dtype not in self.dtype_map:
                raise TypeError(f"no coretorch dtype for {x.dtype}")
            if not grad and x.numel() and x.storage_offset():
                return self._view_to_ct(x)
            arr = x.detach().resolve_conj().resolve_neg().cpu().numpy().copy()
            out = ct.from_numpy(arr) if arr.ndim else ct.tensor(arr)
            if out.dtype != self.dtype_map[x.dtype]:
                out = out.to(self.dtype_map[x.dtype])
            if grad and x.requires_grad:
                out.requires_grad_(True)
            return out
        if isinstance(x, torch.Size):
            return tuple(x)
        if isinstance(x, torch.dtype):
            if x not in self.dtype_map:
                raise TypeError(f"no coretorch dtype for {x}")
            return self.dtype_map[x]
        if isinstance(x, torch.memory_format):
            if x not in self.formats:
                raise TypeError(f"no coretorch memory format for {x}")
            return self.formats[x]
        if isinstance(x, torch.device):
            return ct.device(x.type)
        if isinstance(x, torch.Generator):
            return None
        if callable(x) and str(getattr(x, "__module__", "")).startswith("torch."):
            # a torch function or module given as an argument (distance_function=...)
            name = getattr(x, "__name__", type(x).__name__)
            found = resolve_path(ct, f"{x.__module__[len('torch.') :]}.{name}")
            if found is None:
                raise TypeError(f"no coretorch equivalent of {x.__module__}.{name}")
            return found if hasattr(x, "__name__") else found()
        if isinstance(x, list):
            return [self.to_ct(v, grad) for v in x]
        if isinstance(x, tuple):
            return tuple(self.to_ct(v, grad) for v in x)
        if isinstance(x, dict):
            return {k: self.to_ct(v, grad) for k, v in x.items()}
        return x

    def _view_to_ct(self, x):
        """A view into a larger storage (samples of as_strided's partial views read outside
        the view): the whole storage copied over, and the same view of it taken."""
        size = x.untyped_storage().nbytes() // x.element_size()
        whole = self.torch.as_strided(x.detach(), (size,), (1,), 0)
        return self.to_ct(whole).as_strided(tuple(x.shape), x.stride(), x.storage_offset())

    def to_numpy(self, x):
        """numpy array of a torch or coretorch tensor; None for anything else."""
        torch, ct = self.torch, self.ct
        if isinstance(x, torch.Tensor):
            return x.detach().cpu().numpy(force=True)  # force: conj/neg bits, zero tensors
        if isinstance(x, ct.Tensor):
            return np.asarray(x.detach().cpu().numpy())
        return None

    def tensor_leaves(self, x, cls) -> list:
        if isinstance(x, cls):
            return [x]
        if isinstance(x, (list, tuple)):
            return [t for v in x for t in self.tensor_leaves(v, cls)]
        if isinstance(x, dict):
            return [t for v in x.values() for t in self.tensor_leaves(v, cls)]
        return []

    def dtypes(self, op) -> list:
        supported = op.supported_dtypes("cpu")
        torch = self.torch
        return [d for d in (torch.float32, torch.float64, torch.int64) if d in supported]

    def equivalent(self, op) -> Equivalent | None:
        method = getattr(op.method_variant, "__name__", None) if op.method_variant else None
        aliases = [a.name for a in getattr(op, "aliases", ())]
        eq = find_equivalent(self.ct, self.ct.Tensor, op.name, aliases, method)
        fn = op.op
        if eq is not None and self.is_wrapper(fn):
            # the entry calls a wrapper written in the test suite: run it with torch -> coretorch
            return Equivalent("function", eq.path, rebind(fn, "torch", self.ct))
        return eq

    @staticmethod
    def is_wrapper(fn) -> bool:
        return isinstance(fn, types.FunctionType) and fn.__module__.startswith("torch.testing")

    def run_entry(self, op) -> EntryResult:
        label = op.name + (f" ({op.variant_test_name})" if op.variant_test_name else "")
        res = EntryResult(label)
        eq = self.equivalent(op)
        if eq is None:
            return res
        res.equivalent = f"{eq.kind}:{eq.path}"
        start = time.perf_counter()
        values = not (
            is_nondeterministic(op.name)
            or (self.is_wrapper(op.op) and "wrapper_set_seed" in op.op.__code__.co_names)
        )
        for dtype in self.dtypes(op):
            for sample in self._samples(op, dtype, False, self.samples):
                ok, why = self._guard(lambda: self._value(op, eq, sample, dtype, values))
                if ok is None:
                    continue
                res.value_total += 1
                res.value_ok += ok
                if not ok and res.first_error is None:
                    res.first_error = f"{dtype}: {why}"
        if op.supports_autograd and values and self.torch.float64 in op.supported_dtypes("cpu"):
            for sample in self._samples(op, self.torch.float64, True, self.grad_samples):
                ok, why = self._guard(lambda: self._grad(op, eq, sample))
                if ok is None:  # nothing to differentiate in this sample
                    continue
                res.grad_total += 1
                res.grad_ok += ok
                if not ok and res.first_grad_error is None:
                    res.first_grad_error = f"grad: {why}"
        res.seconds = time.perf_counter() - start
        return res

    def _samples(self, op, dtype, requires_grad, limit) -> list:
        try:
            with time_limit(self.seconds * 2):
                out = []
                for s in op.sample_inputs("cpu", dtype, requires_grad=requires_grad):
                    out.append(s)
                    if len(out) >= limit:
                        break
                return out
        except Exception:  # PyTorch cannot build samples here: nothing to measure
            return []

    def _guard(self, fn):
        try:
            with time_limit(self.seconds):
                why = fn()
        except RecursionError as e:
            return False, first_line(e)
        except Exception as e:  # noqa: BLE001 - any failure is a disagreement, never a stop
            return False, first_line(e)
        if why is _NOTHING:
            return None, None
        return (why is None), why

    def _value(self, op, eq, sample, dtype, values):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                expected = op(sample.input, *sample.args, **sample.kwargs)
            except Exception:
                return _NOTHING  # PyTorch itself refuses: not a coretorch disagreement
            inp = self.to_ct(sample.input)
            args, kwargs = self.to_ct(sample.args), self.to_ct(sample.kwargs)
            actual = eq.call(inp, args, kwargs)
        tol = TOLERANCES.get(str(dtype).replace("torch.", ""))
        why = compare_outputs(expected, actual, self.to_numpy, tol, values)
        if (
            why
            and values
            and op.name in TIE_BREAKING
            and self._ties_explain(sample, expected, actual, tol)
        ):
            return None
        if why and values and op.name in SIGN_FREE:
            return compare_outputs(expected[0], actual[0], self.to_numpy, tol) or compare_arrays(
                _sign_fixed(self.to_numpy(expected[1])),
                _sign_fixed(self.to_numpy(actual[1])),
                tol=tol,
            )
        return why

    def _ties_explain(self, sample, expected, actual, tol) -> bool:
        """Whether a (values, indices) result differs only in which of equal elements its
        indices name (PyTorch leaves that choice to the implementation): the values agree and
        the input read at coretorch's indices gives them."""
        if compare_outputs(expected[0], actual[0], self.to_numpy, tol):
            return False
        x = sample.input.detach().numpy()
        dim = (
            (sample.args[1] if len(sample.args) > 1 else sample.kwargs.get("dim", -1))
            if x.ndim
            else 0
        )
        idx, vals = self.to_numpy(actual[1]), self.to_numpy(actual[0])
        keep = idx.ndim == x.ndim
        taken = (
            np.take_along_axis(x, idx if keep else np.expand_dims(idx, dim), dim) if x.ndim else x
        )
        return compare_arrays(vals, taken if keep or not x.ndim else taken.squeeze(dim)) is None

    def _grad(self, op, eq, sample):
        torch, ct = self.torch, self.ct
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_leaves = [
                t
                for t in self.tensor_leaves(
                    (sample.input, sample.args, sample.kwargs), torch.Tensor
                )
                if t.requires_grad
            ]
            if not t_leaves:
                return _NOTHING
            try:
                out = op(sample.input, *sample.args, **sample.kwargs)
                out = sample.output_process_fn_grad(out)
                t_outs = [
                    o
                    for o in self.tensor_leaves(out, torch.Tensor)
                    if o.requires_grad and o.dtype.is_floating_point
                ]
                if not t_outs:
                    return _NOTHING
                expected = torch.autograd.grad(
                    sum(o.sum() for o in t_outs), t_leaves, allow_unused=True
                )
            except Exception:
                return _NOTHING
            inp = self.to_ct(sample.input, grad=True)
            args, kwargs = self.to_ct(sample.args, True), self.to_ct(sample.kwargs, True)
            c_leaves = [
                t for t in self.tensor_leaves((inp, args, kwargs), ct.Tensor) if t.requires_grad
            ]
            actual_out = eq.call(inp, args, kwargs)
            try:
                actual_out = sample.output_process_fn_grad(actual_out)
            except Exception:  # the fn uses torch functions: keep the raw output
                pass
            c_outs = [
                o
                for o in self.tensor_leaves(actual_out, ct.Tensor)
                if o.requires_grad and o.dtype.is_floating_point
            ]
            if not c_outs:
                return "the output does not require grad"
            total = c_outs[0].sum()
            for o in c_outs[1:]:
                total = total + o.sum()
            actual = ct.autograd.grad(total, c_leaves, allow_unused=True)
        for i, (e, a) in enumerate(zip(expected, actual)):
            if e is None and a is None:
                continue
            e = self.to_numpy(e) if e is not None else np.zeros(t_leaves[i].shape)
            a = self.to_numpy(a) if a is not None else np.zeros(tuple(c_leaves[i].shape))
            why = compare_arrays(e, a, tol=GRAD_TOLERANCE)
            if why:
                return f"input {i}: {why}"
        return None


_NOTHING = object()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-o", "--output", help="write the markdown summary here")
    p.add_argument("--samples", type=int, default=6, help="value samples per entry and dtype")
    p.add_argument("--grad-samples", type=int, default=3, help="gradient samples per entry")
    p.add_argument("--seconds", type=float, default=5.0, help="time limit per sample")
    p.add_argument("--only", nargs="*", help="run only entries with these names")
    p.add_argument("-v", "--verbose", action="store_true", help="print each entry as it runs")
    a = p.parse_args(argv)
    os.environ.setdefault("PYTORCH_TEST_WITH_SLOW", "0")
    warnings.simplefilter("ignore")
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    import coretorch as ct

    torch.manual_seed(0)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 3000))
    runner = Runner(torch, ct, a.samples, a.grad_samples, a.seconds)
    summary = Summary()
    start = time.perf_counter()
    for op in op_db:
        if a.only and op.name not in a.only:
            continue
        try:
            r = runner.run_entry(op)
        except Exception as e:  # noqa: BLE001 - a broken entry is recorded, the run goes on
            r = EntryResult(op.name, equivalent="?", first_error=first_line(e))
        summary.results.append(r)
        if a.verbose:
            print(
                f"{r.name:40s} {r.equivalent or '-':30s} values {r.value_ok}/{r.value_total}"
                f" grads {r.grad_ok}/{r.grad_total} {r.seconds:.1f}s "
                f"{r.first_error or r.first_grad_error or ''}",
                flush=True,
            )
    settings = (
        f"PyTorch {torch.__version__}, up to {a.samples} samples per entry and dtype "
        f"(float32, float64, int64 where supported), up to {a.grad_samples} gradient "
        f"samples per entry in float64, {a.seconds:g}s per sample"
    )
    t = summary.totals()
    print(
        f"entries with an equivalent: {t['equivalent']} of {t['entries']} "
        f"({t['equivalent_names']} of {t['names']} names)"
    )
    print(
        f"sample values agree: {percent(t['value_ok'], t['value_total'])} "
        f"({t['value_ok']} of {t['value_total']})"
    )
    print(
        f"gradients agree: {percent(t['grad_ok'], t['grad_total'])} "
        f"({t['grad_ok']} of {t['grad_total']})"
    )
    print(f"({time.perf_counter() - start:.0f}s)")
    if a.output:
        with open(a.output, "w") as f:
            f.write(render_markdown(summary, settings))
        print(f"wrote {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
