"""``episodes.jsonl``: finished episodes, one JSON line each, safe against a killed run.

Each line is appended, flushed and fsynced as soon as its episode finishes, so a crash loses
at most the episode that was being written. On read, a torn last line (the write a kill cut
short) is dropped with a note; a bad line anywhere else is corruption and an error that names
the file and the line. The store is the run's source of truth: reports are rebuilt from it,
and a rerun skips the episodes it already holds.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from crab_gym.core.episode import EpisodeResult

FILENAME = "episodes.jsonl"


class EpisodeStoreError(ValueError):
    """``episodes.jsonl`` is missing or has a corrupt line before its end."""


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

    def exists(self) -> bool:
        return self.path.is_file()

    # ------------------------------------------------------------------ reading
    def load(self) -> list[EpisodeResult]:
        """Every stored episode, first copy of each spec only (in file order)."""
        results, _ = self._scan()
        seen: set[str] = set()
        unique = []
        for result in results:
            key = result.spec.key
            if key not in seen:
                seen.add(key)
                unique.append(result)
        return unique

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
                    if number - 1 != last:
                        raise EpisodeStoreError(f"{self.path} line {number} is corrupt: {exc}") from None
                    self.notes.append(f"{self.path} line {number}: dropped a torn last line "
                                      f"({len(line)} bytes; an interrupted write)")
            offset = end
        return results, good_end

    # ------------------------------------------------------------------ writing
    def open(self) -> EpisodeStore:
        """Open for appending, first cutting a torn tail so the next line starts clean."""
        self.directory.mkdir(parents=True, exist_ok=True)
        _, good_end = self._scan()
        self._file = open(self.path, "ab")  # noqa: SIM115 - closed in close()
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


def _parse(line: bytes) -> EpisodeResult:
    try:
        data = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    try:
        return EpisodeResult.from_dict(data)
    except TypeError as exc:
        raise ValueError(f"not an episode record ({exc})") from None
