"""DiscreteActions: the codec's flat index as one Discrete space, masks, MaskablePPO."""

from __future__ import annotations

import warnings
from typing import Annotated

import gymnasium as gym
import networkx as nx
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pydantic import Field

import crab_gym  # noqa: F401  (registers the ids)
from crab_gym.core import action, evaluator
from crab_gym.envs.base import CrabEnv
from crab_gym.envs.realm.jobshop.heuristics import SPT, run_rule
from crab_gym.envs.registration import realm_ids
from crab_gym.evaluation.episode_runner import finished_metrics
from crab_gym.wrappers.discrete import DiscreteActions
from tests.core.toy_env import LampsEnv

REALM_FINITE = ["Realm-P11-v0", "Realm-P1-v0"]
REALM_ALL = realm_ids()


def _check(env: gym.Env) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env, skip_render_check=True)


# ---------------------------------------------------------------------- the flat space
def test_flat_index_is_the_codecs():
    env = DiscreteActions(LampsEnv())
    assert env.action_space == gym.spaces.Discrete(5)
    assert env.excluded_actions == []
    assert [env.flat_to_call(i) for i in range(5)] == [
        {"name": "switch_on", "arguments": {"lamp": k}} for k in range(4)
    ] + [{"name": "switch_all_off", "arguments": {}}]
    assert env.action_names()[2] == "switch_on(lamp=2)"
    for i in range(5):
        assert env.call_to_flat(env.flat_to_call(i)) == i


def test_step_by_index_equals_step_by_tool_call():
    flat, plain = DiscreteActions(LampsEnv()), LampsEnv()
    o1, _ = flat.reset(seed=4)
    o2, _ = plain.reset(seed=4)
    rng = np.random.default_rng(1)
    for _ in range(12):
        i = int(rng.integers(5))
        r1 = flat.step(np.int64(i))
        r2 = plain.step(flat.flat_to_call(i))
        assert np.array_equal(r1[0]["lit"], r2[0]["lit"])
        assert r1[1:4] == r2[1:4] and r1[4] == r2[4]
        if r1[2]:
            break


def test_masks_are_the_envs_and_masked_moves_change_nothing():
    env = DiscreteActions(LampsEnv(invalid_action_penalty=0.5))
    obs, _ = env.reset(seed=0)
    lit = int(np.flatnonzero(obs["lit"])[0])
    mask = env.action_masks()
    assert mask.dtype == bool and mask.shape == (5,)
    assert np.array_equal(mask, env.unwrapped.action_masks()) and not mask[lit] and mask[4]
    obs2, reward, terminated, truncated, info = env.step(lit)
    assert reward == -0.5 and info["valid"] is False and "already on" in info["error"]
    assert np.array_equal(obs2["lit"], obs["lit"]) and not terminated and not truncated


@pytest.mark.parametrize("bad", [5, -1, 2.5, "1", None, np.array([1, 2])])
def test_out_of_range_or_malformed_index_is_rejected_not_raised(bad):
    env = DiscreteActions(LampsEnv(invalid_action_penalty=1.0))
    obs, _ = env.reset(seed=0)
    obs2, reward, terminated, truncated, info = env.step(bad)
    assert reward == -1.0 and info["valid"] is False
    assert "Discrete(5)" in info["error"]
    assert np.array_equal(obs2["lit"], obs["lit"])


def test_tool_calls_pass_through():
    env = DiscreteActions(LampsEnv())
    obs, _ = env.reset(seed=0)
    off = int(np.flatnonzero(obs["lit"] == 0)[0])
    *_, info = env.step({"name": "switch_on", "arguments": {"lamp": off}})
    assert info["valid"] and info["action"] == {"name": "switch_on", "arguments": {"lamp": off}}


@pytest.mark.parametrize("env_id", REALM_ALL)
def test_check_env_on_realm(env_id):
    base = gym.make(env_id).unwrapped
    env = DiscreteActions(base)
    assert env.action_space.n == base.codec.n_flat
    assert env.excluded_actions == ["submit_plan"]  # a whole plan has no flat index
    _check(env)


