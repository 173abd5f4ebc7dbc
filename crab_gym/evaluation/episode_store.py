"""``episodes.jsonl``: finished episodes, one JSON line each, safe against a killed run.

Each line is appended, flushed and fsynced as soon as its episode finishes, so a crash loses
at most the episode that was being written. On read, a torn last line (the write a kill cut
short) is dropped with a note; a bad line anywhere else, and a line that is JSON but not an
episode record (a missing field, a value of the wrong type) anywhere, is corruption and an error
that names the file and the line. The store is the run's source of truth: reports are rebuilt
from it, and a rerun skips the episodes it already holds (with ``--retry-errors``, all but
those that failed on infrastructure: their new record is appended, and the last record of an
episode is the one that counts).

One run writes a directory at a time: :meth:`EpisodeStore.locked` holds an advisory lock on
``episodes.jsonl.lock`` (``fcntl``; no lock where the platform has none), and a second run into
the same directory is refused with :class:`EpisodeStoreConflict`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path
from typing import IO, Any

from crab_gym.evaluation.episode import EpisodeResult

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory lock
    fcntl = None  # type: ignore[assignment]

FILENAME = "episodes.jsonl"
LOCKNAME = FILENAME + ".lock"


class EpisodeStoreError(ValueError):
    """``episodes.jsonl`` has a corrupt line, or its directory cannot be written."""


class EpisodeStoreConflict(EpisodeStoreError):
    """The directory belongs to another run: one running now, or one with other arguments."""


class _TornLine(ValueError):
    """A line that is not JSON: a torn write when it is the last line."""


class EpisodeStore:
    """The episodes of one output directory.

    Args:
        directory: the run's ``--out`` directory (created on the first append).
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.path = self.directory / FILENAME
        #: What reading or repairing found worth telling (a dropped torn line).
        self.notes: list[str] = []
        self._file: IO[bytes] | None = None

    @contextmanager
    def locked(self) -> Iterator[EpisodeStore]:
        """Hold the directory's lock (made if missing) while the block runs; refuse if another
        process holds it. The lock ends with the process, so a killed run leaves none behind."""
        lock_path = self.directory / LOCKNAME
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            handle = open(lock_path, "a+")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise EpisodeStoreError(f"cannot write to {self.directory}: {exc.strerror or exc}") from None
        try:
            if fcntl is not None:
                try:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    handle.seek(0)
                    holder = handle.read().strip() or "another process"
                    raise EpisodeStoreConflict(
                        f"another run is writing {self.directory} ({holder}): wait for it to finish, "
                        "or use another --out") from None
                handle.seek(0)
                handle.truncate()
                handle.write(f"process {os.getpid()}")
                handle.flush()
            yield self
        finally:
            handle.close()  # releases the lock

    def exists(self) -> bool:
        return self.path.is_file()

    # ------------------------------------------------------------------ reading
    def load(self) -> list[EpisodeResult]:
        """Every stored episode, the last record of each spec (in the order specs first
        appear): a run with ``retry_errors`` appends a new record for an episode whose stored
        one failed on infrastructure, and the new one replaces it."""
        results, _ = self._scan()
        last: dict[str, EpisodeResult] = {}
        for result in results:
            last[result.spec.key] = result
        return list(last.values())

    def keys(self) -> set[str]:
        """The spec keys already stored (what a rerun skips)."""
        return {r.spec.key for r in self.load()}

    def _scan(self) -> tuple[list[EpisodeResult], int]:
        """(results, byte offset just after the last good line); notes a torn tail."""
        if not self.exists():
            return [], 0
        data = self.path.read_bytes()
        lines = data.split(b"\n")
        last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
        results: list[EpisodeResult] = []
        offset = good_end = 0
        for number, line in enumerate(lines, start=1):
            end = offset + len(line) + 1  # just after this line's newline
            if line.strip():
                try:
                    results.append(_parse(line))
                    good_end = min(end, len(data))
                except ValueError as exc:
                    if number - 1 != last or not isinstance(exc, _TornLine):
                        raise EpisodeStoreError(f"{self.path} line {number} is corrupt: {exc}") from None
                    self.notes.append(f"{self.path} line {number}: dropped a torn last line "
                                      f"({len(line)} bytes; an interrupted write)")
            offset = end
        return results, good_end

    # ------------------------------------------------------------------ writing
    def open(self) -> EpisodeStore:
        """Open for appending, first cutting a torn tail so the next line starts clean."""
        _, good_end = self._scan()
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "ab")  # noqa: SIM115 - closed in close()
        except OSError as exc:
            raise EpisodeStoreError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        size = self._file.seek(0, os.SEEK_END)
        if size > good_end:
            self._file.truncate(good_end)
            self._file.seek(good_end)
        elif good_end and not self.path.read_bytes().endswith(b"\n"):
            self._file.write(b"\n")  # a complete last line whose newline was cut off
        return self

    def append(self, result: EpisodeResult) -> None:
        """Write one episode and make it durable before returning."""
        if self._file is None:
            self.open()
        assert self._file is not None
        line = json.dumps(result.to_dict(), default=str, sort_keys=True)
        self._file.write(line.encode() + b"\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def extend(self, results: Iterable[EpisodeResult]) -> None:
        for result in results:
            self.append(result)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> EpisodeStore:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()


#: The JSON types of an episode record's fields (what ``EpisodeResult.to_dict`` writes).
_NUMBER = (int, float)
_FIELD_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "env_id": ((str,), "a string"), "policy": ((str,), "a string"),
    "env_kwargs": ((dict,), "an object"), "metrics": ((dict,), "an object"),
    "policy_kwargs": ((dict,), "an object"), "usage": ((dict,), "an object"),
    "seed": ((int,), "a whole number"), "steps": ((int,), "a whole number"),
    "invalid_actions": ((int,), "a whole number"), "index": ((int,), "a whole number"),
    "max_steps": ((int, type(None)), "a whole number or null"),
    "episode_return": (_NUMBER, "a number"), "completeness": (_NUMBER, "a number"),
    "wall_time_s": (_NUMBER, "a number"), "deferred_return": (_NUMBER, "a number"),
    "terminated": ((bool,), "true or false"), "truncated": ((bool,), "true or false"),
    "success": ((bool,), "true or false"),
    "error": ((str, type(None)), "a string or null"), "traceback": ((str, type(None)), "a string or null"),
    "error_kind": ((str, type(None)), "a string or null"),
}


def _check_types(data: dict[str, Any]) -> None:
    """A value of the wrong type would crash a report far from here: name it now."""
    for name in (f.name for f in fields(EpisodeResult)):
        if name not in data or name not in _FIELD_TYPES:
            continue
        value = data[name]
        types, expected = _FIELD_TYPES[name]
        wrong_bool = isinstance(value, bool) and bool not in types
        if wrong_bool or not isinstance(value, types):
            raise ValueError(f"field {name!r} should be {expected}, got {json.dumps(value)[:80]}")


def _parse(line: bytes) -> EpisodeResult:
    try:
        data = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _TornLine(f"not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    _check_types(data)
    try:
        return EpisodeResult.from_dict(data)
    except TypeError as exc:
        raise ValueError(f"not an episode record ({exc})") from None
