"""A restricted unpickler for ``load(weights_only=True)`` (PyTorch's ``_weights_only_unpickler``).

It interprets the pickle opcodes itself: a GLOBAL resolves only to PyTorch's tensor vocabulary
(`torch_globals`) or a user safe global; REDUCE and NEWOBJ call only those; BUILD sets state
only on OrderedDicts and user-allowed types; APPEND/SETITEM touch only lists and dicts;
persistent ids are only storages. Nothing else can be reached, so no code runs. Policy refusals
raise ``pickle.UnpicklingError`` with PyTorch's message; malformed pickles raise the
corrupt-file RuntimeError.
"""

from __future__ import annotations

import pickle
import struct
from collections import Counter, OrderedDict
from typing import Any, Callable

from ..nn.parameter import Parameter
from ..tensor.tensor import Tensor
from .errors import corrupt, unsupported
from .torch_globals import find_global, is_allowed_value

__all__ = ["WeightsUnpickler", "WEIGHTS_ONLY_HINT"]

WEIGHTS_ONLY_HINT = (
    "Weights only load failed. This file can still be loaded, to do so you have two options, do "
    "those steps only if you trust the source of the checkpoint.\n\t(1) Re-running "
    "`coretorch.load` with `weights_only` set to `False` will likely succeed, but it can result "
    "in arbitrary code execution. Do it only if you got the file from a trusted source.\n\t(2) "
    "Alternatively, to load with `weights_only=True` please check the recommended steps in the "
    "following error message.\n\tWeightsUnpickler error: "
)


class _Malformed(Exception):
    pass


class WeightsUnpickler:
    """``WeightsUnpickler(file, src, persistent_load).load()`` for one pickle in `file`."""

    def __init__(
        self, file, src: str, persistent_load: Callable[[tuple], Any], encoding: str = "utf-8"
    ):
        self.read, self.readline = file.read, file.readline
        self.src, self.persistent_load, self.encoding = src, persistent_load, encoding

    def load(self) -> Any:
        """Unpickle the object, allowing only safe globals.

        Raises:
            CheckpointError: when the pickle is malformed.
        """
        try:
            return self._run()
        except (
            _Malformed,
            IndexError,
            KeyError,
            TypeError,
            AttributeError,
            OverflowError,
            struct.error,
            UnicodeDecodeError,
            ValueError,
            EOFError,
            RecursionError,
        ) as e:
            raise corrupt(self.src, f"malformed pickle: {type(e).__name__}: {e}"[:300]) from None

    def _n(self, n: int) -> bytes:
        data = self.read(n)
        if len(data) != n:
            raise EOFError("the pickle ended early")
        return data

    stack: list
    metastack: list
    memo: dict

    def _pop_mark(self) -> list:
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _run(self) -> Any:
        self.stack = []
        self.metastack = []
        self.memo = {}
        ops = _OPS
        while True:
            key = self.read(1)
            if not key:
                raise EOFError("the pickle ended before STOP")
            op = ops.get(key[0])
            if op is None:
                raise _Malformed(
                    f"unsupported opcode {key!r} (corrupted, or written with a "
                    f"pickle protocol newer than 5)"
                )
            if op is _stop:
                if len(self.stack) != 1 or self.metastack:
                    raise _Malformed("STOP with a stack that is not exactly one object")
                return self.stack.pop()
            op(self)

    # ---- helpers for the opcodes ----
    def _global(self, module: Any, name: Any) -> None:
        self.stack.append(find_global(module, name, self.src, weights_only=True))

    def _check_setitem(self, opcode: str) -> None:
        if type(self.stack[-1]) not in (dict, OrderedDict, Counter):
            raise pickle.UnpicklingError(
                f"Can only {opcode} for dict, collections.OrderedDict, "
                f"collections.Counter, but got {type(self.stack[-1])}"
            )


def _stop(u: WeightsUnpickler) -> None:  # handled in the loop
    raise AssertionError


def _proto(u):
    if u._n(1)[0] > 5:
        raise _Malformed("pickle protocol above 5")


def _frame(u):
    u._n(8)


def _mark(u):
    u.metastack.append(u.stack)
    u.stack = []


def _pop(u):
    u.stack.pop()


def _pop_mark(u):
    u._pop_mark()


def _dup(u):
    u.stack.append(u.stack[-1])


def _push(value):
    return lambda u: u.stack.append(value)


def _empty(factory):
    return lambda u: u.stack.append(factory())


def _binint(u):
    u.stack.append(struct.unpack("<i", u._n(4))[0])


