"""REALM-Bench P2, multi-group campus tours: the instance types and their validation.

* **Decision**: for every visitor group, the tour guide who leads it and the minute its tour
  starts.
* **Constraints**: a group is toured once; its tour starts no earlier than it arrives; the
  group fits the guide (``size <= guide.max_group_size``) and the campus-wide cap
  (``size <= max_group_size``); the whole tour (``tour_duration`` minutes) lies inside the
  guide's availability; a guide leads one group at a time (its tours do not overlap).
* **Objective**: minimise ``total waiting + balance_weight * imbalance``, where a group's
  waiting is ``max(0, start - preferred)`` minutes and the imbalance is the largest minus the
  smallest number of tours led by any guide (every guide counts, idle ones with 0).

Units: every time is an integer number of minutes; clock times are minutes from midnight.
Upstream REALM-Bench writes ``preferred_time``, ``arrival_time`` and ``availability`` in
clock hours and ``tour_duration`` in minutes; :func:`.formats.from_upstream_p2` converts.
"""

from __future__ import annotations

import hashlib
import json
from functools import cached_property
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from crab_gym.envs.realm.common.errors import FieldProblem
from crab_gym.envs.realm.common.limits import NonNegInt, PosInt
from crab_gym.envs.realm.common.uniqueness import check_unique

#: Where the shipped instances and their ``references.json`` live.
INSTANCE_DIR = Path(__file__).with_name("instances")


class P2Group(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    group_id: str
    size: PosInt
    arrival: NonNegInt = Field(description="clock minute the group arrives")
    preferred: NonNegInt = Field(description="clock minute the group would like to start")


class P2Guide(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    guide_id: str
    available_from: NonNegInt
    available_to: NonNegInt
    max_group_size: PosInt

    @model_validator(mode="after")
    def _ordered(self) -> P2Guide:
        if self.available_to < self.available_from:
            raise FieldProblem(
                "available_to",
                f"availability ends (minute {self.available_to}) before it starts ({self.available_from})",
            )
        return self


class P2Instance(BaseModel):
    """One multi-group tour instance; all times in minutes (clock times from midnight)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    groups: list[P2Group] = Field(min_length=1)
    guides: list[P2Guide] = Field(min_length=1)
    tour_duration: PosInt = Field(description="minutes every tour lasts")
    max_group_size: PosInt = Field(description="campus-wide cap on a group's size")
    balance_weight: NonNegInt = Field(default=30, description="cost minutes per tour of imbalance")
    size: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> P2Instance:
        check_unique(self.group_ids, "groups[{}].group_id", "group id", "ids must be unique")
        check_unique(self.guide_ids, "guides[{}].guide_id", "guide id", "ids must be unique")
        return self

    @property
    def group_ids(self) -> list[str]:
        return [g.group_id for g in self.groups]

    @property
    def guide_ids(self) -> list[str]:
        return [g.guide_id for g in self.guides]

    @cached_property
    def group_index(self) -> dict[str, int]:
        return {g: i for i, g in enumerate(self.group_ids)}

    @cached_property
    def guide_index(self) -> dict[str, int]:
        return {g: i for i, g in enumerate(self.guide_ids)}

    @property
    def horizon(self) -> int:
        """Latest minute any tour can end."""
        return max(g.available_to for g in self.guides)

    def compatible(self, group: int, guide: int) -> bool:
        """Whether the guide could lead the group at all (size and availability alone)."""
        gr, gu = self.groups[group], self.guides[guide]
        return (
            gr.size <= gu.max_group_size
            and gr.size <= self.max_group_size
            and max(gr.arrival, gu.available_from) + self.tour_duration <= gu.available_to
        )

    def fingerprint(self) -> str:
        """A hash of everything that decides the optimum (not the name)."""
        core = self.model_dump(
            include={"groups", "guides", "tour_duration", "max_group_size", "balance_weight"}
        )
        return hashlib.sha256(json.dumps(core, sort_keys=True).encode()).hexdigest()[:16]

    def to_json(self) -> str:
        return self.model_dump_json(exclude_none=True)
