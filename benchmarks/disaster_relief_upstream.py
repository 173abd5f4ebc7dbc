"""Check the issue's claims about upstream REALM-Bench P7 data on a user's own copy.

    python benchmarks/disaster_relief_upstream.py /path/to/REALM-Bench/datasets

Counts, over every ``P7/processed/*.json`` file: regions, vehicles and disruption types per
file; whether any need carries a quantity; the deadline values (hours) and the vehicle speed
values; and whether crab_gym's reader loads each file (with how many fills it reports).
"""

from __future__ import annotations

import argparse
import json
import warnings
from collections import Counter
from pathlib import Path

from crab_gym.envs.realm.common.errors import RealmRepairWarning
from crab_gym.envs.realm.disaster_relief.formats import load_p7


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", type=Path, help="the upstream datasets folder")
    files = sorted((parser.parse_args(argv).datasets / "P7" / "processed").glob("*.json"))
    shape, disruptions, speeds, deadlines, fills = Counter(), Counter(), Counter(), Counter(), Counter()
    quantities = loaded = 0
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        shape[(len(data["regions"]), len(data["vehicles"]))] += 1
        disruptions[tuple(sorted(d["type"] for d in data["disruption_scenarios"]))] += 1
        speeds[tuple(v["speed"] for v in data["vehicles"])] += 1
        deadlines[json.dumps(data["deadlines"], sort_keys=True)] += 1
        quantities += sum(not isinstance(n, str) for r in data["regions"] for n in r["needs"])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            load_p7(path)
        loaded += 1
        fills[sum(issubclass(w.category, RealmRepairWarning) for w in caught)] += 1
    print(f"files: {len(files)}")
    print(f"(regions, vehicles) per file: {dict(shape)}")
    print(f"disruption types per file: {dict(disruptions)}")
    print(f"needs given as quantities (not names): {quantities}")
    print(f"deadlines (hours): {dict(deadlines)}")
    print(f"vehicle speeds: {dict(speeds)}")
    print(f"loaded by crab_gym: {loaded}/{len(files)}; fills reported per file: {dict(fills)}")


if __name__ == "__main__":
    main()