def _binint1(u):
    u.stack.append(u._n(1)[0])


def _binint2(u):
    u.stack.append(struct.unpack("<H", u._n(2))[0])


def _long1(u):
    u.stack.append(pickle.decode_long(u._n(u._n(1)[0])))


def _long4(u):
    n = struct.unpack("<i", u._n(4))[0]
    if n < 0:
        raise _Malformed("LONG4 with a negative length")
    u.stack.append(pickle.decode_long(u._n(n)))


def _binfloat(u):
    u.stack.append(struct.unpack(">d", u._n(8))[0])


def _sized(size_fmt: str, then: Callable[[WeightsUnpickler, int], None]):
    """An opcode whose argument is one integer of `size_fmt` (a length or a memo index)."""
    width = struct.calcsize(size_fmt)

    def op(u):
        then(u, struct.unpack(size_fmt, u._n(width))[0])

    return op


def _string(u, n: int) -> None:
    if n < 0:
        raise _Malformed("a string with a negative length")
    data = u._n(n)
    u.stack.append(data if u.encoding == "bytes" else data.decode(u.encoding, "strict"))


def _unicode(size_fmt: str):
    return _sized(size_fmt, lambda u, n: u.stack.append(str(u._n(n), "utf-8", "surrogatepass")))


def _bytes(size_fmt: str):
    return _sized(size_fmt, lambda u, n: u.stack.append(u._n(n)))


def _line(u) -> str:
    line = u.readline()
    if not line.endswith(b"\n"):
        raise EOFError("the pickle ended inside a GLOBAL")
    return line[:-1].decode("utf-8")


def _global_op(u):
    module = _line(u)
    u._global(module, _line(u))


def _stack_global(u):
    name = u.stack.pop()
    module = u.stack.pop()
    u._global(module, name)


def _reduce(u):
    args = u.stack.pop()
    func = u.stack[-1]
    if not is_allowed_value(func):
        raise pickle.UnpicklingError(
            f"Trying to call reduce for unrecognized function {func!r:.80}"
        )
    if not isinstance(args, tuple):
        raise _Malformed("REDUCE arguments are not a tuple")
    u.stack[-1] = func(*args)


def _newobj(u):
    args = u.stack.pop()
    cls = u.stack.pop()
    if not isinstance(args, tuple):
        raise _Malformed("NEWOBJ arguments are not a tuple")
    if cls is Parameter:
        u.stack.append(Parameter(*args))
    elif isinstance(cls, type) and is_allowed_value(cls):
        u.stack.append(cls.__new__(cls, *args))
    else:
        raise pickle.UnpicklingError(
            f"Can only create new object for nn.Parameter or classes "
            f"allowlisted via `add_safe_globals` but got {cls!r:.80}"
        )


def _build(u):
    state = u.stack.pop()
    inst = u.stack[-1]
    if type(inst) is OrderedDict:
        if not isinstance(state, dict):
            raise _Malformed("BUILD state of an OrderedDict is not a dict")
        inst.__dict__.update(state)
    elif isinstance(inst, Tensor):
        raise unsupported(
            u.src,
            "holds a tensor rebuilt by setting its state (a PyTorch format "
            "older than 1.0), which coretorch cannot load",
        )
    elif is_allowed_value(type(inst)) and type(inst) not in (dict, list, set, Counter):
        if hasattr(inst, "__setstate__"):
            inst.__setstate__(state)
            return
        slotstate = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slotstate = state
        if state:
            inst.__dict__.update(state)
        if slotstate:
            for k, v in slotstate.items():
                setattr(inst, k, v)
    else:
        raise pickle.UnpicklingError(
            f"Can only build OrderedDict or types allowlisted via "
            f"`add_safe_globals`, but got {type(inst)}"
        )


def _append(u):
    item = u.stack.pop()
    if type(u.stack[-1]) is not list:
        raise pickle.UnpicklingError(f"Can only append to lists, but got {type(u.stack[-1])}")
    u.stack[-1].append(item)


def _add_marked(kind: type, verb: str, add: Callable[[Any, list], None]):
    """APPENDS / ADDITEMS: add the items above the mark to a container of exactly `kind`."""

    def op(u):
        items = u._pop_mark()
        if type(u.stack[-1]) is not kind:
            raise pickle.UnpicklingError(f"Can only {verb}, but got {type(u.stack[-1])}")
        add(u.stack[-1], items)

    return op


_appends = _add_marked(list, "extend lists", list.extend)
_additems = _add_marked(set, "add items to sets", set.update)


