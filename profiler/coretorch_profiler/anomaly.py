"""`detect_anomaly`: find the op (forward) or autograd node (backward) that first produced NaN/Inf.

Forward: after every op, its floating outputs are checked; the first op whose output turned
non-finite while its inputs were finite is reported with the user's source line, the input
shapes/dtypes and how many values are bad. Backward: the engine runs each node inside a
BACKWARD_FUNCTION RecordFunction whose `outputs` are the gradients the node returned and whose
`seq_nr` is its forward op's sequence number; a bad gradient is reported PyTorch's way
("Function 'LogBackward0' returned nan values in its 0th output.") and the exception carries the
forward op's creation site, kept (as PyTorch keeps its traceback) in the metadata of the autograd
node the op created, so that it lives exactly as long as the graph.

Checks use the device's own `all_finite` (``DeviceType.extras["all_finite"]``: no copy to the
host, no temporary) where the backend offers one, else numpy on `read_numpy`.
"""

from __future__ import annotations

import functools
import math
import threading
import warnings
import weakref
from typing import Any, Callable

import numpy as np

from coretorch import record_function as _rf
from coretorch.device import device_types, get_device_type
from coretorch.dispatch.operator import get_operator
from coretorch.tensor.impl import TensorImpl, is_overlapping

from ._frames import StackRecorder, describe, format_site, user_stack
from .collector import inputs_meta, plain_shapes
from .module_stack import ModuleStack, module_path, name_tensor

__all__ = ["detect_anomaly", "AnomalyError", "AnomalyWarning"]

_Impl = TensorImpl
_FUNCTION = _rf.RecordScope.FUNCTION
_SITE = "anomaly_site"  # the key of the creation site in an autograd node's metadata
# user frames kept with a creation site (innermost first): the report shows the call chain
_SITE_FRAMES = 8
# factories whose outputs are uninitialized memory: garbage values there are not anomalies
_UNINITIALIZED = frozenset(
    {
        "aten::empty",
        "aten::empty_like",
        "aten::empty_strided",
        "aten::new_empty",
        "aten::new_empty_strided",
    }
)


class AnomalyError(RuntimeError):
    """Raised by `detect_anomaly(action="raise")`. Besides the message it carries:
    `phase` ("forward"/"backward"), `op` (op or node name), `output_index`, `nan_count`,
    `inf_count`, `numel`, and the creation site: `forward_op` (the op that ran forward), `filename`,
    `lineno`, `function`, `code` (the source line), `stack` (the user's frames, innermost first),
    `module` (the path of the module whose forward ran the op), `input_shapes`, `input_dtypes`.
    When bad values entered through a parameter or a module's input (phase "input"), `source`
    names it ('fc1.weight', 'argument 0 of Net.forward') and `source_kind` says which."""

    def __init__(self, message: str, info: dict[str, Any]):
        super().__init__(message)
        self.info = info
        for k, v in info.items():
            setattr(self, k, v)


class AnomalyWarning(RuntimeWarning):
    """Issued by `detect_anomaly(action="warn")`."""


class _Local(threading.local):
    def __init__(self) -> None:
        self.backward: list = []  # regions of the backward nodes running in this thread


_skip: dict[str, bool] = {}


def _skips_check(name: str) -> bool:
    """Ops whose outputs need no check: uninitialized factories (garbage is no anomaly), views
    (the values are their input's) and implicit composites (the ops they ran were checked)."""
    r = _skip.get(name)
    if r is None:
        try:
            decl = get_operator(name).decl
        except RuntimeError:
            decl = None
        r = _skip[name] = name in _UNINITIALIZED or (
            decl is not None and (decl.kind == "composite_implicit" or decl.family == "view")
        )
    return r


def _numpy_all_finite(read: Callable, t) -> bool:
    return bool(np.isfinite(read(t)).all())  # one pass, no floating-point warnings


_checks: dict[str, Callable | None] = {}
_UNKNOWN: Any = object()


def _check(dev_type: str) -> Callable | None:
    """`all_finite(tensor)` for a device type: its backend's, else numpy's; None without data."""
    c = _checks.get(dev_type, _UNKNOWN)
    if c is _UNKNOWN:
        entry = device_types().get(dev_type)
        c = None
        if entry is not None and entry.has_data:
            c = entry.extras.get("all_finite") or functools.partial(
                _numpy_all_finite, entry.read_numpy
            )
        _checks[dev_type] = c
    return c


