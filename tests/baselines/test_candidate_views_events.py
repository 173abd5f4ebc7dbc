"""The candidate views of P5/P8 (wedding), P6/P9 (thanksgiving) and P7 (disaster relief):
shapes, legality column, the flat order of the rows, finite values, masks within the legal ones."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import crab_gym  # noqa: F401
from crab_gym.baselines.candidate_views import get_view, view_for
from crab_gym.datasets.splits import select
from crab_gym.envs.realm.disaster_relief import features as relief
from crab_gym.envs.realm.thanksgiving import features as thanksgiving
from crab_gym.envs.realm.wedding import features as wedding
from crab_gym.wrappers.discrete import DiscreteActions

IDS = ("Realm-P5-v0", "Realm-P8-v0", "Realm-P6-v0", "Realm-P9-v0", "Realm-P7-v0")


def _env(env_id: str, instance: str) -> DiscreteActions:
    return DiscreteActions(gym.make(env_id, instance=instance))


@pytest.mark.parametrize("env_id", IDS)
def test_rows_on_every_dev_instance(env_id: str) -> None:
    """Shape, dtype, column 0 = the legal mask, finite, mask within legal: the first few
    observations of every dev instance (random legal moves between them)."""
    view = view_for(env_id)
    assert get_view(view.name) is view
    rng = np.random.default_rng(0)
    for case in select([env_id], split="dev"):
        env = DiscreteActions(gym.make(case.env_id, **case.kwargs))
        obs, _ = env.reset(seed=0)
        for _ in range(6):
            rows = view.features(obs)
            legal = np.asarray(obs["action_mask"], dtype=bool)
            assert rows.dtype == np.float32 and rows.shape == (env.action_space.n, view.n_features)
            assert np.isfinite(rows).all(), case.instance
            np.testing.assert_array_equal(rows[:, 0], legal.astype(np.float32))
            assert not (rows[~legal] != 0).any()
            mask = np.asarray(view.mask(obs), dtype=bool)
            assert mask.shape == legal.shape and not (mask & ~legal).any()
            obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(legal))))
            if terminated or truncated:
                break
        env.close()


def test_wedding_rows_follow_the_flat_order() -> None:
    env = _env("Realm-P5-v0", "p5_small_00")
    obs, _ = env.reset(seed=0)
    rows = wedding.wedding_features(obs)
    codec = env.unwrapped.codec
    names = wedding.FEATURE_NAMES
    travel = obs["travel_time"]
    off = ~np.eye(travel.shape[0], dtype=bool)
    unit = float(travel[off].mean())
    n_items = obs["item_status"].shape[0]
    stop_names = env.unwrapped.stop_names
    for i in range(env.action_space.n):
        call = codec.flat_to_call(i)
        row = dict(zip(names, rows[i]))
        if not obs["action_mask"][i]:
            continue
        kind = call["name"]
        v = env.unwrapped.vehicle_ids.index(call["arguments"]["vehicle"])
        assert row["is_wait"] == (kind == "wait") and row["is_finish"] == (kind == "finish")
        if kind == "drive":
            s = stop_names.index(call["arguments"]["stop"])
            assert row["is_drive_item"] == (s < n_items) and row["is_drive_venue"] == (s == n_items)
            place = obs["item_place"][s] if s < n_items else wedding.VENUE_PLACE
            expected = travel[obs["vehicle_place"][v], place] / unit / 8.0
            assert row["travel"] == pytest.approx(expected, rel=1e-5)
        assert row["vehicle_capacity"] == pytest.approx(obs["vehicle_capacity"][v] / obs["vehicle_capacity"].max())
    # the heuristic's pick for the first acting vehicle carries the greedy flag
    from crab_gym.envs.realm.wedding.heuristics import greedy_action

    call = greedy_action(env)
    assert call["name"] == "drive"
    assert rows[codec.call_to_flat(call), names.index("greedy")] == 1.0


def test_thanksgiving_rows_follow_the_flat_order() -> None:
    env = _env("Realm-P6-v0", "p6_small_00")
    obs, _ = env.reset(seed=0)
    rows = thanksgiving.thanksgiving_features(obs)
    codec = env.unwrapped.codec
    names = thanksgiving.FEATURE_NAMES
    inst = env.unwrapped.instance
    chain = thanksgiving.chain_lengths(obs["task_duration"].astype(float), obs["precedence"])
    unit = chain.max()
    for i in range(env.action_space.n):
        call = codec.flat_to_call(i)
        row = dict(zip(names, rows[i]))
        if not obs["action_mask"][i]:
            continue
        assert row["is_send"] == (call["name"] == "send_car")
        assert row["is_start"] == (call["name"] == "start_task")
        assert row["is_wait"] == (call["name"] == "wait")
        if call["name"] == "start_task":
            t = inst.task_ids.index(call["arguments"]["task"])
            assert row["duration"] == pytest.approx(obs["task_duration"][t] / unit, rel=1e-5)
            assert row["chain"] == pytest.approx(chain[t] / unit, rel=1e-5)
        if call["name"] == "send_car":
            m = list(inst.member_ids).index(call["arguments"]["member"])
            expected = np.clip((obs["member_landing"][m] - obs["clock"][0]) / unit, -4, 4) / 4
            assert row["landing_delay"] == pytest.approx(expected, rel=1e-5)


def test_chain_lengths() -> None:
    duration = np.array([10.0, 5.0, 7.0, 1.0])
    prec = np.zeros((4, 4), dtype=int)
    prec[0, 1] = prec[1, 3] = prec[2, 3] = 1
    np.testing.assert_allclose(thanksgiving.chain_lengths(duration, prec), [16.0, 6.0, 8.0, 1.0])


def test_relief_rows_follow_the_flat_order() -> None:
    env = _env("Realm-P7-v0", "p7_small_00")
    obs, _ = env.reset(seed=0)
    rows = relief.relief_features(obs)
    codec = env.unwrapped.codec
    names = relief.FEATURE_NAMES
    inst = env.unwrapped.instance
    resources = ("medical_supplies", "food", "water", "shelter")
    for i in range(env.action_space.n):
        call = codec.flat_to_call(i)
        row = dict(zip(names, rows[i]))
        if not obs["action_mask"][i]:
            continue
        v = inst.vehicle_ids.index(call["arguments"]["vehicle"])
        assert row["is_wait"] == (call["name"] == "wait")
        if call["name"] == "send":
            r = inst.region_ids.index(call["arguments"]["region"])
            k = resources.index(call["arguments"]["resource"])
            load = min(obs["remaining"][r, k], obs["vehicle_capacity"][v], obs["stock"][k])
            assert row["load_vs_capacity"] == pytest.approx(load / obs["vehicle_capacity"][v], rel=1e-5)
            assert row["travel"] == pytest.approx(obs["travel"][v, r] / obs["travel"].max(), rel=1e-5)
            assert row["on_time"] == float(obs["clock"][0] + obs["travel"][v, r] <= obs["deadline"][r])
    # the heuristic's send carries the greedy flag
    from crab_gym.envs.realm.disaster_relief.heuristics import greedy_action

    call = greedy_action(env)
    if call["name"] == "send":
        v = inst.vehicle_ids.index(call["arguments"]["vehicle"])
        r = inst.region_ids.index(call["arguments"]["region"])
        k = resources.index(call["arguments"]["resource"])
        R = len(inst.region_ids)
        assert rows[(v * R + r) * 4 + k, names.index("greedy")] == 1.0


def test_thanksgiving_greedy_flag_is_the_heuristics_move() -> None:
    """At the start of a P6 and a P9 instance the flagged row fetches a traveller landing when the
    one the heuristic fetches lands (by a car idle at the airport if there is one, where the heuristic takes the first
    idle car)."""
    from crab_gym.envs.realm.thanksgiving.heuristics import greedy_action

    names = thanksgiving.FEATURE_NAMES
    for env_id, instance in (("Realm-P6-v0", "p6_small_00"), ("Realm-P9-v0", "p9_medium_00")):
        env = _env(env_id, instance)
        obs, _ = env.reset(seed=0)
        rows = thanksgiving.thanksgiving_features(obs)
        flagged = np.flatnonzero(rows[:, names.index("greedy")] > 0)
        assert flagged.size == 1
        mine = env.unwrapped.codec.flat_to_call(int(flagged[0]))
        theirs = greedy_action(env)
        assert mine["name"] == theirs["name"] == "send_car"
        members = list(env.unwrapped.instance.member_ids)  # ties in landing: the heuristic goes by name
        landing = obs["member_landing"]
        assert landing[members.index(mine["arguments"]["member"])] == landing[members.index(theirs["arguments"]["member"])]
