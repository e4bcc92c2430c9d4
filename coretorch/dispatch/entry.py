"""Entry points: one Python function per operator, generated from its schema.

The entry point is what a user calls (``coretorch.add``, ``Tensor.add``,
``coretorch.ops.aten.add``). In one frame it binds the call to the schema, normalizing every
argument into the **argument record** (the positional tuple in schema order that every later layer
receives: the autograd kernel, the meta rule, the backend kernel, the derivative), collects the
dispatch keys of the tensor arguments, and calls the kernel for the resulting key set. For ``add``:

    def add(input, other, *, alpha=1, out=None):
        try:
            bits = input._keys
        except AttributeError:
            raise _a.type_error('add', 'input', 1, 'Tensor', input) from None
        if isinstance(other, _Impl):
            bits |= other._keys
        elif other.__class__ not in _NUMBER:
            other = _a.to_tensor_or_number('add', 'other', 2, other)
        if alpha.__class__ not in _NUMBER:
            alpha = _a.to_number('add', 'alpha', None, alpha)
        lk = _lk
        bits = (bits | lk.include) & ~lk.exclude
        fn = _cache_get(bits)
        if fn is None:
            fn = _resolve(bits)
        if _rf.active:
            return _call_op(_NAME, fn, (input, other, alpha), None if out is None else
                            {'out': out}, bits & _AG)
        if out is not None:
            return fn(input, other, alpha, out=out)
        return fn(input, other, alpha)

Binding in the entry point (rather than in each kernel) is what lets kernels, meta rules and
derivatives take plain positional arguments with defaults already filled, dims wrapped and
pairs expanded. ``op.entry_source`` shows the generated code; tracebacks show its lines.
"""

from __future__ import annotations

import inspect
import linecache
from typing import Any, Callable

from .. import record_function as _rf_mod
from ..tensor.impl import TensorImpl
from . import arguments as _a
from .code_cache import compile_cached
from .keys import AUTOGRAD_BIT, BACKEND_MASK, BACKEND_SELECT_BIT
from .schema import Argument, FunctionSchema
from .tls import local_keys

__all__ = ["make_entry", "make_binder", "python_name", "varargs_argument"]

_KEYWORDS = {"input"}


def python_name(arg: Argument) -> str:
    """The argument's name in the entry point: ``self`` is spelled ``input`` (PyTorch's Python
    functions take ``input=``; as a method it is the object itself)."""
    return "input" if arg.name == "self" else arg.name


def varargs_argument(schema: FunctionSchema) -> Argument | None:
    """The int-list argument that may be given as varargs (``t.view(2, 3)``,
    ``zeros(2, 3)``, ``t.permute(1, 0)``): PyTorch allows it when it is the only positional
    argument besides a leading tensor."""
    pos = [
        a
        for a in schema.positional
        if not (a.index == 0 and a.type.base == "Tensor" and not a.type.is_list)
    ]
    if len(pos) == 1 and pos[0].type.is_list and pos[0].type.base in ("int", "Dim"):
        return pos[0]
    return None


def _default_repr(arg: Argument) -> str:
    d = arg.default
    return "None" if d is None else f"_D[{arg.name!r}]"