def _bad_values(t) -> tuple[int, int, int] | None:
    """(nan, inf, numel) of tensor `t` that its device's check found not all finite."""
    a = get_device_type(t._device).read_numpy(t)
    nan, inf = int(np.isnan(a).sum()), int(np.isinf(a).sum())
    return (nan, inf, a.size) if nan or inf else None


# below this many elements a check costs less than remembering its result
_MEMO_MIN_NUMEL = 1 << 16
_MEMO_MAX = 1 << 12


class _FiniteMemo:
    """Checks tensors, remembering the large ones found all-finite: an optimizer's in-place
    updates and the next ops re-read the same big parameters, gradients and buffers, and a
    backward node often returns a view (a transpose) of a gradient just checked.

    Kept per storage, with the version counter: values cannot change without it moving (writes
    through a shared numpy array, or through ``.data``, which has its own counter, are the
    exceptions, as for autograd's own checks). A tensor covering its whole storage vouches for
    every view of it at that version; any other only for itself."""

    def __init__(self) -> None:
        # id(storage) -> (storage ref, version counter, version, tensor ref or None for all)
        self._seen: dict[int, tuple] = {}

    def bad_counts(self, t) -> tuple[int, int, int] | None:
        """(nan, inf, numel) when `t` holds NaN or ±Inf; None when it holds neither or has no
        values to hold them (an integer tensor, a meta one). Runs for every output of every op:
        the common case (small, finite) is one call to the device's check."""
        if not t._dtype.is_floating_point:
            return None
        dev = t._device.type
        check = _checks.get(dev, _UNKNOWN)
        if check is _UNKNOWN:
            check = _check(dev)
        if check is None:
            return None
        numel = math.prod(t._shape)
        if numel < _MEMO_MIN_NUMEL:
            return None if check(t) else _bad_values(t)
        st, vc = t._storage, t._vc
        seen = self._seen
        e = seen.get(id(st))
        if (
            e is not None
            and e[0]() is st
            and e[1] is vc
            and e[2] == vc[0]
            and (e[3] is None or e[3]() is t)
        ):
            return None
        if not check(t):
            return _bad_values(t)
        if len(seen) >= _MEMO_MAX:
            seen.clear()
        whole = (
            numel * t._dtype.itemsize == st.nbytes
            and t._offset == 0
            and not is_overlapping(t._shape, t._stride)
        )
        seen[id(st)] = (weakref.ref(st), vc, vc[0], None if whole else weakref.ref(t))
        return None


def _tensors(x) -> list:
    if isinstance(x, _Impl):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t if isinstance(t, _Impl) else None for t in x]
    return []


def _sharing_first(args: tuple, sharing: bool) -> tuple:
    """The arguments that share (`sharing`) or do not share the first one's memory."""
    st = args[0]._storage if args and isinstance(args[0], _Impl) else None
    return tuple(a for a in args if (isinstance(a, _Impl) and a._storage is st) is sharing)


def _all_finite(args, kwargs, check_nan: bool, check_inf: bool, memo: _FiniteMemo) -> bool:
    """Whether the op's inputs hold no checked bad value (an out= tensor is not an input)."""
    if kwargs:
        args = (*args, *(v for k, v in kwargs.items() if k != "out"))
    for a in args:
        for t in _tensors(a) if not isinstance(a, float) else ():
            if t is None:
                continue
            c = memo.bad_counts(t)
            if c is not None and ((check_nan and c[0]) or (check_inf and c[1])):
                return False
        if isinstance(a, float) and (
            (check_nan and math.isnan(a)) or (check_inf and math.isinf(a))
        ):
            return False
    return True


