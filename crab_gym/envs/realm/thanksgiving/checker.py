"""Independent checker for P6/P9 plans: recomputes every time and the REALM metrics from
``{"pickups": [{"car", "member", "depart"}], "cooking_schedule": [{"task", "cook", "start"}]}``
alone, sharing no code with the env's state (:mod:`.sim`), so the tests can compare the two.

Pickups with the same car and ``depart`` are one shared trip. A trip leaving home at
``depart`` is at the airport ``travel_minutes`` later (at once for a car's first trip when it
starts at the airport), leaves when its last passenger has landed (``landings``: the real
landings, delays included) and is home ``travel_minutes`` after that.

Declared constraints (``constraint_satisfaction`` is the share that hold):

* ``task:<id>``: cooked exactly once, by a cook with the skill who is home by its start, and
  after its predecessors end;
* ``fetched:<id>`` per traveller: fetched exactly once;
* ``cook:<id>``: the cook's tasks do not overlap; ``car:<id>``: the car's trips do not overlap,
  none leaves before ``start_time`` and none carries more than ``seats`` passengers;
* ``kitchen``: at most ``kitchen_capacity`` tasks at once; ``oven``: one oven task at a time.

The deadline is soft: a task ending or a traveller home after it breaks no constraint, and
costs ``LATE_WEIGHT`` per minute late (``late``: minutes after the deadline until dinner is
served, the last task done and every traveller home). ``planning_quality`` is the share of
tasks and travellers whose constraint holds. ``cost`` is :func:`~.model.dinner_cost`:
``(ready - start_time) + DRIVE_WEIGHT x driving`` (``ready``: the last task's end) when
dinner is served by the deadline, else ``(served - start_time) + LATE_WEIGHT x late +
DRIVE_WEIGHT x driving``.
``optimality`` is :func:`~crab_gym.envs.realm.common.references.normalised_optimality` from a
``baseline`` cost (default: dinner at the deadline, :func:`~.scoring.latest_acceptable`) to
the ``reference``; the env's baseline rule is :mod:`.scoring`'s. ``coordination`` needs the
one-at-a-time afternoon: :mod:`.coordination`.

P6's and P9's ``check`` role (:func:`check`): the checker above on a
plan given as ``submit_plan`` arguments, against the travellers' real landings (P9: every
flight delay of the instance in force).

Plan: ``{"pickups": [{"car", "member", "depart"}], "cooking_schedule": [{"task", "cook",
"start"}]}`` (what ``Reference.plan`` stores and ``OraclePolicy`` submits); pickups with the
same car and ``depart`` are one shared trip. On a P9 instance the plan is judged as the env
plays it when the same plan is submitted again at each delay announcement: trips wait at the
airport for the delayed landings.

Cost, in minutes: from ``start_time`` until dinner is served (the last task done, every
traveller home), plus 10 per minute after the deadline, plus 0.01 x driving minutes
(:func:`.model.dinner_cost`); infinite while a task is not scheduled. It is the unit of the
reference value, and ``check(inst, ref.plan).cost == ref.value`` on both. On P9 the reference
plan is the schedule solved knowing every delay in advance (hindsight; the adaptive oracle's
or greedy's afternoon where cheaper, ``ref.extra["policy"]`` says which), so it may cost
less than any agent that learns the delays as announced (``ref.extra["adaptive_value"]``). Optimality (normalised from dinner at
the deadline) and coordination need the reference and are left out of ``metrics``. A plan
naming an unknown task, member or car, or missing a field, is infeasible: its only
constraint, ``plan_shape``, fails.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from crab_gym.envs.realm.common.plan_check import PlanCheck
from crab_gym.envs.realm.common.references import normalised_optimality
from crab_gym.envs.realm.thanksgiving.model import ThanksgivingInstance, dinner_cost


@dataclass
class ThanksgivingCheck(PlanCheck):
    """``cost`` in minutes: minutes after ``start_time`` until dinner is served (the last task
    done, every traveller home), plus 10 per minute late, plus 0.01 x driving. ``ready``: the
    last task's end; ``late``: minutes after the deadline until dinner is served (None: a task
    is not scheduled)."""

    ready: int | None = None
    late: int | None = None
    driving: int = 0
    home: dict[str, int] | None = None


def _overlap(spans: list[tuple[int, int]]) -> bool:
    spans = sorted(spans)
    return any(b[0] < a[1] for a, b in zip(spans, spans[1:]))


def _max_load(spans: list[tuple[int, int]]) -> int:
    """The most spans ``[start, end)`` open at one time."""
    points = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans], key=lambda p: (p[0], p[1]))
    load = best = 0
    for _, step in points:
        load += step
        best = max(best, load)
    return best


def trip_times(inst: ThanksgivingInstance, pickups: list[dict[str, Any]], landings: dict[str, int]) -> tuple[
    dict[str, int], list[tuple[str, int, int, int, int]]
]:
    """``(home minute per fetched member, trips as (car, depart, home, passengers, driving))``."""
    groups: dict[tuple[str, int], list[str]] = defaultdict(list)
    for p in pickups:
        groups[(str(p["car"]), int(p["depart"]))].append(str(p["member"]))
    T = inst.travel_minutes
    starts = {c.car_id: c.start for c in inst.cars}
    home: dict[str, int] = {}
    trips = []
    for car in inst.car_ids:
        for k, depart in enumerate(sorted(d for c, d in groups if c == car)):
            members = groups[(car, depart)]
            out = 0 if k == 0 and starts[car] == "airport" else T
            leave = max([depart + out] + [landings[m] for m in members if m in landings])
            for m in members:
                home.setdefault(m, leave + T)
            trips.append((car, depart, leave + T, len(members), out + T))
    return home, trips


def _task_constraints(
    inst: ThanksgivingInstance, cooking: list[dict[str, Any]], home: dict[str, int]
) -> tuple[dict[str, bool], dict[str, tuple[int, int]]]:
    """``task:<id>`` per task (cooked once, by a skilled cook at home, after its
    predecessors), and each cooked task's (start, end) (its first entry's)."""
    cons: dict[str, bool] = {}
    entries = defaultdict(list)
    for e in cooking:
        entries[str(e["task"])].append(e)
    spans: dict[str, tuple[int, int]] = {}
    for e in cooking:
        t = inst.tasks[inst.task_index[str(e["task"])]]
        spans.setdefault(t.task_id, (int(e["start"]), int(e["start"]) + t.duration))
    for t in inst.tasks:
        es = entries.get(t.task_id, [])
        ok = len(es) == 1
        if ok:
            cook, start = str(es[0]["cook"]), int(es[0]["start"])
            inst.member_index[cook]  # noqa: B018 - an unknown cook is a KeyError
            ok = (
                t.task_id in inst.members[inst.member_index[cook]].skills
                and cook in home
                and home[cook] <= start
                and start >= inst.start_time
                and all(p in spans and spans[p][1] <= start for p in inst.predecessors(t.task_id))
            )
        cons[f"task:{t.task_id}"] = ok
    return cons, spans


def _shared_constraints(
    inst: ThanksgivingInstance,
    cooking: list[dict[str, Any]],
    spans: dict[str, tuple[int, int]],
    trips: list[tuple[str, int, int, int, int]],
    pickups: list[dict[str, Any]],
) -> dict[str, bool]:
    """What is shared: ``cook:<id>`` (one task at a time), ``car:<id>`` (one trip at a time,
    seats), ``kitchen`` (capacity) and ``oven`` (one task at a time)."""
    cons: dict[str, bool] = {}
    for m in inst.member_ids:
        mine = [spans[str(e["task"])] for e in cooking if str(e["cook"]) == m and str(e["task"]) in spans]
        cons[f"cook:{m}"] = not _overlap(mine)
    for car in inst.car_ids:
        inst.car_index[car]  # noqa: B018
        mine_trips = [(d, h) for c, d, h, _, _ in trips if c == car]
        seats = inst.cars[inst.car_index[car]].seats
        cons[f"car:{car}"] = (
            not _overlap(mine_trips)
            and all(d >= inst.start_time for d, _ in mine_trips)
            and all(n <= seats for c, _, _, n, _ in trips if c == car)
        )
    for p in pickups:
        if str(p["car"]) not in inst.car_index:
            raise KeyError(p["car"])
    cons["kitchen"] = _max_load(list(spans.values())) <= inst.kitchen_capacity
    cons["oven"] = not _overlap([spans[t.task_id] for t in inst.tasks if t.oven and t.task_id in spans])
    return cons


def check_plan(
    inst: ThanksgivingInstance, plan: dict[str, Any], landings: dict[str, int], reference: float | None = None,
    baseline: float | None = None,
) -> ThanksgivingCheck:
    """Score a plan (REALM's P6/P9 shape) against the real ``landings`` of the travellers;
    ``optimality`` runs from ``baseline`` (default: dinner at the deadline, ``deadline -
    start_time``) to ``reference``. Unknown ids raise ``KeyError``."""
    pickups, cooking = list(plan.get("pickups", [])), list(plan.get("cooking_schedule", []))
    home, trips = trip_times(inst, pickups, landings)
    for m in inst.member_ids:
        if m not in inst.travellers:
            home[m] = inst.start_time
    fetched = Counter(str(p["member"]) for p in pickups)
    cons, spans = _task_constraints(inst, cooking, home)
    for m in inst.travellers:
        cons[f"fetched:{m}"] = fetched[m] == 1
    cons.update(_shared_constraints(inst, cooking, spans, trips, pickups))
    all_spans = list(spans.values())

    feasible = all(cons.values())
    driving = sum(d for *_, d in trips)
    ready = max((e for _, e in all_spans), default=None) if len(spans) == len(inst.tasks) else None
    late, cost = None, float("inf")
    if ready is not None:
        served = max([ready] + [home[m] for m in inst.travellers if m in home])
        late, cost = max(0, served - inst.deadline), dinner_cost(inst, ready, served, driving)
    served = sum(cons[f"task:{t}"] for t in inst.task_ids) + sum(cons[f"fetched:{m}"] for m in inst.travellers)
    base = float(inst.deadline - inst.start_time) if baseline is None else baseline
    metrics = {
        "planning_quality": served / (len(inst.tasks) + len(inst.travellers)),
        "optimality": normalised_optimality(reference, cost, feasible, base),
        "constraint_satisfaction": sum(cons.values()) / len(cons),
    }
    return ThanksgivingCheck(feasible, cost, cons, metrics, ready=ready, driving=driving, home=home, late=late)


def landings_of(inst: ThanksgivingInstance, delays: Any = ()) -> dict[str, int]:
    """The landing minute of every traveller, given the ``delays`` in force."""
    return {m: inst.landing(m, list(delays)) for m in inst.travellers}


def check(instance: ThanksgivingInstance, plan: Mapping[str, Any]) -> PlanCheck:
    """The verdict of :func:`check_plan` on ``plan`` (a :class:`ThanksgivingCheck`)."""
    try:
        verdict = check_plan(instance, dict(plan), landings_of(instance, instance.delays))
    except (KeyError, ValueError, TypeError) as err:  # an unknown id, a missing field
        return PlanCheck(False, math.inf, {"plan_shape": False},
                         {"planning_quality": 0.0, "constraint_satisfaction": 0.0, "error": str(err)})
    metrics = {k: v for k, v in verdict.metrics.items() if k != "optimality"}
    return dataclasses.replace(verdict, metrics=metrics)
