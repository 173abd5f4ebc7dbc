"""The report's rows: a split's instances form one row (with ``split`` and ``instances``), a
run without a split reports as before, what applies to a cut episode is decided per instance,
the per-size table, and the three outcomes kept apart."""

from __future__ import annotations

import json

import pytest

from crab_gym.evaluation.episode import EpisodeResult
from crab_gym.evaluation.outcome import AGENT, INFRA
from crab_gym.evaluation.report import BenchmarkReport


def result(policy: str, instance: str | None, seed: int, *, split: str | None = "test", size: str | None = None,
           metrics: dict | None = None, terminated: bool = True, success: bool | None = None, ret: float = 0.5,
           error: str | None = None, error_kind: str | None = None, kwargs: dict | None = None) -> EpisodeResult:
    env_kwargs = dict(kwargs or {}) | ({"instance": instance} if instance else {})
    return EpisodeResult(
        "Realm-P2-v0", env_kwargs, policy, seed, index=seed, max_steps=50, episode_return=ret,
        completeness=1.0 if terminated else 0.5, terminated=terminated, truncated=not terminated and error is None,
        success=terminated and error is None if success is None else success,
        metrics={"optimality": ret} if metrics is None else metrics, error=error, error_kind=error_kind,
        split=split, instance=instance if split else None, size=size)


def test_a_splits_instances_form_one_row_with_split_and_instances_columns():
    episodes = [result(p, f"p2_small_0{i}", s) for p in ("random", "oracle") for i in range(4) for s in range(2)]
    episodes += [result("oracle", "p2_small_00", 0, split="dev")]
    report = BenchmarkReport(episodes)
    rows = report.summary()
    assert [(r["policy"], r["split"], r["episodes"], r["instances"]) for r in rows] == [
        ("oracle", "dev", 1, 1), ("oracle", "test", 8, 4), ("random", "test", 8, 4)]
    assert {r["kwargs"] for r in rows} == {"{}"}  # the instance is left out of the row's kwargs
    header = report.to_markdown().splitlines()[0]
    assert header.startswith("| env | policy | split | episodes | instances | infra_errors | truncated | return |")


def test_more_kwargs_than_the_instance_are_their_own_rows():
    episodes = [result("random", f"p2_small_0{i}", 0, kwargs={"reward_mode": m}) for i in range(3) for m in ("a", "b")]
    rows = BenchmarkReport(episodes).summary()
    assert [(r["kwargs"], r["instances"]) for r in rows] == [('{"reward_mode": "a"}', 3), ('{"reward_mode": "b"}', 3)]


def test_a_run_without_a_split_keeps_a_row_per_kwargs_and_the_old_columns():
    episodes = [result("random", None, s, split=None, kwargs={"instance": name}) for name in ("a", "b") for s in range(2)]
    report = BenchmarkReport(episodes)
    rows = report.summary()
    assert [(r["kwargs"], r["split"], r["instances"]) for r in rows] == [
        ('{"instance": "a"}', None, 1), ('{"instance": "b"}', None, 1)]
    md = report.to_markdown()
    assert md.startswith("| env | policy | kwargs | episodes | infra_errors | truncated | return |")
    assert "**By size**" not in md and "`split`" not in md


def test_what_applies_to_a_cut_episode_is_decided_on_its_own_instance():
    """Coordination is n/a on the one-actor instance and measured on the other: a cut episode
    counts 0 on coordination only where it is measured."""
    solo = {"optimality": 1.0, "coordination": None}
    team = {"optimality": 1.0, "coordination": 0.8}
    episodes = [
        result("oracle", "p2_small_00", 0, metrics=solo), result("oracle", "p2_small_01", 0, metrics=team),
        result("random", "p2_small_00", 0, metrics={}, terminated=False),  # an old record: nothing written
        result("random", "p2_small_01", 0, metrics={}, terminated=False),
        result("random", "p2_small_01", 1, metrics={"optimality": 0.5, "coordination": 0.4}),
    ]
    rows = {r["policy"]: r for r in BenchmarkReport(episodes).summary()}
    random_row = rows["random"]
    assert random_row["coordination"] == pytest.approx((0.0 + 0.4) / 2)  # not 0.4 / 3: p2_small_00's is n/a
    assert random_row["optimality"] == pytest.approx((0.0 + 0.0 + 0.5) / 3)
    assert random_row["truncated"] == 2


