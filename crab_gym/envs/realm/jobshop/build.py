"""Maintenance script: solve every shipped instance once and store its reference plan.

``python -m crab_gym.envs.realm.jobshop.build`` runs the project's CP-SAT oracle
(:func:`~crab_gym.envs.realm.jobshop.oracle.solve_jssp`) on each shipped instance with a fixed
budget on one worker and writes ``reference_plans.json.gz`` beside the instances (see
:mod:`crab_gym.envs.realm.jobshop.references` for what is stored). Not imported by the package.

It is resumable: instances already in the output file (same data, same budget) are skipped,
and the file is rewritten after each instance, so an interrupted build continues where it
stopped. ``--force`` solves again; ``--only ta01 ta02`` restricts the run.

Budget: ``--small-limit`` seconds (default 10) for instances of at most 300 operations, which
mostly prove optimal within it, and ``--large-limit`` (default 15) for the rest.

``--improve SECONDS`` then spends a further budget where it pays most: it solves again the
stored plans furthest above the literature's best known makespan (largest gap first), each
for ``--improve-limit`` seconds on one worker with CP-SAT's interleaved portfolio, seeded with
the stored plan as a hint, until ``SECONDS`` are spent. A plan is replaced only by a shorter
one; the record keeps the new solve's budget and status and, in ``seeded_with``, the plan it
started from. A plain build never overwrites a seeded plan.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import time
from pathlib import Path

from crab_gym.envs.realm.jobshop.checker import plan_starts
from crab_gym.envs.realm.jobshop.library import list_jssp_instances, load_jssp_instance
from crab_gym.envs.realm.jobshop.oracle import solve_jssp
from crab_gym.envs.realm.jobshop.references import PLANS_FILE, PLANS_FORMAT, ReferencePlan, literature

OUT = Path(__file__).with_name("instances") / PLANS_FILE
SMALL_OPS = 300


def time_limit_for(n_operations: int, small: float, large: float) -> float:
    return small if n_operations <= SMALL_OPS else large


def _read(path: Path) -> dict:
    if not path.is_file():
        return {}
    return json.loads(gzip.decompress(path.read_bytes())).get("plans", {})


def _write(path: Path, plans: dict, order: list[str]) -> None:
    rank = {name: i for i, name in enumerate(order)}
    ordered = dict(sorted(plans.items(), key=lambda kv: rank.get(kv[0], len(rank))))
    doc = {
        "format": PLANS_FORMAT,
        "source": "CP-SAT (OR-Tools) on the shipped instances; python -m crab_gym.envs.realm.jobshop.build",
        "plans": ordered,
    }
    blob = json.dumps(doc, separators=(",", ":")).encode()
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(gzip.compress(blob, compresslevel=9, mtime=0))
    tmp.replace(path)  # atomic: an interrupted write never leaves a broken file


def build(
    out: Path = OUT,
    *,
    names: list[str] | None = None,
    small_limit: float = 10.0,
    large_limit: float = 15.0,
    workers: int = 1,
    force: bool = False,
) -> dict:
    from tqdm import tqdm

    order = list_jssp_instances()
    todo = order if not names else [load_jssp_instance(n).name for n in names]
    plans = _read(out)
    bar = tqdm(todo, desc="reference plans", unit="inst", file=sys.stderr)
    for name in bar:
        inst = load_jssp_instance(name)
        limit = time_limit_for(inst.n_jobs * inst.n_ops, small_limit, large_limit)
        old = plans.get(name)
        if not force and old is not None and old["fingerprint"] == inst.fingerprint() and (
            old.get("seeded_with") or (old["time_limit"] == limit and old["num_workers"] == workers)
        ):
            continue
        bar.set_postfix_str(f"{name} {inst.n_jobs}x{inst.n_machines} {limit:g}s")
        t0 = time.perf_counter()
        result = solve_jssp(inst, time_limit=limit, num_workers=workers)
        if result.plan is None:
            tqdm.write(f"{name}: no schedule found in {limit:g} s ({result.status}); skipped")
            continue
        makespan = int(result.cost)  # the plan's semi-active makespan, at most CP-SAT's
        plan = ReferencePlan(
            instance=name,
            fingerprint=inst.fingerprint(),
            sequence=tuple(tuple(r) for r in result.plan["sequence"]),
            makespan=makespan,
            status=result.status,
            solver_bound=int(result.bound),
            time_limit=limit,
            num_workers=workers,
            solver=result.solver,
        )
        plans[name] = plan.to_dict()
        _write(out, plans, order)
        best = literature(inst)["best_known"]
        tqdm.write(
            f"{name}: {result.status} makespan {makespan} (bound {result.bound}, "
            f"best known {best}) in {time.perf_counter() - t0:.1f} s"
        )
    return plans


def gap_to_best_known(name: str, makespan: int) -> float:
    """How far a makespan is above the literature's best known one (0 when at or below)."""
    best = literature(load_jssp_instance(name))["best_known"]
    return max(0.0, (makespan - best) / best)