def test_check_env_on_the_toy_and_over_disruptions():
    from crab_gym.wrappers.disruption import DisruptionWrapper

    _check(DiscreteActions(LampsEnv()))
    _check(DiscreteActions(DisruptionWrapper(gym.make("Realm-P4-v0").unwrapped, random={"rate": 3.0}, seed=0)))


def test_p11_flat_episode_matches_the_dispatching_rule():
    reference = run_rule(gym.make("Realm-P11-v0"), SPT, seed=0)
    env = DiscreteActions(gym.make("Realm-P11-v0"))
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        job = SPT.select(obs, env.action_masks())
        assert env.flat_to_call(job) == {"name": "dispatch", "arguments": {"job": job}}
        obs, _, te, tr, info = env.step(job)
        done = te or tr
    assert te and not tr
    assert info["metrics"]["makespan"] == reference["metrics"]["makespan"]
    assert not env.unwrapped.action_masks().any() and env.action_masks().all()  # never all-False


def test_p1_masked_visits_are_refused_and_legal_ones_run():
    env = DiscreteActions(gym.make("Realm-P1-v0"))
    obs, _ = env.reset(seed=0)
    assert env.action_names()[-1] == f"visit(location={env.unwrapped.instance.end!r})"
    mask = env.action_masks()
    assert np.array_equal(mask, obs["action_mask"].astype(bool))
    for i in np.flatnonzero(~mask):
        obs2, _, _, _, info = env.step(int(i))
        assert info["valid"] is False
        assert obs2["location"] == obs["location"] and np.array_equal(obs2["visited"], obs["visited"])
    legal = int(np.flatnonzero(mask)[0])
    *_, info = env.step(legal)
    assert info["valid"] and info["action"] == env.flat_to_call(legal)


# ---------------------------------------------------------------------- edge cases
@action
def step_on(tile: Annotated[int, Field(ge=0, le=1)], env) -> None:
    """Step on a tile.

    Args:
        tile: which tile.
    """
    env.used[tile] = True


@action
def submit_word(word: str, env) -> None:
    """Finish by submitting a word (free text: not finite).

    Args:
        word: any word.
    """
    env.word = word


@evaluator(name="word_submitted")
def _word_submitted(env) -> bool:
    return env.word is not None


class TilesThenWord(CrabEnv):
    """Two tiles to step on, then only a free-text action can finish."""

    def __init__(self, finite: bool = True):
        super().__init__([step_on, submit_word] if finite else [submit_word])
        self.observation_space = gym.spaces.Dict({"used": gym.spaces.MultiBinary(2)})
        self.used = np.zeros(2, dtype=bool)
        self.word = None

    def _reset_state(self, options):
        self.used = np.zeros(2, dtype=bool)
        self.word = None

    def _build_graph(self):
        g = nx.DiGraph()
        g.add_node(_word_submitted)
        return g

    def _get_obs(self):
        return {"used": self.used.astype(np.int8)}

    def _check_action(self, name, args):
        if name == "step_on" and self.used[args["tile"]]:
            return "already stepped on"
        return None

    def _action_mask(self):
        return ~self.used

    def _is_terminated(self):
        return self.word is not None

    def render(self):
        return None


def test_stuck_without_a_finite_move_truncates():
    env = DiscreteActions(TilesThenWord())
    assert env.excluded_actions == ["submit_word"] and env.action_space.n == 2
    env.reset(seed=0)
    *_, terminated, truncated, _ = env.step(0)
    assert not terminated and not truncated
    *_, terminated, truncated, _ = env.step(1)
    assert not terminated and truncated  # only submit_word could go on
    assert env.action_masks().all()  # never all-False: MaskablePPO would produce NaNs
    keep = DiscreteActions(TilesThenWord(), truncate_when_stuck=False)
    keep.reset(seed=0)
    keep.step(0)
    assert keep.step(1)[3] is False


def test_env_without_finite_actions_is_refused():
    with pytest.raises(ValueError, match="no action whose parameters are all finite"):
        DiscreteActions(TilesThenWord(finite=False))
    with pytest.raises(TypeError, match="CrabEnv"):
        DiscreteActions(gym.make("CartPole-v1"))


