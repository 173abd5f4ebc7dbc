"""The one on-disk cache folder for solved references of non-shipped instances.

Solving an instance can take seconds; users who generate or load their own instances should
pay that once, not every episode. Every solver cache lives under one root that users can move
with a single variable.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """``$CRAB_GYM_CACHE_DIR``, else ``$XDG_CACHE_HOME/crab_gym``, else ``~/.cache/crab_gym``."""
    if os.environ.get("CRAB_GYM_CACHE_DIR"):
        return Path(os.environ["CRAB_GYM_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "crab_gym"


def cache_dir(name: str = "") -> Path:
    """The cache subfolder ``name`` (e.g. ``"jssp"``) under :func:`cache_root` (not created)."""
    return cache_root() / name if name else cache_root()
