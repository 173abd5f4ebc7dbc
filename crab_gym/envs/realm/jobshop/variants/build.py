"""Regenerate J2/J3/J4's shipped instances and solve their references.

    python -m crab_gym.envs.realm.jobshop.variants.build            # resumable
    python -m crab_gym.envs.realm.jobshop.variants.build --force --only J3
    python -m crab_gym.envs.realm.jobshop.variants.build --summary  # the table, no solving
    python -m crab_gym.envs.realm.jobshop.variants.build --force --names j3_large_00 --time-limit 120

Instances come from the seeded generators (:data:`SHIPPED`: size -> seeds per problem);
each reference is :func:`~.oracle.reference_record` with CP-SAT on one worker for
:func:`~.references.time_limit` seconds per solve (2 s small, 5 s medium, 10 s large, 30 s
beyond 5,000 operations: J2 large). A
record already stored for the same instance data is kept (resumable); ``--force`` re-solves
and keeps the better of the two plans. ``--names`` re-solves only those instances and
``--time-limit`` overrides the seconds per solve (the record says which limit it had).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from crab_gym.envs.realm.jobshop.variants.formats import INSTANCES
from crab_gym.envs.realm.jobshop.variants.generator import GENERATORS
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


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _write(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")


def build(problems: list[str], force: bool = False, names: list[str] | None = None,
          seconds: float | None = None) -> None:
    refs = _load(REFERENCES)
    for problem in problems:
        shipped = instances(problem)
        _write(INSTANCES / f"{problem.lower()}.json", {"instances": {i.name: i.to_dict() for i in shipped}})
        for inst in shipped:
            old = refs.get(inst.name)
            if names is not None and inst.name not in names:
                continue
            if old and old.get("fingerprint") == inst.fingerprint() and not force:
                continue
            began = time.perf_counter()
            record = reference_record(inst, seconds or time_limit(inst))
            if old and old.get("fingerprint") == inst.fingerprint() and old["value"] < record["value"]:
                record = old  # a re-solve (wall-clock limits vary) never replaces a better plan
            refs[inst.name] = record
            print(f"{inst.name}: {refs[inst.name]['value']} {refs[inst.name]['status']} bound {refs[inst.name]['bound']} "
                  f"({time.perf_counter() - began:.1f} s)", flush=True)
            _write(REFERENCES, dict(sorted(refs.items())))


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
    args = parser.parse_args(argv)
    if not args.summary:
        build(args.only, args.force, args.names, args.time_limit)
    print(summary())


if __name__ == "__main__":
    main()
