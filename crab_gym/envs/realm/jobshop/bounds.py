"""Where the best known values of the shipped instances come from, and how sure we are of them.

P11 measures an agent against the literature's best known makespan (1 means a plan as short as
the best known one), so a stale or wrong value moves every score on that instance. Each value
is therefore kept with its provenance in ``instances/bounds.json``: per instance the best known
**upper bound** (a schedule someone reported) and **lower bound** (a proof), the work or
solver run each comes from and its date, the compilation it was read in (ScheduleOpt's
JSPLIB, 2026-08-19) and the date we checked it against older compilations. ``kind`` is
``"optimum"`` where the two meet.

An upper bound is *certified* when a plan we ship (``reference_plans.json.gz``), replayed by
the independent checker, reaches it; otherwise it is only *cited*: still the best known value
(DESIGN: "1 is the best plan known"), but taken on the source's word. Lower bounds are always
cited (a proof cannot be checked by replaying a plan).

``instances.json.gz`` carries the same numbers (``build_library --bounds-only`` writes them
from this table); a test keeps the two equal.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal

BOUNDS_FILE = "bounds.json"
BOUNDS_FORMAT = "crab_gym.jssp.bounds/1"

BestKnownKind = Literal["optimum", "upper_bound", "lower_bound"]


@dataclass(frozen=True)
class Bound:
    """One published value: ``value``, who found it (``reference``: a paper, or a solver run
    named by the compilation), its ``date``, the compilation it was read in (``read_in``, a
    key of :func:`compilations`), who first reported it where an older compilation agrees
    (``first_reported``), and whether the compilation says its schedule is published."""

    value: int
    reference: str
    date: str
    read_in: str
    first_reported: str | None = None
    schedule_published: bool = False


@dataclass(frozen=True)
class BestKnown:
    """An instance's best known makespan with its provenance.

    ``value`` is the optimum where proven (``kind == "optimum"``), else the best known upper
    bound (``kind == "upper_bound"``). ``upper`` and ``lower`` name their sources and dates;
    ``compiled`` is the date of the compilation the values were read in, ``checked`` the day
    we compared it with the other compilations. ``also_in`` keeps what those say (``None``
    where one has no value), so a disagreement stays visible; ``note`` explains one.
    """

    name: str
    kind: BestKnownKind
    upper: Bound
    lower: Bound
    checked: str
    compiled: str
    also_in: dict[str, tuple[int, int] | None]
    note: str | None = None

    @property
    def value(self) -> int:
        return self.upper.value

    @property
    def date(self) -> str:
        """When the value was reported (the upper bound's date, as the compilation gives it)."""
        return self.upper.date

    @property
    def source(self) -> str:
        """One line naming where the value comes from, for reports and ``Reference.extra``
        (with who first reported the schedule, where an older compilation says)."""
        if self.kind == "optimum" and self.upper.reference != self.lower.reference:
            line = f"schedule: {self.upper.reference}; proof: {self.lower.reference} (read in {self.upper.read_in})"
        else:
            line = f"{self.upper.reference} (read in {self.upper.read_in})"
        if self.upper.first_reported:
            line += f"; schedule first reported by {self.upper.first_reported}"
        return line

    def certified_by(self, plan_makespan: int | None) -> bool:
        """Whether a checked plan of this makespan certifies the value (reaches it)."""
        return plan_makespan is not None and plan_makespan <= self.value


@functools.cache
def _document() -> dict[str, Any]:
    """The parsed table, read once; a file of another format is refused rather than misread."""
    text = resources.files("crab_gym.envs.realm.jobshop").joinpath("instances", BOUNDS_FILE).read_text()
    doc = json.loads(text)
    if doc.get("format") != BOUNDS_FORMAT:
        raise ValueError(f"{BOUNDS_FILE}: expected format {BOUNDS_FORMAT!r}, got {doc.get('format')!r}")
    return doc


def compilations() -> dict[str, dict[str, str]]:
    """The compilations the values were read in, by key: title, url, commit, dated, read."""
    return _document()["compilations"]


def not_adopted() -> list[dict[str, Any]]:
    """Values someone reported that the table does not take, each with the reason."""
    return _document()["not_adopted"]


def _bound(data: dict[str, Any]) -> Bound:
    """One value of the table as a :class:`Bound` (typed, so a malformed entry fails early)."""
    return Bound(
        value=int(data["value"]), reference=str(data["reference"]), date=str(data["date"]),
        read_in=str(data["read_in"]), first_reported=data.get("first_reported"),
        schedule_published=bool(data.get("schedule_published", False)),
    )


def _record(data: dict[str, Any]) -> BestKnown:
    """An instance's entry as a :class:`BestKnown`; its ``kind`` must follow from its bounds
    (an edit that closes an instance must say so) and the bounds must be ordered."""
    upper, lower = _bound(data["upper_bound"]), _bound(data["lower_bound"])
    kind: BestKnownKind = "optimum" if upper.value == lower.value else "upper_bound"
    if data["kind"] != kind:
        raise ValueError(f"{BOUNDS_FILE}: {data['name']} says kind {data['kind']!r} for bounds {lower.value}..{upper.value}")
    if lower.value > upper.value:
        raise ValueError(f"{BOUNDS_FILE}: {data['name']}: lower bound {lower.value} above upper bound {upper.value}")
    also = {k: (tuple(v) if v is not None else None) for k, v in data.get("also_in", {}).items()}
    return BestKnown(
        name=data["name"], kind=kind, upper=upper, lower=lower, checked=data["checked"],
        compiled=compilations()[upper.read_in]["dated"], also_in=also, note=data.get("note"),
    )


@functools.cache
def best_known_table() -> dict[str, BestKnown]:
    """Every shipped instance's :class:`BestKnown`, by name (checked on reading)."""
    return {rec["name"]: _record(rec) for rec in _document()["instances"]}


def best_known(name: str) -> BestKnown | None:
    """The provenance record of a shipped instance by its library name, else ``None``."""
    return best_known_table().get(name)
