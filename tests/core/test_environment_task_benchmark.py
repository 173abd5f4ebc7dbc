"""Environment, Task and Benchmark: the small classes the envs and runners build on."""

from __future__ import annotations

import json

import gymnasium as gym
import networkx as nx
import pytest

from crab_gym.baselines import RandomPolicy
from crab_gym.core import ActionArgumentError, Benchmark, Environment, Task, action, evaluator


class Counter:
    def __init__(self) -> None:
        self.value = 0


@action
def add(amount: int, env) -> int:
    """Add to the counter.

    Args:
        amount: how much.
    """
    env.value += amount
    return env.value


@action
def read(env) -> int:
    """Read the counter."""
    return env.value


@evaluator
def reached_ten(env) -> bool:
    return env.value >= 10


def test_environment_runs_actions_on_its_context_and_observes():
    state = Counter()
    env = Environment("counter", [add], observations=[read], context=state)
    assert env.take("add", {"amount": 4}) == 4
    assert env.observe() == {"read": 4}
    assert env.history == [{"name": "add", "arguments": {"amount": 4}}]
    with pytest.raises(ActionArgumentError, match="unknown action"):
        env.take("sub", {})
    with pytest.raises(ActionArgumentError, match="amount"):
        env.take("add", {"amount": "lots"})
    assert state.value == 4  # the rejected calls changed nothing
    assert [t["function"]["name"] for t in env.tools()] == ["add"]


def test_task_setup_and_fresh_evaluator_per_episode():
    state = Counter()
    task = Task(
        id="count-to-ten",
        description="Bring the counter to ten.",
        evaluator_graph=lambda: _single(reached_ten),
        setup=[(add, {"amount": 7})],
    )
    task.run_setup(env=state)
    assert state.value == 7
    first = task.build_evaluator()
    first.step(state)
    assert first.completeness == 0.0
    add(amount=3, env=state)
    first.step(state)
    assert first.is_complete
    assert task.build_evaluator().completeness == 0.0  # a new episode starts fresh


def _single(node):
    g = nx.DiGraph()
    g.add_node(node)
    return g


@pytest.fixture()
def lamps_id():
    gym.register("BenchLamps-v0", entry_point="tests.core.toy_env:LampsEnv")
    yield "BenchLamps-v0"
    gym.registry.pop("BenchLamps-v0", None)


def test_benchmark_runs_random_policy_and_writes_reports(lamps_id, tmp_path):
    bench = Benchmark([lamps_id], seeds=[0, 1, 2], max_steps=200)
    report = bench.run({"random": lambda env: RandomPolicy(env, seed=0)}, progress=False)
    assert len(report.results) == 3
    for r in report.results:
        assert r.terminated and r.completeness == 1.0  # random legal play always lights all
        assert 0.0 < r.episode_return <= 1.0
        assert r.invalid_actions == 0  # the random policy only picks legal actions
        assert r.metrics["moves"] == r.steps
    (row,) = report.summary()
    assert row["episodes"] == 3 and row["success"] == 1.0
    paths = report.write(tmp_path)
    data = json.loads(paths["json"].read_text())
    assert len(data["episodes"]) == 3
    assert "| env | policy |" in paths["markdown"].read_text()
    # same seeds, same policy seed -> same results (wall time aside)
    again = Benchmark([lamps_id], seeds=[0, 1, 2], max_steps=200).run(
        {"random": lambda env: RandomPolicy(env, seed=0)}, progress=False
    )
    assert [r.episode_return for r in again.results] == [r.episode_return for r in report.results]


def test_benchmark_plot(lamps_id, tmp_path):
    pytest.importorskip("matplotlib")
    report = Benchmark([lamps_id], seeds=[0]).run({"random": lambda env: RandomPolicy(env)}, progress=False)
    path = report.plot(tmp_path / "r.png")
    assert path.stat().st_size > 1000
