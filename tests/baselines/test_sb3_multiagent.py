"""The agents of P3 parallel envs as an SB3 VecEnv: shapes, masks, auto-reset, team returns,
and a MaskablePPO smoke run."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("pettingzoo")
pytest.importorskip("sb3_contrib")

from crab_gym.baselines.sb3_multiagent import (  # noqa: E402
    AgentVecEnv,
    make_agent_vec_env,
    model_policy,
    play_copies,
    random_policy,
)

#: Two shipped small instances of different sizes: 4 requests (9 local choices per
#: vehicle + noop) and 5 requests (11 + noop).
INSTANCES = ("p3_small_01", "p3_small_02")


@pytest.fixture
def venv() -> AgentVecEnv:
    env = make_agent_vec_env("Realm-P3-v0", instances=INSTANCES, seed=3)
    yield env
    env.close()


def _random_legal(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(m)) for m in masks])


def test_shapes_and_slot_layout(venv: AgentVecEnv) -> None:
    obs = venv.reset()
    assert venv.num_envs == 4  # 2 copies x 2 vehicles
    assert venv.slots == [(0, "v1"), (0, "v2"), (1, "v1"), (1, "v2")]
    assert venv.action_space == gym.spaces.Discrete(12)  # noop + 10 stops + park
    assert obs.shape == (4, venv.observation_space.shape[0]) and obs.dtype == np.float32
    assert venv.action_masks().shape == (4, 12) and venv.action_masks().dtype == bool
    # a slot means the same move for every agent of every copy, sizes aside
    for slot in range(1, 12):
        calls = [venv.slot_call(i, slot) for i in range(4)]
        present = [c for c in calls if c is not None]
        assert len({(c["name"], c["arguments"].get("stop")) for c in present}) == 1
        assert [c["arguments"]["vehicle"] for c in present] == [venv.slots[i][1] for i, c in enumerate(calls) if c]
    park = venv.choice_slots.keys.index('["park", {}]')
    assert all(venv.slot_call(i, park)["name"] == "park" for i in range(4))
    # the smaller copy lacks request p5: its two slots are padding
    p5 = [k for k, key in enumerate(venv.choice_slots.keys) if "p5" in key]
    assert len(p5) == 2 and all(venv.slot_call(i, k) is None for i in (0, 1) for k in p5)
    assert all(venv.slot_call(i, k) is not None for i in (2, 3) for k in p5)


def test_masks_follow_the_parallel_env(venv: AgentVecEnv) -> None:
    venv.reset()
    rng = np.random.default_rng(0)
    p5 = [k for k, key in enumerate(venv.choice_slots.keys) if "p5" in key]
    busy_seen = False
    for _ in range(60):
        masks = venv.action_masks()
        assert masks[:, 0].all()  # noop is always legal
        assert not masks[:2][:, p5].any()  # padding never is
        for i, (c, agent) in enumerate(venv.slots):
            env = venv.envs[c]
            k = env.possible_agents.index(agent)
            local = env.binding.local_mask(k, env.env.action_masks()).astype(bool)
            legal_calls = [call for call, ok in zip(env.choices(agent), local) if ok]
            slot_calls = [venv.slot_call(i, s) for s in np.flatnonzero(masks[i])]
            assert sorted(map(repr, slot_calls)) == sorted(map(repr, legal_calls))
            if not env.state()["vehicle_acting"][k]:  # a busy or parked vehicle may only pass
                busy_seen = True
                assert np.flatnonzero(masks[i]).tolist() == [0]
        venv.step(_random_legal(masks, rng))
    assert busy_seen


def test_padding_slot_is_rejected_not_run(venv: AgentVecEnv) -> None:
    venv.reset()
    p5 = next(k for k, key in enumerate(venv.choice_slots.keys) if "p5" in key)
    _, rewards, _, infos = venv.step(np.array([p5, 0, 0, 0]))
    assert infos[0]["valid"] is False and infos[0]["move"] is None
    penalty = venv.envs[0].env.invalid_action_penalty
    assert rewards[0] == rewards[1] == pytest.approx(-penalty)


def test_auto_reset_and_team_return_equals_single_env(venv: AgentVecEnv) -> None:
    first = venv.reset()
    rng = np.random.default_rng(1)
    moves: list[dict] = []
    returns = np.zeros(venv.num_envs)
    for _ in range(500):
        masks = venv.action_masks()
        obs, rewards, dones, infos = venv.step(_random_legal(masks, rng))
        returns += rewards
        for i in (0, 1):  # copy 0's vehicles, in agent order (the order moves run)
            if infos[i]["move"] is not None:
                moves.append(infos[i]["move"])
        if dones[0]:
            break
    else:
        pytest.fail("copy 0 never finished an episode")
    assert dones[1]  # the copy's agents end together
    for i in (0, 1):
        assert set(infos[i]) >= {"terminal_observation", "episode", "TimeLimit.truncated", "metrics", "solution"}
        assert infos[i]["episode"]["r"] == pytest.approx(returns[i], abs=1e-5)
        assert infos[i]["TimeLimit.truncated"] is False
        assert infos[i]["terminal_observation"].shape == first[i].shape
    # auto-reset: the copy starts its instance again
    np.testing.assert_array_equal(obs[:2], first[:2])
    # the same moves in the single-agent env return what each vehicle was paid
    single = gym.make("Realm-P3-v0", instance=INSTANCES[0])
    single.reset(seed=3)
    total = 0.0
    for call in moves:
        _, reward, terminated, _, info = single.step(call)
        total += reward
    assert terminated
    assert returns[0] == returns[1] == pytest.approx(total, abs=1e-5)
    assert infos[0]["metrics"]["optimality"] == pytest.approx(info["metrics"]["optimality"])


def test_play_copies_and_random_policy() -> None:
    venv = make_agent_vec_env("Realm-P3-v0", instances=INSTANCES, seed=0)
    episodes = play_copies(venv, random_policy(0), episodes=2)
    assert [e.copy for e in episodes] == [0, 0, 1, 1]
    assert all(0.0 <= e.optimality <= 1.0 and e.length >= 1 for e in episodes)
    again = play_copies(make_agent_vec_env("Realm-P3-v0", instances=INSTANCES, seed=0), random_policy(0), episodes=2)
    assert [e.ret for e in again] == [e.ret for e in episodes]  # seeded: replays exactly


def test_maskable_ppo_learns_without_illegal_moves() -> None:
    from sb3_contrib import MaskablePPO

    from crab_gym.baselines.sb3 import quiet_logger

    venv = make_agent_vec_env("Realm-P3-v0", instances=INSTANCES, seed=0, max_cycles=30)
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.set_logger(quiet_logger())
    model.learn(total_timesteps=256)
    assert model.num_timesteps >= 256
    invalid = []
    policy = model_policy(model)

    def watch(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        actions = policy(obs, masks)
        invalid.extend(not masks[i, a] for i, a in enumerate(actions))
        return actions

    episodes = play_copies(venv, watch, episodes=1)
    assert len(episodes) == 2 and not any(invalid)
