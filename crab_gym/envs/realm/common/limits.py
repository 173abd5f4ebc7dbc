"""Numeric limits every instance field respects, and pydantic types that enforce them.

Python integers never overflow, but the solvers (OR-Tools takes int64), numpy arrays and
float32 observations do: a duration of 1e30 loads fine and then fails far away, at episode
end, with an ``OverflowError`` that names no file. So every time, duration, capacity and
coordinate is bounded here, at load time, where the loader can still name the file and field.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import Field

#: Largest magnitude of any time (minutes), duration, capacity, count or coordinate: about
#: 1900 years of minutes, far beyond any real instance, yet sums of thousands of such values
#: still fit an int64 and are exact in a float64.
MAX_QUANTITY = 10**9

#: Taillard's seeds live in 1 .. 2^31 - 2 (his generator works modulo 2^31 - 1).
MAX_SEED = 2**31 - 2

#: A whole number of minutes (or units) in ``0 .. MAX_QUANTITY``.
NonNegInt = Annotated[int, Field(ge=0, le=MAX_QUANTITY)]

#: A whole number in ``1 .. MAX_QUANTITY`` (sizes, capacities, durations that must be > 0).
PosInt = Annotated[int, Field(ge=1, le=MAX_QUANTITY)]


#: A finite map coordinate within ``±MAX_QUANTITY`` (drawing only, but drawn with numpy).
Coordinate = Annotated[float, Field(ge=-MAX_QUANTITY, le=MAX_QUANTITY, allow_inf_nan=False)]


def is_number(value: Any) -> bool:
    """A real JSON number: int or float, not bool (``True`` is an ``int`` in Python)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def too_large(value: float) -> bool:
    """Whether a number's magnitude exceeds :data:`MAX_QUANTITY` (or it is not finite)."""
    try:
        return not math.isfinite(value) or abs(value) > MAX_QUANTITY
    except OverflowError:  # an int too large for a float
        return True
