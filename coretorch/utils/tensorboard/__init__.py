"""``coretorch.utils.tensorboard``: `SummaryWriter` writes TensorBoard event files (scalars,
histograms, images, text, audio, hyperparameters) through the ``tensorboard`` package, in the
same records as ``torch.utils.tensorboard``, so ``tensorboard --logdir runs`` shows them.

The ``tensorboard`` package is optional (``pip install tensorboard``); importing this module
without it raises ImportError saying so.
"""

try:
    import tensorboard  # noqa: F401
except ImportError as e:
    raise ImportError(
        "coretorch.utils.tensorboard needs the tensorboard package: pip install tensorboard"
    ) from e

from .writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "SummaryWriter"]