def _setitem(u):
    v = u.stack.pop()
    k = u.stack.pop()
    u._check_setitem("SETITEM")
    u.stack[-1][k] = v


def _setitems(u):
    items = u._pop_mark()
    u._check_setitem("SETITEMS")
    if len(items) % 2:
        raise _Malformed("SETITEMS with an odd number of items")
    d = u.stack[-1]
    for i in range(0, len(items), 2):
        d[items[i]] = items[i + 1]


def _frozenset(u):
    items = u._pop_mark()  # (pops the mark first: u.stack changes)
    u.stack.append(frozenset(items))


def _tuple(u):
    items = u._pop_mark()
    u.stack.append(tuple(items))


def _tuple_n(n: int):
    def op(u):
        if len(u.stack) < n:
            raise _Malformed(f"TUPLE{n} on a stack of {len(u.stack)}")
        items = tuple(u.stack[len(u.stack) - n :])
        del u.stack[len(u.stack) - n :]
        u.stack.append(items)

    return op


def _binpersid(u):
    pid = u.stack.pop()
    if type(pid) is not tuple or not pid:
        raise pickle.UnpicklingError(f"persistent_load id must be tuple, but got {type(pid)}")
    tag = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
    if tag != "storage":
        raise pickle.UnpicklingError(
            f"Only persistent_load of storage is allowed, but got {tag!r:.40}"
        )
    u.stack.append(u.persistent_load(pid))


def _get(size_fmt: str):
    return _sized(size_fmt, lambda u, i: u.stack.append(u.memo[i]))


def _put(size_fmt: str):
    return _sized(size_fmt, lambda u, i: u.memo.__setitem__(i, u.stack[-1]))


def _memoize(u):
    u.memo[len(u.memo)] = u.stack[-1]


_P = pickle
_OPS: dict[int, Callable[[WeightsUnpickler], None]] = {
    _P.PROTO[0]: _proto,
    _P.FRAME[0]: _frame,
    _P.STOP[0]: _stop,
    _P.MARK[0]: _mark,
    _P.POP[0]: _pop,
    _P.POP_MARK[0]: _pop_mark,
    _P.DUP[0]: _dup,
    _P.NONE[0]: _push(None),
    _P.NEWTRUE[0]: _push(True),
    _P.NEWFALSE[0]: _push(False),
    _P.EMPTY_TUPLE[0]: _push(()),
    _P.EMPTY_LIST[0]: _empty(list),
    _P.EMPTY_DICT[0]: _empty(dict),
    _P.EMPTY_SET[0]: _empty(set),
    _P.BININT[0]: _binint,
    _P.BININT1[0]: _binint1,
    _P.BININT2[0]: _binint2,
    _P.LONG1[0]: _long1,
    _P.LONG4[0]: _long4,
    _P.BINFLOAT[0]: _binfloat,
    _P.BINUNICODE[0]: _unicode("<I"),
    _P.SHORT_BINUNICODE[0]: _unicode("<B"),
    _P.BINUNICODE8[0]: _unicode("<Q"),
    _P.BINBYTES[0]: _bytes("<I"),
    _P.SHORT_BINBYTES[0]: _bytes("<B"),
    _P.BINBYTES8[0]: _bytes("<Q"),
    _P.BINSTRING[0]: _sized("<i", _string),
    _P.SHORT_BINSTRING[0]: _sized("<B", _string),
    _P.GLOBAL[0]: _global_op,
    _P.STACK_GLOBAL[0]: _stack_global,
    _P.REDUCE[0]: _reduce,
    _P.NEWOBJ[0]: _newobj,
    _P.BUILD[0]: _build,
    _P.APPEND[0]: _append,
    _P.APPENDS[0]: _appends,
    _P.SETITEM[0]: _setitem,
    _P.SETITEMS[0]: _setitems,
    _P.ADDITEMS[0]: _additems,
    _P.FROZENSET[0]: _frozenset,
    _P.TUPLE[0]: _tuple,
    _P.TUPLE1[0]: _tuple_n(1),
    _P.TUPLE2[0]: _tuple_n(2),
    _P.TUPLE3[0]: _tuple_n(3),
    _P.BINPERSID[0]: _binpersid,
    _P.BINGET[0]: _get("<B"),
    _P.LONG_BINGET[0]: _get("<I"),
    _P.BINPUT[0]: _put("<B"),
    _P.LONG_BINPUT[0]: _put("<I"),
    _P.MEMOIZE[0]: _memoize,
}
