"""Time that jumps from event to event: the clock of the step-wise REALM envs whose actions
take time (P6/P9 cooking and car trips, P7 relief trips, P10 days; P11 dispatches the same way).

A step starts work that ends later; the env then advances the clock to the next moment
something happens (a task or trip ends, a flight lands, a disruption fires) instead of
ticking minute by minute, so an episode has as many steps as decisions. Events are kept in
the order they were scheduled among equal times, so a seeded episode always replays alike.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any


@dataclass
class EventClock:
    """The current minute and the events still to come.

    Attributes:
        now: the current time (minutes from midnight, or days for P10).
    """

    now: int = 0
    _queue: list[tuple[int, int, Any]] = field(default_factory=list, repr=False)
    _count: int = field(default=0, repr=False)

    def schedule(self, time: int, event: Any) -> None:
        """Add ``event`` at ``time`` (a time already past is due at once, at :attr:`now`)."""
        heapq.heappush(self._queue, (max(int(time), self.now), self._count, event))
        self._count += 1

    def next_time(self) -> int | None:
        """When the next event is due (None: nothing is scheduled)."""
        return self._queue[0][0] if self._queue else None

    def due(self) -> list[Any]:
        """Remove and return the events due now (time <= :attr:`now`), in schedule order."""
        out = []
        while self._queue and self._queue[0][0] <= self.now:
            out.append(heapq.heappop(self._queue)[2])
        return out

    def advance(self, until: int | None = None) -> list[Any]:
        """Move to the next event time (not past ``until`` when given; never backwards) and
        return the events due then. With nothing scheduled, move to ``until`` (if given)."""
        target = self.next_time()
        if until is not None:
            target = int(until) if target is None else min(target, int(until))
        if target is not None and target > self.now:
            self.now = target
        return self.due()

    def pending(self) -> list[tuple[int, Any]]:
        """The events still to come as ``(time, event)``, in the order they will fire."""
        return [(t, e) for t, _, e in sorted(self._queue)]

    def copy(self) -> EventClock:
        """An independent clock in the same state (for look-ahead and re-solves)."""
        return EventClock(self.now, list(self._queue), self._count)
