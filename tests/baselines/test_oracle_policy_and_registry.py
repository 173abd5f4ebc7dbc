"""The oracle policy scores 1 on every REALM env, and every named CLI policy runs."""

from __future__ import annotations

import gymnasium as gym
import pytest

import crab_gym  # noqa: F401
from crab_gym.baselines.oracle_policy import OraclePolicy
from crab_gym.baselines.registry import policy_factories, policy_specs
from crab_gym.cli import main
from crab_gym.envs.registration import realm_ids

#: Every problem-specific heuristic, with each id it names.
HEURISTICS = [
    (env_id, spec.name)
    for spec in policy_specs().values()
    # the floor has its own test; a trained policy promises no feasible plan (P4's default instance:
    # optimality 0), the reference results say how often it finds one (tests/test_reference_results.py)
    if spec.env_ids is not None and spec.name not in ("oracle", "do_nothing", "trained")
    and not spec.io_bound  # not multi-llm (a model server)
    for env_id in spec.env_ids
]


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path / "cache"))


def play(env_id: str, policy_name: str, **kwargs):
    env = gym.make(env_id, **kwargs)
    policy = policy_factories()[policy_name](env)
    obs, info = env.reset(seed=0)
    total, steps = 0.0, 0
    while True:
        obs, reward, terminated, truncated, info = env.step(policy(obs, info))
        assert info["valid"], info["error"]
        total += reward
        steps += 1
        if terminated or truncated:
            return total, steps, info


@pytest.mark.parametrize("env_id", realm_ids())
def test_oracle_plan_scores_one_on_every_realm_env(env_id):
    total, _, info = play(env_id, "oracle")
    metrics = info["metrics"]
    assert metrics["optimality"] == 1.0
    assert metrics["planning_quality"] == 1.0 and metrics["constraint_satisfaction"] == 1.0
    assert total == pytest.approx(1.0)


def test_oracle_on_a_jssp_instance_matches_the_known_optimum():
    _, _, info = play("Realm-P11-v0", "oracle", instance="la01")
    assert info["metrics"]["makespan"] == 666


@pytest.mark.parametrize("env_id, policy", HEURISTICS)
def test_heuristics_finish_with_feasible_plans(env_id, policy):
    total, _, info = play(env_id, policy)
    assert 0.0 < info["metrics"]["optimality"] <= 1.0
    assert 0.0 < total <= 1.0 + 1e-9


def test_oracle_policy_rejects_envs_without_a_plan():
    from tests.core.toy_env import LampsEnv

    with pytest.raises(TypeError, match="no oracle plan"):
        OraclePolicy(LampsEnv())(None, {})


def test_cli_run_prints_a_report(capsys, tmp_path):
    code = main(["run", "--env", "Realm-P11-v0", "--policy", "oracle", "spt", "--episodes", "1",
                 "--quiet", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0
    rows = {line.split("|")[2].strip(): line for line in out.splitlines() if line.startswith("| Realm-P11-v0")}
    assert set(rows) == {"oracle", "spt"}
    assert (tmp_path / "report.json").is_file() and (tmp_path / "report.md").is_file()


def test_cli_rejects_unknown_names(capsys):
    assert main(["run", "--env", "Realm-P99-v0", "--quiet"]) == 2
    assert "unknown env id" in capsys.readouterr().err
    assert main(["run", "--policy", "genius", "--quiet"]) == 2
    assert "unknown policy" in capsys.readouterr().err


def test_cli_llm_policy_without_a_model_is_a_clear_error(capsys, monkeypatch):
    pytest.importorskip("openai")
    monkeypatch.delenv("CRAB_GYM_LLM_MODEL", raising=False)
    assert main(["run", "--env", "Realm-P11-v0", "--policy", "llm", "--quiet"]) == 2
    assert "CRAB_GYM_LLM_MODEL" in capsys.readouterr().err
