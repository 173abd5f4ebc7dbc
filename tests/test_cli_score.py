"""``crab-gym score``: an episode's plan file scores the episode's own optimality; a broken
plan is infeasible with the violated constraint named and optimality 0 (exit code 1); a plan
file that is no plan of the env is one line on stderr naming the file and the field (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.baselines.oracle_policy import OraclePolicy
from crab_gym.baselines.registry import NamedPolicy
from crab_gym.cli import main
from crab_gym.datasets import generate_instance
from crab_gym.envs.realm.index import problem_spec


def run_cli(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def play(env_id: str, instance: str, policy: str) -> tuple[gym.Env, dict[str, Any]]:
    """One episode of the oracle or the problem's greedy heuristic; the env and its finished metrics."""
    env = gym.make(env_id, instance=instance)
    if policy == "oracle":
        agent = OraclePolicy(env)
    else:
        agent = NamedPolicy(problem_spec(env_id).greedy().name, {})(env)
    obs, info = env.reset(seed=0)
    if hasattr(agent, "reset"):
        agent.reset(env)
    terminated = truncated = False
    while not (terminated or truncated):
        obs, _, terminated, truncated, info = env.step(agent(obs, info))
    assert terminated
    return env, env.unwrapped.finish_metrics()


def score_json(capsys: Any, env_id: str, instance: str, plan: Path) -> tuple[int, dict[str, Any]]:
    code, out, err = run_cli(capsys, "score", "--env", env_id, "--instance", instance, str(plan), "--json")
    assert err == ""
    return code, json.loads(out)


ROUND_TRIPS = [
    ("Realm-P1-v0", "p1_small_00", "greedy"),
    ("Realm-P3-v0", "p3_small_01", "greedy"),
    ("Realm-P7-v0", "p7_small_00", "greedy"),
    ("Realm-P7-v0", "p7_small_00", "oracle"),
    ("Realm-P11-v0", "ft06", "greedy"),
    ("Realm-P11-v0", "ft06", "oracle"),
    ("Realm-J2-v0", "j2_small_00", "greedy"),
    ("Realm-J2-v0", "j2_small_00", "oracle"),
]


@pytest.mark.parametrize(("env_id", "instance", "policy"), ROUND_TRIPS, ids=lambda v: str(v))
def test_the_plan_file_of_an_episode_scores_its_optimality(capsys, tmp_path, env_id, instance, policy) -> None:
    env, metrics = play(env_id, instance, policy)
    plan = tmp_path / "plan.json"
    env.unwrapped.plan_json(plan)
    code, score = score_json(capsys, env_id, instance, plan)
    assert code == 0 and score["feasible"] and score["violations"] == []
    assert score["optimality"] == metrics["optimality"] == score["metrics"]["optimality"]
    assert score["cost"] == pytest.approx(env.unwrapped._agent_cost())
    assert score["reference"]["value"] == env.unwrapped.reference.value
    assert score["reference"]["source"] == "shipped"
    if policy == "oracle":
        assert score["optimality"] == 1.0


def test_the_text_report_shows_verdict_constraints_reference_and_metrics(capsys, tmp_path) -> None:
    env, metrics = play("Realm-P11-v0", "ft06", "greedy")
    plan = tmp_path / "ft06.json"
    env.unwrapped.plan_json(plan)
    code, out, err = run_cli(capsys, "score", "--env", "Realm-P11-v0", "--instance", "ft06", str(plan))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == f"Realm-P11-v0 ft06: {plan} is feasible; optimality {metrics['optimality']:.4f}"
    assert "cost: 67" in lines and "constraints: 2 declared, 0 violated" in lines
    assert "  holds     sequence, schedule" in lines
    assert any(line.startswith("reference: 55 (OPTIMAL; source shipped") for line in lines)
    assert "  optimality is measured against 55" in lines
    assert f"  optimality               {metrics['optimality']:.6g}" in lines
    assert "  adaptation               n/a" in lines


def _reference_plan(env_id: str, instance: str) -> dict[str, Any]:
    env = gym.make(env_id, instance=instance)
    env.reset(seed=0)
    return json.loads(json.dumps(env.unwrapped.solved_reference().plan))


def test_a_job_shop_plan_with_an_operation_moved_is_infeasible(capsys, tmp_path) -> None:
    plan = _reference_plan("Realm-P11-v0", "ft06")
    plan["sequence"][1].append(plan["sequence"][0].pop())  # job's operation listed on the wrong machine
    path = tmp_path / "moved.json"
    path.write_text(json.dumps(plan), encoding="utf-8")
    code, score = score_json(capsys, "Realm-P11-v0", "ft06", path)
    assert code == 1 and not score["feasible"]
    assert score["violations"] == ["sequence", "schedule"] and score["optimality"] == 0.0
    assert score["refused"].startswith("the env refuses the plan") and "machine 0" in score["refused"]
    code, out, _ = run_cli(capsys, "score", "--env", "Realm-P11-v0", "--instance", "ft06", str(path))
    assert code == 1 and "is INFEASIBLE; optimality 0.0000" in out and "  violated  sequence" in out


