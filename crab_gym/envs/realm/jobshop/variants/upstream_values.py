"""The numbers and ids of upstream REALM-Bench J2/J3/J4 files, read without changing their
meaning.

A value that cannot be read as written is refused with an
:class:`~crab_gym.envs.realm.common.errors.InstanceFormatError` naming the file and the field,
never cut to fit: ``int(3.7)`` would put an operation on machine 3, ``int(0.4)`` would make a
duration 0, and a regular expression over ``"-1"`` would find operation 1. So a whole number
may be written as ``3``, ``3.0`` or ``"3"``; an id may also be a label with one number
(``"M3"``, ``"job_3"``); an operation may also be ``"J1_O2"`` or ``[job, operation]``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from crab_gym.envs.realm.common.errors import InstanceFormatError
from crab_gym.envs.realm.common.limits import MAX_QUANTITY

#: A number written as a string: ``"12"``, ``" 0.5 "``, ``"-3"``.
_NUMERAL = re.compile(r"\s*-?\d+(\.\d+)?\s*")
#: A label holding one id: ``"M3"``, ``"job_3"``, ``"7"`` (no sign, no decimal point).
_LABEL = re.compile(r"[^\d.\-]*?(\d+)[^\d.\-]*")
#: A label holding a job and an operation: ``"J1_O2"``.
_PAIR = re.compile(r"[^\d.\-]*?(\d+)[^\d.\-]+(\d+)[^\d.\-]*")


def missing(source: str, where: str) -> InstanceFormatError:
    """The error for a required key that is absent."""
    return InstanceFormatError(source, "missing required key", field=where)


def number(value: Any, source: str, where: str, low: float = 0, high: float = MAX_QUANTITY) -> float:
    """A number in ``[low, high]`` (a numeral string is read as its number)."""
    if isinstance(value, str) and _NUMERAL.fullmatch(value):
        value = float(value)
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or not low <= value <= high:
        raise InstanceFormatError(source, f"expected a number in [{low:g}, {high:g}], got {value!r}", field=where)
    return value


#: Why a time or duration is bounded (said in its error).
TIME_BOUND = "every time of an episode must stay within the observation's bound"


def whole(value: Any, source: str, where: str, low: int = 0, high: int = MAX_QUANTITY, why: str = "") -> int:
    """A whole number in ``[low, high]``; a fraction is refused, not cut. ``why`` explains
    the bound in the error."""
    shown = value
    if isinstance(value, str) and _NUMERAL.fullmatch(value):
        value = float(value)
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value != int(value) or not low <= value <= high:
        raise InstanceFormatError(source, f"expected a whole number in [{low:,}, {high:,}], got {shown!r}"
                                          + (f" ({why})" if why else ""), field=where)
    return int(value)


def an_id(value: Any, source: str, where: str) -> int:
    """An id: a whole number >= 0 or a label with one (``"M3"``)."""
    if isinstance(value, str) and not _NUMERAL.fullmatch(value):
        match = _LABEL.fullmatch(value)
        if match is None:
            raise InstanceFormatError(source, f"expected an id (a whole number >= 0, or a label such as 'M3'), "
                                              f"got {value!r}", field=where)
        return int(match.group(1))
    return whole(value, source, where)


def id_list(value: Any, source: str, where: str) -> list[int]:
    """A list of ids (one id alone is a list of one; absent or null is empty)."""
    if value is None:
        return []
    if not isinstance(value, list):
        value = [value]
    return [an_id(v, source, f"{where}[{i}]") for i, v in enumerate(value)]


def one_id(value: Any, source: str, where: str) -> int:
    """Exactly one id (``[3]`` is 3; ``[2, 3]`` is refused, not read as 2)."""
    found = id_list(value, source, where)
    if value is None:
        raise missing(source, where)
    if len(found) != 1:
        raise InstanceFormatError(source, f"expected one id, got {value!r}", field=where)
    return found[0]


def operation(entry: Any, source: str, at: str, n_ops: int) -> tuple[str, Any]:
    """An ``affected_operations`` entry as ``("pair", (job, operation))`` (ids as written) or
    ``("bare", n)``: the n-th operation counting job by job from 1, n in ``1..n_ops``."""
    expected = f"expected an operation (a whole number 1..{n_ops}, [job, operation] or 'J1_O2')"
    if isinstance(entry, Mapping):
        for key in ("job", "operation"):
            if key not in entry:
                raise missing(source, f"{at}.{key}")
        return "pair", (whole(entry["job"], source, f"{at}.job"), whole(entry["operation"], source, f"{at}.operation"))
    if isinstance(entry, list) and len(entry) == 2:
        return "pair", (whole(entry[0], source, f"{at}[0]"), whole(entry[1], source, f"{at}[1]"))
    if isinstance(entry, str) and not _NUMERAL.fullmatch(entry):
        match = _PAIR.fullmatch(entry)
        if match is not None:
            return "pair", (int(match.group(1)), int(match.group(2)))
        match = _LABEL.fullmatch(entry)
        if match is None:
            raise InstanceFormatError(source, f"{expected}, got {entry!r}", field=at)
        entry = match.group(1)
    try:
        return "bare", whole(entry, source, at, 1, n_ops)
    except InstanceFormatError:
        raise InstanceFormatError(source, f"{expected}, got {entry!r}", field=at) from None