def _check_lines(
    schema: FunctionSchema, arg: Argument, first_tensor: str | None, bits_started: bool
) -> tuple[list[str], bool]:
    """Source lines that check and normalize one argument (and OR its dispatch keys)."""
    op = schema.name
    n = python_name(arg)
    t = arg.type
    pos = "None" if arg.kwarg_only else str(arg.index + 1)
    q = f"{op!r}, {n!r}, {pos}"
    lines: list[str] = []
    ind = ""
    if t.optional:
        lines.append(f"if {n} is not None:")
        ind = "    "
    acc = "|=" if bits_started else "="
    base = t.base
    if base == "Tensor" and t.is_list:
        lines.append(f"{ind}{n}, _b = _a.to_tensor_list({q}, {n}, {t.elem_optional})")
        lines.append(f"{ind}bits {acc} _b")
        return lines, True
    if base == "Tensor":
        if not t.optional and not bits_started:
            lines += [
                "try:",
                f"    bits = {n}._keys",
                "except AttributeError:",
                f"    raise _a.type_error({q}, 'Tensor', {n}) from None",
            ]
            return lines, True
        if not bits_started:
            lines.insert(0, "bits = 0")
        lines += [
            f"{ind}if isinstance({n}, _Impl):",
            f"{ind}    bits |= {n}._keys",
            f"{ind}else:",
            f"{ind}    {n} = _a.to_tensor({q}, {n})",
        ]
        return lines, True
    if base == "Tensor|Scalar":
        if not bits_started:
            lines.insert(0, "bits = 0")
        lines += [
            f"{ind}if isinstance({n}, _Impl):",
            f"{ind}    bits |= {n}._keys",
            f"{ind}elif {n}.__class__ not in _NUMBER:",
            f"{ind}    {n} = _a.to_tensor_or_number({q}, {n})",
        ]
        return lines, True
    if t.is_list:
        if base in ("int",):
            lines.append(f"{ind}{n} = _a.to_int_list({q}, {n}, {t.size})")
        elif base == "Dim":
            lines.append(f"{ind}{n} = _a.to_dims({q}, {n}, len({first_tensor}._shape))")
        elif base in ("float", "Scalar"):
            lines.append(f"{ind}{n} = _a.to_float_list({q}, {n})")
        elif base == "bool":
            lines.append(f"{ind}{n} = tuple(_a.to_bool({q}, x) for x in {n})")
        elif base == "str":
            lines.append(f"{ind}{n} = tuple(_a.to_str({q}, x) for x in {n})")
        return lines, bits_started
    simple = {
        "Scalar": ("not in _NUMBER", "to_number"),
        "int": ("is not int", "to_int"),
        "float": ("is not float", "to_float"),
        "bool": ("is not bool", "to_bool"),
        "str": ("is not str", "to_str"),
        "ScalarType": ("is not _dtype", "to_dtype"),
        "Device": ("is not _device", "to_device"),
    }
    if base in simple:
        test, fn = simple[base]
        lines.append(f"{ind}if {n}.__class__ {test}:")
        lines.append(f"{ind}    {n} = _a.{fn}({q}, {n})")
    elif base == "Dim":
        nd = f"len({first_tensor}._shape)"
        lines.append(f"{ind}if {n}.__class__ is not int or not 0 <= {n} < {nd}:")
        lines.append(f"{ind}    {n} = _a.to_dim({q}, {n}, {nd})")
    # Layout, MemoryFormat, Generator, Any: passed as given (their meta rules check them)
    if len(lines) == (1 if t.optional else 0):
        return [], bits_started
    return lines, bits_started


def _signature(schema: FunctionSchema, has_out: bool, varargs: Argument | None) -> str:
    """The entry point's Python parameter list (a varargs list arrives in ``*_v``)."""
    parts: list[str] = []
    star = False
    for a in schema.arguments:
        n = python_name(a)
        if a is varargs:
            parts.append("*_v")
            star = True
        elif a.kwarg_only and not star:
            parts.append("*")
            star = True
        if a is varargs:
            parts.append(f"{n}=None")  # the list may also be passed by keyword: zeros(size=(2, 3))
            continue
        parts.append(n if a.required else f"{n}={_default_repr(a)}")
    if has_out:
        if not star:
            parts.append("*")
        parts.append("out=None")
    return ", ".join(parts)


def _binding_lines(schema: FunctionSchema) -> list[str]:
    """The lines of an entry point that bind and check the arguments (and OR the key bits)."""
    varargs = varargs_argument(schema)
    body: list[str] = []
    if varargs is not None:
        v = python_name(varargs)
        fallback = "()" if varargs.required else f"_D[{varargs.name!r}]"
        body += [f"{v} = _a.varargs_list({schema.name!r}, {v!r}, _v, {v}, {fallback})"]
    first_tensor = next(
        (
            python_name(a)
            for a in schema.arguments
            if a.type.base == "Tensor" and not a.type.is_list
        ),
        None,
    )
    bits_started = False
    # tensors first: a Dim needs its tensor's ndim, and a tensor type error should come first
    ordered = sorted(schema.arguments, key=lambda a: (not a.type.is_tensor, a.index))
    for a in ordered:
        lines, bits_started = _check_lines(schema, a, first_tensor, bits_started)
        body += lines
    if not bits_started:
        body.append("bits = 0")
    return body


def _record(schema: FunctionSchema) -> tuple[str, str]:
    rec = ", ".join(python_name(a) for a in schema.arguments)
    return rec, (f"({rec},)" if len(schema.arguments) == 1 else f"({rec})")


