"""The shipped reference results: what they cover, that their rows are their episodes', that a
sample replays to the same numbers, that the docs page is the file's, that a killed
regeneration resumes to the same table, and that a run compares against them."""

from __future__ import annotations

import json
import random
import statistics
from pathlib import Path

import pytest

from crab_gym.baselines.registry import NamedPolicy
from crab_gym.cli import main
from crab_gym.datasets.splits import split_instances
from crab_gym.envs.realm.index import problem_specs
from crab_gym.evaluation.benchmark import Benchmark
from crab_gym.evaluation.episode import EnvCase
from crab_gym.results.compare import paired_difference, per_instance
from crab_gym.results.page import results_markdown
from crab_gym.results.plan import RANDOM_SEEDS, reference_policies
from crab_gym.results.table import load_reference, reference_report, reference_row

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = load_reference()
#: Ids whose sample replays in seconds (P7/P8 and the J2/J4 yardsticks take longer per episode).
QUICK_IDS = ("Realm-P1-v0", "Realm-P2-v0", "Realm-P3-v0", "Realm-P5-v0", "Realm-P6-v0", "Realm-P9-v0",
             "Realm-P10-v0", "Realm-P11-v0", "Realm-J2-v0", "Realm-J3-v0")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.parametrize("spec", problem_specs(), ids=lambda s: s.problem)
def test_every_id_has_every_baseline_on_its_whole_test_split(spec):
    episodes = [e for e in SHIPPED["episodes"] if e["env_id"] == spec.env_id]
    test = set(split_instances(spec.env_id, "test"))
    policies = {e["policy"] for e in episodes}
    assert policies == set(reference_policies([spec.env_id])) and ("do_nothing" in policies) == spec.idle_plan
    for policy in policies:
        mine = [e for e in episodes if e["policy"] == policy]
        seeds = RANDOM_SEEDS if policy == "random" else (0,)
        assert sorted((e["instance"], e["seed"]) for e in mine) == sorted((n, s) for n in test for s in seeds)
        assert all(e["split"] == "test" and e["error"] is None for e in mine), policy
    rows = [r for r in SHIPPED["rows"] if r["env"] == spec.env_id]
    assert [r["policy"] for r in rows] == reference_policies([spec.env_id])
    oracle = next(r for r in rows if r["policy"] == "oracle")
    assert oracle["track"] == "solver-allowed" and oracle["success"] == 1.0


def test_the_rows_are_the_episodes_rows():
    recomputed = {(r["env"], r["policy"]): reference_row(r) for r in reference_report(SHIPPED).summary()}
    for row in SHIPPED["rows"]:
        shipped = {k: v for k, v in row.items() if k != "track"}
        assert recomputed[(row["env"], row["policy"])] == shipped, (row["env"], row["policy"])


def test_a_sample_replays_to_the_same_numbers():
    """Every baseline is deterministic given the instance and seed: a sample of shipped
    episodes, played again, gives exactly the shipped return and metrics."""
    pool = [e for e in SHIPPED["episodes"] if e["env_id"] in QUICK_IDS and not e["instance"].endswith(
        ("large_00", "large_01", "large_02", "large_03", "large_04", "large_05"))]
    sample = random.Random(34).sample(pool, 24)
    for shipped in sample:
        case = EnvCase(shipped["env_id"], {"instance": shipped["instance"]}, "test", shipped["instance"],
                       shipped["size"])
        bench = Benchmark([case], seeds=[shipped["seed"]], max_steps=100_000)
        (again,) = bench.run({shipped["policy"]: NamedPolicy(shipped["policy"])}, progress=False).results
        where = (shipped["env_id"], shipped["policy"], shipped["instance"], shipped["seed"])
        assert again.episode_return == shipped["episode_return"], where
        assert (again.success, again.steps) == (shipped["success"], shipped["steps"]), where
        assert {m: again.metrics.get(m) for m in shipped["metrics"]} == shipped["metrics"], where