def test_a_job_shop_plan_whose_machine_orders_deadlock_is_infeasible(capsys, tmp_path) -> None:
    plan = _reference_plan("Realm-J2-v0", "j2_small_00")
    plan["sequence"][0].reverse()
    plan["sequence"][1].reverse()
    path = tmp_path / "deadlock.json"
    path.write_text(json.dumps(plan), encoding="utf-8")
    code, score = score_json(capsys, "Realm-J2-v0", "j2_small_00", path)
    assert code == 1 and "sequence" in score["violations"] and score["optimality"] == 0.0
    assert "deadlock" in score["details"]["error"]


def test_overlapping_tours_are_played_and_scored_infeasible(capsys, tmp_path) -> None:
    """A plan the env accepts but finds infeasible: the env's own metrics, optimality 0."""
    plan = _reference_plan("Realm-P2-v0", "p2_small_00")
    tours = plan["assignments"]["guide1"]
    tours[1]["start"] = tours[0]["start"]  # guide1 leads two groups at once
    path = tmp_path / "overlap.json"
    path.write_text(json.dumps(plan), encoding="utf-8")
    code, score = score_json(capsys, "Realm-P2-v0", "p2_small_00", path)
    assert code == 1 and "no_overlap:guide1" in score["violations"]
    assert score["refused"] == "" and score["notes"] == []
    assert score["optimality"] == score["metrics"]["optimality"] == 0.0 and score["metrics"]["feasible"] is False


def test_an_instance_file_of_ones_own_is_scored_against_its_solved_reference(capsys, tmp_path) -> None:
    own = tmp_path / "city.json"
    own.write_text(generate_instance("P3", "small", seed=7).to_json(), encoding="utf-8")
    env, metrics = play("Realm-P3-v0", str(own), "greedy")
    plan = tmp_path / "plan.json"
    env.unwrapped.plan_json(plan)
    code, score = score_json(capsys, "Realm-P3-v0", str(own), plan)
    assert code == 0 and score["instance"] == "p3_small_seed7"
    assert score["optimality"] == metrics["optimality"]
    assert score["reference"]["source"] in ("solved", "cache") and score["reference"]["solver"]


MISTAKES = {
    "not JSON": ('{"sequence": [[0, 1]', ["is not JSON", "line 1"]),
    "not an object": ("[1, 2]", ["not a plan of Realm-P11-v0 (its fields: sequence)", "must be an object"]),
    "wrong field": ('{"sequense": []}', ["'sequense' is not a parameter", "'sequence' is required"]),
    "wrong value": ('{"sequence": [[0, 1], "x"]}', ["'sequence.1' Input should be a valid list"]),
}


@pytest.mark.parametrize("case", MISTAKES, ids=str)
def test_a_malformed_plan_file_is_one_line_naming_file_and_field(capsys, tmp_path, case) -> None:
    text, wanted = MISTAKES[case]
    path = tmp_path / "plan.json"
    path.write_text(text, encoding="utf-8")
    code, out, err = run_cli(capsys, "score", "--env", "Realm-P11-v0", "--instance", "ft06", str(path))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"crab-gym score: error: {path}: ")
    for part in wanted:
        assert part in err


@pytest.mark.parametrize(("argv", "wanted"), [
    (["--env", "Realm-P11-v1", "--instance", "ft06"], ["not a REALM env id", "did you mean 'Realm-P11-v0'"]),
    (["--env", "CrabDesktop-v0", "--instance", "x"], ["'CrabDesktop-v0' is not a REALM env id"]),
    (["--env", "Realm-P1-v0", "--instance", "p1_smal_00"], ["cannot make Realm-P1-v0", "did you mean 'p1_small_00'"]),
    (["--env", "Realm-P11-v0"], ["required: --instance"]),
], ids=["env id", "not REALM", "instance", "no instance"])
def test_usage_mistakes_are_one_line(capsys, tmp_path, argv, wanted) -> None:
    path = tmp_path / "plan.json"
    path.write_text('{"sequence": []}', encoding="utf-8")
    code, out, err = run_cli(capsys, "score", *argv, str(path))
    assert code == 2 and out == "" and err.count("\n") == 1
    for part in wanted:
        assert part in err


def test_a_missing_plan_file_is_named(capsys, tmp_path) -> None:
    missing = tmp_path / "nowhere.json"
    code, _, err = run_cli(capsys, "score", "--env", "Realm-P11-v0", "--instance", "ft06", str(missing))
    assert code == 2 and f"{missing}: cannot read it" in err
