"""Upstream distance maps: ``{"a-b": minutes}`` objects into whole-minute matrices.

Upstream REALM-Bench files (P1, P3/P4) give travel times as an object keyed ``"from-to"``,
where place names may themselves contain ``-``, some directions are missing and some values
are fractional. Every family reads them the same way, with the same repairs, each reported
as a :class:`~crab_gym.envs.realm.common.errors.RealmRepairWarning`: a missing direction is
taken from the other one, and fractional minutes are rounded (one warning for all of them).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence
from typing import Literal

from crab_gym.envs.realm.common.errors import InstanceFormatError, RealmRepairWarning


def split_pair(key: str, names: Iterable[str]) -> tuple[str, str] | None:
    """Split ``"a-b"`` into two known names (names may contain ``-``); None if that is not
    exactly one way."""
    known = set(names)
    hits = [
        (key[:i], key[i + 1 :])
        for i, ch in enumerate(key)
        if ch == "-" and key[:i] in known and key[i + 1 :] in known
    ]
    return hits[0] if len(hits) == 1 else None


def whole_minutes(
    raw: Sequence[Sequence[float | None]],
    locations: Sequence[str],
    source: str,
    field: str,
    *,
    missing: Literal["error", "none"],
    note: str = "",
    stacklevel: int = 2,
) -> list[list[int | None]]:
    """The matrix ``raw`` (``raw[i][j]``: minutes from ``locations[i]`` to ``locations[j]``,
    None where the file has no entry) with the repairs above; 0 on the diagonal.

    A pair missing in both directions raises :class:`InstanceFormatError` naming
    ``field['a-b']`` (``missing="error"``) or stays None (``"none"``: no road). ``note`` ends
    the repair message (e.g. why the other direction may stand in); ``stacklevel`` is that of
    :func:`warnings.warn` as seen from the caller.
    """
    n = len(locations)
    out: list[list[int | None]] = [[0] * n for _ in range(n)]
    rounded = 0
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            val = raw[i][j]
            pair = f"{field}['{locations[i]}-{locations[j]}']"
            if val is None and raw[j][i] is not None:
                val = raw[j][i]
                warnings.warn(
                    f"{source}: {pair} missing; used '{locations[j]}-{locations[i]}' = {val:g}{note}",
                    RealmRepairWarning,
                    stacklevel=stacklevel + 1,
                )
            if val is None:
                if missing == "error":
                    raise InstanceFormatError(source, "no distance in either direction", field=pair)
                out[i][j] = None
                continue
            if val != int(val):
                rounded += 1
            out[i][j] = int(math.floor(val + 0.5))
    if rounded:
        warnings.warn(
            f"{source}: rounded {rounded} non-integer distances to whole minutes",
            RealmRepairWarning,
            stacklevel=stacklevel + 1,
        )
    return out
