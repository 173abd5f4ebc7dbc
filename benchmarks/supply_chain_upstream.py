"""Check the claims about upstream REALM-Bench P10 data on your own copy, and load every file.

    python benchmarks/supply_chain_upstream.py /path/to/REALM-Bench/datasets

Reads ``P10/custom/*.json`` (upstream has no license: crab_gym ships none of its files) and
prints, for all files: whether the budget, deadlines and disruptions are identical; whether any
file has a demand, a price or a bill of materials; whether ``packaging`` is ever defined as a
facility (it appears only in ``dependencies``); the ranges of lead times and deadlines (whole
days); in how many files no supplier can deliver a component by its deadline; and how many
files crab_gym's reader loads, with how many fills.
"""

from __future__ import annotations

import argparse
import json
import warnings
from collections import Counter
from pathlib import Path

from crab_gym.datasets import RealmRepairWarning
from crab_gym.datasets.upstream import load_realm_instance

#: Words in a key that would give a demand, component prices or a bill of materials.
MISSING_WORDS = ("demand", "quantit", "price", "bom", "bill", "material", "requirement", "order")


def keys_anywhere(node: object) -> set[str]:
    """Every mapping key in a JSON document."""
    if isinstance(node, dict):
        return set(node) | set().union(*(keys_anywhere(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(keys_anywhere(v) for v in node)) if node else set()
    return set()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", type=Path, help="the upstream REALM-Bench datasets folder")
    files = sorted((parser.parse_args().datasets / "P10" / "custom").glob("*.json"))
    docs = [json.loads(p.read_text()) for p in files]
    print(f"files: {len(files)}")
    for key in ("budget", "delivery_deadlines", "disruption_scenarios", "dependencies", "components"):
        distinct = Counter(json.dumps(d.get(key), sort_keys=True) for d in docs)
        print(f"distinct {key}: {len(distinct)}  ({next(iter(distinct))})")
    every = sorted(set().union(*(keys_anywhere(d) for d in docs)))
    print(f"every key in any file: {', '.join(every)}")
    found = [k for k in every if any(w in k.lower() for w in MISSING_WORDS)]
    print(f"keys naming a demand, component prices or a bill of materials: {found or 'none'} "
          "(prices: only cost_multiplier per supplier and cost_per_unit per facility)")
    facilities = Counter(f["facility_id"] for d in docs for f in d["facilities"])
    print(f"facilities defined: {dict(facilities)}; files defining packaging: {facilities.get('packaging', 0)}")
    named = sum(any("packaging" in pair for pair in d.get("dependencies", [])) for d in docs)
    print(f"files naming packaging in dependencies: {named}")
    leads = [s["lead_time"] for d in docs for s in d["suppliers"]]
    deadlines = [v for d in docs for v in d["delivery_deadlines"].values()]
    whole = all(isinstance(x, int) for x in leads + deadlines)
    units = [k for k in every if any(w in k.lower() for w in ("unit", "day", "hour", "week"))]
    print(f"lead times {min(leads)}..{max(leads)}, deadlines {min(deadlines)}..{max(deadlines)}, all whole numbers: "
          f"{whole}; keys naming a time unit: {[k for k in units if k != 'cost_per_unit'] or 'none'} "
          "(the files state no unit; days is the reading)")
    by_region = Counter()
    for d in docs:
        for s in d["suppliers"]:
            by_region[s["location"], "min"] = min(by_region.get((s["location"], "min"), 10**9), s["lead_time"])
            by_region[s["location"], "max"] = max(by_region.get((s["location"], "max"), 0), s["lead_time"])
    print("lead times by region: " + ", ".join(f"{r} {by_region[r, 'min']}..{by_region[r, 'max']}"
                                               for r in sorted({r for r, _ in by_region})))
    late = sum(any(min(s["lead_time"] for s in d["suppliers"]) > day for day in d["delivery_deadlines"].values())
               for d in docs)
    print(f"files where no supplier can deliver some component by its deadline: {late}")
    loaded, fills, other = 0, Counter(), 0
    for path in files:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            load_realm_instance(path)
        loaded += 1
        fills[sum(issubclass(w.category, RealmRepairWarning) for w in caught)] += 1
        other += sum(not issubclass(w.category, RealmRepairWarning) for w in caught)
    print(f"loaded by crab_gym: {loaded}/{len(files)}; fills per file: {dict(fills)}; other warnings: {other}")


if __name__ == "__main__":
    main()