class detect_anomaly:
    """Context manager (or decorator) that checks every op's outputs, forward and backward, for
    NaN (`check_nan`) and Inf (`check_inf`) and raises `AnomalyError` (``action="raise"``) or
    warns `AnomalyWarning` (``action="warn"``) at the first op that produced them, naming its
    source line, call chain and module. Bad values that enter through a parameter or buffer of
    a running module (NaN or Inf), or through a module's forward argument (NaN: an Inf there
    may be an attention mask), are reported as such, naming the tensor. It watches only the
    thread that entered it, as PyTorch's anomaly mode is per thread."""

    def __init__(self, check_nan: bool = True, check_inf: bool = True, action: str = "raise"):
        if action not in ("raise", "warn"):
            raise ValueError(
                f"detect_anomaly(): expected action to be 'raise' or 'warn', got {action!r}"
            )
        self.check_nan, self.check_inf, self.action = bool(check_nan), bool(check_inf), action
        self._handles: list[int] = []
        self._local = _Local()
        self._memo = _FiniteMemo()
        self._modules = ModuleStack()
        self._stacks = StackRecorder(_SITE_FRAMES)
        self._thread = 0
        # storages whose bad values are accounted for (reported, or made from bad inputs)
        self._explained: weakref.WeakSet = weakref.WeakSet()

    def __enter__(self) -> "detect_anomaly":
        if self._handles:
            raise RuntimeError("detect_anomaly(): this detector is already active")
        F, B = _rf.RecordScope.FUNCTION, _rf.RecordScope.BACKWARD_FUNCTION
        # global callbacks that return at once in other threads: a thread-local registration
        # would cost every op a callback lookup
        self._thread = threading.get_ident()
        self._stacks = StackRecorder(_SITE_FRAMES)
        self._stacks.start(2)  # walks stop at the frame that entered the detector
        self._modules.start()
        self._handles = [
            _rf.add_global_callback(self._fwd_start, self._fwd_end, scopes=(F,)),
            _rf.add_global_callback(self._bwd_start, self._bwd_end, scopes=(B,)),
        ]
        _rf.state.force_eager += 1  # compiled functions run eagerly, so every op is checked
        return self

    def __exit__(self, *exc) -> None:
        if self._handles:
            _rf.state.force_eager -= 1
        for h in self._handles:
            _rf.remove_callback(h)
        self._handles = []
        self._modules.stop()
        self._stacks.stop()
        self._memo = _FiniteMemo()
        self._explained = weakref.WeakSet()

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*a, **k):
            with detect_anomaly(self.check_nan, self.check_inf, self.action):
                return fn(*a, **k)

        return wrapper

    # ---- forward ----
    def _fwd_start(self, rf) -> bool | None:
        if rf.thread_id != self._thread:
            return None
        # an op overwriting an input needs it judged before it runs: an in-place op its first
        # argument and whatever shares its memory (the others are still intact after it), an
        # out= op every input (one of them may be the out tensor)
        if rf.name[-1] == "_":
            return _all_finite(
                _sharing_first(rf.args, True), None, self.check_nan, self.check_inf, self._memo
            )
        if rf.kwargs and "out" in rf.kwargs:
            return _all_finite(rf.args, rf.kwargs, self.check_nan, self.check_inf, self._memo)
        return None

    def _fwd_end(self, rf, inputs_finite) -> None:
        if rf.thread_id != self._thread:
            return
        # it made an autograd node, or ops inside it did
        if 0 <= rf.seq_nr < _rf.peek_sequence_nr() or (rf.extra and _SITE in rf.extra):
            self._record_site(rf)
        if rf.outputs is None or self._local.backward:
            return  # inside backward, the node's gradients are judged as a whole
        skip = _skip.get(rf.name)
        if skip or (skip is None and _skips_check(rf.name)):
            return
        out = rf.outputs
        if isinstance(out, _Impl):  # most ops: one output, and the common case inlined
            c = self._memo.bad_counts(out)
            bad = None if c is None else self._checked(0, c)
        else:
            bad = self._first_bad(out)
        if bad is None:
            return
        in_place = rf.name[-1] == "_"
        if inputs_finite is None or (inputs_finite and in_place):
            inputs_finite = _all_finite(
                _sharing_first(rf.args, False) if in_place else rf.args,
                rf.kwargs,
                self.check_nan,
                self.check_inf,
                self._memo,
            )
        if inputs_finite:
            self._explain(rf.outputs)
            self._report_forward(rf, *bad)
        else:  # it passed bad values along: reported at their maker, or where they entered
            self._check_entry(rf)

    def _explain(self, tensors) -> None:
        for t in _tensors(tensors):
            if t is not None:
                self._explained.add(t._storage)

    def _check_entry(self, rf) -> None:
        """Bad inputs not made by an op seen here: name the parameter or module input they
        came through. Bad values from a tensor it cannot name yet stay unexplained, so that
        they are named where they enter a module."""
        entries = self._modules.entries()
        args = (*rf.args, *(v for k, v in (rf.kwargs or {}).items() if k != "out"))
        fresh = []
        for a in args:
            for t in _tensors(a):
                if t is None or t._storage in self._explained:
                    continue
                c = self._memo.bad_counts(t)
                if c is not None and self._checked(0, c) is not None:
                    fresh.append((t, c))
        if not fresh:
            self._explain(rf.outputs)  # made from values already accounted for
            return
        for t, c in fresh:
            named = name_tensor(t, entries)
            if named is None:
                continue
            self._explain([t for t, _ in fresh])
            self._explain(rf.outputs)
            if named[1] != "input" or (self.check_nan and c[0]):
                self._report_entry(rf, t, named, c)
            return  # an Inf in a module's input may be a mask: accounted for, not reported

    def _first_bad(self, outputs) -> tuple[int, int, int, int] | None:
        """(index, nan, inf, numel) of the first output holding a checked bad value."""
        for i, t in enumerate(_tensors(outputs)):
            c = None if t is None else self._memo.bad_counts(t)
            bad = None if c is None else self._checked(i, c)
            if bad is not None:
                return bad
        return None

    def _checked(self, i: int, c: tuple[int, int, int]) -> tuple[int, int, int, int] | None:
        nan, inf, n = c
        return (i, nan, inf, n) if (self.check_nan and nan) or (self.check_inf and inf) else None

    def _record_site(self, rf) -> None:
        """Give the node the op made its creation site, in a one-element list. An op run inside
        another op (a composite's parts) gives its node the outermost op's list instead, filled
        once when that op ends: the site reported is where the user called the op they wrote,
        and the frame walk (most of this method's time) runs once per such call."""
        top, p = rf, rf.parent
        while p is not None and p.scope is _FUNCTION:
            top, p = p, p.parent
        if top is rf:
            cell = rf.extra.get(_SITE) if rf.extra else None
            if cell is None:
                cell = []
            bwd = self._local.backward
            # the walk steps out of coretorch's own frames (the dispatcher's, whatever their
            # number) to the user's
            stacks = self._stacks
            cell.append(
                (
                    rf.name,
                    stacks.stacks[stacks.capture(1)],
                    inputs_meta(rf.args, rf.kwargs),
                    _node_name(bwd[-1]) if bwd else None,
                    tuple(m for m, _ in self._modules.entries()),
                )
            )
        else:
            cell = top.extra.get(_SITE) if top.extra else None
            if cell is None:
                cell = []
                top.note(_SITE, cell)
        for t in (rf.outputs,) if isinstance(rf.outputs, _Impl) else _tensors(rf.outputs):
            m = t._autograd if t is not None else None
            node = m.grad_fn if m is not None else None
            if node is not None and node.seq_nr >= rf.seq_nr >= 0:  # made during this op
                node.metadata[_SITE] = cell
                return

    def _report_forward(self, rf, i: int, nan: int, inf: int, n: int) -> None:
        shapes, dtypes = inputs_meta(rf.args, rf.kwargs)
        info = _site_info(
            user_stack(_SITE_FRAMES, 2),
            rf.name,
            shapes,
            dtypes,
            [m for m, _ in self._modules.entries()],
        )
        info.update(
            phase="forward", op=rf.name, output_index=i, nan_count=nan, inf_count=inf, numel=n
        )
        what = _what(nan, inf, self.check_nan, self.check_inf)
        msg = (
            f"Anomaly detected: {rf.name} returned {what} values in its {i}th output from "
            f"finite inputs ({_counts(nan, inf, n, self.check_nan, self.check_inf)})."
            f"{_site_text(info)}"
        )
        self._act(msg, info)

    # ---- backward ----
    def _bwd_start(self, rf) -> None:
        if rf.thread_id == self._thread:
            self._local.backward.append(rf)

    def _bwd_end(self, rf, _state) -> None:
        if rf.thread_id != self._thread:
            return
        self._local.backward.pop()
        bad = self._first_bad(rf.outputs)
        if bad is not None:
            self._report_backward(rf, _node_name(rf), *bad)

    def _report_backward(self, rf, name: str, i: int, nan: int, inf: int, n: int) -> None:
        what = "nan" if (self.check_nan and nan) else "inf"
        node = rf.extra.get("node")
        cell = node.metadata.get(_SITE) if node is not None else None
        created = cell[0] if cell else None
        if created is not None:
            fwd_op, stack, (shapes, dtypes), during, modules = created
            info = _site_info(stack, fwd_op, shapes, dtypes, modules)
            where = (
                f"\nThe node was created by {fwd_op} in the forward pass"
                + (f" (run while computing the backward of {during})" if during else "")
                + f":{_site_text(info)}"
            )
        else:
            info = _site_info((), None, None, None)
            where = (
                "\nIts forward op ran before detect_anomaly() was entered, so its creation "
                "site is unknown: run the forward pass inside detect_anomaly() too."
            )
        info.update(
            phase="backward", op=name, output_index=i, nan_count=nan, inf_count=inf, numel=n
        )
        msg = (
            f"Function '{name}' returned {what} values in its {i}th output. "
            f"({_counts(nan, inf, n, self.check_nan, self.check_inf)}){where}"
        )
        self._act(msg, info)

    def _report_entry(self, rf, t, named: tuple[str, str], c: tuple[int, int, int]) -> None:
        name, kind = named
        nan, inf, n = c
        shapes, dtypes = inputs_meta(rf.args, rf.kwargs)
        info = _site_info(
            user_stack(_SITE_FRAMES, 3),
            rf.name,
            shapes,
            dtypes,
            [m for m, _ in self._modules.entries()],
        )
        info.update(
            phase="input",
            op=rf.name,
            output_index=None,
            nan_count=nan,
            inf_count=inf,
            numel=n,
            source=name,
            source_kind=kind,
        )
        what = {
            "parameter": f"{name} (a parameter)",
            "buffer": f"{name} (a buffer)",
            "input": name,
        }[kind]
        msg = (
            f"Anomaly detected: {what} holds "
            f"{_counts(nan, inf, n, self.check_nan, self.check_inf)}; the bad values "
            f"entered there, not in an op. First read by {rf.name}:{_site_text(info)}"
        )
        self._act(msg, info)

    def _act(self, msg: str, info: dict) -> None:
        from .profiling import note_anomaly

        note_anomaly(msg, info)
        if self.action == "raise":
            raise AnomalyError(msg, info)
        if info.get("filename"):
            warnings.warn_explicit(msg, AnomalyWarning, info["filename"], info["lineno"] or 0)
        else:
            warnings.warn(msg, AnomalyWarning, stacklevel=2)