def improve_one(name: str, old: dict, limit: float) -> dict:
    """One seeded single-worker solve of ``name``; the record to store (the old plan, with the
    new bound and status, when the solve finds nothing shorter)."""
    inst = load_jssp_instance(name)
    previous = ReferencePlan.from_dict(old)
    result = solve_jssp(
        inst, time_limit=limit, num_workers=1, interleave=True,
        hint=plan_starts(inst, previous.sequence),
    )
    sequence = [list(r) for r in previous.sequence]
    makespan = previous.makespan
    if result.plan is not None and result.cost < makespan:
        sequence, makespan = result.plan["sequence"], int(result.cost)
    bound = max(previous.solver_bound, int(result.bound))
    seeded = {k: old[k] for k in ("makespan", "status", "time_limit", "num_workers", "solver")}
    if old.get("seeded_with"):
        seeded["seeded_with"] = old["seeded_with"]
    plan = ReferencePlan(
        instance=name,
        fingerprint=inst.fingerprint(),
        sequence=tuple(tuple(r) for r in sequence),
        makespan=makespan,
        status="OPTIMAL" if makespan <= bound else "FEASIBLE",
        solver_bound=bound,
        time_limit=limit,
        num_workers=1,
        solver=result.solver,
        seeded_with=seeded,
    )
    return plan.to_dict()


def improve(out: Path = OUT, *, budget: float = 1500.0, limit: float = 10.0) -> dict:
    """Solve again, largest gap first, the stored plans above the best known makespan,
    ``limit`` seconds each, until ``budget`` seconds of solving are spent."""
    order = list_jssp_instances()
    plans = _read(out)
    todo = sorted(
        (n for n, p in plans.items() if p["status"] != "OPTIMAL" and gap_to_best_known(n, p["makespan"]) > 0),
        key=lambda n: -gap_to_best_known(n, plans[n]["makespan"]),
    )
    spent = 0.0
    for name in todo:
        if spent + limit > budget:
            break
        t0 = time.perf_counter()
        old = plans[name]
        plans[name] = improve_one(name, old, limit)
        _write(out, plans, order)
        spent += time.perf_counter() - t0
        new = plans[name]
        print(
            f"{name}: {old['makespan']} -> {new['makespan']} {new['status']} (bound {new['solver_bound']}, "
            f"gap {100 * gap_to_best_known(name, new['makespan']):.1f} %) in {time.perf_counter() - t0:.1f} s; "
            f"{spent:.0f} s spent",
            flush=True,
        )
    return plans


def summary(path: Path = OUT) -> str:
    """A markdown table per family: plans proven optimal, plans equal to the literature's best
    known makespan, the mean and largest gap of the others, and the oracle's optimality
    (best known / plan makespan: what ``OraclePolicy`` scores), mean and worst."""
    plans = _read(path)
    families: dict[str, list] = {}
    for name, p in plans.items():
        families.setdefault(re.match(r"[a-z]+", name).group(0), []).append((name, p))
    order = sorted(families, key=lambda f: list_jssp_instances().index(families[f][0][0]))
    lines = [
        "| family | instances | CP-SAT proved optimal | plan = best known | mean gap of the others % "
        "| max gap % | oracle optimality, mean | worst |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    rows = [(fam, families[fam]) for fam in order] + [("**all**", [e for f in order for e in families[f]])]
    for fam, entries in rows:
        gaps = [gap_to_best_known(n, p["makespan"]) for n, p in entries]
        ratios = [1.0 / (1.0 + g) for g in gaps]
        others = [100.0 * g for g in gaps if g > 0]
        opt = sum(p["status"] == "OPTIMAL" for _, p in entries)
        mean = f"{sum(others) / len(others):.1f}" if others else "-"
        top = f"{max(others):.1f}" if others else "-"
        lines.append(
            f"| {fam} | {len(entries)} | {opt} | {len(entries) - len(others)} | {mean} | {top} "
            f"| {sum(ratios) / len(ratios):.3f} | {min(ratios):.3f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--only", nargs="*", help="instance names (default: all shipped)")
    parser.add_argument("--small-limit", type=float, default=10.0)
    parser.add_argument("--large-limit", type=float, default=15.0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--force", action="store_true", help="solve instances already stored")
    parser.add_argument("--summary", action="store_true", help="print the table of docs/jobshop.md; solve nothing")
    parser.add_argument("--improve", type=float, metavar="SECONDS",
                        help="re-solve the largest gaps first, seeded, until SECONDS are spent")
    parser.add_argument("--improve-limit", type=float, default=10.0, help="seconds per instance with --improve")
    args = parser.parse_args(argv)
    if args.summary:
        print(summary(args.out))
        return
    if args.improve is not None:
        improve(args.out, budget=args.improve, limit=args.improve_limit)
        print(summary(args.out))
        return
    t0 = time.perf_counter()
    plans = build(
        args.out,
        names=args.only,
        small_limit=args.small_limit,
        large_limit=args.large_limit,
        workers=args.workers,
        force=args.force,
    )
    n_opt = sum(p["status"] == "OPTIMAL" for p in plans.values())
    print(f"{len(plans)} plans in {args.out} ({n_opt} OPTIMAL); {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
