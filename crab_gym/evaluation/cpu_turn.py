"""One thread at a time runs env and policy code; the others wait on I/O.

LLM episodes run as threads of one process so that their HTTP requests overlap. Their env
steps and prompt writing are CPU work under the GIL: letting N threads contend for it only
adds switching. So an episode holds the process's :class:`CpuTurn` while it computes, and a
policy gives the turn away for as long as it waits on the network (:func:`io_wait`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_current = threading.local()


class CpuTurn:
    """A lock over CPU work, shared by the episode threads of one executor."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the turn for this thread (an episode's whole run, minus its I/O waits)."""
        self._lock.acquire()
        _current.turn = self
        try:
            yield
        finally:
            _current.turn = None
            self._lock.release()


@contextmanager
def io_wait() -> Iterator[None]:
    """Give this thread's turn to another episode while blocking on I/O (no-op without one)."""
    turn: CpuTurn | None = getattr(_current, "turn", None)
    if turn is None:
        yield
        return
    _current.turn = None
    turn._lock.release()
    try:
        yield
    finally:
        turn._lock.acquire()
        _current.turn = turn
