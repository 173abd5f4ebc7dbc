"""Copied observations of a batched engine, refreshed row by row instead of copied whole.

A vector env with ``copy=True`` promises that an observation it hands out never changes
afterwards. Copying the engine's state arrays each step keeps that promise but, at J3's
200x50 with 256 envs, moves about 4.6 MB per step, most of which did not change: a dispatch
changes one job row per env. :class:`RecycledObservations` keeps the promise more cheaply. It
keeps the copies it handed out and, when one of them is no longer held by anybody (no
reference to its arrays outside this pool: not the observation dict, not a view of a row, not
a tensor sharing its memory), it brings that copy up to date by copying only the rows that
changed since it was made. An observation somebody still holds is never touched; when no copy
is free (or too many steps have passed), a fresh whole copy is made, as before.

Each step the env reports the rows it changed (:meth:`RecycledObservations.changed`), then
takes the observation (:meth:`RecycledObservations.take`).
"""

from __future__ import annotations

import sys
from collections import deque

import numpy as np


class RecycledObservations:
    """Copies of ``sources`` (the engine's live arrays), handed out as arrays nothing writes later.

    ``rows_of``: the names of the contiguous arrays whose first two axes, flattened, are the
    rows the env reports as changed (for the job shop: ``done`` and ``lower_bound``, (N,
    n_jobs, K), and ``action_mask``, (N, n_jobs): N x n_jobs rows); the other arrays are small
    and copied whole into a recycled copy.
    ``keep``: how many copies (and steps of changed rows) are kept.
    """

    def __init__(self, sources: dict[str, np.ndarray], rows_of: tuple[str, ...], *, keep: int = 3) -> None:
        self.sources = sources
        self.keep = keep
        self.version = 0
        self._pending: list[np.ndarray] = []
        self._log: deque[tuple[int, np.ndarray]] = deque(maxlen=keep)  # (version, rows changed to reach it)
        self._pool: deque[_Copy] = deque()
        self._rows_of = rows_of
        self._source_records = [_records(sources[k]) for k in rows_of]
        self._whole = [k for k in sources if k not in rows_of]

    def changed(self, rows: np.ndarray) -> None:
        """Note rows (indices into the flattened leading axes of ``rows_of``) changed this step."""
        self._pending.append(rows)

    def take(self) -> dict[str, np.ndarray]:
        """The arrays as they are now, in arrays that nothing will write afterwards."""
        self.version += 1
        pending, self._pending = self._pending, []
        if len(pending) == 1:
            rows = pending[0]
        else:
            rows = np.concatenate(pending) if pending else np.empty(0, dtype=np.intp)
        self._log.append((self.version, rows))
        for copy in self._pool:
            if copy.free():
                self._refresh(copy)
                return dict(copy.arrays)
        fresh = _Copy({k: v.copy() for k, v in self.sources.items()}, self._rows_of, self.version)
        if len(self._pool) >= self.keep:
            self._pool.popleft()
        self._pool.append(fresh)
        return dict(fresh.arrays)

    def _refresh(self, copy: _Copy) -> None:
        """Bring a copy up to now: the changed rows of the row arrays (or everything, when
        the log no longer reaches back to the copy's version), the small arrays whole."""
        if self._log[0][0] > copy.version + 1:
            for name, source in self.sources.items():
                np.copyto(copy.arrays[name], source)
        else:
            missed = [rows for v, rows in self._log if v > copy.version]
            rows = missed[0] if len(missed) == 1 else np.concatenate(missed)
            for target, source in zip(copy.records, self._source_records, strict=True):
                target[rows] = source[rows]
            for name in self._whole:
                np.copyto(copy.arrays[name], self.sources[name])
        copy.version = self.version


class _Copy:
    """One copy handed out: its arrays, their row records, the version they show."""

    __slots__ = ("arrays", "records", "version", "_own_references")

    def __init__(self, arrays: dict[str, np.ndarray], rows_of: tuple[str, ...], version: int) -> None:
        self.arrays = arrays
        self.records = [_records(arrays[k]) for k in rows_of]
        self.version = version
        # each array's references while only this copy holds it (its dict, its record view)
        self._own_references = _references(arrays)

    def free(self) -> bool:
        """Nobody but this copy holds its arrays: no observation dict, view or tensor."""
        return _references(self.arrays) == self._own_references


def _references(arrays: dict[str, np.ndarray]) -> list[int]:
    """Each array's reference count (counted the same way every time: the counts are compared)."""
    return [sys.getrefcount(a) for a in arrays.values()]


def _records(array: np.ndarray) -> np.ndarray:
    """A 1-d view of a contiguous ``array`` with one element per row (its first two axes
    flattened), each row's bytes as one opaque record: a row copy is one element copy."""
    if not array.flags.c_contiguous:
        raise ValueError("row-refreshed arrays must be C-contiguous")
    rows = array.reshape(array.shape[0] * array.shape[1], -1)
    return rows.view(np.dtype((np.void, rows.shape[1] * rows.itemsize))).ravel()
