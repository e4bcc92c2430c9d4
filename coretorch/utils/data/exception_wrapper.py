"""ExceptionWrapper: an exception caught in a worker, carried to the main process and raised
there with the worker's traceback in its message (as PyTorch's)."""

from __future__ import annotations

import pickle
import sys
import traceback

__all__ = ["ExceptionWrapper", "KeyErrorMessage"]


class KeyErrorMessage(str):
    """A str whose repr is itself (KeyError shows its argument's repr)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return self


def _picklable(exc_type: type) -> bool:
    try:
        pickle.dumps(exc_type)
        return True
    except Exception:
        return False


class ExceptionWrapper:
    """The type and formatted traceback of the exception being handled (or of `exc_info`)."""

    def __init__(self, exc_info=None, where: str = "in background") -> None:
        if exc_info is None:
            exc_info = sys.exc_info()
        # a type the main process cannot unpickle would lose the error on the way
        self.exc_type = exc_info[0] if _picklable(exc_info[0]) else RuntimeError
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Raise the wrapped exception's type with the original traceback in the message."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)  # type: ignore[call-arg]  # it takes message=
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        try:
            raise exception
        finally:
            # no cycle exception -> traceback -> this frame -> exception: the frames of the
            # loader that raised it (and its workers) are freed as soon as the caller is done
            del exception
