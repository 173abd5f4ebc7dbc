"""Truncated episodes in the report's means: an episode the env did not end (cut by
``--max-steps``) has no plan, so it counts 0 on each REALM metric that applies to it, and the
report says how many there were. Expected values are computed here, from a replay of the
episodes with gymnasium alone (not from the runner's records) or from hand-written records.
"""

from __future__ import annotations

import json
import math

import gymnasium as gym
import pytest

import crab_gym  # noqa: F401
from crab_gym.baselines.registry import named_policies
from crab_gym.cli import main
from crab_gym.evaluation.benchmark import Benchmark
from crab_gym.evaluation.episode import EpisodeResult
from crab_gym.evaluation.unfinished import no_plan_metrics
from tests.core.toy_env import LampsEnv

J4 = "Realm-J4-v0"
J4_KWARGS = {"generator": {"size": "small"}, "reference": "bound"}
CAP = 58  # random play on these instances takes 54 to 60 steps: some episodes are cut
SCORES = ("planning_quality", "optimality", "constraint_satisfaction", "adaptation")


def replay(seed: int, cap: int) -> dict:
    """Play J4 random with gymnasium alone, as the runner would, up to ``cap`` steps: whether
    the env ended the episode, its metrics if so, and how many disruptions struck."""
    env = gym.make(J4, **J4_KWARGS)
    policy = named_policies(["random"])["random"](env)
    obs, info = env.reset(seed=seed)
    policy.seed(seed)
    fired, steps, terminated = len(info.get("disruptions", [])), 0, False
    while not terminated and steps < cap:
        obs, _, terminated, _, info = env.step(policy(obs, info))
        steps += 1
        fired += len(info.get("disruptions", []))
    metrics = info["metrics"]
    if terminated and (metrics.get("adaptation_pending") or metrics.get("optimality_pending")):
        metrics = env.unwrapped.finish_metrics()
    env.close()
    return {"terminated": terminated, "metrics": metrics, "fired": fired}


def expected_means(played: list[dict]) -> dict:
    """The rule, written out: a finished episode gives its value (None: left out); a cut one
    0 on planning quality, optimality and constraint satisfaction, and 0 on adaptation if a
    disruption had struck (else left out)."""
    out = {}
    for name in SCORES:
        values = []
        for p in played:
            if p["terminated"]:
                if p["metrics"][name] is not None:
                    values.append(p["metrics"][name])
            elif name != "adaptation" or p["fired"] > 0:
                values.append(0.0)
        out[name] = sum(values) / len(values)
    return out


def run_cli(out, seeds: int) -> dict:
    code = main(["run", "--env", J4, "--env-kwargs", json.dumps(J4_KWARGS), "--policy", "random",
                 "--episodes", str(seeds), "--max-steps", str(CAP), "--out", str(out), "--quiet"])
    assert code == 0
    [row] = json.loads((out / "report.json").read_text())["summary"]
    return row


def test_crab_gym_run_counts_truncated_episodes_as_zero(tmp_path, capsys):
    seeds = range(8)
    played = [replay(s, CAP) for s in seeds]
    cut = sum(not p["terminated"] for p in played)
    assert 0 < cut < len(played)  # a mix, or the test would prove nothing
    row = run_cli(tmp_path, len(played))
    assert row["episodes"] == 8 and row["infra_errors"] == 0 and row["truncated"] == cut
    want = expected_means(played)
    for name in SCORES:
        assert row[name] == pytest.approx(want[name], abs=1e-12), name
    finished_only = [p["metrics"]["optimality"] for p in played if p["terminated"]]
    assert row["optimality"] < sum(finished_only) / len(finished_only)  # what the report said before
    assert row.get("coordination") is None  # one actor: n/a, never a 0 of a cut episode
    table = capsys.readouterr().out
    assert "| truncated |" in table.splitlines()[0] and "`truncated`: episodes the env did not end" in table


def test_an_old_results_file_resumes_and_reports_under_the_rule(tmp_path):
    """A file written before the rule (a cut episode's metrics empty) is resumed by a longer
    run and reported with the rule applied to the old records too."""
    run_cli(tmp_path, 4)
    path = tmp_path / "episodes.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert any(r["truncated"] for r in records)
    for r in records:
        if r["truncated"]:
            r["metrics"] = {}  # what the runner used to write
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    row = run_cli(tmp_path, 8)  # resumes the 4 old episodes, runs 4 more
    played = [replay(s, CAP) for s in range(8)]
    assert row["truncated"] == sum(not p["terminated"] for p in played)
    want = expected_means(played)
    for name in ("planning_quality", "optimality", "constraint_satisfaction"):
        assert row[name] == pytest.approx(want[name], abs=1e-12), name
    # an old cut record does not say whether a disruption struck: it counts 0 on adaptation,
    # which the env's finished episodes measure
    old_cut = sum(1 for r in records if r["truncated"])
    new = [p for s, p in enumerate(played) if s >= 4]
    values = [p["metrics"]["adaptation"] for p in played if p["terminated"]] + [0.0] * old_cut
    values += [0.0 for p in new if not p["terminated"] and p["fired"] > 0]
    assert row["adaptation"] == pytest.approx(sum(values) / len(values), abs=1e-12)


def record(policy: str, seed: int, metrics: dict, *, terminated: bool = True, error: str | None = None) -> dict:
    r = EpisodeResult(env_id="Realm-P3-v0", env_kwargs={}, policy=policy, seed=seed, index=seed, max_steps=10,
                      terminated=terminated, truncated=not terminated and error is None, metrics=metrics,
                      error=error, success=terminated)
    return r.to_dict()