# ---------------------------------------------------------------------- MaskablePPO
PPO_TINY = {"n_steps": 64, "batch_size": 64, "n_epochs": 2, "policy_kwargs": {"net_arch": [32]}}


@pytest.fixture(scope="module")
def sb3():
    pytest.importorskip("sb3_contrib")
    import torch

    torch.set_num_threads(1)
    from crab_gym.baselines import sb3 as helpers

    return helpers


@pytest.mark.parametrize("env_id", REALM_FINITE)
def test_maskable_ppo_trains_and_evaluates_with_masks(sb3, env_id):
    model = sb3.train_maskable_ppo(env_id, 128, n_envs=1, seed=0, ppo_kwargs=PPO_TINY)
    assert model.num_timesteps >= 128
    result = sb3.evaluate_masked(model, env_id, episodes=2, seed=0)
    assert len(result.episodes) == 2
    for ep in result.episodes:
        assert ep["invalid"] == 0  # the masks kept every move legal
        assert ep["terminated"] and ep["metrics"]  # the episode ran to its end
        assert 0.0 <= ep["metrics"]["optimality"] <= 1.0
    if env_id == "Realm-P11-v0":
        makespans = [ep["metrics"]["makespan"] for ep in result.episodes]
        assert all(m >= 55 for m in makespans)  # ft06's optimum is 55
        assert all(ep["steps"] == 36 for ep in result.episodes)
    # the same model as a tool-call policy on the plain env agrees with the flat evaluation
    env = gym.make(env_id)
    policy = sb3.MaskablePPOPolicy(model, env)
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        obs, _, te, tr, info = env.step(policy(obs, info))
        assert info["valid"]
        done = te or tr
    assert info["metrics"]["optimality"] == pytest.approx(result.episodes[0]["metrics"]["optimality"])


def test_maskable_ppo_under_subproc_vec_env(sb3):
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    vec = sb3.make_masked_vec_env("Realm-P11-v0", 2, subproc=True, seed=3)
    try:
        assert is_masking_supported(vec)  # action_masks() is called inside each worker
        vec.reset()
        masks = get_action_masks(vec)
        assert masks.shape == (2, 6) and masks.all()
        for _ in range(6):  # job 0 has six operations: then it is masked in both workers
            vec.step(np.array([0, 0]))
        masks = get_action_masks(vec)
        assert not masks[:, 0].any() and masks[:, 1:].all()
        model = sb3.train_maskable_ppo("Realm-P11-v0", 128, vec_env=vec, seed=0, ppo_kwargs=PPO_TINY)
    finally:
        vec.close()
    assert model.num_timesteps >= 128
    result = sb3.evaluate_masked(model, "Realm-P11-v0", episodes=1)
    assert result.episodes[0]["invalid"] == 0 and result.episodes[0]["metrics"]["makespan"] >= 55
    assert result.mean_metrics["makespan"] == result.episodes[0]["metrics"]["makespan"]


def test_maskable_ppo_with_random_disruptions(sb3):
    import functools

    from crab_gym.wrappers.disruption import DisruptionWrapper

    shaken = functools.partial(DisruptionWrapper, random={"rate": 3.0}, seed=0)  # picklable
    model = sb3.train_maskable_ppo("Realm-P4-v0", 128, wrappers=[shaken], seed=0, ppo_kwargs=PPO_TINY)
    result = sb3.evaluate_masked(model, "Realm-P4-v0", wrappers=[shaken], episodes=2)
    for ep in result.episodes:
        assert ep["invalid"] == 0 and ep["terminated"]
        assert 0.0 <= ep["metrics"]["adaptation"] <= 1.0
    # P4's observation has a 2-D MultiDiscrete, reshaped for SB3; the tool-call policy on the
    # plain (disrupted) env reshapes it the same way and plays the same episode
    env = shaken(gym.make("Realm-P4-v0"))
    policy = sb3.MaskablePPOPolicy(model, env)
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        obs, _, te, tr, info = env.step(policy(obs, info))
        assert info["valid"]
        done = te or tr
    assert finished_metrics(env, info)["cost"] == result.episodes[0]["metrics"]["cost"]
