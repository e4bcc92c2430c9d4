"""Every public op generated from a declaration documents itself: ``help(coretorch.add)``,
``help(coretorch.Tensor.add)`` and ``inspect.signature`` show the op's own docstring and the
signature its schema declares."""

from __future__ import annotations

import collections
import inspect
import pydoc

import pytest

import coretorch as ct
from coretorch.dispatch.entry import python_name, varargs_argument
from coretorch.ops.declare import REGISTRY


def _public_entries() -> list[tuple[str, object, object]]:
    """(where, the public object, its Operator) for every op entry point exposed as
    ``coretorch.NAME`` or ``Tensor.NAME`` (hand-written methods of the same name excluded)."""
    found = []
    for name, d in REGISTRY.items():
        if name.startswith("_"):
            continue
        for op in d.operators():
            public = op.qualname.split("::")[1]
            places = []
            if d.function:
                places.append((f"coretorch.{public}", getattr(ct, public, None)))
            if d.method:
                places.append((f"Tensor.{public}", ct.Tensor.__dict__.get(public)))
            found += [(where, obj, op) for where, obj in places if obj is op.entry]
    return found


ENTRIES = _public_entries()


def test_entries_are_found():
    where = {w for w, _, _ in ENTRIES}
    assert {"coretorch.add", "Tensor.add", "Tensor.add_", "Tensor.view", "coretorch.exp"} <= where
    assert len(ENTRIES) > 300


@pytest.mark.parametrize("where,entry,op", ENTRIES, ids=[w for w, _, _ in ENTRIES])
def test_docstring_is_the_ops_own(where, entry, op):
    doc = inspect.getdoc(entry)
    assert doc and len(doc.split("\n")[0]) >= 10, f"{where} has no docstring"
    sharing = {o.qualname for o in _BY_DOC[doc]} - {op.qualname}
    assert not sharing, f"{where} shares its docstring with {sorted(sharing)}"


_BY_DOC: dict = collections.defaultdict(set)
for _w, _e, _op in ENTRIES:
    _BY_DOC[inspect.getdoc(_e)].add(_op)


@pytest.mark.parametrize("where,entry,op", ENTRIES, ids=[w for w, _, _ in ENTRIES])
def test_signature_is_the_schemas(where, entry, op):
    schema = op.schema
    varargs = varargs_argument(schema)
    expected = [python_name(a) for a in schema.arguments]
    if op is op.decl.op and op.decl.out:  # the functional form of an op with ``out=``
        expected.append("out")
    sig = inspect.signature(entry)
    assert list(sig.parameters) == expected, f"{where}{sig} vs {schema}"
    for a in schema.arguments:
        p = sig.parameters[python_name(a)]
        if a is varargs:
            assert p.kind is p.VAR_POSITIONAL
        else:
            assert p.default == (p.empty if a.required else a.default), f"{where}: {a.name}"


def test_help_shows_signature_and_docstring():
    text = pydoc.render_doc(ct.Tensor.add, renderer=pydoc.plaintext)
    assert "add(input: 'Tensor|Scalar', other: 'Tensor|Scalar', *, alpha: 'Scalar' = 1" in text
    assert "input + alpha * other" in text
    view = pydoc.render_doc(ct.Tensor.view, renderer=pydoc.plaintext)
    assert "size" in view and "shape `size`" in view
    inplace = inspect.getdoc(ct.Tensor.add_)
    assert inplace.startswith("In-place form of `add`") and "input + alpha * other" in inplace
