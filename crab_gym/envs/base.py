"""CrabEnv: the Gymnasium base class of every env in the suite.

It owns what every env must do the same way, so that each problem only writes its state:

* the action space derived from the env's :class:`~crab_gym.core.action.Action` objects, and
  ``step`` accepting either a space element (RL) or a tool call dict (LLM agents);
* validation: an invalid action (malformed, out of range, masked) leaves the state unchanged
  and says why in ``info`` -- never an exception, never silent corruption;
* reward = ``progress_weight`` x rise of the evaluator graph's completeness, plus at the end
  ``optimality_weight`` x the optimality ratio (defaults 0.5/0.5: a return in [0, 1]); where
  the ratio waits for a solve kept out of ``step()``, :meth:`CrabEnv.deferred_reward` gives
  the rest of the return after the episode;
* ``info`` with a fixed key set and no wall-clock values.
"""

from __future__ import annotations

import enum
from abc import ABCMeta, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import gymnasium as gym
import networkx as nx
import numpy as np

from crab_gym.core.action import Action, ActionArgumentError
from crab_gym.core.graph import GraphEvaluator
from crab_gym.core.spaces import ActionCodec, split_tool_call

#: Keys present in every ``info`` dict a CrabEnv returns (plus the subclass's extra keys).
INFO_KEYS = ("action", "valid", "error", "completeness", "sub_goals_passed", "metrics", "solution")

#: Validated tool calls kept by :meth:`CrabEnv.parse_action` (cleared when full).
_PARSED_MEMO = 4096
_SCALARS = (str, int, float, bool, type(None))


def _call_key(name: str, arguments: Mapping[str, Any]) -> tuple | None:
    """A memo key for a tool call whose arguments are all scalars (typed, so that ``1``,
    ``1.0`` and ``True`` differ), else None: such a call validates the same way every time."""
    items = []
    for key, value in arguments.items():
        if type(value) not in _SCALARS:
            return None
        items.append((key, type(value), value))
    return (name, *items)


def _plain(values: Mapping[str, Any]) -> bool:
    """Whether every value is immutable (a scalar or an enum member): safe to hand out again."""
    return all(type(v) in _SCALARS or isinstance(v, enum.Enum) for v in values.values())


