"""``coretorch.nn``: modules, layers, losses, ``functional``, ``init`` and ``utils`` (mirrors
``torch.nn``)."""

from . import (  # noqa: F401
    functional,
    init,
    parallel,  # noqa: F401
    utils,
)
from .modules import *  # noqa: F401,F403
from .modules import Module  # noqa: F401
from .parameter import Buffer, Parameter  # noqa: F401
