"""Regenerate J2/J3/J4's shipped instances and solve their references.

    python -m crab_gym.envs.realm.jobshop.variants.build            # resumable
    python -m crab_gym.envs.realm.jobshop.variants.build --force --only J3
    python -m crab_gym.envs.realm.jobshop.variants.build --summary  # the table, no solving
    python -m crab_gym.envs.realm.jobshop.variants.build --force --names j3_large_00 --time-limit 120
    python -m crab_gym.envs.realm.jobshop.variants.build --force --only J2 J4 --hints plans.json --hints-label "audit cp-sat (hint)"

Instances come from the seeded generators (:data:`SHIPPED`: size -> seeds per problem);
each reference is :func:`~.oracle.reference_record` with CP-SAT on one worker for
:func:`~.references.time_limit` seconds per solve (2 s small, 5 s medium, 10 s large, 30 s
beyond 5,000 operations: J2 large). J2/J4 get the budget of :func:`budget`: 20 s on medium,
then (uncertified, up to 5,000 operations) a second solve hinted with the cheapest plan so far.
A record already stored for the same instance data is kept (resumable); ``--force`` re-solves
with the stored plan as one more candidate ("previous build: ..."), so a re-solve never ships a
worse plan. ``--names`` re-solves only those instances and ``--time-limit`` overrides the
seconds of the first solve (the record says which limit it had). ``--hints`` adds plans
(``{name: {"sequence": ...}}``, each checked) as candidates and hints, under ``--hints-label``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from crab_gym.envs.realm.jobshop.variants.checker import check
from crab_gym.envs.realm.jobshop.variants.formats import INSTANCES
from crab_gym.envs.realm.jobshop.variants.generator import GENERATORS
from crab_gym.envs.realm.jobshop.variants.model import ShopInstance
from crab_gym.envs.realm.jobshop.variants.oracle import reference_record
from crab_gym.envs.realm.jobshop.variants.references import time_limit

#: Shipped instances: per problem, the number of seeds per size.
SHIPPED = {"J2": {"small": 12, "medium": 8, "large": 4}, "J3": {"small": 8, "medium": 6, "large": 6},
           "J4": {"small": 8, "medium": 6, "large": 6}}
REFERENCES = INSTANCES / "references.json"


def instances(problem: str) -> list:
    """The shipped instances of ``problem``, named ``<problem>_<size>_<seed:02d>``."""
    return [GENERATORS[problem](size, seed, name=f"{problem.lower()}_{size}_{seed:02d}")
            for size, count in SHIPPED[problem].items() for seed in range(count)]


def budget(inst: ShopInstance) -> dict[str, float]:
    """Seconds per solve of a shipped reference (one worker each, every solve <= 30 s):
    ``time_limit`` (first, interleaved, from the greedy plan), ``polish`` (second, sequential
    search hinted with the best plan so far; J2/J4 up to 5,000 operations) and
    ``adaptive_time_limit`` (each re-solve of the adaptive run: the on-the-fly default).
    J2/J4 medium get 20 s (5 s left 10 of 14 references beaten by a hinted 5 s solve)."""
    base = time_limit(inst)
    if not inst.disruptions:
        return {"time_limit": base, "polish": 0.0, "adaptive_time_limit": base}
    first = 20.0 if 100 < inst.n_ops <= 1000 else base
    return {"time_limit": first, "polish": min(first, 10.0) if inst.n_ops <= 5000 else 0.0,
            "adaptive_time_limit": base}


def load_hints(path: Path, shipped: dict[str, ShopInstance]) -> dict[str, list[list[int]]]:
    """Plans from ``path`` (``{name: {"sequence": [[job, ...] per machine]}}``), each read by the
    checker on its shipped instance; a plan the checker refuses is an error naming it."""
    hints = {}
    for name, plan in _load(path).items():
        if name not in shipped:
            continue
        verdict = check(shipped[name], plan)
        if not verdict.feasible:
            raise ValueError(f"{path}: the plan of {name} is not feasible: {verdict.metrics.get('error', verdict.constraints)}")
        hints[name] = [[int(j) for j in row] for row in plan["sequence"]]
    return hints


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _write(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")


def _candidates(old: dict | None, inst: ShopInstance, hint: list[list[int]] | None,
                label: str) -> dict[str, list[list[int]]]:
    """The extra candidates of a re-solve: the stored plan (wall-clock limits vary, so a re-solve
    never ships a worse plan) and a given hint."""
    out = {}
    if old and old.get("fingerprint") == inst.fingerprint():
        out[f"previous build: {old['plan_from'].removeprefix('previous build: ')}"] = old["plan"]["sequence"]
    if hint is not None:
        out[label] = hint
    return out


def build(problems: list[str], force: bool = False, names: list[str] | None = None,
          seconds: float | None = None, hints_path: Path | None = None, label: str = "hint",
          references: Path = REFERENCES) -> None:
    refs = _load(references)
    for problem in problems:
        shipped = instances(problem)
        _write(INSTANCES / f"{problem.lower()}.json", {"instances": {i.name: i.to_dict() for i in shipped}})
        hints = load_hints(hints_path, {i.name: i for i in shipped}) if hints_path else {}
        for inst in shipped:
            old = refs.get(inst.name)
            if names is not None and inst.name not in names:
                continue
            if old and old.get("fingerprint") == inst.fingerprint() and not force:
                continue
            began = time.perf_counter()
            plan = budget(inst) | ({"time_limit": seconds} if seconds else {})
            record = reference_record(inst, plan["time_limit"], polish=plan["polish"],
                                      adaptive_time_limit=plan["adaptive_time_limit"],
                                      hints=_candidates(old, inst, hints.get(inst.name), label))
            refs[inst.name] = record
            print(f"{inst.name}: {old['value'] if old else '-'} -> {record['value']} {record['status']} "
                  f"bound {record['bound']} from {record['plan_from']} ({time.perf_counter() - began:.1f} s)", flush=True)
            _write(references, dict(sorted(refs.items())))


def summary() -> str:
    """The reference table of docs/jobshop.md: per problem and size, certified / gap."""
    refs = _load(REFERENCES)
    lines = ["| problem | size | instances | certified optimal | mean gap to bound % | max gap % | adaptive / hindsight |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for problem, sizes in SHIPPED.items():
        for size in sizes:
            recs = [r for name, r in refs.items() if name.startswith(f"{problem.lower()}_{size}_")]
            if not recs:
                continue
            gaps = [100 * (r["value"] - r["bound"]) / r["bound"] for r in recs]
            adapt = [r["adaptive_value"] / r["value"] for r in recs if "adaptive_value" in r]
            lines.append(f"| {problem} | {size} | {len(recs)} | {sum(r['status'] == 'OPTIMAL' for r in recs)} | "
                         f"{sum(gaps) / len(gaps):.2f} | {max(gaps):.2f} | "
                         f"{sum(adapt) / len(adapt):.3f} |" if adapt else
                         f"| {problem} | {size} | {len(recs)} | {sum(r['status'] == 'OPTIMAL' for r in recs)} | "
                         f"{sum(gaps) / len(gaps):.2f} | {max(gaps):.2f} | - |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=list(SHIPPED), default=list(SHIPPED))
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--summary", action="store_true")
    parser.add_argument("--names", nargs="+", default=None, help="only these instances (e.g. j3_large_00)")
    parser.add_argument("--time-limit", type=float, default=None, help="CP-SAT seconds per solve (default by size)")
    parser.add_argument("--hints", type=Path, default=None, help="JSON {name: {sequence}}: more candidate plans")
    parser.add_argument("--hints-label", default="hint", help="the plan_from name of a hint that wins")
    parser.add_argument("--references", type=Path, default=REFERENCES, help="the references file to update")
    args = parser.parse_args(argv)
    if not args.summary:
        build(args.only, args.force, args.names, args.time_limit, args.hints, args.hints_label, args.references)
    print(summary())


if __name__ == "__main__":
    main()
