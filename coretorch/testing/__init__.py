"""Testing utilities: `assert_close`, `make_tensor`, the OpInfo database (`opinfo.OP_DB`),
`opcheck`, the pytest plugin (``--backend``, `device` fixtures) and the backend conformance
suite (``pytest --pyargs coretorch.testing.conformance --backend NAME``)."""

from __future__ import annotations

from .comparison import assert_close
from .make_tensor import make_tensor
from .opcheck import OpCheckError, opcheck

__all__ = ["assert_close", "make_tensor", "opcheck", "OpCheckError"]
