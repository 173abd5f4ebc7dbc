"""Old import paths kept for one release after a move: each warns, then resolves every name to
the module it moved to, so old imports get the very same objects (classes stay ``is``-equal,
``isinstance`` keeps working)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from types import ModuleType


def moved(old: str, new: ModuleType) -> Callable[[str], object]:
    """Warn that module ``old`` moved to ``new``; return the ``__getattr__`` for ``old``'s shim,
    which finds any name ``import *`` left out (private helpers) in ``new``.

    ``old`` is spelt out by the shim (under ``python -m`` its ``__name__`` is ``__main__``)."""
    warnings.warn(f"{old} moved to {new.__name__}; import it from there (the old path goes in the next release)",
                  DeprecationWarning, stacklevel=3)

    def __getattr__(name: str) -> object:
        return getattr(new, name)

    return __getattr__