class CrabEnv(gym.Env, metaclass=ABCMeta):
    """Base class: a task's actions, evaluator graph and reward, as a Gymnasium env.

    Args:
        actions: the env's actions; their schemas define the action space.
        render_mode: one of ``metadata["render_modes"]`` or None.
        invalid_action_penalty: subtracted from the reward of an invalid action.
        progress_weight: weight of the rise in sub-goal completeness (sums to <= 1 per episode).
        optimality_weight: weight of the terminal optimality ratio in [0, 1].
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    #: Attributes that hold per-step scratch rather than state (e.g. the last step's event
    #: text): the contract test (:mod:`crab_gym.checks.contract`) lets an invalid step change them.
    transient_attributes: tuple[str, ...] = ()
    #: Caches worked out from the instance or the state and kept to be fast (a prepared start
    #: state, memoised matrices): not state, so the contract test's snapshots leave them out.
    derived_attributes: tuple[str, ...] = ()

    def __init__(
        self,
        actions: Sequence[Action],
        *,
        render_mode: str | None = None,
        invalid_action_penalty: float = 0.0,
        progress_weight: float = 0.5,
        optimality_weight: float = 0.5,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode {render_mode!r} is not supported; choose one of {self.metadata['render_modes']}"
            )
        self.render_mode = render_mode
        self.codec = ActionCodec(actions)
        self.actions: dict[str, Action] = {a.name: a for a in actions}
        self.action_space = self.codec.space
        self.invalid_action_penalty = float(invalid_action_penalty)
        self.progress_weight = float(progress_weight)
        self.optimality_weight = float(optimality_weight)
        self.graph: GraphEvaluator | None = None
        self._terminated = False
        self._episode_steps = 0
        #: Derived values, not state: ``"mask"`` (this state's ``_action_mask()``, dropped
        #: whenever the state may change) and ``"parsed"`` (validated tool calls by their
        #: arguments; validation depends on the action schemas only).
        self._cache: dict[str, Any] = {"parsed": {}}

    # ================================================================== hooks
    @abstractmethod
    def _reset_state(self, options: dict[str, Any] | None) -> None:
        """Put the problem into its initial state (``self.np_random`` is seeded)."""
        raise NotImplementedError

    @abstractmethod
    def _build_graph(self) -> nx.DiGraph:
        """The sub-goal DAG of closed evaluators over this env, built each reset."""
        raise NotImplementedError

    @abstractmethod
    def _get_obs(self) -> Any:
        """The observation of the current state (fresh arrays, never reused buffers)."""
        raise NotImplementedError

    def _check_action(self, name: str, args: dict[str, Any]) -> str | None:
        """Return why a validated call is illegal now (e.g. masked), or None. Must not mutate."""
        return None

    @abstractmethod
    def _is_terminated(self) -> bool:
        """True when the episode is over (plan complete, or no legal move is left)."""
        raise NotImplementedError

    def _optimality(self) -> float:
        """Terminal score in [0, 1]: ``reference_cost / agent_cost``, 0 if infeasible."""
        return 0.0

    def _terminal_optimality(self) -> float:
        """The optimality term of an episode's last reward (a subclass may defer what it needs)."""
        return self._optimality()

    def _optimality_reward(self, optimality: float) -> float:
        """The last reward's optimality term for ``optimality``: ``optimality_weight`` x it. One
        place for the step and :meth:`deferred_reward`; a reward mode without the term returns 0."""
        return self.optimality_weight * float(optimality)

    def deferred_reward(self) -> float:
        """What the finished episode's return lacks because part of its last reward waited for
        work kept out of ``step()`` (a REALM env's reference solve): add it to the return you
        summed to get the return the env gives when nothing waits. 0 here: nothing waits."""
        return 0.0

    def _episode_end_info(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The metrics and solution reported when an episode ends (:meth:`_final_info`)."""
        return self._final_info()

    def _final_info(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(metrics, solution)`` reported in ``info`` at the end of an episode."""
        return {}, {}

    def _action_mask(self) -> np.ndarray:
        """Legal finite choices, aligned with ``self.codec``'s flat index. Computed once per
        state (kept in ``_cache["mask"]``, dropped by ``reset``, a valid step and a step that
        raised): code that changes the state anywhere else must drop it too."""
        return np.ones(self.codec.n_flat, dtype=bool)

    def _extra_info(self) -> dict[str, Any]:
        """Extra ``info`` entries; the key set must be the same on every call."""
        return {}

    def _progress_may_change(self, name: str, args: dict[str, Any]) -> bool:
        """Whether this action may pass a sub-goal (False skips the graph check: a speed hook)."""
        return True

    def _begin_step(self) -> None:
        """Called first in every ``step`` (e.g. to clear last step's event text)."""

    def _end_step(self) -> None:
        """Called last in every ``step``, even one that raised (e.g. to drop a pending plan)."""

    def _fast_step(self, action: Any) -> tuple[dict[str, Any], str, dict[str, Any]] | None:
        """Recognise a well-formed, *legal* action cheaply and carry it out; return
        ``(tool call, action name, values)``, or None to take the generic path (which parses,
        validates and checks). A speed hook for the hot action of RL training: it must give
        exactly what the generic path gives for the same action."""
        return None

    def _step_reward(self, name: str, values: dict[str, Any], reward: float) -> float:
        """The reward of a valid step, given the default one (progress + optimality): a hook
        for alternative reward modes."""
        return reward

    def _check_progress(self, name: str, values: dict[str, Any]) -> list[str]:
        """Step the sub-goal graph after a valid action; the names of the sub-goals passed."""
        return [node.name for node in self.graph.step(self)]

    # ================================================================== API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self._cache.pop("mask", None)
        self._reset_state(options)
        self._cache.pop("mask", None)
        self._terminated = False
        self._episode_steps = 0
        self.graph = self._episode_graph(self._build_graph())
        self.graph.step(self)  # sub-goals already true at the start count from the start
        return self._get_obs(), self._info(None, True, "", [], {}, {})

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        if self.graph is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        self._begin_step()
        try:
            fast = None if self._terminated else self._fast_step(action)
            if fast is not None:
                return self._after_action(*fast)
            return self._generic_step(action)
        except BaseException:
            self._cache.pop("mask", None)  # the step may have changed the state part way
            raise
        finally:
            self._end_step()

    def _generic_step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        """Parse, validate and check ``action``, then run it (or refuse it, changing nothing)."""
        call: dict[str, Any] | None = None
        try:
            call, act, values = self.parse_action(action)
            if self._terminated:
                raise ActionArgumentError(act.name, None, "the episode is over; call reset()")
            reason = self._check_action(act.name, values)
            if reason:
                raise ActionArgumentError(act.name, None, reason)
        except ActionArgumentError as exc:
            return self._invalid(call, str(exc))
        except Exception as exc:  # noqa: BLE001 - parsing and checking never mutate the state
            return self._invalid(call, f"malformed action ({type(exc).__name__}: {exc})")
        try:
            act.run_validated(values, env=self)
        except ActionArgumentError as exc:  # entries may reject *before* mutating anything
            return self._invalid(call, str(exc))
        return self._after_action(call, act.name, values)

    def parse_action(self, action: Any) -> tuple[dict[str, Any], Action, dict[str, Any]]:
        """Space element or tool call -> (tool call, Action, validated values). Raises
        :class:`ActionArgumentError` with the reason when malformed or out of range."""
        # A tool call unless it is (also) an element of a single action's Dict space.
        if isinstance(action, Mapping) and "name" in action and not (self.codec.single and self.codec.contains(action)):
            name, arguments = split_tool_call(action)
        else:
            call = self.codec.decode(action)
            name, arguments = call["name"], call["arguments"]
        key = _call_key(name, arguments)
        parsed = self._cache["parsed"]
        hit = parsed.get(key) if key is not None else None
        if hit is None:
            act = self.codec.action(name)
            values = act.validate(arguments)
            hit = (act, values, act.to_json_arguments(values))
            if key is not None and _plain(values) and _plain(hit[2]):
                if len(parsed) >= _PARSED_MEMO:
                    parsed.clear()
                parsed[key] = hit
        act, values, json_args = hit
        return {"name": act.name, "arguments": dict(json_args)}, act, dict(values)

    def action_masks(self) -> np.ndarray:
        """Boolean mask over the finite choices (``codec.flat_to_call`` order); all False at the end."""
        if self._terminated:
            return np.zeros(self.codec.n_flat, dtype=bool)
        return self._current_mask().copy()

    def _current_mask(self) -> np.ndarray:
        """``_action_mask()`` of the current state, computed once per state (the observation,
        ``action_masks()`` and a wrapper's check after the step all read it). Read only."""
        mask = self._cache.get("mask")
        if mask is None:
            mask = self._cache["mask"] = np.asarray(self._action_mask(), dtype=bool)
        return mask

    def tools(self, fmt: Literal["openai", "anthropic"] = "openai") -> list[dict[str, Any]]:
        """The env's actions as tool definitions for an LLM API."""
        return [a.to_tool(fmt) for a in self.actions.values()]

    @property
    def completeness(self) -> float:
        """Share of sub-goals passed so far."""
        return self.graph.completeness if self.graph is not None else 0.0

    # ================================================================== internals
    def _after_action(self, call: dict[str, Any] | None, name: str, values: dict[str, Any]) -> tuple:
        """Reward, termination and info after a *valid* action has changed the state."""
        self._cache.pop("mask", None)
        self._episode_steps += 1
        reward = 0.0
        passed: list[str] = []
        metrics: dict[str, Any] = {}
        solution: dict[str, Any] = {}
        before = self.graph.completeness
        checked = self._progress_may_change(name, values)
        if checked:  # sub-goals first, so that _is_terminated() may read the graph
            passed = self._check_progress(name, values)
        terminated = self._is_terminated()
        if terminated and not checked:
            passed = self._check_progress(name, values)
        reward += self.progress_weight * (self.graph.completeness - before)
        if terminated:
            self._terminated = True
            reward += self._optimality_reward(self._terminal_optimality())
            metrics, solution = self._episode_end_info()
            self._cache.pop("mask", None)  # the final accounting may settle the state
        reward = self._step_reward(name, values, reward)
        return self._get_obs(), float(reward), terminated, False, self._info(
            call, True, "", passed, metrics, solution
        )

    def _episode_graph(self, built: nx.DiGraph) -> GraphEvaluator:
        """The sub-goal evaluator of a new episode: a fresh one over the last episode's graph
        when ``_build_graph()`` returned the same graph (checked and sorted once), else a new one."""
        if self.graph is not None and self.graph.graph is built:
            return self.graph.fresh()
        return GraphEvaluator(built)

    def _invalid(self, call: dict[str, Any] | None, reason: str) -> tuple:
        return (
            self._get_obs(),
            0.0 - self.invalid_action_penalty,
            self._terminated,
            False,
            self._info(call, False, reason, [], {}, {}),
        )

    def _info(
        self,
        call: dict[str, Any] | None,
        valid: bool,
        error: str,
        passed: list[str],
        metrics: dict[str, Any],
        solution: dict[str, Any],
    ) -> dict[str, Any]:
        info = {
            "action": call,
            "valid": valid,
            "error": error,
            "completeness": self.graph.completeness if self.graph is not None else 0.0,
            "sub_goals_passed": passed,
            "metrics": metrics,
            "solution": solution,
        }
        info.update(self._extra_info())
        return info
