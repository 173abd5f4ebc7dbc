"""The P8 adaptation yardstick is cached on disk as P7's is (issue 36): every evaluation run
paid 0.3-0.4 CPU-s per episode for the same re-solve. A hit gives what the solve gives, a new
process reads it from disk, and the key changes with anything the search reads."""

from __future__ import annotations

import pytest

from crab_gym.envs.realm.wedding import references
from crab_gym.envs.realm.wedding.env_disruptions import WeddingDisruptionEnv
from crab_gym.envs.realm.wedding.heuristics import greedy_action
from crab_gym.envs.realm.wedding.references import ADAPTATION_CACHE, adaptation_key, adaptation_value
from tests.realm_helpers import own_json_cache


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    """A cache folder of this test alone, and an empty memory table."""
    with own_json_cache(monkeypatch, tmp_path, ADAPTATION_CACHE) as folder:
        yield folder


def greedy_metrics(name: str = "p8_small_02") -> tuple[WeddingDisruptionEnv, dict]:
    """A greedy P8 episode and its finished metrics (the yardstick solved by finish_metrics)."""
    env = WeddingDisruptionEnv(name)
    env.reset(seed=0)
    done = False
    while not done:
        _, _, done, _, _ = env.step(greedy_action(env))
    return env, env.finish_metrics()


def test_a_yardstick_solved_once_is_read_from_disk_without_solving(own_cache, monkeypatch):
    env, first = greedy_metrics()
    files = list((own_cache / "realm" / "p8_adaptation").glob("*.json"))
    assert len(files) == 1 and first["adaptation_reference_cost"] is not None
    ADAPTATION_CACHE.clear_memory()  # as a new process: only the disk knows

    def no_solve(*args, **kwargs):
        raise AssertionError("the cached yardstick was solved again")

    monkeypatch.setattr(references, "adaptive_from_state", no_solve)
    _, again = greedy_metrics()
    assert again == first


def test_a_hit_gives_what_the_solve_gives(own_cache):
    env, _ = greedy_metrics()
    schedule = env._snapshot.pending
    solved = adaptation_value(env._snapshot, schedule, env._snapshot_keep, cache=False)
    assert adaptation_value(env._snapshot, schedule, env._snapshot_keep) == solved  # solved, stored
    ADAPTATION_CACHE.clear_memory()
    assert adaptation_value(env._snapshot, schedule, env._snapshot_keep) == solved  # from disk


def test_the_key_changes_with_the_state_the_schedule_the_kept_plan_and_the_code(own_cache, monkeypatch):
    env, _ = greedy_metrics()
    base, keep = env._snapshot.copy(), env._snapshot_keep
    key = adaptation_key(base, keep)
    assert adaptation_key(base.copy(), keep) == key
    later = base.copy()
    later.vehicles[0].free += 5
    coming = base.copy()
    coming.pending = list(base.applied)  # one more disruption still to come
    assert base.applied and not base.pending
    keys = {adaptation_key(later, keep), adaptation_key(coming, keep), adaptation_key(base, {0: []} if keep is None else None)}
    monkeypatch.setattr(references, "code_version", lambda modules: "another version")
    keys.add(adaptation_key(base, keep))
    assert key not in keys and len(keys) == 4
