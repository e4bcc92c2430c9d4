"""Operator schemas: PyTorch-style signature strings, parsed once into typed `FunctionSchema`s.

    softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor
    add(Tensor self, Tensor|Scalar other, *, Scalar alpha=1) -> Tensor
    max_pool2d_with_indices(Tensor self, int[2] kernel_size, ...) -> (Tensor, Tensor)
    sum(Tensor self, Dim[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
    fill_(Tensor(a!) self, Scalar value) -> Tensor(a!)

The grammar is `native_functions.yaml`'s: ``name(arguments) -> returns``; arguments after ``*`` are
keyword-only; ``Tensor(a!)`` marks an argument the op writes, ``Tensor(a)`` an output that aliases
it (a view). Types (``?`` makes any type optional, accepting None):

- ``Tensor``, ``Tensor[]`` (a list of tensors), ``Tensor?[]`` (a list of tensors or None);
  ``Tensor|Scalar``: a tensor or a Python number (PyTorch writes two overloads for this).
- ``Scalar`` (a Python bool, int or float; 0-d tensors are read), ``int``, ``float``, ``bool``,
  ``str``, ``ScalarType`` (a dtype), ``Device``, ``Layout``, ``MemoryFormat``, ``Generator``,
  ``Any``.
- ``int[]`` (a sequence of ints, or varargs where PyTorch allows them), ``int[N]`` (an int or a
  sequence of N ints: ``stride=2`` and ``stride=[2]`` mean ``(2, 2)``; a sequence of another
  length arrives as given, for the meta rule to refuse in the op's words), ``float[]``,
  ``bool[]``, ``Scalar[]``.
- ``Dim``, ``Dim[]``: a dimension (or several) of the op's first tensor, wrapped into
  ``[0, ndim)`` when the call is bound (coretorch's addition: PyTorch wraps dims in every kernel).

`coretorch.dispatch.entry` turns a schema into the op's Python entry point, which binds each call
into the normalized argument record that every later layer receives.
"""

from __future__ import annotations

import ast
import math
import re
from typing import Any

__all__ = ["FunctionSchema", "Argument", "Return", "ArgType", "parse_schema", "SchemaError"]

BASE_TYPES = (
    "Tensor",
    "Tensor|Scalar",
    "Scalar",
    "int",
    "float",
    "bool",
    "str",
    "Dim",
    "ScalarType",
    "Device",
    "Layout",
    "MemoryFormat",
    "Generator",
    "Any",
)
_LIST_BASES = ("Tensor", "int", "float", "bool", "Scalar", "Dim", "str")
_ALIASES = {"SymInt": "int", "Number": "Scalar"}


class SchemaError(ValueError):
    """A schema string that does not parse (names the schema and what is wrong)."""


class ArgType:
    """The type of one argument: base name, list-ness (with a fixed size for ``int[2]``),
    optionality of the list or of its elements."""

    __slots__ = ("base", "is_list", "size", "optional", "elem_optional")

    def __init__(
        self,
        base: str,
        is_list: bool = False,
        size: int | None = None,
        optional: bool = False,
        elem_optional: bool = False,
    ):
        self.base, self.is_list, self.size = base, is_list, size
        self.optional, self.elem_optional = optional, elem_optional

    @property
    def is_tensor(self) -> bool:
        """An argument that may hold a tensor (whose dispatch keys the call collects)."""
        return self.base in ("Tensor", "Tensor|Scalar")

    def __eq__(self, other) -> bool:
        return isinstance(other, ArgType) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    def __str__(self) -> str:
        s = self.base + ("?" if self.elem_optional else "")
        if self.is_list:
            s += f"[{self.size}]" if self.size is not None else "[]"
        return s + ("?" if self.optional else "")

    __repr__ = __str__


