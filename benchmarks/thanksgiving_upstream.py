"""Check what issue 12 says about upstream REALM-Bench's P6 and P9 data, on your own copy.

    python benchmarks/thanksgiving_upstream.py /path/to/REALM-Bench/datasets

Counts, over every file of ``P6/custom`` and ``P9/disruptions``:

* distinct P6 files once ``instance_id`` is left out (the issue: 1);
* files with any key naming a duration or a travel time (the issue: 0);
* dependency pairs naming something that is not a cooking task (the issue: ``mashed_potatoes``);
* P9 delays whose ``new_arrival_time`` is not the scheduled arrival plus ``delay``, per flight
  (the issue: every flight2 delay);
* files crab_gym's reader loads, the repairs it reports, and how many of the loaded instances
  can be served by the deadline under crab_gym's defaults (the reference plan: CP-SAT; P9 with
  every delay known), with the lateness of the others (late plans are feasible, at a cost).
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

from crab_gym.envs.realm.common.errors import RealmRepairWarning
from crab_gym.envs.realm.thanksgiving.checker import check_plan, landings_of
from crab_gym.envs.realm.thanksgiving.formats import clock_minutes, load_p6, load_p9
from crab_gym.envs.realm.thanksgiving.references import p6_record, p9_record


def _keys(value: Any) -> set[str]:
    """Every key anywhere in a JSON value."""
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def _load(load: Any, path: Path) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        inst = load(str(path))
    return inst, [str(w.message).split(": ", 1)[1] for w in caught if issubclass(w.category, RealmRepairWarning)]


def _repair_kind(message: str) -> str:
    for key in ("new_arrival_time", "cooking_dependencies", "no cooking durations", "no travel times",
                "no family member has the skill", "no announcement time", "max_cooks"):
        if key in message:
            return key
    return message


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", type=Path, help="the upstream REALM-Bench datasets folder")
    parser.add_argument("--no-solve", action="store_true", help="skip the reference solves")
    args = parser.parse_args(argv)
    p6_files = sorted((args.datasets / "P6" / "custom").glob("*.json"))
    p9_files = sorted((args.datasets / "P9" / "disruptions").glob("*.json"))
    if not p6_files or not p9_files:
        sys.exit(f"no P6/custom or P9/disruptions files under {args.datasets}")
    raw6 = [json.loads(p.read_text()) for p in p6_files]
    raw9 = [json.loads(p.read_text()) for p in p9_files]

    distinct = {json.dumps({k: v for k, v in d.items() if k != "instance_id"}, sort_keys=True) for d in raw6}
    print(f"P6 files: {len(raw6)}; distinct without instance_id: {len(distinct)}")
    for name, raws in (("P6", raw6), ("P9", raw9)):
        timing = sorted(k for k in set().union(*map(_keys, raws)) if "duration" in k or "travel" in k)
        print(f"{name} keys naming a duration or a travel time: {timing or 'none'}")
        not_tasks = Counter(x for d in raws for pair in d["cooking_dependencies"] for x in pair
                            if x not in d["cooking_tasks"])
        files = sum(any(x not in d["cooking_tasks"] for p in d["cooking_dependencies"] for x in p) for d in raws)
        print(f"{name} dependency names that are not tasks: {dict(not_tasks)} (in {files} files)")
    wrong, total = Counter(), Counter()
    for d in raw9:
        for delay in d["disruptions"]:
            base = clock_minutes(d["flights"][delay["flight"]]["arrival_time"], "", "")
            total[delay["flight"]] += 1
            wrong[delay["flight"]] += clock_minutes(delay["new_arrival_time"], "", "") != base + delay["delay"]
    for flight in sorted(total):
        print(f"P9 {flight}: {wrong[flight]} of {total[flight]} new_arrival_time values are not arrival + delay")

    for name, load, files, record in (("P6", load_p6, p6_files, p6_record), ("P9", load_p9, p9_files, p9_record)):
        kinds: Counter[str] = Counter()
        late: list[int] = []
        for path in files:
            inst, repairs = _load(load, path)
            kinds.update(_repair_kind(r) for r in repairs)
            if not args.no_solve:
                plan = record(inst)["plan"]
                late.append(check_plan(inst, plan, landings_of(inst, inst.delays)).late)
        print(f"{name}: {len(files)} files loaded; repairs reported: {dict(sorted(kinds.items()))}")
        if not args.no_solve:
            on_time = sum(minutes == 0 for minutes in late)
            print(f"{name}: {on_time} of {len(files)} can be served by the deadline under crab_gym's defaults")
            if on_time < len(late):
                print(f"{name}: the best plan of the others is late by {min(m for m in late if m)}-{max(late)} min")


if __name__ == "__main__":
    main()
