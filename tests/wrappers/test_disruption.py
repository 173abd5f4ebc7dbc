"""DisruptionWrapper on Realm-P4: sources, typed validation, effects, reporting, determinism."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pydantic import ValidationError

import crab_gym  # noqa: F401  (registers the ids)
from crab_gym.envs.realm.common.disruptions import InvalidDisruptionError
from crab_gym.envs.realm.ridesharing.disruptions import TrafficDelay
from crab_gym.envs.realm.ridesharing.formats import load_p4
from crab_gym.evaluation.episode_runner import finished_metrics
from crab_gym.wrappers.disruption import INFO_KEY, DisruptionWrapper, RandomDisruptions, disruption_targets

P4 = "Realm-P4-v0"
INSTANCE = "p4_small_01"


def _first_legal(env: gym.Env) -> dict:
    """A simple serving policy: the first legal flat choice (dispatches come before parks)."""
    base = env.unwrapped
    return base.codec.flat_to_call(int(np.flatnonzero(base.action_masks())[0]))


def _run(env: gym.Env, seed: int = 0, policy=_first_legal) -> list[tuple]:
    obs, info = env.reset(seed=seed)
    trace = [(obs, 0.0, info)]
    done = False
    while not done:
        obs, reward, terminated, truncated, info = env.step(policy(env))
        trace.append((obs, reward, info))
        done = terminated or truncated
    return trace


def _same_obs(a: dict, b: dict) -> bool:
    return set(a) == set(b) and all(np.array_equal(np.asarray(a[k]), np.asarray(b[k])) for k in a)


def _road(env: gym.Env, route: str) -> tuple[int, int]:
    a, b = route.split("-")
    index = env.unwrapped.instance.index
    return index[a], index[b]


# ---------------------------------------------------------------------- sources
def test_default_is_the_instances_own_schedule_unchanged():
    plain, wrapped = gym.make(P4), DisruptionWrapper(gym.make(P4))
    assert wrapped.disruptions == [] and wrapped.random is None
    t1, t2 = _run(plain), _run(wrapped)
    assert len(t1) == len(t2)
    for (o1, r1, i1), (o2, r2, i2) in zip(t1, t2):
        assert _same_obs(o1, o2) and r1 == r2
        assert i2[INFO_KEY] == []  # the wrapper injected nothing
        assert {k: v for k, v in i2.items() if k != INFO_KEY} == i1
    applied = [d for _, _, info in t2 for d in info["disruptions"]]
    assert len(applied) >= 1  # the instance's schedule did fire, reported by the env


def test_a_user_disruption_acts_exactly_like_one_in_the_instance_schedule():
    inst = load_p4(INSTANCE)
    extra = {"type": "traffic_delay", "route": "riverside-library", "start": 450, "duration": 120, "delay": 40}
    scheduled = inst.model_copy(
        update={"disruptions": sorted([*inst.disruptions, TrafficDelay(**{k: v for k, v in extra.items() if k != "type"})], key=lambda d: d.start)}
    )
    wrapped = DisruptionWrapper(gym.make(P4, instance=inst), [extra])
    reference = gym.make(P4, instance=scheduled)
    t1, t2 = _run(wrapped), _run(reference)
    assert len(t1) == len(t2) > 2
    for (o1, r1, i1), (o2, r2, i2) in zip(t1, t2):
        assert _same_obs(o1, o2)  # masks, travel times and disrupted roads alike
        assert r1 == r2
        assert i1["disruptions"] == i2["disruptions"] and i1["events"] == i2["events"]
    assert t1[-1][2]["metrics"] == t2[-1][2]["metrics"]  # costs and the adaptation metric
    reported = [(k, d) for k, (_, _, info) in enumerate(t1) for d in info[INFO_KEY]]
    assert len(reported) == 1
    step, d = reported[0]
    assert step > 0 and d["type"] == "traffic_delay" and d["route"] == "riverside-library"
    assert d["start"] + d["duration"] == 450 + 120  # applied late (the clock jumped), same end
    assert d in t1[step][2]["disruptions"]


def test_a_disruption_now_changes_travel_times_masks_and_info_at_reset():
    plain = gym.make(P4)
    o0, _ = plain.reset(seed=0)
    pickup = plain.unwrapped.instance.requests[0].pickup
    env = DisruptionWrapper(
        gym.make(P4),
        [
            {"type": "accident", "location": pickup, "duration": 600, "delay": 500},
            {"type": "traffic_delay", "route": "riverside-library", "duration": 60, "delay": 40},
        ],
    )
    obs, info = env.reset(seed=0)
    x = env.unwrapped.instance.index[pickup]
    others = [j for j in range(obs["travel_time"].shape[0]) if j != x]
    assert np.all(obs["travel_time"][x, others] == o0["travel_time"][x, others] + 500)
    assert obs["disrupted_roads"][x, others].all() and not o0["disrupted_roads"].any()
    a, b = _road(env, "riverside-library")
    assert obs["travel_time"][a, b] > o0["travel_time"][a, b]
    # the pickup can no longer be reached inside its window: its dispatches are masked
    codec = env.unwrapped.codec
    pick = [i for i in range(codec.n_flat) if codec.flat_to_call(i)["arguments"].get("stop") == "pickup:p1"]
    assert o0["action_mask"][pick].any() and not obs["action_mask"][pick].any()
    assert np.array_equal(obs["action_mask"].astype(bool), env.unwrapped.action_masks())
    # info reports both, with the reset minute as their start
    assert [d["type"] for d in info[INFO_KEY]] == ["accident", "traffic_delay"]
    assert all(d["start"] == env.unwrapped.instance.start_time for d in info[INFO_KEY])
    assert len(info["active_disruptions"]) == 2 and len(info["disruptions"]) == 2
    # costs: the same policy now leaves requests unserved, and the oracle's reference, which
    # faces the same disruptions, rises with it
    plain_env = gym.make(P4)  # the runner's metrics, as an evaluation reports them
    plain_metrics = finished_metrics(plain_env, _run(plain_env)[-1][2])
    metrics = finished_metrics(env, _run(env)[-1][2])
    assert metrics["served"] < plain_metrics["served"] == len(env.unwrapped.instance.requests)
    assert metrics["cost"] > plain_metrics["cost"]
    assert metrics["reference_cost"] > plain_metrics["reference_cost"]
    # the env's reference record is the one facing the injected schedule, not the shipped one
    reference = env.unwrapped.solved_reference()
    assert reference.value == metrics["reference_cost"] and reference.source != "shipped"
    assert reference.fingerprint.startswith(env.unwrapped.instance.fingerprint() + "-")


def test_a_later_disruption_stays_hidden_until_the_clock_reaches_it():
    plain = gym.make(P4)
    o0, _ = plain.reset(seed=0)
    start = plain.unwrapped.instance.start_time + 30
    env = DisruptionWrapper(
        gym.make(P4), [{"type": "road_closure", "route": "museum-park", "start": start, "duration": 300}]
    )
    obs, info = env.reset(seed=0)
    assert _same_obs(obs, o0)  # nothing visible yet
    assert info[INFO_KEY] == [] and not any("museum-park" in e for e in info["events"])
    assert len(env.episode_disruptions) == 1
    trace = _run(env)
    hits = [k for k, (_, _, i) in enumerate(trace) if i[INFO_KEY]]
    assert len(hits) == 1
    k = hits[0]
    assert trace[k][2]["clock"] >= start and trace[k - 1][2]["clock"] < start
    a, b = _road(env, "museum-park")
    assert trace[k][0]["disrupted_roads"][a, b] == 1 and trace[k - 1][0]["disrupted_roads"][a, b] == 0
    assert any("road_closure on museum-park" in e for e in trace[k][2]["events"])


# ---------------------------------------------------------------------- the random process
def test_random_process_is_deterministic_under_a_seed():
    def draws(wrapper_seed, reset_seeds):
        env = DisruptionWrapper(gym.make(P4), random=RandomDisruptions(rate=3.0), seed=wrapper_seed)
        out = []
        for s in reset_seeds:
            env.reset(seed=s)
            out.append([d.model_dump() for d in env.episode_disruptions])
        return out

    a = draws(7, [0, 1, None, None])
    assert a == draws(7, [0, 1, None, None])  # same seeds, same disruptions
    assert a[0] != a[1]  # each episode draws afresh
    assert draws(7, [0])[0] != draws(8, [0])[0]
    assert all(len(ep) >= 1 for ep in a)
    # and the whole episode replays identically
    t1 = _run(DisruptionWrapper(gym.make(P4), random={"rate": 3.0}, seed=7), seed=4)
    t2 = _run(DisruptionWrapper(gym.make(P4), random={"rate": 3.0}, seed=7), seed=4)
    assert len(t1) == len(t2)
    for (o1, r1, i1), (o2, r2, i2) in zip(t1, t2):
        assert _same_obs(o1, o2) and r1 == r2 and i1 == i2


def test_random_disruptions_follow_their_settings():
    base = gym.make(P4).unwrapped
    targets = disruption_targets(base)
    assert targets["window"] == (base.instance.start_time, base.instance.horizon)
    process = RandomDisruptions(rate=30.0, types=("traffic_delay", "accident"), delay=(5, 9), duration=(20, 25), max_count=50, step=5)
    items = process.draw(np.random.default_rng(0), targets)
    lo, hi = targets["window"]
    assert 10 <= len(items) <= 50
    assert {d["type"] for d in items} == {"traffic_delay", "accident"}
    assert all(5 <= d["delay"] <= 9 and 20 <= d["duration"] <= 25 for d in items)
    assert all(lo <= d["start"] <= hi and d["start"] % 5 == 0 for d in items)
    assert [d["start"] for d in items] == sorted(d["start"] for d in items)
    assert all(d["route"] in targets["routes"] for d in items if d["type"] == "traffic_delay")
    assert all(d["location"] in targets["locations"] for d in items if d["type"] == "accident")
    assert RandomDisruptions(rate=0).draw(np.random.default_rng(0), targets) == []
    closures = RandomDisruptions(rate=20, types=("road_closure",)).draw(np.random.default_rng(1), targets)
    assert closures and all("delay" not in d for d in closures)
    # the mean count follows the rate (Poisson): 2/hour over the window
    hours = (hi - lo) / 60
    counts = [len(RandomDisruptions(rate=2.0).draw(np.random.default_rng(s), targets)) for s in range(300)]
    assert abs(np.mean(counts) - 2.0 * hours) < 0.25 * 2.0 * hours


# ---------------------------------------------------------------------- typed errors
@pytest.mark.parametrize(
    "bad, message",
    [
        ({"type": "traffic_delay", "route": "museum-moon", "duration": 10, "delay": 5}, "unknown route"),
        ({"type": "accident", "location": "atlantis", "duration": 10}, "unknown location"),
        ({"type": "construction", "route": "museum-park", "duration": -5}, "duration"),
        ({"type": "traffic_delay", "route": "museum-park", "duration": 5, "delay": -1}, "delay"),
        ({"type": "meteor", "location": "park", "duration": 5}, "traffic_delay"),
    ],
)
def test_invalid_disruptions_get_clear_errors(bad, message):
    good = {"type": "construction", "route": "museum-park", "duration": 10}
    with pytest.raises(InvalidDisruptionError, match=message) as err:
        DisruptionWrapper(gym.make(P4), [good, bad])
    assert "disruptions[1]" in str(err.value)


def test_invalid_random_settings_and_envs_are_refused():
    with pytest.raises(ValidationError, match="delay"):
        RandomDisruptions(rate=1, delay=(10, 5))
    with pytest.raises(ValidationError):
        RandomDisruptions(rate=-1)
    with pytest.raises(InvalidDisruptionError, match="meteor"):
        DisruptionWrapper(gym.make(P4), random={"rate": 1, "types": ["meteor"]})
    with pytest.raises(TypeError, match="apply_disruption"):
        DisruptionWrapper(gym.make("Realm-P11-v0"))
    with pytest.raises(ValueError, match="schedule"):
        DisruptionWrapper(gym.make(P4), "none")
    with pytest.raises(ValueError, match="below"):
        DisruptionWrapper(gym.wrappers.TransformObservation(gym.make(P4), lambda o: o, None))


# ---------------------------------------------------------------------- contracts
@pytest.mark.parametrize(
    "kwargs",
    [{}, {"disruptions": [{"type": "accident", "location": "park", "duration": 90}]}, {"random": {"rate": 3.0}, "seed": 1}],
)
def test_check_env(kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(DisruptionWrapper(gym.make(P4).unwrapped, **kwargs), skip_render_check=True)


def test_info_keys_are_fixed_and_hold_no_wall_clock():
    env = DisruptionWrapper(gym.make(P4), random={"rate": 4.0}, seed=3)
    trace = _run(env, seed=0)
    keys = {frozenset(info) for _, _, info in trace}
    assert len(keys) == 1 and INFO_KEY in next(iter(keys))
    # same seed, same infos: nothing time-of-day dependent sneaks in
    assert [i for _, _, i in trace] == [i for _, _, i in _run(env, seed=0)]


def test_adaptation_metric_scores_the_replan():
    env = DisruptionWrapper(gym.make(P4), [{"type": "traffic_delay", "route": "riverside-library", "duration": 120, "delay": 30}])
    assert _run(env)[-1][2]["metrics"]["adaptation_pending"]  # no solver inside step()
    metrics = env.unwrapped.finish_metrics()
    assert 0.0 <= metrics["adaptation"] <= 1.0
    assert metrics["disruptions_applied"] >= 1
    assert metrics["adaptation_reference_cost"] is not None


def test_recorded_with_the_logger_and_replayed_from_the_spec(tmp_path):
    from crab_gym.wrappers.trajectory import TrajectoryLogger, read_trajectories, replay

    path = tmp_path / "p4.jsonl"
    env = TrajectoryLogger(DisruptionWrapper(gym.make(P4), random={"rate": 3.0}, seed=5), path, policy="first-legal")
    _run(env, seed=2)
    env.close()
    (episode,) = read_trajectories(path)
    assert episode.header["wrappers"] == ["DisruptionWrapper"]
    assert episode.header["env_spec"] is not None  # the wrapper's settings are in the spec
    assert replay(path).ok
