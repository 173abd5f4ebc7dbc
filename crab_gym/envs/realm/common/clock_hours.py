"""Upstream clock hours: REALM-Bench files give times of day in hours (``9.5`` = 09:30).

Inside the package every time is whole minutes from midnight; the families' upstream readers
(P1, P2, P3/P4) convert with :func:`hours_to_minutes` and read ``[start_hour, end_hour]``
windows with :func:`hour_window`. Anything that is not a clock hour in ``[0, 48]`` (two days)
raises :class:`~crab_gym.envs.realm.common.errors.InstanceFormatError` naming the source and
the field.
"""

from __future__ import annotations

from typing import Any

from crab_gym.envs.realm.common.errors import InstanceFormatError
from crab_gym.envs.realm.common.limits import is_number, too_large

#: Latest clock hour an upstream file may give (the end of the second day).
MAX_HOUR = 48


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:20] + "..."


def hours_to_minutes(value: Any, source: str, field: str) -> int:
    """Clock hours in ``[0, 48]`` as whole minutes from midnight (rounded)."""
    if not is_number(value) or too_large(value):
        raise InstanceFormatError(source, f"expected clock hours as a number, got {_shown(value)}", field=field)
    if not 0 <= value <= MAX_HOUR:
        raise InstanceFormatError(source, f"expected clock hours in [0, {MAX_HOUR}], got {_shown(value)}", field=field)
    return int(round(value * 60))


def hour_window(
    value: Any, source: str, field: str, names: tuple[str, str] = ("start_hour", "end_hour")
) -> tuple[int, int]:
    """A ``[start_hour, end_hour]`` pair as minutes from midnight, in the order given (an
    inverted window is the caller's to repair or reject). ``names`` name the two hours in the
    error message."""
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise InstanceFormatError(source, f"expected [{names[0]}, {names[1]}], got {_shown(value)}", field=field)
    return hours_to_minutes(value[0], source, f"{field}[0]"), hours_to_minutes(value[1], source, f"{field}[1]")