def test_the_shipped_trained_models_replay_their_rows_episodes():
    """Issue 35: each shipped model reproduces its rows: on every quick id, the shortest shipped
    episode of ``trained`` (greedy, so deterministic) played again gives the same numbers."""
    pytest.importorskip("sb3_contrib")
    from crab_gym.baselines.trained import trained_ids

    for env_id in sorted(set(trained_ids()) & set(QUICK_IDS)):
        mine = [e for e in SHIPPED["episodes"] if e["env_id"] == env_id and e["policy"] == "trained"]
        assert mine, f"{env_id}: a shipped model but no trained row in the reference results"
        shipped = min(mine, key=lambda e: (e["steps"], e["instance"]))
        case = EnvCase(env_id, {"instance": shipped["instance"]}, "test", shipped["instance"], shipped["size"])
        (again,) = Benchmark([case], seeds=[shipped["seed"]], max_steps=100_000).run(
            {"trained": NamedPolicy("trained")}, progress=False).results
        assert (again.episode_return, again.steps) == (shipped["episode_return"], shipped["steps"]), env_id
        assert {m: again.metrics.get(m) for m in shipped["metrics"]} == shipped["metrics"], env_id


def test_the_docs_page_is_the_shipped_files():
    assert (ROOT / "docs" / "results.md").read_text() == results_markdown(SHIPPED)


def test_a_killed_regeneration_resumes_to_the_same_table(tmp_path, capsys):
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    assert main(["results", "--env", "Realm-P2-v0", "--out", str(whole), "--quiet"]) == 0
    lines = (whole / "episodes.jsonl").read_text().splitlines()
    killed.mkdir()
    # a kill -9 mid-run: the finished episodes are in the file, the last one torn (96 baseline episodes + 12 trained)
    (killed / "episodes.jsonl").write_text("\n".join(lines[:40]) + "\n" + lines[40][:25])
    assert main(["results", "--env", "Realm-P2-v0", "--out", str(killed), "--quiet"]) == 0
    assert f"resumed 40 of {len(lines)} episodes" in capsys.readouterr().err
    first, again = (json.loads((d / "results.json").read_text()) for d in (whole, killed))
    assert again["rows"] == first["rows"] and again["regeneration_wall_s"] is None


def test_a_run_compares_with_the_reference_paired_by_instance(tmp_path, capsys):
    assert main(["run", "--env", "Realm-P3-v0", "--split", "test", "--policy", "random", "--episodes", "2",
                 "--quiet", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["report", str(tmp_path), "--compare", "reference"]) == 0
    out = capsys.readouterr().out
    assert "**Compared with the reference results**" in out
    rows = json.loads((tmp_path / "compare.json").read_text())
    row = next(r for r in rows if r["reference"] == "ridesharing_greedy" and r["metric"] == "optimality")
    mine = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    greedy = [e for e in SHIPPED["episodes"] if e["env_id"] == "Realm-P3-v0" and e["policy"] == "ridesharing_greedy"]
    direct = statistics.fmean(
        statistics.fmean(e["metrics"]["optimality"] for e in mine if e["instance"] == name)
        - next(e["metrics"]["optimality"] for e in greedy if e["instance"] == name)
        for name in split_instances("Realm-P3-v0", "test"))
    assert row["instances"] == 12 and row["difference"] == pytest.approx(direct)
    assert row["ci"][0] <= row["difference"] <= row["ci"][1] and row["ci"][1] < 0  # random is worse


def test_a_run_on_other_instances_says_there_is_nothing_to_compare(tmp_path, capsys):
    assert main(["run", "--env", "Realm-P3-v0", "--policy", "random", "--episodes", "1", "--quiet",
                 "--out", str(tmp_path)]) == 0  # the quick split: dev instances, none in the test split
    assert main(["report", str(tmp_path), "--compare", "reference"]) == 0
    assert "No instance of this run is in the reference results" in capsys.readouterr().out
    assert paired_difference(per_instance([], "optimality"), {"p3_small_02": 1.0}) is None