def test_the_per_size_table_has_the_means_per_size_class_in_size_order():
    episodes = [result("greedy", f"p2_{size}_0{i}", 0, size=size, ret=value)
                for size, value in (("large", 0.2), ("small", 0.9), ("medium", 0.5)) for i in range(2)]
    report = BenchmarkReport(episodes)
    sizes = report.by_size()
    assert [(r["size"], r["episodes"], r["instances"], r["return"]) for r in sizes] == [
        ("small", 2, 2, 0.9), ("medium", 2, 2, 0.5), ("large", 2, 2, 0.2)]
    assert sizes[0]["ci"]["return"] == [0.9, 0.9]
    data = json.loads(json.dumps(report.to_json()))
    assert [r["size"] for r in data["by_size"]] == ["small", "medium", "large"]
    table = report.to_markdown().split("**By size**")[1]
    assert table.splitlines()[2].startswith("| env | policy | split | size | episodes | instances |")
    assert "| Realm-P2-v0 | greedy | test | medium | 2 | 2 | 0 | 0 | 0.500 [0.50, 0.50] |" in table


def test_the_three_outcomes_are_kept_apart():
    episodes = [
        result("llm", "p2_small_00", 0, ret=1.0),  # finished
        result("llm", "p2_small_00", 1, ret=0.2, terminated=False),  # cut by the step limit: agent failure
        result("llm", "p2_small_01", 0, ret=0.6, metrics={"optimality": 0.6, "constraint_satisfaction": 0.5},
               success=False),  # infeasible: agent failure
        result("llm", "p2_small_01", 1, ret=0.1, terminated=False, error="ValueError: my bug",
               error_kind=AGENT, metrics={}),  # the agent's code raised
        result("llm", "p2_small_02", 0, ret=0.0, terminated=False, error="LLMAgentError: HTTP 503",
               error_kind=INFRA, metrics={}),  # the model API failed
        result("llm", "p2_small_02", 1, ret=0.0, terminated=False, error="RuntimeError: env bug", metrics={}),  # old
    ]
    assert [e.outcome for e in episodes] == ["finished", "agent_failed", "agent_failed", "agent_failed",
                                             "infra_failed", "infra_failed"]
    report = BenchmarkReport(episodes)
    (row,) = report.summary()
    assert (row["episodes"], row["instances"], row["infra_errors"], row["agent_errors"], row["truncated"]) == (
        6, 3, 2, 1, 1)
    assert row["success"] == pytest.approx(1 / 4)  # infrastructure failures left out of success too
    assert row["return"] == pytest.approx((1.0 + 0.2 + 0.6 + 0.1) / 4)
    assert row["optimality"] == pytest.approx((1.0 + 0.0 + 0.6 + 0.0) / 4)  # a raised agent has no plan: 0
    assert report.n_errors == 3 and report.n_infra_errors == 2
    md = report.to_markdown()
    assert "| agent_errors |" in md.splitlines()[0]
    assert "**Errors** (3 of 6 episodes raised: 2 infrastructure failure(s), left out of the means; " \
           "1 raised by the agent, counted as failures):" in md
    assert "- Realm-P2-v0 [test] x llm (agent): 1 episode(s) (p2_small_01 seed 1): ValueError: my bug" in md
    assert "- Realm-P2-v0 [test] x llm: 1 episode(s) (p2_small_02 seed 0): LLMAgentError: HTTP 503" in md
    groups = report.error_groups()
    assert [(g["outcome"], g["instances"], g["seeds"]) for g in groups] == [
        ("agent_failed", ["p2_small_01"], [1]), ("infra_failed", ["p2_small_02"], [0]),
        ("infra_failed", ["p2_small_02"], [1])]