def entry_source(
    schema: FunctionSchema, func_name: str, has_out: bool, needs_backend_select: bool
) -> str:
    """Python source of the entry point of `schema` (see the module docstring)."""
    body = _binding_lines(schema)
    rec, rec_tuple = _record(schema)
    body += ["lk = _lk", "bits = (bits | lk.include) & ~lk.exclude"]
    if needs_backend_select:
        body += ["if not bits & _BACKENDS:", "    bits |= _BACKEND_SELECT"]
    body += ["fn = _cache_get(bits)", "if fn is None:", "    fn = _resolve(bits)"]
    kw = "None if out is None else {'out': out}" if has_out else "None"
    body += ["if _rf.active:", f"    return _call_op(_NAME, fn, {rec_tuple}, {kw}, bits & _AG)"]
    if has_out:
        body += ["if out is not None:", f"    return fn({rec}, out=out)"]
    body.append(f"return fn({rec})")
    sig = _signature(schema, has_out, varargs_argument(schema))
    return f"def {func_name}({sig}):\n" + "".join(f"    {line}\n" for line in body)


def binder_source(schema: FunctionSchema) -> str:
    """Python source of ``bind(*args, **kwargs) -> record``: the entry point's binding alone."""
    body = _binding_lines(schema) + [f"return {_record(schema)[1]}"]
    sig = _signature(schema, False, varargs_argument(schema))
    return "def bind(" + sig + "):\n" + "".join(f"    {line}\n" for line in body)


def _compile(src: str, func_name: str, filename: str, g: dict) -> Callable:
    # registered so tracebacks and inspect.getsource show the generated lines
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile_cached(src, filename), g)  # noqa: S102 - source generated from the schema
    return g[func_name]


def _globals(op: Any, schema: FunctionSchema) -> dict:
    return {
        "__name__": "coretorch.ops." + op.qualname.split("::")[0],
        "_a": _a,
        "_Impl": TensorImpl,
        "_NUMBER": _a.NUMBER_CLASSES,
        "_lk": local_keys,
        "_cache_get": op._cache.get,
        "_resolve": op._resolve,
        "_rf": _rf_mod.state,
        "_call_op": _rf_mod.call_op,
        "_NAME": op.qualname,
        "_AG": AUTOGRAD_BIT,
        "_BACKENDS": BACKEND_MASK,
        "_BACKEND_SELECT": BACKEND_SELECT_BIT,
        "_dtype": _dtype_class(),
        "_device": _device_class(),
        "_D": {a.name: a.default for a in schema.arguments if not a.required},
    }


def make_binder(op: Any, schema: FunctionSchema) -> Callable:
    """``bind(*args, **kwargs)``: the argument record a call of `op` binds to (tools such as
    `coretorch.testing.opcheck` use it to call a meta rule as the dispatcher would)."""
    return _compile(
        binder_source(schema), "bind", f"<coretorch binder {op.qualname}>", _globals(op, schema)
    )


def make_entry(op: Any, schema: FunctionSchema, *, has_out: bool, doc: str = "") -> Callable:
    """Compile the entry point of operator `op` (an `Operator`) for `schema`."""
    func_name = schema.name if schema.name.isidentifier() else "entry"
    needs_bs = not any(
        a.type.base == "Tensor" and a.required and not a.type.is_list and not a.type.optional
        for a in schema.arguments
    )
    src = entry_source(schema, func_name, has_out, needs_bs)
    fn = _compile(src, func_name, f"<coretorch entry {op.qualname}>", _globals(op, schema))
    fn.__qualname__ = fn.__name__ = schema.name
    fn.__doc__ = doc or None
    fn.__module__ = "coretorch.ops." + op.qualname.split("::")[0]
    fn.__signature__ = _public_signature(schema, has_out)  # type: ignore[attr-defined]
    fn.__wrapped_schema__ = schema  # type: ignore[attr-defined]  # a function attribute
    return fn


def _public_signature(schema: FunctionSchema, has_out: bool) -> inspect.Signature:
    """What `inspect.signature` and `help` show: PyTorch's spelling, varargs as ``*size``."""
    params = []
    varargs = varargs_argument(schema)
    kind_kw = inspect.Parameter.KEYWORD_ONLY
    for a in schema.arguments:
        n = python_name(a)
        if a is varargs:
            params.append(inspect.Parameter(n, inspect.Parameter.VAR_POSITIONAL))
            continue
        kind = (
            kind_kw
            if a.kwarg_only or (varargs is not None and a.index > varargs.index)
            else inspect.Parameter.POSITIONAL_OR_KEYWORD
        )
        default = inspect.Parameter.empty if a.required else a.default
        params.append(inspect.Parameter(n, kind, default=default, annotation=str(a.type)))
    if has_out:
        params.append(inspect.Parameter("out", kind_kw, default=None, annotation="Tensor?"))
    return inspect.Signature(params)


def _dtype_class():
    from ..dtypes import dtype

    return dtype


def _device_class():
    from ..device import device

    return device
