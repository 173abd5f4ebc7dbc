"""Where MCP episodes go: ``DIR/episodes.jsonl``, the store ``crab-gym run --out DIR`` writes.

Every session's finished episode is appended through one :class:`EpisodeRecorder` (a lock
around the append, which is flushed and fsynced by :class:`~crab_gym.evaluation.episode_store.EpisodeStore`),
so ``crab-gym report DIR`` reads MCP episodes as it reads a run's. The recorder holds the
directory's run lock while the server runs: a ``crab-gym run`` or a second server into the same
directory is refused, as two runs are.

Each episode gets the next free ``index`` for its (env, keywords, agent), counting what the
file already holds: two episodes never share a key, so none hides another in the report.
"""

from __future__ import annotations

import threading
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from crab_gym.evaluation.episode import EpisodeResult, canonical_json
from crab_gym.evaluation.episode_store import EpisodeStore


def _group(env_id: str, env_kwargs: dict[str, Any], agent: str) -> tuple[str, str, str]:
    return env_id, canonical_json(env_kwargs), agent


class EpisodeRecorder:
    """Hands out episode indices and appends finished episodes; thread-safe.

    Args:
        directory: the ``--out`` directory; None keeps nothing (indices still count from 0).
    """

    def __init__(self, directory: str | Path | None = None) -> None:
        self.store = EpisodeStore(directory) if directory is not None else None
        self._lock = threading.Lock()
        self._next: dict[tuple[str, str, str], int] = {}
        self._stack: ExitStack | None = None
        #: Episodes appended by this recorder (the server's count, for its closing line).
        self.recorded = 0

    @property
    def path(self) -> Path | None:
        return self.store.path if self.store is not None else None

    def open(self) -> EpisodeRecorder:
        """Take the directory's lock, count what it holds, open the file for appending.
        Raises :class:`~crab_gym.evaluation.episode_store.EpisodeStoreError` (or its ``Conflict``)."""
        if self.store is None or self._stack is not None:
            return self
        stack = ExitStack()
        try:
            stack.enter_context(self.store.locked())
            for result in self.store.load():
                key = _group(result.env_id, result.env_kwargs, result.policy)
                self._next[key] = max(self._next.get(key, 0), result.index + 1)
            self.store.open()
            stack.callback(self.store.close)
        except BaseException:
            stack.close()
            raise
        self._stack = stack
        return self

    def close(self) -> None:
        if self._stack is not None:
            self._stack.close()
            self._stack = None

    def __enter__(self) -> EpisodeRecorder:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def next_index(self, env_id: str, env_kwargs: dict[str, Any], agent: str) -> int:
        """The index of a new episode of (env, keywords, agent), reserved at once."""
        key = _group(env_id, env_kwargs, agent)
        with self._lock:
            index = self._next.get(key, 0)
            self._next[key] = index + 1
        return index

    def record(self, result: EpisodeResult) -> None:
        """Append one finished episode (durable when this returns); a no-op without a directory."""
        with self._lock:
            if self.store is not None:
                self.store.append(result)
            self.recorded += 1
