"""A joint plan scores what the single-agent env gives the same plan, on every shipped instance.

Both directions:

* the single env's greedy heuristic plays an episode; its moves, grouped into joint steps
  (runs of moves by agents in increasing agent order; a move no agent owns is a joint step in
  which everyone passes), replayed in the parallel env give the same rewards, metrics and
  solution;
* a seeded random joint policy plays the parallel env (conflicts and passes included); the
  moves it carried out (``last_joint_moves``), played one by one in the single env, give the
  same return, metrics and solution.

Disruption ids score adaptation against the shipped oracle here (``adaptation_reference=
"oracle"``), so that hundreds of episodes run no solver; one instance per id keeps the default.
"""

from __future__ import annotations

import json
import math

import gymnasium as gym
import numpy as np
import pytest

import crab_gym
from crab_gym.baselines.registry import policies_for, policy_specs
from crab_gym.checks.contract import same
from crab_gym.datasets import list_instances
from crab_gym.envs.realm.index import problem_specs
from crab_gym.multiagent import NOOP, RealmParallelEnv

DISRUPTED = {spec.env_id for spec in problem_specs() if spec.disruptions}


def _problem(env_id: str) -> str:
    return env_id.split("-")[1]


def _kwargs(env_id: str, instance: str, resolve: bool = False) -> dict:
    kwargs = {"instance": instance}
    if env_id in DISRUPTED and not resolve:
        kwargs["adaptation_reference"] = "oracle"
    return kwargs


def _heuristic(env_id: str) -> str:
    return next(name for name in policies_for(env_id) if name not in ("random", "oracle", "do_nothing", "llm"))


def _single_episode(env_id: str, kwargs: dict, policy_name: str) -> tuple[list[int], list[float], dict, dict]:
    """(flat moves, rewards, metrics, solution) of one greedy episode in the single env."""
    env = gym.make(env_id, **kwargs)
    base = env.unwrapped
    flat_of = {json.dumps(base.codec.flat_to_call(i), sort_keys=True): i for i in range(base.codec.n_flat)}
    policy = policy_specs()[policy_name].factory(env)
    obs, info = env.reset(seed=0)
    flats, rewards = [], []
    for _ in range(10_000):
        obs, reward, terminated, truncated, info = env.step(policy(obs, info))
        assert info["valid"], info["error"]
        flats.append(flat_of[json.dumps(info["action"], sort_keys=True)])
        rewards.append(reward)
        if terminated or truncated:
            return flats, rewards, info["metrics"], info["solution"]
    raise AssertionError("the heuristic did not finish")


def _joint_steps(env: RealmParallelEnv, flats: list[int]) -> list[dict[str, int]]:
    """Group single-env moves into joint steps that replay them in the same order."""
    steps: list[dict[str, int]] = []
    current: dict[str, int] = {}
    last = -1
    for flat in flats:
        agent, local = env.binding.local_choice(flat)
        if agent < 0 or agent <= last:
            if current:
                steps.append(current)
            current, last = {}, -1
        if agent < 0:
            steps.append({})  # everyone passes: the env's pass move
            continue
        current[env.possible_agents[agent]] = local
        last = agent
    if current:
        steps.append(current)
    return steps


def _cases(resolve: bool = False) -> list:
    cases = []
    for env_id in crab_gym.multiagent_ids():
        names = list_instances(_problem(env_id))
        if resolve:
            names = names[:1] if env_id in DISRUPTED else []
        cases += [pytest.param(env_id, name, id=f"{_problem(env_id)}-{name}") for name in names]
    return cases


@pytest.mark.parametrize("env_id,instance", _cases())
def test_greedy_moves_score_the_same_as_joint_steps(env_id: str, instance: str) -> None:
    kwargs = _kwargs(env_id, instance)
    flats, rewards, metrics, solution = _single_episode(env_id, kwargs, _heuristic(env_id))
    env = RealmParallelEnv(env_id, **kwargs)
    env.reset(seed=0)
    total = 0.0
    steps = _joint_steps(env, flats)
    for joint in steps:
        agents = list(env.agents)
        _, joint_rewards, terms, _, infos = env.step({a: joint.get(a, NOOP) for a in agents})
        assert all(infos[a]["valid"] for a in agents), [infos[a]["reason"] for a in agents]
        total += joint_rewards[agents[0]]
    assert len(steps) <= len(flats)
    assert not env.agents and all(terms.values())
    assert math.isclose(total, sum(rewards), abs_tol=1e-9)
    for agent in terms:
        assert same(infos[agent]["metrics"], metrics), agent
        assert same(infos[agent]["solution"], solution), agent


def _random_joint_episode(env_id: str, kwargs: dict, seed: int) -> tuple[list[dict], float, int, dict, dict]:
    """A seeded random joint policy (masks respected, passes and conflicts allowed)."""
    env = RealmParallelEnv(env_id, **kwargs)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(seed)
    moves, total, conflicts = [], 0.0, 0
    for _ in range(5_000):
        actions = {}
        for agent in env.agents:
            legal = np.flatnonzero(obs[agent]["action_mask"])
            # pass now and then, else a legal move (several agents may claim the same thing)
            actions[agent] = NOOP if rng.random() < 0.2 else int(rng.choice(legal))
        agents = list(env.agents)
        obs, rewards, terms, truncs, infos = env.step(actions)
        moves += env.last_joint_moves
        total += rewards[agents[0]]
        conflicts += sum(infos[a]["conflict"] for a in agents)
        assert all(infos[a]["valid"] or infos[a]["conflict"] or "ended earlier" in infos[a]["reason"] for a in agents)
        if not env.agents:
            assert all(terms.values()), "the random joint episode was truncated"
            return moves, total, conflicts, infos[agents[0]]["metrics"], infos[agents[0]]["solution"]
    raise AssertionError("the random joint policy did not finish")


@pytest.mark.parametrize("env_id,instance", _cases())
def test_random_joint_plans_score_the_same_in_the_single_env(env_id: str, instance: str) -> None:
    kwargs = _kwargs(env_id, instance)
    moves, joint_total, conflicts, metrics, solution = _random_joint_episode(env_id, kwargs, seed=7)
    env = gym.make(env_id, **kwargs)
    env.reset(seed=0)
    total = 0.0
    for k, call in enumerate(moves):
        _, reward, terminated, _, info = env.step(call)
        assert info["valid"], (k, call, info["error"])
        total += reward
    assert terminated
    # a lost conflict costs the invalid-action penalty (and changes nothing): add it back
    penalty = env.unwrapped.invalid_action_penalty
    assert math.isclose(total, joint_total + penalty * conflicts, abs_tol=1e-9)
    assert same(info["metrics"], metrics)
    assert same(info["solution"], solution)


@pytest.mark.parametrize("env_id,instance", _cases(resolve=True))
def test_adaptation_against_a_resolve_is_the_same_too(env_id: str, instance: str) -> None:
    kwargs = _kwargs(env_id, instance, resolve=True)
    flats, rewards, metrics, _ = _single_episode(env_id, kwargs, _heuristic(env_id))
    env = RealmParallelEnv(env_id, **kwargs)
    env.reset(seed=0)
    for joint in _joint_steps(env, flats):
        _, _, _, _, infos = env.step({a: joint.get(a, NOOP) for a in env.agents})
    assert same(next(iter(infos.values()))["metrics"], metrics)
