"""``coretorch.nn``: modules, layers, losses, ``functional``, ``init`` and ``utils`` (mirrors
``torch.nn``)."""
from . import functional, init, utils  # noqa: F401
from . import parallel  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import Module  # noqa: F401
from .parameter import Buffer, Parameter  # noqa: F401
