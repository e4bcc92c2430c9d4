"""OpInfos of the ``*_copy`` ops (coretorch/ops/view_copies.py): the samples, references and
error cases of the view each copies (the result is the same values, in a new tensor)."""

from __future__ import annotations

import dataclasses
import re

from ...dispatch.entry import varargs_argument
from ...ops.view_copies import COPIED_VIEWS
from ..opinfo import OpInfo
from . import views as _views

_BY_NAME = {o.name: o for o in _views.OPS}


def _packed(samples):
    """The view's samples with varargs sizes (``x.view(2, 3)``) given as one tuple: PyTorch's
    ``view_copy`` function takes only the tuple form."""

    def gen(op, m, dtype):
        for s in samples(op, m, dtype):
            if len(s.args) > 1 or (s.args and not isinstance(s.args[0], (tuple, list))):
                s = dataclasses.replace(s, args=(tuple(s.args),))
            yield s

    return gen


def _renamed_errors(view: OpInfo):
    """The view's error cases, their messages naming ``<view>_copy`` where the argument
    binding does (it names the op called) and the view where its meta rule does."""
    errors = view.error_inputs_func
    if errors is None:
        return None
    name = re.escape(view.name)

    def gen(op, m, dtype):
        for e in errors(op, m, dtype):
            match = e.match.replace(f"{name}\\(", f"{name}(_copy)?\\(")
            yield dataclasses.replace(e, match=match)

    return gen


def _copy_info(view: OpInfo) -> OpInfo:
    samples = view.sample_inputs_func
    if varargs_argument(view.decl.schema) is not None:
        samples = _packed(samples)
    return OpInfo(
        f"{view.name}_copy",
        dtypes=view.dtypes,
        ref=view.ref,
        sample_inputs_func=samples,
        tol=view.tol,
        supports_autograd=view._supports_autograd,
        error_inputs_func=_renamed_errors(view),
        notes=f"the samples of {view.name}",
    )


OPS: list[OpInfo] = [_copy_info(_BY_NAME[name]) for name in COPIED_VIEWS]
