"""The P7 adaptation re-solve is cached by its exact input (issue 23): a cache hit gives what
the solve gives, and the key changes whenever anything the re-solve reads changes (the state,
the disruptions still to come, the instance, the budget). Also the small JSON store
(:class:`~crab_gym.envs.realm.common.cache.JsonCache`) the cache keeps on disk."""

from __future__ import annotations

import json

import pytest

from crab_gym.envs.realm.common.cache import JsonCache, cache_dir
from crab_gym.envs.realm.disaster_relief import adaptation
from crab_gym.envs.realm.disaster_relief.adaptation import CACHE, adaptive_reference, state_key
from crab_gym.envs.realm.disaster_relief.env import DisasterReliefEnv
from crab_gym.envs.realm.disaster_relief.heuristics import GreedyReliefPolicy
from crab_gym.envs.realm.disaster_relief.model import WeatherEvent
from crab_gym.envs.realm.disaster_relief.sim import ReliefSim
from tests.realm_helpers import own_json_cache


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    """A cache folder of this test alone, and an empty memory table."""
    with own_json_cache(monkeypatch, tmp_path, CACHE) as folder:
        yield folder


def snapshot(instance: str = "p7_small_04") -> ReliefSim:
    """The state of a greedy episode when its first disruption struck."""
    env = DisasterReliefEnv(instance)
    policy = GreedyReliefPolicy(env)
    obs, info = env.reset(seed=0)
    ended = False
    while not ended:
        obs, _, ended, _, info = env.step(policy(obs, info))
    assert env._snapshot is not None
    return env._snapshot


# ------------------------------------------------------------------------------ the key
def test_the_key_is_the_same_for_an_equal_state_and_changes_with_anything_the_resolve_reads():
    base = snapshot()
    key = state_key(base)
    assert state_key(base.copy()) == key
    changed = {}
    sim = base.copy()
    sim.stock["water"] += 1
    changed["stock"] = sim
    sim = base.copy()
    sim.vehicles[0].busy_until += 30
    changed["a vehicle's return"] = sim
    sim = base.copy()
    sim.vehicles[-1].retired = not sim.vehicles[-1].retired
    changed["a vehicle standing down"] = sim
    sim = base.copy()
    sim.on_time[0]["food"] += 1
    changed["what a region received"] = sim
    sim = base.copy()
    sim.inject(WeatherEvent(region=sim.inst.regions[0].id, start=sim.now + 60, duration=30))
    changed["a disruption still to come"] = sim
    sim = base.copy()
    sim.inst = sim.inst.model_copy(update={"horizon": sim.inst.horizon + 60})
    changed["the instance"] = sim
    for what, sim in changed.items():
        assert state_key(sim) != key, what
    assert state_key(base, limit=0.2) != key  # the budget decides where the search stops
    assert len({state_key(sim) for sim in changed.values()}) == len(changed)


def test_the_key_names_the_code_and_solver_version(monkeypatch):
    sim = snapshot()
    key = state_key(sim)
    monkeypatch.setattr(adaptation, "_code_version", lambda: "another version")
    assert state_key(sim) != key


# ------------------------------------------------------------------------------ the cache
def test_a_cache_hit_gives_what_the_solve_gives_from_memory_and_from_disk(own_cache):
    sim = snapshot()
    solved = adaptive_reference(sim, cache=False)
    assert solved["statuses"] and set(solved["statuses"]) <= {"OPTIMAL", "FEASIBLE"}
    assert solved["resolves"] == len(solved["statuses"])
    first = adaptive_reference(sim)  # solved and stored
    assert first == solved
    path = cache_dir("realm/p7_adaptation") / f"{state_key(sim)}.json"
    assert json.loads(path.read_text()) == solved
    assert adaptive_reference(sim) == solved  # memory
    CACHE.clear_memory()
    assert adaptive_reference(sim) == solved  # disk


def test_a_damaged_cache_file_is_solved_again(own_cache):
    sim = snapshot()
    path = cache_dir("realm/p7_adaptation") / f"{state_key(sim)}.json"
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    assert adaptive_reference(sim) == adaptive_reference(sim, cache=False)
    assert json.loads(path.read_text())["value"] == adaptive_reference(sim, cache=False)["value"]


def test_json_cache_keeps_json_data_in_memory_and_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path / "one"))
    store = JsonCache("things", max_memory=2)
    assert store.get("a") is None
    store.put("a", {"x": (1, 2), "y": 1.5})
    assert store.get("a") == {"x": [1, 2], "y": 1.5}  # as a read from disk gives it
    assert json.loads((tmp_path / "one" / "things" / "a.json").read_text()) == {"x": [1, 2], "y": 1.5}
    store.clear_memory()
    assert store.get("a") == {"x": [1, 2], "y": 1.5}
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path / "two"))  # another folder: another cache
    assert store.get("a") is None
    store.put("b", 1)
    store.put("c", 2)
    store.put("d", 3)  # the memory table is bounded; the files stay
    assert [store.get(k) for k in "bcd"] == [1, 2, 3]
    assert not list((tmp_path / "two" / "things").glob("*.tmp"))
