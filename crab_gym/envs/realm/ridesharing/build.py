"""Regenerate the shipped P3/P4 instances and their reference values.

    python -m crab_gym.envs.realm.ridesharing.build            # both problems
    python -m crab_gym.envs.realm.ridesharing.build --only p4  # one of them

Instances come from the seeded generators (``p3_<size>_<k>`` = ``generate_p3(size, seed=k)``,
likewise for P4), so the files can always be rebuilt bit for bit. References:

* P3: the RoutingModel oracle with the per-size time budget of
  :data:`crab_gym.envs.realm.ridesharing.oracle.TIME_LIMITS`, one worker.
* P4: the oracle's plan made *before* any disruption (``initial``: the deterministic
  on-demand P3 solve, a solution limit, so that a shipped record is what an on-demand solve
  gives), then the best plan known facing the disruptions
  (:mod:`crab_gym.envs.realm.ridesharing.best_known`: the adaptive oracle, the greedy policy,
  the initial plan kept, the best one-vehicle plan, each improved by a clairvoyant local
  search; ``policy`` says which won, ``candidates`` what each cost, ``adaptive_oracle_value``
  the adaptive oracle's own). ``no_replan_value`` is what the initial plan costs when simply
  followed.
* ``solo.json`` (P3 and P4): the best one-vehicle plan of each instance, the coordination
  metric's baseline (:func:`~crab_gym.envs.realm.ridesharing.best_known.solo_plan`).
  ``--only solo`` writes the P3 one without touching the P3 references.

Each value is stored with its solver status, limits and worker count (1). The P4 build takes
a few minutes on one core (the large instances' one-vehicle solves dominate).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from crab_gym.envs.realm.ridesharing.formats import load_p3, load_p4, shipped_p3_names
from crab_gym.envs.realm.ridesharing.generator import generate_p3, generate_p4
from crab_gym.envs.realm.ridesharing.model import INSTANCE_DIRS, P3Instance
from crab_gym.envs.realm.ridesharing.oracle import TIME_LIMITS, p3_record, solve_p3
from crab_gym.envs.realm.ridesharing.references import (
    ON_DEMAND_SOLUTION_LIMIT,
    ON_DEMAND_TIME_GUARD,
    FacedSchedule,
    p4_record,
    solo_reference,
)
from crab_gym.envs.realm.ridesharing.sim import simulate_plan

P3_DIR, P4_DIR = INSTANCE_DIRS["p3"], INSTANCE_DIRS["p4"]

#: Shipped instances per size class (20 per problem).
COUNTS = {"small": 8, "medium": 7, "large": 5}


def _p3_entry(inst: P3Instance) -> dict:
    return {**p3_record(solve_p3(inst, time_limit=TIME_LIMITS[inst.size])), "fingerprint": inst.fingerprint()}


def _build(folder: Path, generate: Callable[..., P3Instance], entry: Callable[[P3Instance], dict]) -> None:
    """Write ``<prefix>_<size>_<k>.json`` (``k`` from 1) for every size class of :data:`COUNTS`
    and ``references.json`` mapping each name to ``entry(instance)``."""
    folder.mkdir(parents=True, exist_ok=True)
    refs = {}
    for size, count in COUNTS.items():
        for k in range(1, count + 1):
            inst = generate(size, seed=k, name=f"{folder.name}_{size}_{k:02d}")
            (folder / f"{inst.name}.json").write_text(inst.to_json() + "\n")
            refs[inst.name] = entry(inst)
    (folder / "references.json").write_text(json.dumps(refs, indent=1, sort_keys=True) + "\n")


def _p3_record(inst: P3Instance) -> dict:
    ref = _p3_entry(inst)
    print(inst.name, inst.n_requests, ref["value"], ref["status"], flush=True)
    return ref


def _p4_record(inst: P3Instance) -> dict:
    initial = p3_record(solve_p3(inst, time_limit=ON_DEMAND_TIME_GUARD, solution_limit=ON_DEMAND_SOLUTION_LIMIT))
    follow = simulate_plan(inst, initial["plan"], inst.disruptions)
    ref = {
        **p4_record(inst, initial),
        "no_replan_value": follow.cost(),
        "no_replan_feasible": not follow.violations,
        "fingerprint": inst.fingerprint(),
    }
    print(inst.name, inst.n_requests, len(inst.disruptions), initial["value"], follow.cost(),
          ref["adaptive_oracle_value"], ref["value"], ref["policy"], ref["solo_value"], flush=True)
    return ref


def _solo_file(folder: Path, records: dict[str, dict]) -> None:
    (folder / "solo.json").write_text(json.dumps(records, indent=1, sort_keys=True) + "\n")


def build_solo_p3() -> None:
    """``instances/p3/solo.json`` for the shipped P3 instances (their references untouched)."""
    records = {}
    for name in shipped_p3_names():
        inst = load_p3(name)
        records[name] = {**solo_reference(inst), "fingerprint": inst.fingerprint()}
        print(name, records[name]["value"], records[name]["vehicle"], flush=True)
    _solo_file(P3_DIR, records)


def build_solo_p4() -> None:
    """``instances/p4/solo.json`` for the shipped P4 instances facing their own disruptions."""
    records = {}
    for name in sorted(p.stem for p in P4_DIR.glob("p4_*.json")):
        inst = load_p4(name)
        records[name] = {**solo_reference(inst, inst.disruptions), "fingerprint": FacedSchedule(inst, tuple(inst.disruptions)).fingerprint()}
    _solo_file(P4_DIR, records)


def build_p3() -> None:
    _build(P3_DIR, generate_p3, _p3_record)


def build_p4() -> None:
    _build(P4_DIR, generate_p4, _p4_record)
    build_solo_p4()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["p3", "p4", "solo"], default=None)
    args = parser.parse_args(argv)
    if args.only in (None, "p3"):
        build_p3()
    if args.only in (None, "p3", "solo"):
        build_solo_p3()
    if args.only in (None, "p4"):
        build_p4()


if __name__ == "__main__":
    main()
