"""A PettingZoo ``ParallelEnv`` over a multi-agent REALM env: one actor per agent, joint steps.

The single-agent env stays the only copy of the problem: a joint step runs the agents' moves
through its ``step()`` one after another, so masks, checks, dynamics, rewards, metrics and the
solution are the single env's own. What this module adds is the split of moves among agents
(:class:`~crab_gym.multiagent.binding.AgentBinding`) and the rules of a joint step:

1. **Order and conflicts.** Moves run in the fixed agent order (``possible_agents``). Each is
   checked against the state the moves before it left: a move that was legal when the step
   began but is refused now (two vehicles claiming one passenger: the first in agent order
   wins) *loses the conflict*: ``info["valid"] = False``, ``info["conflict"] = True`` and the
   env's reason. A move that was illegal from the start is invalid; both change nothing and
   cost the env's ``invalid_action_penalty``.
2. **Passing.** ``noop`` (local choice 0) is always legal, and a live agent left out of the
   joint action dict passes. A key that is not a live agent (a misspelt name) is a
   ``ValueError`` naming the live agents, and a joint action that is not a dict a
   ``TypeError``; neither changes anything. When every agent passes, the env's
   pass move runs (``joint_pass_call``: ``wait`` in P6/P9, ``next_day`` in P10, submitting the
   tours so far in P2); where the problem has none (the vehicles of P3-P5, P7, P8 move the
   clock themselves) the joint step changes nothing. If nobody has a legal move and there is
   no pass move, the episode is truncated.
3. **Reward.** Cooperative: every agent gets the sum of the single env's rewards over the
   step's moves, so an episode returns what the single env returns for the same moves.
   ``info["reward_share"]`` is the part of it earned by the agent's own move (a pass move's
   reward is split evenly); the shares add up to the reward.
4. **End.** All agents terminate together when the single env terminates; then every agent's
   ``info`` holds the env's ``metrics`` and ``solution`` (empty dicts before the end).
   ``max_cycles`` (None: no limit) truncates after that many joint steps.

Observations are full (REALM's agents share one world): each agent sees the single env's
observation without its flat mask, plus who it is -- ``agent_id`` (its index in
``possible_agents``), ``agent_role`` (which of the env's ``agent_arguments`` names it: car or
cook) and ``agent_row`` (its own row in the arrays of that role: its own state) -- and
``action_mask`` over its own local choices.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from pettingzoo import ParallelEnv

from crab_gym.core.keywords import did_you_mean
from crab_gym.multiagent.binding import NOOP, AgentBinding

#: The keys of every agent's info, at every step.
INFO_KEYS = ("valid", "conflict", "reason", "reward_share", "move", "metrics", "solution")


class RealmParallelEnv(ParallelEnv):
    """PettingZoo view of a multi-agent REALM env (see the module docstring for the rules).

    Args:
        env: a registered id (``"Realm-P3-v0"``) or a REALM env instance (wrappers are
            looked through).
        max_cycles: truncate every agent after this many joint steps (None: never).
        **kwargs: passed to ``gym.make`` with an id (``instance=``, ``render_mode=``, ...).
    """

    def __init__(self, env: str | gym.Env, *, max_cycles: int | None = None, **kwargs: Any) -> None:
        if isinstance(env, str):
            env_id = env
            base = gym.make(env, **kwargs).unwrapped
        else:
            if kwargs:
                raise TypeError(f"keyword arguments {sorted(kwargs)} apply only when env is an id")
            base = env.unwrapped
            env_id = base.spec.id if base.spec is not None else type(base).__name__
        self.env = base
        self.binding = AgentBinding.of(base)
        self.possible_agents: list[str] = list(self.binding.agents)
        self.agents: list[str] = []
        self.max_cycles = max_cycles
        self.render_mode = base.render_mode
        self.metadata = {
            "name": env_id,
            "render_modes": list(base.metadata.get("render_modes", [])),
            "is_parallelizable": True,
        }
        self._index = {a: k for k, a in enumerate(self.possible_agents)}
        self._state_spaces = {k: v for k, v in base.observation_space.spaces.items() if k != "action_mask"}
        self.state_space = gym.spaces.Dict(self._state_spaces)
        self._obs: dict[str, Any] = {}
        self._cycles = 0
        #: The tool calls the last joint step carried out, in order (the pass move included):
        #: played one by one in the single env, they give the same episode.
        self.last_joint_moves: list[dict[str, Any]] = []
        # One space object per agent (PettingZoo asks for the same object each time), kept on
        # the env itself: a functools.cache on the methods would keep every env alive.
        self._observation_spaces: dict[str, gym.spaces.Dict] = {}
        self._action_spaces: dict[str, gym.spaces.Discrete] = {}

    # ------------------------------------------------------------------ spaces
    def _agent(self, agent: str) -> int:
        """The index of ``agent``; an unknown name is a KeyError naming the agents."""
        try:
            return self._index[agent]
        except (KeyError, TypeError):
            raise KeyError(f"no agent {agent!r}{did_you_mean(str(agent), self.possible_agents)}; "
                           f"agents: {', '.join(self.possible_agents)}") from None

    def observation_space(self, agent: str) -> gym.spaces.Dict:
        if agent not in self._observation_spaces:
            k = self._agent(agent)
            self._observation_spaces[agent] = gym.spaces.Dict(
                {
                    **self._state_spaces,
                    "agent_id": gym.spaces.Discrete(len(self.possible_agents)),
                    "agent_role": gym.spaces.Discrete(len(self.env.agent_arguments)),
                    "agent_row": gym.spaces.Discrete(max(self.binding.rows) + 1),
                    "action_mask": gym.spaces.MultiBinary(int(self.binding.n_choices(k))),
                }
            )
        return self._observation_spaces[agent]

    def role(self, agent: str) -> tuple[str, int]:
        """``(role, row)``: the action argument that names ``agent`` (``"vehicle"``, ``"cook"``)
        and its row in the observation's arrays of that role (``("cook", 0)`` for ``mom``)."""
        k = self._index[agent]
        return self.env.agent_arguments[self.binding.roles[k]], self.binding.rows[k]

    def action_space(self, agent: str) -> gym.spaces.Discrete:
        if agent not in self._action_spaces:
            self._action_spaces[agent] = gym.spaces.Discrete(int(self.binding.n_choices(self._agent(agent))))
        return self._action_spaces[agent]

    def choices(self, agent: str) -> list[dict[str, Any] | None]:
        """Agent ``agent``'s local choices as tool calls (None for ``noop``), index by index."""
        k = self._index[agent]
        return [None] + [self.env.codec.flat_to_call(int(f)) for f in self.binding.own_flat[k]]

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        obs, _ = self.env.reset(seed=seed, options=options)
        self._obs = obs
        self._cycles = 0
        self.last_joint_moves = []
        self.agents = list(self.possible_agents)
        blank = {a: self._info(True, False, "", 0.0, None, {}, {}) for a in self.agents}
        return self._observations(), blank

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        if not self.agents:
            raise gym.error.ResetNeeded("every agent is done: call reset() before step()")
        self._check_joint_action(actions)
        start_mask = self.env.action_masks()
        live = list(self.agents)
        choice = {a: actions.get(a, NOOP) for a in live}
        infos: dict[str, dict[str, Any]] = {}
        self.last_joint_moves = []
        shares = dict.fromkeys(live, 0.0)
        ended, moved, metrics, solution = self._play_in_order(live, choice, start_mask, infos, shares)
        truncated = False
        if not moved and all(infos[a]["valid"] and infos[a]["move"] is None for a in live):
            ended, truncated, metrics, solution = self._pass(live, shares, infos)
        self._cycles += 1
        if self.max_cycles is not None and self._cycles >= self.max_cycles and not ended:
            truncated = True
        total = float(sum(shares.values()))
        for agent in live:
            infos[agent]["reward_share"] = float(shares[agent])
            infos[agent]["metrics"], infos[agent]["solution"] = metrics, solution
        observations = self._observations()
        rewards = dict.fromkeys(live, total)
        terminations = dict.fromkeys(live, ended)
        truncations = dict.fromkeys(live, truncated and not ended)
        if ended or truncated:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def _play_in_order(
        self,
        live: list[str],
        choice: dict[str, Any],
        start_mask: np.ndarray,
        infos: dict[str, dict[str, Any]],
        shares: dict[str, float],
    ) -> tuple[bool, bool, dict[str, Any], dict[str, Any]]:
        """Run the live agents' moves on the base env in agent order, filling ``infos`` and
        ``shares``; a move the start mask allowed but the base env refused lost a conflict.

        Returns (the episode ended, some agent moved, the end metrics, the end solution).
        """
        base = self.env
        metrics: dict[str, Any] = {}
        solution: dict[str, Any] = {}
        ended = False
        moved = False
        for agent in live:
            k = self._index[agent]
            space = self.action_space(agent)
            raw = choice[agent]
            if not _is_choice(raw, space):
                infos[agent] = self._invalid(agent, f"{raw!r} is not in {agent}'s action space {space}", shares)
                continue
            local = int(raw)
            if local == NOOP:
                infos[agent] = self._info(True, False, "", 0.0, None, {}, {})
                continue
            call = base.codec.flat_to_call(self.binding.flat_index(k, local))
            if ended:
                infos[agent] = self._info(False, False, "the episode ended earlier in this joint step", 0.0, call, {}, {})
                continue
            moved = True
            obs, reward, terminated, _, info = base.step(call)
            self._obs = obs
            shares[agent] += reward
            conflict = not info["valid"] and bool(start_mask[self.binding.flat_index(k, local)])
            reason = info["error"]
            if conflict:
                before = [a for a in live[: live.index(agent)] if choice[a] not in (NOOP, None)]
                reason = f"conflict lost to {', '.join(before)} (earlier in agent order): {reason}"
            infos[agent] = self._info(info["valid"], conflict, reason, 0.0, call, {}, {})
            if info["valid"]:
                self.last_joint_moves.append(call)
            if terminated:
                ended = True
                metrics, solution = info["metrics"], info["solution"]
        return ended, moved, metrics, solution

    def _check_joint_action(self, actions: Any) -> None:
        """A joint action is a dict keyed by live agents (a missing one passes): a misspelt key
        would silently be a pass, so it is an error naming the live agents; so is a non-dict."""
        if not isinstance(actions, Mapping):
            raise TypeError(f"step() takes a dict {{agent: action}} for the live agents ({', '.join(self.agents)}); "
                            f"an agent left out passes (noop = {NOOP}); got {type(actions).__name__} {actions!r:.80}")
        unknown = [a for a in actions if a not in self.agents]
        if unknown:
            hints = "".join(did_you_mean(str(a), self.agents) for a in unknown)
            raise ValueError(f"step() got action(s) for {', '.join(map(repr, unknown))}{hints}, which are not live "
                             f"agents; live agents: {', '.join(self.agents)} (nothing was done)")

    def _pass(self, live: list[str], shares: dict[str, float], infos: dict[str, dict]) -> tuple:
        """Every agent passed: run the env's pass move (split its reward evenly), or truncate
        when nobody can move and the problem has no pass move."""
        call = self.env.joint_pass_call()
        if call is None:
            stuck = not self.env.action_masks().any()
            return False, stuck, {}, {}
        obs, reward, terminated, _, info = self.env.step(call)
        self._obs = obs
        if info["valid"]:
            self.last_joint_moves.append(call)
        for agent in live:
            shares[agent] += reward / len(live)
            infos[agent]["move"] = {"joint_pass": call["name"]}
            if not info["valid"]:
                infos[agent]["valid"], infos[agent]["reason"] = False, info["error"]
        if terminated:
            return True, False, info["metrics"], info["solution"]
        return False, False, {}, {}

    def _invalid(self, agent: str, reason: str, shares: dict[str, float]) -> dict[str, Any]:
        """A choice outside the agent's space: nothing runs; it costs the env's penalty."""
        shares[agent] -= float(self.env.invalid_action_penalty)
        return self._info(False, False, reason, 0.0, None, {}, {})

    @staticmethod
    def _info(valid: bool, conflict: bool, reason: str, share: float, move: Any, metrics: dict, solution: dict) -> dict:
        return {
            "valid": valid,
            "conflict": conflict,
            "reason": reason,
            "reward_share": share,
            "move": move,
            "metrics": metrics,
            "solution": solution,
        }

    def _observations(self) -> dict[str, dict[str, Any]]:
        shared = {k: v for k, v in self._obs.items() if k != "action_mask"}
        flat_mask = self.env.action_masks()
        out = {}
        for agent in self.agents:
            k = self._index[agent]
            out[agent] = {
                **{key: np.array(value, copy=True) for key, value in shared.items()},
                "agent_id": k,
                "agent_role": self.binding.roles[k],
                "agent_row": self.binding.rows[k],
                "action_mask": self.binding.local_mask(k, flat_mask),
            }
        return out

    def state(self) -> dict[str, Any]:
        """The global state (the single env's observation without its mask), for centralised critics."""
        return {k: np.array(v, copy=True) for k, v in self._obs.items() if k != "action_mask"}

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()


def _is_choice(raw: Any, space: gym.spaces.Discrete) -> bool:
    """Whether ``raw`` is an element of ``space`` (an int, or a 0-d integer array; no bools)."""
    if isinstance(raw, (bool, np.bool_)):
        return False
    if isinstance(raw, np.ndarray):
        if raw.shape != () or not np.issubdtype(raw.dtype, np.integer):
            return False
        raw = raw.item()
    if not isinstance(raw, (int, np.integer)):
        return False
    return 0 <= int(raw) < space.n
