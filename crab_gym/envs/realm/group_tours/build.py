"""Regenerate the shipped P1 and P2 instances and their reference values.

    python -m crab_gym.envs.realm.group_tours.build            # both problems
    python -m crab_gym.envs.realm.group_tours.build --only p2  # one problem

Instance ``p{1,2}_<size>_<k>`` is ``generate_p{1,2}(size, seed=k)``; 7 small, 7 medium and
6 large per problem. Each reference is the oracle's value with its status, time budget and
worker count; small instances also carry the exhaustive-search optimum as a cross-check.
P1 values come from the routing solver, which proves nothing; each also carries a CP-SAT
lower bound (``certificate``), and its status is ``OPTIMAL`` when that bound meets it.
Routing and multi-worker CP-SAT searches stop on a wall-clock budget, so a rebuild on another
machine may find a different (never worse-proved) value for the instances not solved to
optimality; the instances themselves are identical.
"""

from __future__ import annotations

import argparse
import json
import time

from crab_gym.envs.realm.campus_tour.model import INSTANCE_DIR as P1_DIR
from crab_gym.envs.realm.campus_tour.model import generate_p1
from crab_gym.envs.realm.campus_tour.oracle import CERTIFY_LIMITS, brute_force_p1, certify_p1, solve_p1
from crab_gym.envs.realm.group_tours.model import INSTANCE_DIR as P2_DIR
from crab_gym.envs.realm.group_tours.model import generate_p2
from crab_gym.envs.realm.group_tours.oracle import brute_force_p2, solve_p2
from crab_gym.envs.realm.group_tours.references import record_from_result

COUNTS = {"small": 7, "medium": 7, "large": 6}

PROBLEMS = {
    "p1": (P1_DIR, generate_p1, solve_p1, brute_force_p1),
    "p2": (P2_DIR, generate_p2, solve_p2, brute_force_p2),
}


def build(problem: str, verbose: bool = True) -> dict[str, dict]:
    folder, generate, solve, brute = PROBLEMS[problem]
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob(f"{problem}_*.json"):
        old.unlink()
    records: dict[str, dict] = {}
    for size, count in COUNTS.items():
        for k in range(count):
            name = f"{problem}_{size}_{k:02d}"
            inst = generate(size, seed=k, name=name)
            (folder / f"{name}.json").write_text(inst.model_dump_json(indent=1, exclude_none=True) + "\n")
            tic = time.perf_counter()
            result = solve(inst)
            seconds = time.perf_counter() - tic
            rec = record_from_result(result, inst.fingerprint())
            if problem == "p1":  # routing proves nothing: certify with CP-SAT's bound
                cert = certify_p1(inst, CERTIFY_LIMITS[size], hint=result.route)
                rec["certificate"] = cert
                if result.feasible and cert["bound"] is not None and cert["bound"] >= result.cost:
                    rec["status"] = "OPTIMAL"
            if size == "small":
                rec["brute_force_value"] = brute(inst)[0]
            records[name] = rec
            if verbose:
                extra = f" brute={rec['brute_force_value']}" if "brute_force_value" in rec else ""
                print(f"{name}: value={rec['value']} status={rec['status']} "
                      f"budget={rec['time_limit_s']}s took={seconds:.2f}s{extra}", flush=True)
    doc = {
        "problem": problem.upper(),
        "units": "minutes" if problem == "p1" else "cost minutes (waiting + balance_weight x imbalance)",
        "value": "total travel minutes of the oracle's tour" if problem == "p1"
        else "total waiting beyond preferred starts + balance_weight x (max - min tours per guide)",
        "regenerate": "python -m crab_gym.envs.realm.group_tours.build",
        "status": "OPTIMAL: proved (P1: the CP-SAT certificate's lower bound meets the routing value); "
        "FEASIBLE: best found within the budget",
        "instances": records,
    }
    (folder / "references.json").write_text(json.dumps(doc, indent=1) + "\n")
    return records


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(PROBLEMS), help="rebuild one problem only")
    args = parser.parse_args(argv)
    for problem in [args.only] if args.only else sorted(PROBLEMS):
        build(problem)


if __name__ == "__main__":
    main()
