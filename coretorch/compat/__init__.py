"""Run PyTorch programs unchanged: ``import torch`` (and every ``torch.X.Y``) gives coretorch.

`install()` puts an import hook first on ``sys.meta_path`` that maps the module ``torch`` to
``coretorch`` and ``torch.X.Y`` to ``coretorch.X.Y``: the module object is the same, so
``torch.nn.Linear is coretorch.nn.Linear``. A path coretorch lacks raises ModuleNotFoundError
naming it and pointing at ``docs/compatibility.md`` (what coretorch covers, namespace by
namespace). The hook adds nothing of its own: a program gets exactly coretorch's API.

``python -m coretorch.compat script.py [args...]`` (or ``-m module``) runs a program this way;
``coretorch-profile --compat`` does the same under the profiler.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

__all__ = ["install", "uninstall", "installed", "TorchAliasFinder", "ALIAS", "TARGET", "DOCS"]

ALIAS = "torch"
TARGET = "coretorch"
DOCS = "docs/compatibility.md"


def _target_name(fullname: str) -> str:
    return TARGET + fullname[len(ALIAS) :]


class _AliasLoader(importlib.abc.Loader):
    """Loads ``torch.X`` as the already imported ``coretorch.X`` (the same module object)."""

    def __init__(self, module) -> None:
        self.module = module
        self.spec = module.__spec__

    def create_module(self, spec):
        return self.module

    def exec_module(self, module) -> None:
        # the import system stamped the alias spec on the module: give it back its own
        module.__spec__ = self.spec


class TorchAliasFinder(importlib.abc.MetaPathFinder):
    """The ``sys.meta_path`` entry that answers for ``torch`` and its submodules."""

    def find_spec(self, fullname: str, path=None, target=None):
        """Import hook: a spec mapping ``torch[.X]`` to ``coretorch[.X]`` (None for other names).

        Raises:
            ModuleNotFoundError: when coretorch has no module for the torch name asked for.
        """
        if fullname != ALIAS and not fullname.startswith(ALIAS + "."):
            return None
        name = _target_name(fullname)
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name is not None and (name == e.name or name.startswith(e.name + ".")):
                raise ModuleNotFoundError(
                    f"No module named '{fullname}': torch is mapped to coretorch here, and "
                    f"coretorch has no '{name}' ({DOCS} lists what coretorch covers and what it "
                    f"lacks)",
                    name=fullname,
                ) from None
            raise
        return importlib.util.spec_from_loader(
            fullname, _AliasLoader(module), is_package=hasattr(module, "__path__")
        )


_finder = TorchAliasFinder()


def installed() -> bool:
    """Whether the hook is on ``sys.meta_path``."""
    return _finder in sys.meta_path


def install() -> None:
    """Make ``import torch`` (and ``torch.X.Y``) import coretorch from now on. Raises if a real
    ``torch`` is already imported in this process (the two cannot share the name)."""
    loaded = sys.modules.get(ALIAS)
    if loaded is not None and not loaded.__name__.startswith(TARGET):
        raise RuntimeError(
            "coretorch.compat.install(): the real torch is already imported in "
            "this process; install the hook before anything imports torch"
        )
    if not installed():
        sys.meta_path.insert(0, _finder)


def uninstall() -> None:
    """Remove the hook and forget the ``torch`` aliases it made."""
    if installed():
        sys.meta_path.remove(_finder)
    for name in [n for n in sys.modules if n == ALIAS or n.startswith(ALIAS + ".")]:
        if getattr(sys.modules[name], "__name__", "").startswith(TARGET):
            del sys.modules[name]
