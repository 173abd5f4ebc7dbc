"""The joint-action contract of a multi-agent REALM view, as a test users can run.

The counterpart of :mod:`crab_gym.checks.contract` for :class:`~crab_gym.multiagent.RealmParallelEnv`:
:func:`check_joint_contract` plays many joint steps mixing legal moves, passes, masked moves,
deliberate conflicts and elements outside an agent's action space, and checks:

* no exception escapes ``reset()`` or ``step()``;
* the returned dicts name exactly the agents that were live; observations lie in their spaces;
  every info has the keys of :data:`~crab_gym.multiagent.parallel.INFO_KEYS`;
* the reward is shared (one value for every agent) and the agents' ``reward_share`` add up to it;
* a joint step in which no move is carried out leaves the env's state unchanged;
* at the end, every agent's info holds the same, non-empty ``metrics`` and ``solution``;
* two runs with the same seed and choices are identical.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from crab_gym.checks.contract import ContractReport, same, state_snapshot
from crab_gym.multiagent.binding import NOOP
from crab_gym.multiagent.parallel import INFO_KEYS, RealmParallelEnv

#: Elements that are never in a ``Discrete`` agent space (besides ``n`` itself).
_OUTSIDE = (-1, 1.5, "noop", True, None)


@dataclass
class JointContractReport(ContractReport):
    """What one :func:`check_joint_contract` run did and found (``steps``: joint steps;
    ``legal_steps``: moves carried out)."""

    conflicts: int = 0
    passes: int = 0


def check_joint_contract(
    env_id: str, *, steps: int = 300, seed: int = 0, make_kwargs: Mapping[str, Any] | None = None
) -> JointContractReport:
    """Fuzz ``parallel_env(env_id)`` for ``steps`` joint steps (twice, to check determinism)."""
    report = JointContractReport(env_id)
    first: list[Any] = []
    _play(env_id, dict(make_kwargs or {}), report, steps=steps, seed=seed, record=first)
    second: list[Any] = []
    _play(env_id, dict(make_kwargs or {}), JointContractReport(env_id), steps=steps, seed=seed, record=second)
    if not same(first, second):
        step = next((k for k, (a, b) in enumerate(zip(first, second)) if not same(a, b)), min(len(first), len(second)))
        report.fail(f"two runs with seed {seed} differ at joint step {step}")
    return report


def _play(env_id: str, kwargs: dict[str, Any], report: JointContractReport, *, steps: int, seed: int,
          record: list[Any]) -> None:
    env = RealmParallelEnv(env_id, **kwargs)
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    report.episodes = 1
    for t in range(steps):
        if not env.agents:
            obs, _ = env.reset(seed=seed + report.episodes)
            report.episodes += 1
        live = list(env.agents)
        actions = {a: _draw(env, a, obs[a]["action_mask"], rng, report) for a in live}
        before = state_snapshot(env.env)
        try:
            obs, rewards, terms, truncs, infos = env.step(actions)
        except Exception as exc:  # noqa: BLE001 - the contract is that nothing escapes
            report.exceptions += 1
            report.fail(f"step {t}: {type(exc).__name__}: {exc}")
            obs, _ = env.reset(seed=seed + report.episodes)
            report.episodes += 1
            continue
        report.steps += 1
        record.append((actions, obs, rewards, terms, truncs, infos))
        _check_step(env, t, live, before, (obs, rewards, terms, truncs, infos), report)


def _draw(env: RealmParallelEnv, agent: str, mask: np.ndarray, rng: np.random.Generator,
          report: JointContractReport) -> Any:
    """A legal move (often the same one as another agent's: conflicts), a pass, a masked move,
    or an element outside the agent's space."""
    n = env.action_space(agent).n
    legal = np.flatnonzero(mask[1:]) + 1
    illegal = np.flatnonzero(mask[1:] == 0) + 1
    roll = rng.random()
    if roll < 0.6 and len(legal):
        return int(rng.choice(legal))
    if roll < 0.75:
        return NOOP
    if roll < 0.88 and len(illegal):
        report.invalid_tried += 1
        return int(rng.choice(illegal))
    if roll < 0.95:
        report.out_of_space_tried += 1
        return [n, *_OUTSIDE][int(rng.integers(len(_OUTSIDE) + 1))]
    return NOOP


def _check_step(env: RealmParallelEnv, t: int, live: list[str], before: Any, result: tuple,
                report: JointContractReport) -> None:
    obs, rewards, terms, truncs, infos = result
    for name, part in zip(("observations", "rewards", "terminations", "truncations", "infos"), result):
        if set(part) != set(live):
            report.fail(f"step {t}: {name} name {sorted(part)}, live agents were {live}")
            return
    for agent in live:
        if not env.observation_space(agent).contains(obs[agent]):
            report.fail(f"step {t}: {agent}'s observation is outside its observation space")
        if tuple(infos[agent]) != INFO_KEYS:
            report.fail(f"step {t}: {agent}'s info keys {tuple(infos[agent])} != {INFO_KEYS}")
            return
    values = set(rewards.values())
    if len(values) != 1:
        report.fail(f"step {t}: the reward is not shared: {rewards}")
    total = next(iter(values))
    if not math.isfinite(total) or abs(sum(i["reward_share"] for i in infos.values()) - total) > 1e-9:
        report.fail(f"step {t}: reward shares {[i['reward_share'] for i in infos.values()]} do not add up to {total}")
    moved = [a for a in live if infos[a]["valid"] and infos[a]["move"] is not None]
    report.legal_steps += len(moved)
    report.conflicts += sum(bool(infos[a]["conflict"]) for a in live)
    report.passes += any(isinstance(infos[a]["move"], dict) and "joint_pass" in infos[a]["move"] for a in live)
    if not moved and not same(before, state_snapshot(env.env)):
        report.fail(f"step {t}: no move was carried out, but the env's state changed")
    if any(terms.values()):
        first = infos[live[0]]
        if not first["metrics"] or not first["solution"]:
            report.fail(f"step {t}: the episode ended without metrics or solution")
        if any(not same(infos[a]["metrics"], first["metrics"]) for a in live):
            report.fail(f"step {t}: agents got different metrics at the end")