class Argument:
    """One argument of a schema: name, type, default (`Argument.NO_DEFAULT` when required),
    whether it is keyword-only, and its alias annotation (``a!`` = written by the op)."""

    NO_DEFAULT: Any = type("NoDefault", (), {"__repr__": lambda s: "<required>"})()
    __slots__ = ("name", "type", "default", "kwarg_only", "alias", "index")

    def __init__(
        self,
        name: str,
        type: ArgType,
        default: Any,
        kwarg_only: bool,  # noqa: A002
        alias: str | None,
        index: int,
    ):
        self.name, self.type, self.default = name, type, default
        self.kwarg_only, self.alias, self.index = kwarg_only, alias, index

    @property
    def required(self) -> bool:
        """True when the argument has no default."""
        return self.default is Argument.NO_DEFAULT

    @property
    def is_mutable(self) -> bool:
        """True when the schema marks it written to (an alias annotation like ``Tensor(a!)``)."""
        return self.alias is not None and self.alias.endswith("!")

    def __str__(self) -> str:
        t = str(self.type)
        if self.alias is not None:
            t = t.replace(self.type.base, f"{self.type.base}({self.alias})", 1)
        if self.required:
            return f"{t} {self.name}"
        return f"{t} {self.name}={_default_str(self.default)}"

    __repr__ = __str__


class Return:
    """One returned value: its type, optional field name, alias annotation."""

    __slots__ = ("type", "name", "alias")

    def __init__(self, type: ArgType, name: str | None, alias: str | None):  # noqa: A002
        self.type, self.name, self.alias = type, name, alias

    def __str__(self) -> str:
        t = str(self.type)
        if self.alias is not None:
            t = t.replace(self.type.base, f"{self.type.base}({self.alias})", 1)
        return t if self.name is None else f"{t} {self.name}"


class FunctionSchema:
    """A parsed operator signature. ``str(schema)`` gives it back in canonical form."""

    __slots__ = ("name", "arguments", "returns", "returns_tuple", "_by_name")

    def __init__(self, name: str, arguments: tuple, returns: tuple, returns_tuple: bool):
        self.name, self.arguments, self.returns = name, arguments, returns
        self.returns_tuple = returns_tuple
        self._by_name = {a.name: a for a in arguments}

    # ---- queries -------------------------------------------------------------------------
    def argument(self, name: str) -> Argument:
        """The argument called `name`.

        Raises:
            KeyError: when the schema has no such argument.
        """
        return self._by_name[name]

    @property
    def names(self) -> tuple:
        """Argument names in order: the fields of the bound argument record."""
        return tuple(a.name for a in self.arguments)

    @property
    def positional(self) -> tuple:
        """The arguments that may be passed by position (those before ``*``)."""
        return tuple(a for a in self.arguments if not a.kwarg_only)

    @property
    def tensor_indices(self) -> tuple:
        """Positions of the arguments that may hold tensors (or lists of them)."""
        return tuple(a.index for a in self.arguments if a.type.is_tensor)

    @property
    def mutated(self) -> tuple:
        """Positions of the arguments the op writes (``Tensor(a!)``)."""
        return tuple(a.index for a in self.arguments if a.is_mutable)

    @property
    def is_inplace(self) -> bool:
        """An op that writes its first argument and returns it (``add_``)."""
        return bool(self.arguments) and self.arguments[0].is_mutable

    @property
    def is_view(self) -> bool:
        """Its (first) output aliases an input without writing it (``view``, ``transpose``)."""
        return (
            bool(self.returns)
            and self.returns[0].alias is not None
            and not self.returns[0].alias.endswith("!")
        )

    @property
    def return_names(self) -> tuple | None:
        """Field names of a named multi-output return (``(Tensor values, Tensor indices)``)."""
        if self.returns_tuple and self.returns and all(r.name for r in self.returns):
            return tuple(r.name for r in self.returns)
        return None

    def inplace_variant(self) -> "FunctionSchema":
        """``add_(Tensor(a!) self, ...) -> Tensor(a!)`` from ``add(Tensor self, ...) -> Tensor``."""
        first = self.arguments[0]
        args = (
            Argument(first.name, first.type, first.default, first.kwarg_only, "a!", 0),
            *self.arguments[1:],
        )
        return FunctionSchema(
            self.name + "_", args, (Return(ArgType("Tensor"), None, "a!"),), False
        )

    def __str__(self) -> str:
        parts, star = [], False
        for a in self.arguments:
            if a.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(str(a))
        if self.returns_tuple:
            rets = "(" + ", ".join(str(r) for r in self.returns) + ")"
        else:
            rets = str(self.returns[0]) if self.returns else "()"
        return f"{self.name}({', '.join(parts)}) -> {rets}"

    __repr__ = __str__


# ---- parsing --------------------------------------------------------------------------------

