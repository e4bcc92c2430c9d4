"""``coretorch.nn.functional``: the functional forms of layers, activations and losses
(mirrors ``torch.nn.functional``). Everything is written with coretorch ops, so autograd and every
backend work."""
from __future__ import annotations

from .activation import *  # noqa: F401,F403
from .activation import __all__ as _act
from .attention import *  # noqa: F401,F403
from .attention import __all__ as _attn
from .dropout import *  # noqa: F401,F403
from .dropout import __all__ as _drop
from .linear import *  # noqa: F401,F403
from .linear import __all__ as _lin
from .loss import *  # noqa: F401,F403
from .loss import __all__ as _loss
from .normalization import *  # noqa: F401,F403
from .normalization import __all__ as _norm
from .padding import *  # noqa: F401,F403
from .padding import __all__ as _pad
from .pooling import *  # noqa: F401,F403
from .pooling import __all__ as _pool
from .sparse import *  # noqa: F401,F403
from .sparse import __all__ as _sparse

__all__ = _act + _attn + _drop + _lin + _loss + _norm + _pad + _pool + _sparse
