"""Regenerate the shipped P3/P4 instances and their reference values.

    python -m crab_gym.envs.realm.ridesharing.build            # both problems
    python -m crab_gym.envs.realm.ridesharing.build --only p4  # one of them

Instances come from the seeded generators (``p3_<size>_<k>`` = ``generate_p3(size, seed=k)``,
likewise for P4), so the files can always be rebuilt bit for bit. References:

* P3: the RoutingModel oracle with the per-size time budget of
  :data:`crab_gym.envs.realm.ridesharing.oracle.TIME_LIMITS`, one worker.
* P4: the same oracle's plan made *before* any disruption (``initial``), then the adaptive
  oracle that re-solves at each disruption (deterministic settings;
  ``adaptive_oracle_value``). The ``value`` is the better of that and the greedy policy
  (``policy`` says which; neither foresees disruptions). ``no_replan_value`` is what the
  initial plan costs when simply followed.

Each value is stored with its solver status, time budget and worker count. Runs take about
five minutes on one core (the large instances dominate).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from crab_gym.envs.realm.ridesharing.generator import generate_p3, generate_p4
from crab_gym.envs.realm.ridesharing.model import INSTANCE_DIRS, P3Instance
from crab_gym.envs.realm.ridesharing.oracle import TIME_LIMITS, solve_p3
from crab_gym.envs.realm.ridesharing.oracle_disruptions import adaptive_oracle
from crab_gym.envs.realm.ridesharing.references import p4_record
from crab_gym.envs.realm.ridesharing.sim import simulate_plan

P3_DIR, P4_DIR = INSTANCE_DIRS["p3"], INSTANCE_DIRS["p4"]

#: Shipped instances per size class (20 per problem).
COUNTS = {"small": 8, "medium": 7, "large": 5}


def _p3_entry(inst: P3Instance) -> dict:
    return {**solve_p3(inst, time_limit=TIME_LIMITS[inst.size]).record(), "fingerprint": inst.fingerprint()}


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
    initial = _p3_entry(inst)
    initial.pop("fingerprint")
    chain = adaptive_oracle(inst, initial["plan"])
    follow = simulate_plan(inst, initial["plan"], inst.disruptions)
    ref = {
        **p4_record(inst, initial),
        "adaptive_oracle_value": chain.cost,
        "resolves": chain.resolves,
        "no_replan_value": follow.cost(),
        "no_replan_feasible": not follow.violations,
        "fingerprint": inst.fingerprint(),
    }
    print(inst.name, inst.n_requests, len(inst.disruptions), initial["value"], follow.cost(), chain.cost,
          ref["value"], ref["policy"], flush=True)
    return ref


def build_p3() -> None:
    _build(P3_DIR, generate_p3, _p3_record)


def build_p4() -> None:
    _build(P4_DIR, generate_p4, _p4_record)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["p3", "p4"], default=None)
    args = parser.parse_args(argv)
    if args.only in (None, "p3"):
        build_p3()
    if args.only in (None, "p4"):
        build_p4()


if __name__ == "__main__":
    main()
