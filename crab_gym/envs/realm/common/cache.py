"""The one on-disk cache folder for solved references of non-shipped instances, and the
small JSON store the solver caches under it share.

Solving an instance can take seconds; users who generate or load their own instances should
pay that once, not every episode. Every solver cache lives under one root that users can move
with a single variable. :class:`JsonCache` keeps one JSON document per key (a hash of the
exact solver input), in memory and on disk, written atomically so that parallel workers
sharing the folder never read half a file.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import ortools


def cache_root() -> Path:
    """``$CRAB_GYM_CACHE_DIR``, else ``$XDG_CACHE_HOME/crab_gym``, else ``~/.cache/crab_gym``."""
    if os.environ.get("CRAB_GYM_CACHE_DIR"):
        return Path(os.environ["CRAB_GYM_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "crab_gym"


def cache_dir(name: str = "") -> Path:
    """The cache subfolder ``name`` (e.g. ``"jssp"``) under :func:`cache_root` (not created)."""
    return cache_root() / name if name else cache_root()


@functools.cache
def code_version(modules: tuple[str, ...]) -> str:
    """A hash of the source of ``modules`` (dotted names) and the OR-Tools version: part of
    the key of a cached solve whose value only replaying the same search gives (a budgeted
    search stops where its code and solver take it), so any edit there is a new cache."""
    digest = hashlib.sha256(ortools.__version__.encode())
    for name in modules:
        source = importlib.import_module(name).__file__
        digest.update(Path(source).read_bytes() if source else name.encode())
    return digest.hexdigest()


class JsonCache:
    """JSON documents by key: a bounded in-memory table in front of ``cache_dir(name)/<key>.json``.

    The folder is looked up at each access (so ``$CRAB_GYM_CACHE_DIR`` set later counts), and
    the memory table remembers which folder an entry came from. A damaged or unreadable file
    is a miss; a read-only home only costs a re-solve next time.
    """

    def __init__(self, name: str, max_memory: int = 1000) -> None:
        self.name, self.max_memory = name, max_memory
        self._memory: dict[tuple[str, str], Any] = {}

    def path(self, key: str) -> Path:
        """Where ``key``'s document lives on disk."""
        return cache_dir(self.name) / f"{key}.json"

    def get(self, key: str) -> Any | None:
        """The document stored under ``key`` (memory first, then disk), or None."""
        path = self.path(key)
        slot = (str(path.parent), key)
        if slot in self._memory:
            return self._memory[slot]
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        self._remember(slot, doc)
        return doc

    def put(self, key: str, doc: Any) -> None:
        """Store ``doc`` (JSON data) under ``key``, in memory and on disk; memory keeps what a
        read from disk would give (tuples become lists)."""
        path, text = self.path(key), json.dumps(doc)
        self._remember((str(path.parent), key), json.loads(text))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp",
                                             encoding="utf-8") as fh:
                fh.write(text)
            os.replace(fh.name, path)
        except OSError:
            pass

    def clear_memory(self) -> None:
        """Forget the in-memory table (the files stay)."""
        self._memory.clear()

    def _remember(self, slot: tuple[str, str], doc: Any) -> None:
        if len(self._memory) >= self.max_memory:
            self._memory.clear()
        self._memory[slot] = doc