def _node_name(rf) -> str:
    node = rf.extra.get("node") if rf.extra else None
    if node is not None:
        n = getattr(node, "name", None)
        if callable(n):
            return n()
        return type(node).__name__
    return rf.name.rsplit(": ", 1)[-1]


def _what(nan: int, inf: int, check_nan: bool, check_inf: bool) -> str:
    kinds = [k for k, c, on in (("nan", nan, check_nan), ("inf", inf, check_inf)) if c and on]
    return " and ".join(kinds)


def _counts(nan: int, inf: int, n: int, check_nan: bool, check_inf: bool) -> str:
    parts = []
    if check_nan:
        parts.append(f"{nan} nan")
    if check_inf:
        parts.append(f"{inf} inf")
    return f"{' and '.join(parts)} of {n} values"


def _site_info(stack, op, shapes, dtypes, modules=()) -> dict[str, Any]:
    stack = tuple(stack or ())
    if not stack:
        filename = function = code = None
        lineno = None
    else:
        filename, lineno, function, code = describe(stack[0])
    return {
        "forward_op": op,
        "filename": filename,
        "lineno": lineno,
        "function": function,
        "code": code,
        "stack": [format_site(s) for s in stack],
        "module": module_path(modules) or None,
        "input_shapes": None if shapes is None else plain_shapes(shapes),
        "input_dtypes": None if dtypes is None else list(dtypes),
    }


def _site_text(info: dict) -> str:
    loc = (
        f"\n  at {info['filename']}:{info['lineno']} (in {info['function']})\n    {info['code']}"
        if info.get("filename")
        else "\n  (no user source line found)"
    )
    if len(info.get("stack") or ()) > 1:
        loc += "\n  called from:" + "".join(f"\n    {s}" for s in info["stack"][1:])
    if info.get("module"):
        loc += f"\n  in module {info['module']}"
    return f"{loc}\n  inputs: shapes {info['input_shapes']}, dtypes {info['input_dtypes']}"
