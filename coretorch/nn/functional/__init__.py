"""``coretorch.nn.functional``: the functional forms of layers, activations and losses
(mirrors ``torch.nn.functional``). Everything is written with coretorch ops, so autograd and every
backend work."""

from __future__ import annotations

from .activation import *  # noqa: F401,F403
from .activation import __all__ as _act
from .attention import *  # noqa: F401,F403
from .attention import __all__ as _attn
from .conv3d import *  # noqa: F401,F403
from .conv3d import __all__ as _conv3d
from .conv_transpose import *  # noqa: F401,F403
from .conv_transpose import __all__ as _convt
from .ctc import *  # noqa: F401,F403
from .ctc import __all__ as _ctc
from .distance import *  # noqa: F401,F403
from .distance import __all__ as _distance
from .dropout import *  # noqa: F401,F403
from .dropout import __all__ as _drop
from .embedding_bag import *  # noqa: F401,F403
from .embedding_bag import __all__ as _embedding_bag
from .fold import *  # noqa: F401,F403
from .fold import __all__ as _fold
from .linear import *  # noqa: F401,F403
from .linear import __all__ as _lin
from .linear_cross_entropy import *  # noqa: F401,F403
from .linear_cross_entropy import __all__ as _linear_ce
from .local_response_norm import *  # noqa: F401,F403
from .local_response_norm import __all__ as _local_response_norm
from .loss import *  # noqa: F401,F403
from .loss import __all__ as _loss
from .loss_likelihood import *  # noqa: F401,F403
from .loss_likelihood import __all__ as _loss_likelihood
from .loss_margin import *  # noqa: F401,F403
from .loss_margin import __all__ as _loss_margin
from .normalization import *  # noqa: F401,F403
from .normalization import __all__ as _norm
from .padding import *  # noqa: F401,F403
from .padding import __all__ as _pad
from .pooling import *  # noqa: F401,F403
from .pooling import __all__ as _pool
from .pooling_3d import *  # noqa: F401,F403
from .pooling_3d import __all__ as _pooling_3d
from .pooling_max import *  # noqa: F401,F403
from .pooling_max import __all__ as _pooling_max
from .prelu import *  # noqa: F401,F403
from .prelu import __all__ as _prelu
from .sampling import *  # noqa: F401,F403
from .sampling import __all__ as _sampling
from .sparse import *  # noqa: F401,F403
from .sparse import __all__ as _sparse
from .upsampling import *  # noqa: F401,F403
from .upsampling import __all__ as _upsampling
from .vision import *  # noqa: F401,F403
from .vision import __all__ as _vision

__all__ = (
    _act
    + _attn
    + _conv3d
    + _convt
    + _drop
    + _lin
    + _loss
    + _norm
    + _pad
    + _pool
    + _sparse
    + _ctc
    + _distance
    + _embedding_bag
    + _local_response_norm
    + _loss_likelihood
    + _loss_margin
    + _pooling_max
    + _prelu
    + _upsampling
    + _vision
    + _sampling
    + _fold
    + _pooling_3d
    + _linear_ce
)

from ._op_errors import name_errors_in as _name_errors_in  # noqa: E402

_name_errors_in(globals(), __all__, __name__)
