"""Who is to blame when an episode raises: the policy's own code (an agent failure, in every
mean) or the infrastructure (the env, the model API, a lost worker: left out of the means);
``Benchmark.run(retry_errors=True)`` runs the infrastructure failures again, and the store
keeps the last record of an episode."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest

from crab_gym.baselines.llm_agent import LLMAgentError
from crab_gym.evaluation.benchmark import Benchmark
from crab_gym.evaluation.episode import EpisodeResult, EpisodeSpec
from crab_gym.evaluation.episode_store import EpisodeStore
from crab_gym.evaluation.outcome import INFRA, InfrastructureError, blame, is_infrastructure
from tests.core.toy_env import LampsEnv
from tests.evaluation.scale_envs import FirstLegal


class ModelPolicy(FirstLegal):
    """Asks a 'model server' that is down while the flag file says so (then raises as an
    agent's model client does: an infrastructure error), else plays the first legal action."""

    def __init__(self, env: gym.Env, flag: str) -> None:
        super().__init__(env)
        self.flag = Path(flag)

    def __call__(self, observation, info):
        if self.flag.read_text() == "down":
            raise ConnectionError("model server unreachable")
        return super().__call__(observation, info)


def model_policy(env: gym.Env, flag: str) -> ModelPolicy:
    """A module-level factory, reading the flag file on every action."""
    return ModelPolicy(env, flag)


class BuggyPolicy(FirstLegal):
    def __call__(self, observation, info):
        raise ValueError("index out of range in my planner")


def buggy_policy(env: gym.Env) -> BuggyPolicy:
    return BuggyPolicy(env)


def unbuildable_policy(env: gym.Env) -> FirstLegal:
    raise KeyError("my planner has no table for this env")


class ExplodingLamps(LampsEnv):
    """An env bug: step raises on the second step."""

    def step(self, action):
        if len(self.order) == 1:
            raise RuntimeError("env bug")
        return super().step(action)


@pytest.fixture()
def lamps():
    gym.register("OutcomeLamps-v0", entry_point=LampsEnv)
    gym.register("ExplodingLamps-v0", entry_point=ExplodingLamps)
    yield "OutcomeLamps-v0", "ExplodingLamps-v0"
    gym.registry.pop("OutcomeLamps-v0", None)
    gym.registry.pop("ExplodingLamps-v0", None)


def test_the_policy_s_own_exception_is_the_agent_s_and_the_rest_is_infrastructure(lamps, tmp_path):
    lamps_id, exploding_id = lamps
    flag = tmp_path / "flag"
    flag.write_text("down")
    policies = {"buggy": buggy_policy, "unbuildable": unbuildable_policy, "model": model_policy,
                "first": lambda env: FirstLegal(env)}
    report = Benchmark([lamps_id, exploding_id], seeds=[0]).run(
        policies, progress=False, policy_kwargs={"model": {"flag": str(flag)}})
    got = {(r.env_id, r.policy): (r.error_kind, r.outcome) for r in report.results}
    assert got[(lamps_id, "buggy")] == ("agent", "agent_failed")
    assert got[(lamps_id, "unbuildable")] == ("agent", "agent_failed")  # building the policy is its code too
    assert got[(lamps_id, "model")] == ("infra", "infra_failed")  # a ConnectionError: the machine's
    assert got[(lamps_id, "first")] == (None, "finished")
    assert got[(exploding_id, "first")] == ("infra", "infra_failed")  # the env raised
    assert got[(exploding_id, "buggy")] == ("agent", "agent_failed")  # the policy raised first


def test_infrastructure_exceptions_are_known_wherever_they_are_raised():
    assert issubclass(LLMAgentError, InfrastructureError) and issubclass(LLMAgentError, RuntimeError)
    for exc in (LLMAgentError("HTTP 503"), TimeoutError(), ConnectionResetError(), ImportError("openai")):
        assert is_infrastructure(exc) and blame(exc, in_policy=True) == INFRA
    assert blame(ValueError("bug"), in_policy=True) == "agent"
    assert blame(ValueError("bug"), in_policy=False) == INFRA


def test_retry_errors_runs_the_infrastructure_failures_again(lamps, tmp_path):
    lamps_id, _ = lamps
    flag = tmp_path / "flag"
    flag.write_text("down")
    out = tmp_path / "run"
    policies = {"model": model_policy, "buggy": buggy_policy}
    options = {"model": {"flag": str(flag)}}
    notes: list[str] = []

    def run(**kwargs):
        return Benchmark([lamps_id], seeds=[0, 1]).run(policies, progress=False, out=out, policy_kwargs=options,
                                                        log=notes.append, **kwargs)

    first = run()
    assert [r.outcome for r in first.results] == ["agent_failed"] * 2 + ["infra_failed"] * 2
    flag.write_text("up")  # the server is back
    resumed = run()  # a plain rerun resumes every stored episode, failures included
    assert resumed.resumed == 4 and resumed.comparable() == first.comparable()
    notes.clear()
    retried = run(retry_errors=True)
    assert notes == ["retrying 2 episode(s) that failed on infrastructure",
                     f"resumed 2 of 4 episodes from {out / 'episodes.jsonl'}; running the other 2"]
    assert [r.outcome for r in retried.results] == ["agent_failed"] * 2 + ["finished"] * 2  # the agent's stay
    assert len((out / "episodes.jsonl").read_text().splitlines()) == 6  # appended; the last record counts
    rows = {r["policy"]: r for r in retried.summary()}
    assert rows["model"]["infra_errors"] == 0 and rows["model"]["success"] == 1.0
    stored = EpisodeStore(out).load()
    assert len(stored) == 4 and sorted((r.policy, r.error is None) for r in stored) == [
        ("buggy", False), ("buggy", False), ("model", True), ("model", True)]
    assert run(retry_errors=True).resumed == 4  # nothing left to retry


def test_the_store_keeps_the_last_record_of_an_episode(tmp_path):
    spec = EpisodeSpec("E-v0", {}, "p", 0, 0, 10)
    failed, rerun, other = EpisodeResult.for_spec(spec), EpisodeResult.for_spec(spec), EpisodeResult.for_spec(
        EpisodeSpec("E-v0", {}, "p", 1, 1, 10))
    failed.error, failed.error_kind = "ConnectionError: down", INFRA
    rerun.success = True
    with EpisodeStore(tmp_path) as store:
        store.extend([failed, other, rerun])
    loaded = EpisodeStore(tmp_path).load()
    assert [(r.seed, r.error, r.success) for r in loaded] == [(0, None, True), (1, None, False)]
    assert loaded[0].error_kind is None
