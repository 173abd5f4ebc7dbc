"""Import optional dependencies with an error that says which extra to install."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType


class MissingExtraError(ImportError):
    """An optional dependency is missing; the message names the ``pip install`` to run."""


def _missing(module: str, extra: str, package: str | None) -> MissingExtraError:
    return MissingExtraError(
        f"{module!r} is needed here but is not installed: "
        f'pip install "crab_gym[{extra}]"  (or: pip install {package or module})'
    )


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
        raise _missing(module, extra, package) from exc


def require_installed(module: str, extra: str, *, package: str | None = None) -> None:
    """Raise :class:`MissingExtraError` unless ``module`` is installed, *without* importing it.

    For packages whose import has side effects (pyautogui connects to ``$DISPLAY`` when
    imported): a missing extra is reported before anything is started, and the package is
    imported later, once importing it is safe.

    Args:
        module: a top-level module name, e.g. ``"pyautogui"``.
        extra: the crab_gym extra that provides it.
        package: the PyPI name when it differs from the module name.
    """
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken or blocked (``sys.modules[name] = None``) module
        found = False
    if not found:
        raise _missing(module, extra, package)
