"""The layers of ``coretorch.nn``."""

from . import (
    activation as _activation,
    lazy as _lazy,
    loss as _loss,
    loss_margin as _loss_margin,
    padding as _padding,
    pooling as _pooling,
    pooling_3d as _pooling_3d,
)
from .activation import *  # noqa: F401,F403
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: F401
from .attention import MultiheadAttention  # noqa: F401
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, SyncBatchNorm  # noqa: F401
from .channel_activation import PReLU, Softmax2d  # noqa: F401
from .container import Container, ModuleDict, ModuleList, Sequential  # noqa: F401
from .container_params import ParameterDict, ParameterList  # noqa: F401
from .conv import Conv1d, Conv2d  # noqa: F401
from .conv_transpose import Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d  # noqa: F401
from .data_parallel import DataParallel  # noqa: F401
from .distance import CosineSimilarity, PairwiseDistance  # noqa: F401
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout  # noqa: F401
from .embedding_bag import EmbeddingBag  # noqa: F401
from .flatten import Flatten, Unflatten  # noqa: F401
from .fold import Fold, Unfold  # noqa: F401
from .instancenorm import (  # noqa: F401
    CrossMapLRN2d,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LocalResponseNorm,
)
from .lazy import *  # noqa: F401,F403
from .linear import Bilinear, Identity, Linear, NonDynamicallyQuantizableLinear  # noqa: F401
from .linear_cross_entropy import LinearCrossEntropyLoss, LinearCrossEntropyOptions  # noqa: F401
from .loss import *  # noqa: F401,F403
from .loss_likelihood import CTCLoss, GaussianNLLLoss, PoissonNLLLoss  # noqa: F401
from .loss_margin import *  # noqa: F401,F403
from .module import Module, RemovableHandle  # noqa: F401
from .normalization import GroupNorm, LayerNorm, RMSNorm  # noqa: F401
from .padding import *  # noqa: F401,F403
from .pixelshuffle import ChannelShuffle, PixelShuffle, PixelUnshuffle  # noqa: F401
from .pooling import *  # noqa: F401,F403
from .pooling_3d import *  # noqa: F401,F403
from .pooling_max import AdaptiveMaxPool1d, AdaptiveMaxPool2d, MaxUnpool1d, MaxUnpool2d  # noqa: F401
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase  # noqa: F401
from .sparse import Embedding  # noqa: F401
from .transformer import (  # noqa: F401
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: F401

__all__ = (
    [
        "Module",
        "RemovableHandle",
        "MultiheadAttention",
        "BatchNorm1d",
        "BatchNorm2d",
        "ModuleDict",
        "ModuleList",
        "Sequential",
        "Conv1d",
        "Conv2d",
        "Dropout",
        "Dropout1d",
        "Dropout2d",
        "Flatten",
        "Unflatten",
        "Bilinear",
        "Identity",
        "Linear",
        "NonDynamicallyQuantizableLinear",
        "GroupNorm",
        "LayerNorm",
        "RMSNorm",
        "Embedding",
        "RNNBase",
        "RNN",
        "LSTM",
        "GRU",
        "RNNCellBase",
        "RNNCell",
        "LSTMCell",
        "GRUCell",
        "Transformer",
        "TransformerEncoder",
        "TransformerDecoder",
        "TransformerEncoderLayer",
        "TransformerDecoderLayer",
        "Conv3d",
        "ConvTranspose1d",
        "ConvTranspose2d",
        "ConvTranspose3d",
        "Dropout3d",
        "AlphaDropout",
        "FeatureAlphaDropout",
        "PReLU",
        "Softmax2d",
        "DataParallel",
        "CosineSimilarity",
        "PairwiseDistance",
        "EmbeddingBag",
        "InstanceNorm1d",
        "InstanceNorm2d",
        "InstanceNorm3d",
        "LocalResponseNorm",
        "CTCLoss",
        "GaussianNLLLoss",
        "PoissonNLLLoss",
        "ChannelShuffle",
        "PixelShuffle",
        "PixelUnshuffle",
        "AdaptiveMaxPool1d",
        "AdaptiveMaxPool2d",
        "MaxUnpool1d",
        "MaxUnpool2d",
        "Upsample",
        "UpsamplingBilinear2d",
        "UpsamplingNearest2d",
        "BatchNorm3d",
        "SyncBatchNorm",
        "ParameterDict",
        "ParameterList",
        "Fold",
        "Unfold",
        "CrossMapLRN2d",
        "AdaptiveLogSoftmaxWithLoss",
        "Container",
        "LinearCrossEntropyLoss",
        "LinearCrossEntropyOptions",
    ]
    + _activation.__all__
    + _loss.__all__
    + _pooling.__all__
    + _loss_margin.__all__
    + _padding.__all__
    + _pooling_3d.__all__
    + [n for n in _lazy.__all__ if n != "LazyModuleMixin"]
)
