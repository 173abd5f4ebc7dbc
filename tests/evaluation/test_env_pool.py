"""The runner reuses one env per worker and (id, kwargs) (issue 36): ``gym.make`` per episode
was 9 % of a cold P7 run. The records must be the ones a fresh env per episode gives."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import pytest

import crab_gym  # noqa: F401 - registers the ids
from crab_gym.baselines.registry import named_policies
from crab_gym.evaluation.episode import EpisodeSpec
from crab_gym.evaluation.episode_runner import EnvPool, EpisodeContext, run_episode
from crab_gym.evaluation.executors import SerialExecutor

#: Ids with disruptions (deferred adaptation), a per-instance memo and plain play; two kwargs
#: each so that an env never serves another instance's episode.
CASES = [
    ("Realm-P7-v0", [{"instance": "p7_small_00"}, {"instance": "p7_small_04"}], ["random", "p7_greedy"]),
    ("Realm-P8-v0", [{"instance": "p8_small_02"}, {"instance": "p8_small_00"}], ["random", "wedding_greedy"]),
    ("Realm-P4-v0", [{}], ["random", "ridesharing_greedy"]),
    ("Realm-P11-v0", [{}], ["random", "mwkr"]),
]


def specs() -> list[EpisodeSpec]:
    """Interleaved episodes: kwargs and policies alternate, seeds repeat, so a reused env
    carries another episode's state into each one if reset misses anything."""
    out = []
    for env_id, kwargs_list, policies in CASES:
        for seed in (0, 1, 0):
            for kwargs in kwargs_list:
                for policy in policies:
                    out.append(EpisodeSpec(env_id, kwargs, policy, len(out), seed, 500))
    return out


def record(result) -> dict:
    """A result without its wall-clock measurements."""
    out = dataclasses.asdict(result)
    out.pop("wall_time_s")
    out.get("usage", {}).pop("latency_s", None)
    return out


def test_records_with_reused_envs_equal_a_fresh_env_per_episode():
    todo = specs()
    context = EpisodeContext.for_envs(named_policies(sorted({s.policy for s in todo})), [s.env_id for s in todo])
    fresh = [record(run_episode(spec, context)) for spec in todo]
    pool = EnvPool()
    try:
        reused = [record(run_episode(spec, context, pool=pool)) for spec in todo]
    finally:
        pool.close()
    assert all(r["error"] is None for r in fresh), [r["error"] for r in fresh if r["error"]]
    assert any(r["metrics"].get("adaptation") is not None for r in fresh)  # disruptions were scored
    for spec, a, b in zip(todo, fresh, reused):
        assert a == b, spec


def test_the_pool_hands_an_env_back_only_for_the_same_id_and_kwargs_and_after_a_clean_episode():
    pool = EnvPool()
    env = pool.acquire("Realm-P7-v0", {"instance": "p7_small_00"})
    assert pool.release("Realm-P7-v0", {"instance": "p7_small_00"}, env)
    other = pool.acquire("Realm-P7-v0", {"instance": "p7_small_04"})
    assert other is not env
    assert pool.acquire("Realm-P7-v0", {"instance": "p7_small_00"}) is env
    assert pool.acquire("Realm-P7-v0", {"instance": "p7_small_00"}) is not env  # taken: one user at a time
    assert not pool.release("Realm-P7-v0", {"instance": object()}, env)  # not spelled in JSON: never shared
    assert not pool.release("Realm-J4-v0", {"generator": {"size": "small"}}, env)  # a new instance per reset
    pool.close()

    context = EpisodeContext.for_envs(named_policies(["random"]), ["Realm-P7-v0"])
    broken = EpisodeSpec("Realm-P7-v0", {"instance": "p7_small_00"}, "no such policy", 0, 0, 10)
    pool = EnvPool()
    assert run_episode(broken, context, pool=pool).error is not None
    assert pool._idle == {}  # an episode that raised does not give its env back
    pool.close()


def test_the_serial_executor_makes_one_env_per_id_and_kwargs(monkeypatch):
    made = []
    real_make = gym.make

    def counting_make(env_id, **kwargs):
        made.append(env_id)
        return real_make(env_id, **kwargs)

    monkeypatch.setattr(gym, "make", counting_make)
    todo = [EpisodeSpec("Realm-P7-v0", {"instance": name}, "random", k, k, 200)
            for k in range(3) for name in ("p7_small_00", "p7_small_04")]
    context = EpisodeContext.for_envs(named_policies(["random"]), ["Realm-P7-v0"])
    results = list(SerialExecutor().run(todo, context))
    assert len(results) == 6 and all(r.error is None for r in results)
    assert len(made) == 2  # was 6: one gym.make per episode


@pytest.mark.parametrize("workers", [2])
def test_process_workers_give_the_serial_records(workers):
    from crab_gym.evaluation.executors import ProcessExecutor

    todo = [EpisodeSpec("Realm-P7-v0", {"instance": "p7_small_00"}, "random", k, k % 2, 200) for k in range(4)]
    context = EpisodeContext.for_envs(named_policies(["random"]), ["Realm-P7-v0"])
    serial = sorted((record(r) for r in SerialExecutor().run(todo, context)), key=lambda r: r["index"])
    parallel = sorted((record(r) for r in ProcessExecutor(workers).run(todo, context)), key=lambda r: r["index"])
    assert serial == parallel
