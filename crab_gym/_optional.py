"""Import optional dependencies with an error that says which extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType


class MissingExtraError(ImportError):
    """An optional dependency is missing; the message names the ``pip install`` to run."""


def require(module: str, extra: str, *, package: str | None = None) -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtraError` naming the extra.

    Args:
        module: the module to import, e.g. ``"sb3_contrib"``.
        extra: the crab_gym extra that provides it, e.g. ``"rl"``.
        package: the PyPI name when it differs from the module name.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"{module!r} is needed here but is not installed: "
            f'pip install "crab_gym[{extra}]"  (or: pip install {package or module})'
        ) from exc
