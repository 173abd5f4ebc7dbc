"""Check the claims about upstream REALM-Bench's wedding data (P5, P8) on your own copy.

    python benchmarks/wedding_upstream.py /path/to/REALM-Bench/datasets

Prints, for ``P5/custom`` and ``P8/disruptions``: the file count, how many distinct files
there are once ``instance_id`` is left out, whether the vehicles'
start places are nodes of ``travel_times``, whether errands are bare strings, which
disruption routes name places missing from the map, and whether every file loads through
``crab_gym.datasets.load_realm_instance`` (with the repairs it reports).
"""

from __future__ import annotations

import argparse
import collections
import json
import warnings
from pathlib import Path

from crab_gym.datasets import RealmRepairWarning, load_realm_instance


def survey(folder: Path) -> None:
    files = sorted(folder.glob("*.json"))
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in files]
    distinct = {json.dumps({k: v for k, v in d.items() if k != "instance_id"}, sort_keys=True) for d in docs}
    nodes = [set("-".join(d.get("travel_times", {})).split("-")) for d in docs]
    starts = collections.Counter(v.get("location") for d in docs for v in d.get("vehicles", []))
    starts_off_map = sum(all(v.get("location") not in n for v in d.get("vehicles", [])) for d, n in zip(docs, nodes))
    bare = sum(all(isinstance(e, str) for e in d.get("errands", [])) for d in docs)
    routes = collections.Counter(x.get("route") for d in docs for x in d.get("disruptions", []))
    off_map_routes = {r: c for r, c in routes.items() if any(p not in n for p in str(r).split("-") for n in nodes[:1])}
    loaded, repairs = 0, collections.Counter()
    for p in files:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            load_realm_instance(p)
        loaded += 1
        repairs.update(str(w.message).split(": ", 1)[1].split(":")[0] for w in caught
                       if issubclass(w.category, RealmRepairWarning))
    print(f"{folder.parent.name}/{folder.name}: {len(files)} files, {len(distinct)} distinct once instance_id is left out")
    print(f"  vehicle start places {dict(starts)}; all off the travel_times map in {starts_off_map} files")
    print(f"  errands are bare strings in {bare} files")
    if routes:
        print(f"  disruption routes {dict(routes)}; naming places off the map: {sorted(off_map_routes)}")
    print(f"  loaded through load_realm_instance: {loaded}/{len(files)}; repairs reported per file: "
          f"{sum(repairs.values()) / max(1, loaded):.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", type=Path, help="upstream REALM-Bench datasets folder")
    args = parser.parse_args()
    for sub in ("P5/custom", "P8/disruptions"):
        survey(args.datasets / sub)


if __name__ == "__main__":
    main()
