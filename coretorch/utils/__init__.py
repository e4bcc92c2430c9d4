"""``coretorch.utils``: data loading (``coretorch.utils.data``)."""
from . import data  # noqa: F401