def test_crab_gym_report_rebuilds_hand_written_records_under_the_rule(tmp_path):
    full = {"planning_quality": 1.0, "optimality": 0.6, "constraint_satisfaction": 1.0,
            "coordination": 0.5, "adaptation": None, "travel_minutes": 100}
    lines = [
        record("ridesharing_greedy", 0, full),
        record("ridesharing_greedy", 1, {**full, "optimality": 0.8, "coordination": 0.7, "travel_minutes": 80}),
        record("ridesharing_greedy", 2, {}, terminated=False),  # an old record: decided by the finished ones
        record("ridesharing_greedy", 3, {"coordination": None}, terminated=False),  # the env said n/a
        record("ridesharing_greedy", 4, {"optimality": 0.9}, terminated=False),  # a partial number: 0
        record("ridesharing_greedy", 5, {}, terminated=False, error="RuntimeError: boom"),  # left out
        record("random", 0, {}, terminated=False),  # nothing finished for this policy
        record("random", 1, {}, terminated=False),
    ]
    (tmp_path / "episodes.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert main(["report", str(tmp_path)]) == 0
    rows = {r["policy"]: r for r in json.loads((tmp_path / "report.json").read_text())["summary"]}
    greedy, stuck = rows["ridesharing_greedy"], rows["random"]
    assert (greedy["episodes"], greedy["infra_errors"], greedy["truncated"]) == (6, 1, 3)
    assert greedy["optimality"] == pytest.approx((0.6 + 0.8) / 5)
    assert greedy["planning_quality"] == pytest.approx(2 / 5)
    assert greedy["coordination"] == pytest.approx((0.5 + 0.7) / 4)  # seed 3 left out
    assert "adaptation" not in greedy  # n/a wherever it was measured: no column
    assert greedy["travel_minutes"] == pytest.approx(90)  # problem metrics: finished episodes only
    assert (stuck["truncated"], stuck["optimality"], stuck["coordination"]) == (2, 0.0, 0.0)
    assert "adaptation" not in stuck and "travel_minutes" not in stuck
    table = (tmp_path / "report.md").read_text().splitlines()
    header = [c.strip() for c in table[0].strip("|").split("|")]
    cells = {c["policy"]: c for c in (dict(zip(header, (x.strip() for x in line.strip("|").split("|"))))
                                      for line in table[2:4])}
    assert (cells["ridesharing_greedy"]["truncated"], cells["random"]["truncated"]) == ("3", "2")
    # each mean with its bootstrap interval (random: every value 0, so [0, 0])
    assert cells["ridesharing_greedy"]["optimality"].startswith("0.280 [")
    assert cells["random"]["optimality"] == "0.000 [0.00, 0.00]"


def test_every_realm_env_scores_a_cut_episode_zero():
    """One step per episode: every REALM id (that one step does not end) reports 0 on
    planning quality, optimality and constraint satisfaction, never n/a or a partial value."""
    ids = [e for e in gym.registry if e.startswith("Realm-")]
    report = Benchmark(ids, seeds=[0], max_steps=1).run(named_policies(["random"]), progress=False)
    rows = report.summary()
    assert len(rows) == len(ids) and not report.n_errors
    cut_rows = [row for row in rows if row["truncated"] == 1]
    assert len(cut_rows) >= len(ids) - 2  # a submit-plan env may end in one step
    for row in cut_rows:
        for name in ("planning_quality", "optimality", "constraint_satisfaction"):
            assert row[name] == 0.0, (row["env"], name)
        assert row["success"] == 0.0 and row.get("coordination") is None  # nothing finished to tell
        assert row.get("adaptation") in (None, 0.0)


def test_a_p9_episode_cut_before_any_delay_is_announced_leaves_adaptation_out():
    """P9 reports each announced delay in ``info["disruptions"]``, which the runner counts:
    cut at one step, before the first announcement, adaptation does not apply (recorded as
    None, which the report keeps out; before, the record could not say, and the report
    counted it 0 wherever finished P9 episodes measured adaptation)."""
    report = Benchmark([("Realm-P9-v0", {"instance": "p9_small_00"})], seeds=[0],
                       max_steps=1).run(named_policies(["random"]), progress=False)
    [result] = report.results
    assert result.truncated and result.metrics["optimality"] == 0.0
    assert "adaptation" in result.metrics and result.metrics["adaptation"] is None  # n/a, kept out of the mean


def test_a_cut_episode_of_a_non_realm_env_gets_no_realm_metrics():
    gym.register("CutLamps-v0", entry_point=LampsEnv)
    try:
        report = Benchmark(["CutLamps-v0"], seeds=[0], max_steps=1).run(named_policies(["random"]), progress=False)
    finally:
        gym.registry.pop("CutLamps-v0", None)
    [result] = report.results
    assert result.truncated and result.metrics == {}
    [row] = report.summary()
    assert row["truncated"] == 1 and "optimality" not in row


def test_no_plan_metrics():
    assert no_plan_metrics({}, None) == {"planning_quality": 0.0, "optimality": 0.0, "constraint_satisfaction": 0.0}
    assert no_plan_metrics({}, 2)["adaptation"] == 0.0
    assert no_plan_metrics({}, 0)["adaptation"] is None
    got = no_plan_metrics({"optimality": 0.7, "coordination": None, "makespan": 40}, 1)
    assert got == {"optimality": 0.0, "coordination": None, "makespan": 40, "planning_quality": 0.0,
                   "constraint_satisfaction": 0.0, "adaptation": 0.0}
    assert not math.isnan(got["optimality"])