_TOP = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*\((.*)\)\s*->\s*(.+?)\s*$", re.S)
_TYPE = re.compile(
    r"^(?P<base>[A-Za-z][\w|]*)(?:\((?P<alias>[a-z]!?)\))?"
    r"(?P<eopt>\?)?(?:\[(?P<size>\d*)\])?(?P<opt>\?)?$"
)


def _split_top(s: str) -> list[str]:
    """Split at commas that are not inside brackets or quotes."""
    out: list[str] = []
    cur: list[str] = []
    depth, quote = 0, None
    for ch in s:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _parse_type(text: str, schema: str) -> tuple[ArgType, str | None]:
    m = _TYPE.match(text.strip())
    if not m:
        raise SchemaError(f"schema {schema!r}: cannot parse the type {text!r}")
    base = _ALIASES.get(m["base"], m["base"])
    if base not in BASE_TYPES:
        raise SchemaError(
            f"schema {schema!r}: unknown type {m['base']!r}; known types: {', '.join(BASE_TYPES)}"
        )
    is_list = m["size"] is not None
    if is_list and base not in _LIST_BASES:
        raise SchemaError(f"schema {schema!r}: {base} cannot be a list")
    size = int(m["size"]) if is_list and m["size"] else None
    eopt = bool(m["eopt"])
    if eopt and not is_list:  # "Tensor?" is an optional tensor, not a list of optionals
        return ArgType(base, optional=True), m["alias"]
    return ArgType(base, is_list, size, bool(m["opt"]), eopt), m["alias"]


def _parse_default(text: str, t: ArgType, schema: str) -> Any:
    text = text.strip()
    if text in ("inf", "-inf"):
        return float(text)
    if t.base == "MemoryFormat" and text != "None":
        return text
    try:
        v = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise SchemaError(f"schema {schema!r}: cannot parse the default {text!r}") from None
    if isinstance(v, list):
        v = tuple(v)
    return v


def _default_str(v: Any) -> str:
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if isinstance(v, tuple):
        return "[" + ", ".join(_default_str(x) for x in v) + "]"
    if isinstance(v, str):
        return repr(v)
    return repr(v)


def parse_schema(text: str) -> FunctionSchema:
    """Parse ``"name(Type arg, ..., *, Type kw=default) -> Returns"`` (see the module docstring).
    Raises `SchemaError` naming the schema and the part that does not parse."""
    m = _TOP.match(text)
    if not m:
        raise SchemaError(f"cannot parse schema {text!r}; expected 'name(Type arg, ...) -> Type'")
    name, arg_text, ret_text = m.group(1), m.group(2), m.group(3)
    args: list = []
    kwarg_only, seen = False, set()
    for part in _split_top(arg_text):
        if part == "*":
            kwarg_only = True
            continue
        decl, _, default = part.partition("=")
        pieces = decl.rsplit(None, 1)
        if len(pieces) != 2:
            raise SchemaError(f"schema {text!r}: expected 'Type name' in {part!r}")
        t, alias = _parse_type(pieces[0], text)
        arg_name = pieces[1]
        if arg_name in seen:
            raise SchemaError(f"schema {text!r}: argument {arg_name!r} appears twice")
        seen.add(arg_name)
        dflt = _parse_default(default, t, text) if default else Argument.NO_DEFAULT
        if default and dflt is None and not t.optional and t.base != "Any":
            raise SchemaError(
                f"schema {text!r}: {arg_name} defaults to None but its type "
                f"{t} is not optional (write {t}?)"
            )
        if (
            args
            and not kwarg_only
            and dflt is Argument.NO_DEFAULT
            and not args[-1].required
            and not args[-1].kwarg_only
        ):
            raise SchemaError(
                f"schema {text!r}: required argument {arg_name!r} follows an "
                f"argument with a default"
            )
        args.append(Argument(arg_name, t, dflt, kwarg_only, alias, len(args)))
    ret_text = ret_text.strip()
    returns_tuple = ret_text.startswith("(")
    inner = ret_text[1:-1] if returns_tuple else ret_text
    rets = []
    for part in _split_top(inner):
        pieces = part.split()
        t, alias = _parse_type(pieces[0], text)
        rets.append(Return(t, pieces[1] if len(pieces) > 1 else None, alias))
    return FunctionSchema(name, tuple(args), tuple(rets), returns_tuple)
