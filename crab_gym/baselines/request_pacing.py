"""Pacing requests to a model server: a shared rate limit and retry delays with backoff.

Concurrent LLM episodes share one endpoint: :class:`RateLimiter` spaces their requests
(``--max-rps``) and :func:`shared_rate_limiter` gives every agent of a process the same one.
A retry also goes through the limiter, so retries never break the rate.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Hashable, Mapping
from typing import Any

#: HTTP statuses worth retrying: timeouts, conflicts, rate limits, server errors.
RETRY_STATUSES = frozenset({408, 409, 429})


class RateLimiter:
    """At most ``rate`` requests per second, evenly spaced: each call to :meth:`acquire`
    reserves the next free slot and sleeps until it. Thread-safe.

    Args:
        rate: requests per second (> 0).
        clock: seconds, monotonic (injectable for tests).
        sleep: how to wait (injectable for tests).
    """

    def __init__(self, rate: float, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if not rate > 0:
            raise ValueError(f"the rate limit must be above 0 requests/s, got {rate}")
        self.rate = float(rate)
        self.interval = 1.0 / self.rate
        self._clock, self._sleep = clock, sleep
        self._next_slot: float | None = None
        self._lock = threading.Lock()

    def acquire(self) -> float:
        """Wait for this request's slot; return the seconds waited."""
        with self._lock:
            now = self._clock()
            slot = now if self._next_slot is None else max(now, self._next_slot)
            self._next_slot = slot + self.interval
        wait = slot - now
        if wait > 0:
            self._sleep(wait)
        return wait


_SHARED: dict[Hashable, RateLimiter] = {}
_SHARED_LOCK = threading.Lock()


def shared_rate_limiter(key: Hashable, rate: float) -> RateLimiter:
    """The process's limiter for ``key`` (an endpoint) at ``rate``: one budget for all agents."""
    with _SHARED_LOCK:
        limiter = _SHARED.get((key, rate))
        if limiter is None:
            limiter = _SHARED[(key, rate)] = RateLimiter(rate)
        return limiter


def is_retryable(exc: BaseException) -> bool:
    """A failed request worth repeating: 408/409/429/5xx (unless the server says not to
    retry), a lost connection or a timeout."""
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        if _headers(exc).get("x-should-retry", "").lower() == "false":
            return False
        return status in RETRY_STATUSES or status >= 500
    name = type(exc).__name__
    return "Connection" in name or "Timeout" in name


def retry_delay(exc: BaseException, attempt: int, *, base: float = 0.5, cap: float = 30.0,
                rng: random.Random | None = None) -> float:
    """Seconds to wait before retry number ``attempt`` (0-based): the server's
    ``retry-after-ms`` / ``retry-after`` when it sends one, else exponential backoff with jitter."""
    headers = _headers(exc)
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            return min(max(float(headers[name]) * scale, 0.0), 60.0)
        except (KeyError, ValueError):
            continue
    delay = min(cap, base * 2**attempt)
    return delay * (0.8 + 0.4 * (rng or random).random())  # jitter: concurrent clients spread out


def _headers(exc: BaseException) -> Mapping[str, str]:
    response: Any = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return {}
    return {str(k).lower(): str(v) for k, v in headers.items()}
