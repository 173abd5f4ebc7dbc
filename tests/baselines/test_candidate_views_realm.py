"""Candidate views of P1, P2, P3/P4 and P10 (issue 35): rows in flat-action order, column 0 the
env's legal mask, finite values on every dev instance, the view's mask within the legal one."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import crab_gym  # noqa: F401
from crab_gym.baselines.candidate_views import view_for
from crab_gym.datasets.splits import select
from crab_gym.envs.realm.campus_tour.features import stop_locations
from crab_gym.envs.realm.group_tours.features import earliest_starts
from crab_gym.envs.realm.supply_chain.features import LEVELS
from crab_gym.wrappers.discrete import DiscreteActions

IDS = ("Realm-P1-v0", "Realm-P2-v0", "Realm-P3-v0", "Realm-P4-v0", "Realm-P10-v0")


def _check(view, env: DiscreteActions, obs: dict) -> np.ndarray:
    rows = view.features(obs)
    legal = np.asarray(env.unwrapped.action_masks(), dtype=bool)
    assert rows.shape == (env.action_space.n, view.n_features)
    assert rows.dtype == np.float32
    assert np.isfinite(rows).all()
    assert np.array_equal(rows[:, 0], legal.astype(np.float32))
    mask = np.asarray(view.mask(obs), dtype=bool)
    assert mask.shape == legal.shape and not (mask & ~legal).any()
    assert mask.any() or not legal.any()
    return mask


@pytest.mark.parametrize("env_id", IDS)
def test_rows_on_every_dev_instance(env_id: str) -> None:
    """The first observations of every dev instance (reset, then a few steps inside the view's
    mask) give finite rows whose column 0 is the legal mask."""
    view = view_for(env_id)
    rng = np.random.default_rng(0)
    for case in select([env_id], split="dev"):
        env = DiscreteActions(gym.make(case.env_id, **case.kwargs))
        obs, _ = env.reset(seed=0)
        for _ in range(6):
            mask = _check(view, env, obs)
            if not mask.any():
                break
            obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
            if terminated or truncated:
                break
        env.close()


def _env(env_id: str, instance: str) -> DiscreteActions:
    env = DiscreteActions(gym.make(env_id, instance=instance))
    return env


def test_campus_rows_follow_the_visits() -> None:
    env = _env("Realm-P1-v0", "p1_small_00")
    obs, _ = env.reset(seed=0)
    inst = env.unwrapped.instance
    stops, start, end = stop_locations(inst.n, env.action_space.n)
    assert (start, end) == (inst.index[inst.start], inst.index[inst.end])
    for k in range(env.action_space.n):
        assert inst.locations[stops[k]] == env.flat_to_call(k)["arguments"]["location"]
    rows = view_for("Realm-P1-v0").features(obs)
    travel = np.asarray(inst.travel, dtype=float)
    scale = travel[travel > 0].mean()
    k = 2
    j = inst.index[inst.targets[k]]
    assert rows[k, 2] == pytest.approx(min(travel[start, j] / scale, 8.0) / 8.0, rel=1e-5)
    assert rows[-1, 1] == 1.0 and rows[:-1, 1].sum() == 0
    assert not view_for("Realm-P1-v0").mask(obs)[-1]  # end waits while a target is legal


def test_group_rows_follow_the_assignments() -> None:
    env = _env("Realm-P2-v0", "p2_small_00")
    obs, _ = env.reset(seed=0)
    for _ in range(3):  # some tours on the guides' calendars
        obs, *_ = env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
    sched = env.unwrapped.schedule
    G, K = sched.G, sched.K
    s = earliest_starts(obs)
    for g in range(G):
        for k in range(K):
            want = sched.earliest(g, k)
            assert (np.isnan(s[g, k]) and want is None) or s[g, k] == want
    rows = view_for("Realm-P2-v0").features(obs)
    D = float(obs["tour_duration"][0])
    inst = env.unwrapped.instance
    for i in np.flatnonzero(env.unwrapped.action_masks())[:5]:
        call = env.flat_to_call(int(i))["arguments"]
        g, k = inst.group_ids.index(call["group"]), inst.guide_ids.index(call["guide"])
        assert i == g * K + k
        wait = max(0.0, sched.earliest(g, k) - inst.groups[g].preferred) / D
        assert rows[i, 1] == pytest.approx(min(wait, 8.0) / 8.0, rel=1e-5)


@pytest.mark.parametrize("env_id,instance", [("Realm-P3-v0", "p3_small_01"), ("Realm-P4-v0", "p4_small_01")])
def test_ride_rows_follow_dispatch_then_park(env_id: str, instance: str) -> None:
    env = _env(env_id, instance)
    obs, _ = env.reset(seed=0)
    rows = view_for(env_id).features(obs)
    base = env.unwrapped
    sim = base.sim
    places = np.asarray(obs["request_places"]).reshape(-1)
    travel = np.asarray(obs["travel_time"], dtype=float)
    trips = travel[np.ix_(places, places)]
    scale = trips[trips > 0].mean()
    for i in range(env.action_space.n):
        call = env.flat_to_call(i)
        v = base.vehicle_ids.index(call["arguments"]["vehicle"])
        if call["name"] == "park":
            assert rows[i, 1] == 1.0
            continue
        stop = base.stop_names.index(call["arguments"]["stop"])
        assert rows[i, 2] == float(call["arguments"]["stop"].startswith("pickup:"))
        assert rows[i, 3] == float(call["arguments"]["stop"].startswith("dropoff:"))
        if rows[i, 0]:
            arrive, _ = sim.timing(v, stop)
            drive = (arrive - sim.vehicles[v].free) / scale
            assert rows[i, 4] == pytest.approx(np.clip(drive, -8, 8) / 8, abs=1e-5)


def test_supply_rows_follow_order_produce_next_day() -> None:
    from crab_gym.envs.realm.supply_chain.env import LEVELS as ENV_LEVELS

    assert tuple(LEVELS) == tuple(ENV_LEVELS)
    env = _env("Realm-P10-v0", "p10_small_00")
    obs, _ = env.reset(seed=0)
    rows = view_for("Realm-P10-v0").features(obs)
    for i in range(env.action_space.n):
        call = env.flat_to_call(i)
        kind = ("order", "produce", "next_day").index(call["name"])
        assert rows[i, 1 + kind] == 1.0 and rows[i, 1:4].sum() == 1.0
        if kind < 2:
            q = call["arguments"]["quantity"]
            assert rows[i, 4] == pytest.approx(np.log10(q) / np.log10(500), abs=1e-6)
        if kind == 1:
            facility = ("assembly", "testing", "packaging").index(call["arguments"]["facility"])
            assert rows[i, 15 + facility] == 1.0
    mask = view_for("Realm-P10-v0").mask(obs)
    n_order = len(obs["action_mask"]) - 19
    assert mask[n_order:n_order + 18].reshape(3, 6).sum(axis=1).max() <= 1  # one level per stage
