"""REALM-Bench P1, the single-agent campus tour: the instance type and its validation.

The problem is a travelling-salesman tour with time windows (TSP-TW):

* **Decision**: the order in which one visitor walks from ``start`` (the entrance) through
  every other location and on to ``end`` (usually the entrance again).
* **Constraints**: the walk leaves ``start`` when it opens (``windows[start][0]``); each
  location is visited once, and the arrival there is no later than its closing time (arriving
  before it opens means waiting until it opens); the walk reaches ``end`` no later than
  ``end``'s closing time; the total *travel* time is at most ``max_travel``.
* **Objective**: minimise the total travel time (the sum of the legs walked), in minutes.

Units: every time is an integer number of minutes; clock times are minutes from midnight.

Upstream REALM-Bench writes ``max_duration`` (180): with its opening hours spread over a
working day, no tour can *finish* within 180 minutes of leaving, so the bound is only
consistent with the data as a bound on the travel time alone. That is the reading here
(``max_travel``), and waiting time is not counted against it.
"""

from __future__ import annotations

import hashlib
import json
from functools import cached_property
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from crab_gym.envs.realm.common.errors import FieldProblem
from crab_gym.envs.realm.common.limits import Coordinate, NonNegInt
from crab_gym.envs.realm.common.uniqueness import check_unique

#: Where the shipped instances and their ``references.json`` live.
INSTANCE_DIR = Path(__file__).with_name("instances")


class P1Instance(BaseModel):
    """One campus-tour instance; all times in minutes (clock times from midnight)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    locations: list[str] = Field(min_length=1, description="unique location names")
    start: str = Field(description="where the tour starts (the entrance)")
    end: str = Field(description="where the tour ends (usually the entrance)")
    travel: list[list[NonNegInt]] = Field(description="travel[i][j]: minutes from locations[i] to [j]")
    windows: list[tuple[NonNegInt, NonNegInt]] = Field(description="[open, close] clock minutes per location")
    max_travel: NonNegInt | None = Field(
        default=None, description="bound on the total travel minutes (upstream max_duration)"
    )
    coords: list[tuple[Coordinate, Coordinate]] | None = Field(
        default=None, description="map positions in metres, for rendering only"
    )
    size: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> P1Instance:
        n = len(self.locations)
        check_unique(self.locations, "locations[{}]", "location")
        for key in ("start", "end"):
            if getattr(self, key) not in self.locations:
                raise FieldProblem(key, f"{getattr(self, key)!r} is not one of the locations")
        if len(self.travel) != n:
            raise FieldProblem(
                "travel", f"expected a {n}x{n} matrix (one row per location), got {len(self.travel)} rows"
            )
        for i, row in enumerate(self.travel):
            if len(row) != n:
                raise FieldProblem(f"travel[{i}]", f"expected {n} minutes (one per location), got {len(row)}")
        if len(self.windows) != n:
            raise FieldProblem(
                "windows", f"expected one [open, close] pair per location ({n}), got {len(self.windows)}"
            )
        for i, (lo, hi) in enumerate(self.windows):
            if lo > hi:
                raise FieldProblem(
                    f"windows[{i}]", f"opens at minute {lo}, after it closes ({hi}); expected open <= close"
                )
        if self.coords is not None and len(self.coords) != n:
            raise FieldProblem("coords", f"expected one point per location ({n}), got {len(self.coords)}")
        return self

    # -- conveniences -------------------------------------------------------------------
    @cached_property
    def index(self) -> dict[str, int]:
        """Location name -> row/column in ``travel`` and ``windows``."""
        return {name: i for i, name in enumerate(self.locations)}

    @property
    def n(self) -> int:
        return len(self.locations)

    @property
    def targets(self) -> list[str]:
        """The locations the tour must visit (all but start and end)."""
        return [loc for loc in self.locations if loc not in (self.start, self.end)]

    @property
    def departure(self) -> int:
        """Clock minute the tour leaves ``start``: its opening time."""
        return self.windows[self.index[self.start]][0]

    def fingerprint(self) -> str:
        """A hash of everything that decides the optimum (not the name or the drawing)."""
        core = self.model_dump(include={"locations", "start", "end", "travel", "windows", "max_travel"})
        return hashlib.sha256(json.dumps(core, sort_keys=True).encode()).hexdigest()[:16]

    def to_json(self) -> str:
        return self.model_dump_json(indent=None, exclude_none=True)
