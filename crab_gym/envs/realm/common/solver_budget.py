"""How long an oracle may search: by an instance's size class, else by how large it is.

Shipped and generated instances carry a size class (``small`` / ``medium`` / ``large``) with
a fixed budget each, so a reference records the budget that produced it. An instance without
one (a user's file) gets the budget of the first count threshold it fits under.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def time_limit(
    size: str | None,
    count: int,
    by_size: Mapping[str, float],
    by_count: Sequence[tuple[float, float]],
) -> float:
    """Seconds of search: ``by_size[size]`` when the instance has a known size class, else the
    seconds of the first ``(most, seconds)`` in ``by_count`` with ``count <= most`` (the last
    entry's seconds when none fits).

    >>> time_limit(None, 8, {"small": 2.0}, [(5, 1.0), (12, 5.0), (float("inf"), 20.0)])
    5.0
    """
    if size is not None and size in by_size:
        return float(by_size[size])
    for most, seconds in by_count:
        if count <= most:
            return float(seconds)
    return float(by_count[-1][1])
