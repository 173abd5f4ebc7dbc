"""The job-shop candidate view: non-delay set and job features, against independent computations."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.envs.realm.jobshop.features import FEATURE_NAMES, N_FEATURES, job_features, non_delay_mask
from crab_gym.envs.realm.jobshop.heuristics import mwkr_scores, spt_scores

COLUMN = {name: i for i, name in enumerate(FEATURE_NAMES)}


def _dispatch(job: int) -> dict:
    return {"name": "dispatch", "arguments": {"job": int(job)}}


def _non_delay_from_schedule(schedule) -> np.ndarray:
    """The non-delay set from the simulator's own state (not the observation)."""
    n = len(schedule.next_op)
    starts = {}
    for job in range(n):
        if not schedule.can_dispatch(job):
            continue
        k = schedule.next_op[job]
        machine = schedule._mach[job][k]
        starts[job] = max(schedule.job_ready[job], schedule.machine_available[machine])
    earliest = min(starts.values())
    return np.array([job in starts and starts[job] == earliest for job in range(n)])


@pytest.mark.parametrize("instance", ["ft06", "la01", "ta01"])
def test_non_delay_mask_matches_the_simulators_earliest_starts(instance: str) -> None:
    env = gym.make("Realm-P11-v0", instance=instance)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(1)
    done = False
    while not done:
        expected = _non_delay_from_schedule(env.unwrapped.schedule)
        mask = non_delay_mask(obs)
        np.testing.assert_array_equal(mask, expected)
        assert mask.any() and not (mask & ~obs["action_mask"].astype(bool)).any()
        obs, _, terminated, truncated, _ = env.step(_dispatch(rng.choice(np.flatnonzero(obs["action_mask"]))))
        done = terminated or truncated


def _rule_gap(rule, instances: list[str], non_delay: bool) -> float:
    gaps = []
    for name in instances:
        env = gym.make("Realm-P11-v0", instance=name)
        obs, _ = env.reset(seed=0)
        while True:
            legal = non_delay_mask(obs) if non_delay else obs["action_mask"].astype(bool)
            obs, _, terminated, _, info = env.step(_dispatch(np.argmin(np.where(legal, rule(obs), np.inf))))
            if terminated:
                break
        gaps.append(env.unwrapped.schedule.makespan / env.unwrapped.reference.value - 1)
    return float(np.mean(gaps))


def test_rules_on_the_non_delay_set_give_the_published_taillard_figures() -> None:
    """L2D (Zhang et al., 2020) lists SPT at 25.9 % mean gap on ta01-ta10; their rules choose among
    the non-delay operations. Ours do so with the mask: the same figure, while the project's rules
    (all legal jobs) are far behind. MWKR: 19.2 % here, 19.5 % in the paper (ties break differently)."""
    taillard = [f"ta{i:02d}" for i in range(1, 11)]
    assert round(100 * _rule_gap(spt_scores, taillard, non_delay=True), 1) == 25.9
    assert round(100 * _rule_gap(spt_scores, taillard, non_delay=False), 1) == 56.9
    assert abs(100 * _rule_gap(mwkr_scores, taillard, non_delay=True) - 19.5) < 0.5


def test_job_features_read_the_state() -> None:
    env = gym.make("Realm-P11-v0", instance="ft06")
    obs, _ = env.reset(seed=0)
    rows = job_features(obs)
    assert rows.shape == (6, N_FEATURES) and rows.dtype == np.float32
    proc = obs["processing_time"].astype(float)
    unit = proc.mean()
    np.testing.assert_allclose(rows[:, COLUMN["next_duration"]], proc[:, 0] / unit, rtol=1e-6)
    np.testing.assert_allclose(rows[:, COLUMN["remaining_work"]], proc.sum(axis=1) / (unit * 6), rtol=1e-6)
    np.testing.assert_array_equal(rows[:, COLUMN["legal"]], 1.0)
    assert rows[:, COLUMN["progress"]].max() == 0.0
    obs, *_ = env.step(_dispatch(2))  # job 2's first operation is placed
    rows = job_features(obs)
    np.testing.assert_allclose(rows[2, COLUMN["next_duration"]], proc[2, 1] / unit, rtol=1e-6)
    assert rows[2, COLUMN["remaining_operations"]] == pytest.approx(5 / 6)
    assert rows[0, COLUMN["progress"]] == pytest.approx(1 / 36)


def test_batched_features_equal_the_single_ones() -> None:
    envs = [gym.make("Realm-P11-v0", instance=name) for name in ("ft06", "ft06")]
    observations = [env.reset(seed=0)[0] for env in envs]
    observations[1], *_ = envs[1].step(_dispatch(3))
    batch = {key: np.stack([o[key] for o in observations]) for key in observations[0]}
    np.testing.assert_array_equal(job_features(batch), np.stack([job_features(o) for o in observations]))
    np.testing.assert_array_equal(non_delay_mask(batch), np.stack([non_delay_mask(o) for o in observations]))


def test_padded_operations_of_the_variants_are_not_counted() -> None:
    """J3 jobs have fewer operations than the rows hold; the padding is marked done with duration 0."""
    env = gym.make("Realm-J3-v0", instance="j3_small_00")
    obs, _ = env.reset(seed=0)
    rows = job_features(obs)
    n_ops = obs["n_ops"]
    unit = sum(obs["processing_time"][j, : n_ops[j]].sum() for j in range(len(n_ops))) / n_ops.sum()
    np.testing.assert_allclose(rows[:, COLUMN["next_duration"]], obs["processing_time"][:, 0] / unit, rtol=1e-6)
    np.testing.assert_allclose(rows[:, COLUMN["remaining_operations"]], n_ops / obs["done"].shape[1], rtol=1e-6)
    assert np.isfinite(rows).all()
