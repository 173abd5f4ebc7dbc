"""realm.common.shipping: a family's build regenerates its shipped files and header (P1, P2)."""

import dataclasses
import json

import pytest

from crab_gym.envs.realm.campus_tour import build as p1_build
from crab_gym.envs.realm.campus_tour.model import INSTANCE_DIR as P1_DIR
from crab_gym.envs.realm.group_tours import build as p2_build
from crab_gym.envs.realm.group_tours.model import INSTANCE_DIR as P2_DIR


@pytest.mark.parametrize("build, folder", [(p1_build, P1_DIR), (p2_build, P2_DIR)])
def test_the_build_writes_the_shipped_files_and_header(tmp_path, build, folder):
    quick = dataclasses.replace(  # no solver: only the files and the header are compared
        build.SHIPPED, folder=tmp_path, counts={"small": 2, "large": 1}, exact=lambda inst: (-1, None),
        reference=lambda inst: {"value": 0, "status": "FEASIBLE", "time_limit_s": 0},
    )
    records = quick.build(verbose=False)
    prefix = build.SHIPPED.prefix
    assert sorted(records) == [f"{prefix}_large_00", f"{prefix}_small_00", f"{prefix}_small_01"]
    assert [r.get("brute_force_value") for r in records.values()] == [-1, -1, None]
    for name in records:
        assert (tmp_path / f"{name}.json").read_text() == (folder / f"{name}.json").read_text()
    written = json.loads((tmp_path / "references.json").read_text())
    shipped = json.loads((folder / "references.json").read_text())
    assert written["regenerate"] == shipped["regenerate"] == f"python -m {build.__name__}"
    assert {k: v for k, v in shipped.items() if k != "instances"}.items() <= build.SHIPPED.header.items()
