"""Several LLMs on one multi-agent REALM problem: one :class:`LLMAgent` per actor, turn by turn.

:class:`MultiLLMRunner` drives the AEC form of a multi-agent id (:func:`crab_gym.multiagent.aec_env`)
with one chat conversation per actor (``v1``, ``v2``, ... in P3). Each LLM sees the problem
only through an :class:`ActorView`, the single-agent face :class:`LLMAgent` already knows how
to prompt from:

* **its own tools**: the env's actions that have moves of this actor, with the actor argument
  restricted to itself (v1's ``dispatch`` offers only ``vehicle: "v1"``, and fills it in when
  left out), plus ``noop`` to pass the round;
* **its prompt**: the task, who it is and how a round runs, the state in words (the single
  env's ``describe()``), what each other agent said and did last (an agent earlier in the
  round order shows its move of this round, which runs first), and its legal moves now.

A round: every live agent, in ``possible_agents`` order, answers one request; then the joint
step runs the moves in that order (:mod:`crab_gym.multiagent.parallel`: an earlier move wins a
conflict). A reply that is no tool call, or not one of the agent's own moves, is answered at
once with the reason and asked again, up to ``max_retries`` times; then the agent passes. A
move of its own that the env rejects (illegal now, or a lost conflict) is fed back at its next
turn with the env's reason (``info["reason"]``). Both count as invalid. ``max_rounds`` ends a
run that does not finish (truncated).

Token usage is whatever each agent's client reports (``LLMAgent.usage``); it goes to the
result, never into an env's info.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from pettingzoo.utils.conversions import parallel_to_aec
from pydantic import Field, create_model

from crab_gym.baselines.llm_agent import LLMAgent
from crab_gym.core.action import Action, ActionArgumentError
from crab_gym.core.spaces import ActionCodec
from crab_gym.multiagent import NOOP, RealmParallelEnv, aec_env
from crab_gym.wrappers.tool_call_parsing import ToolCallParseError, call_to_text, parse_tool_call

#: The name of the pass tool every actor gets.
PASS_TOOL = "noop"

AgentSource = Mapping[str, LLMAgent] | Callable[[str], LLMAgent]


# ====================================================================== one actor's face
def _never_run(**_: Any) -> None:
    raise RuntimeError("an ActorView tool is never run: the runner steps the joint env")


def actor_actions(parallel: RealmParallelEnv, agent: str) -> list[Action]:
    """The tools of actor ``agent``: each env action holding moves of it, with the argument that
    names it narrowed to it (and defaulting to it), then the ``noop`` pass tool."""
    base = parallel.env
    owner_argument: dict[str, tuple[str, Any]] = {}  # action -> (argument naming the agent, its value)
    for call in parallel.choices(agent):
        if call is not None and call["name"] not in owner_argument:
            argument = next(a for a in base.agent_arguments if a in call["arguments"])  # AgentBinding's rule
            owner_argument[call["name"]] = (argument, call["arguments"][argument])
    tools: list[Action] = []
    for act in base.codec.actions:
        if act.name not in owner_argument:
            continue  # no move of this agent (another actor's, or nobody's: wait, submit_plan)
        argument, value = owner_argument[act.name]
        narrowed: dict[str, Any] = {}
        for name, info in act.parameters.model_fields.items():
            if name == argument:
                mine = Field(default=value, description=f"you: always {value!r}")
                narrowed[name] = (Literal[value], mine)  # type: ignore[valid-type]
            else:
                narrowed[name] = (info.annotation, info)
        params = create_model(f"{act.parameters.__name__}_{agent}", __config__=act.parameters.model_config, **narrowed)
        tools.append(Action(act.name, _never_run, params, description=act.description))
    if any(t.name == PASS_TOOL for t in tools) or PASS_TOOL in base.codec.index:
        raise ValueError(f"{type(base).__name__} already has an action named {PASS_TOOL!r}")
    tools.append(Action(PASS_TOOL, _never_run, None,
                        description="Pass: make no move this round (always legal)."))
    return tools


def _key(call: Mapping[str, Any]) -> str:
    return json.dumps({"name": call["name"], "arguments": dict(call["arguments"])}, sort_keys=True)


class ActorView(gym.Env):
    """One actor of a :class:`RealmParallelEnv`, shaped as the single-agent env an
    :class:`LLMAgent` prompts from (``codec``, ``tools``, ``action_masks``, ``describe``,
    ``task_description``). It only writes prompts and reads replies: the runner steps the joint env.

    Args:
        parallel: the joint env.
        agent: the actor's name (``"v1"``).
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, parallel: RealmParallelEnv, agent: str) -> None:
        self.parallel = parallel
        self.agent = agent
        self.spec = parallel.env.spec
        self.codec = ActionCodec(actor_actions(parallel, agent))
        self.action_space = self.codec.space
        self.observation_space = parallel.observation_space(agent)
        local = {_key(call): k for k, call in enumerate(parallel.choices(agent)) if call is not None}
        local[_key({"name": PASS_TOOL, "arguments": {}})] = NOOP
        self._local_of_view = [local.get(_key(self.codec.flat_to_call(f))) for f in range(self.codec.n_flat)]
        missing = set(local.values()) - set(self._local_of_view)
        if missing:  # the narrowed tools must reach every move the binding gives the agent
            raise ValueError(f"{agent}: the tools miss local choices {sorted(missing)}")
        self.local_mask = np.ones(parallel.action_space(agent).n, dtype=np.int8)
        self.others_text = ""

    def update(self, local_mask: np.ndarray, others_text: str) -> None:
        """Set what the next prompt shows: the legal local choices and the others' messages."""
        self.local_mask = np.asarray(local_mask, dtype=np.int8)
        self.others_text = others_text

    # ------------------------------------------------------------------ what LLMAgent reads
    def action_masks(self) -> np.ndarray:
        return np.array([k is not None and bool(self.local_mask[k]) for k in self._local_of_view], dtype=bool)

    def tools(self, fmt: Literal["openai", "anthropic"] = "openai") -> list[dict[str, Any]]:
        return [a.to_tool(fmt) for a in self.codec.actions]

    @property
    def task_description(self) -> str:
        agents = self.parallel.possible_agents
        role = self.parallel.env.agent_arguments[0]
        order = ", ".join(agents)
        return (
            f"{self.parallel.env.task_description}\n\n"
            f"You are {role} {self.agent}, one of {len(agents)} agents ({order}), each an LLM like you "
            f"that moves only its own {role}. Each round every agent picks one move or {PASS_TOOL}, in the "
            f"order {order}; then the moves run in that order, so a move that an earlier agent's move "
            "made illegal is rejected (a lost conflict). Work with the others: the state shows what "
            "each of them said and did last. Say in a sentence what you intend, then call one tool."
        )

    def describe(self) -> str:
        text = f"{self.parallel.env.describe().rstrip()}\n\nYou are {self.agent}."
        return f"{text}\n{self.others_text}" if self.others_text else text

    # ------------------------------------------------------------------ replies
    def local_choice(self, reply: Any) -> int:
        """The local choice (``noop`` = 0) a reply names.

        Raises:
            ValueError: the reply holds no tool call, or one that is not this agent's move
                (the message is written for the model).
        """
        try:
            call = parse_tool_call(reply)
            flat = self.codec.call_to_flat(call)
        except (ToolCallParseError, ActionArgumentError) as exc:
            own = ", ".join(a.name for a in self.codec.actions)
            raise ValueError(f"{exc} (you are {self.agent}; your tools: {own})") from None
        return int(self._local_of_view[flat])  # every flat of the narrowed tools is a choice

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        raise NotImplementedError("an ActorView is not stepped: MultiLLMRunner steps the joint env")

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        raise NotImplementedError("an ActorView is not stepped: MultiLLMRunner steps the joint env")


# ====================================================================== the result
@dataclass
class MultiLLMEpisode:
    """One episode of :meth:`MultiLLMRunner.run`.

    ``stop_reason`` is ``"terminated"`` (the env ended the episode) or ``"truncated"``
    (``max_rounds``, or nobody could move). ``metrics`` and ``solution`` are the env's, at the
    end of a terminated episode (empty dicts otherwise). Per agent: ``invalid`` counts replies
    that were no move of its own plus own moves the env rejected (conflicts included), of which
    ``conflicts`` lost a conflict; ``requests`` counts chat requests; ``usage`` is its
    ``LLMAgent.usage`` (the token counts its server reported, summed; empty if none).
    """

    env_id: str
    episode_return: float
    rounds: int
    terminated: bool
    truncated: bool
    stop_reason: str
    metrics: dict[str, Any]
    solution: dict[str, Any]
    invalid: dict[str, int]
    conflicts: dict[str, int]
    requests: dict[str, int]
    usage: dict[str, dict[str, Any]]
    messages: dict[str, list[dict[str, Any]]] = field(repr=False, default_factory=dict)

    @property
    def completed(self) -> bool:
        """Terminated with every entity served (REALM's planning quality 1)."""
        return self.terminated and float(self.metrics.get("planning_quality", 0.0)) >= 1.0


@dataclass
class _Said:
    """An agent's last turn, as the others see it."""

    round: int
    text: str | None
    move: str
    outcome: str = ""
    idle: bool = False  # it has had no legal move since


# ====================================================================== the runner
class MultiLLMRunner:
    """One LLM per actor of a multi-agent REALM id, driving its AEC env turn by turn.

    Args:
        env_id: a multi-agent id (``crab_gym.multiagent_ids()``), e.g. ``"Realm-P3-v0"``, or a made
            env of one (``gym.make(id)``: the runner then plays that env, and ``env_kwargs`` must be empty).
        agents: an :class:`LLMAgent` per actor name, or ``f(actor) -> LLMAgent``. Each keeps its
            own conversation; give them different models or settings as you like.
        env_kwargs: passed to the env (``instance=``, ...).
        max_rounds: joint steps before the episode is truncated.
        max_retries: extra requests within one turn after a reply that is no move of the
            agent's own; then it passes the round.
        ask_when_idle: also ask an agent whose only legal move is ``noop`` (False: it passes
            without a request, saving tokens).
    """

    def __init__(
        self,
        env_id: str | gym.Env,
        agents: AgentSource,
        *,
        env_kwargs: Mapping[str, Any] | None = None,
        max_rounds: int = 200,
        max_retries: int = 2,
        ask_when_idle: bool = False,
    ) -> None:
        if max_rounds < 1 or max_retries < 0:
            raise ValueError("max_rounds must be >= 1 and max_retries >= 0")
        if isinstance(env_id, str):
            self.env = aec_env(env_id, max_cycles=int(max_rounds), **dict(env_kwargs or {}))
        else:  # a made env: its own base env is the joint env's (the benchmark runner made it)
            if env_kwargs:
                raise TypeError("env_kwargs apply only when env_id is an id, not a made env")
            self.env = parallel_to_aec(RealmParallelEnv(env_id, max_cycles=int(max_rounds)))
        self.parallel: RealmParallelEnv = self.env.unwrapped
        self.env_id = env_id if isinstance(env_id, str) else self.parallel.metadata["name"]
        names = list(self.parallel.possible_agents)
        if isinstance(agents, Mapping):
            unknown, absent = set(agents) - set(names), [a for a in names if a not in agents]
            if unknown or absent:
                raise ValueError(f"{env_id} has agents {names}; got LLMs for {sorted(agents)}")
            self.agents = {a: agents[a] for a in names}
        else:
            self.agents = {a: agents(a) for a in names}
        if len({id(llm) for llm in self.agents.values()}) < len(names):
            raise ValueError("give every actor its own LLMAgent: an agent holds one conversation")
        self.views = {a: ActorView(self.parallel, a) for a in names}
        self.max_rounds = int(max_rounds)
        self.max_retries = int(max_retries)
        self.ask_when_idle = bool(ask_when_idle)

    def run(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> MultiLLMEpisode:
        """Play one episode; every agent starts a fresh conversation."""
        names = list(self.parallel.possible_agents)
        self.env.reset(seed=seed, options=options)
        for name in names:
            self.agents[name].reset(self.views[name])
        self._round, self._acted = 0, set()
        self._said: dict[str, _Said] = {}
        self._own_result: dict[str, dict[str, Any]] = {}  # the outcome of each agent's last move
        self._awaiting: set[str] = set()  # agents whose move the next joint step judges
        self._invalid, self._conflicts = dict.fromkeys(names, 0), dict.fromkeys(names, 0)
        self._requests = dict.fromkeys(names, 0)
        returns = dict.fromkeys(names, 0.0)
        final: dict[str, Any] = {}
        terminated = truncated = False
        for agent in self.env.agent_iter():
            obs, reward, term, trunc, info = self.env.last()
            returns[agent] += float(reward)
            if agent in self._acted or term or trunc:  # the round's joint step has run
                self._end_round()
            if term or trunc:
                terminated, truncated, final = bool(term), bool(trunc), info
                self.env.step(None)
                continue
            self.env.step(self._turn(agent, obs))
        return MultiLLMEpisode(
            env_id=self.env_id,
            episode_return=returns[names[0]],
            rounds=self._round,
            terminated=terminated,
            truncated=truncated and not terminated,
            stop_reason="terminated" if terminated else "truncated",
            metrics=dict(final.get("metrics") or {}),
            solution=dict(final.get("solution") or {}),
            invalid=self._invalid,
            conflicts=self._conflicts,
            requests=self._requests,
            usage={a: dict(getattr(self.agents[a], "usage", None) or {}) for a in names},
            messages={a: list(self.agents[a].messages) for a in names},
        )

    def close(self) -> None:
        """Close the env (the agents' clients close with them)."""
        self.env.close()

    # ------------------------------------------------------------------ one turn
    def _turn(self, agent: str, obs: Mapping[str, Any]) -> int:
        """Ask ``agent`` for its move of this round (retrying replies that are no move of its own)."""
        self._acted.add(agent)
        view, llm = self.views[agent], self.agents[agent]
        view.update(obs["action_mask"], self._others_text(agent))
        if not self.ask_when_idle and not np.asarray(obs["action_mask"])[1:].any():
            said = self._said.get(agent)
            if said is None:
                self._said[agent] = _Said(self._round, None, f"{PASS_TOOL} (no legal move)")
            else:  # keep its last words; say it is waiting now
                said.idle = True
            return NOOP
        feedback = dict(self._own_result.get(agent, {}))
        for _ in range(self.max_retries + 1):
            reply = llm(obs, feedback)
            self._requests[agent] += 1
            text = (llm.messages[-1].get("content") or None) if llm.messages else None
            try:
                choice = view.local_choice(reply)
            except ValueError as exc:
                self._invalid[agent] += 1
                feedback = {"valid": False, "error": str(exc), "completeness": self.parallel.env.completeness}
                continue
            move = self.parallel.choices(agent)[choice]
            self._said[agent] = _Said(self._round, text, call_to_text(move) if move else PASS_TOOL)
            self._awaiting.add(agent)
            return choice
        self._said[agent] = _Said(self._round, text, f"{PASS_TOOL} (no valid tool call)")
        self._own_result[agent] = {
            "valid": False,
            "error": f"{feedback['error']}. After {self.max_retries + 1} replies without a move of yours, you passed the round.",
            "completeness": self.parallel.env.completeness,
        }
        return NOOP

    def _end_round(self) -> None:
        """After a joint step: read its verdict on every move of the round (``info["reason"]``
        of a rejected one is fed back at the agent's next turn and shown to the others)."""
        if not self._acted:
            return
        for agent in sorted(self._awaiting):
            info = self.env.infos[agent]
            valid = bool(info.get("valid", True))
            reason = str(info.get("reason") or "")
            if not valid:
                self._invalid[agent] += 1
                self._conflicts[agent] += int(bool(info.get("conflict")))
            self._own_result[agent] = {
                "valid": valid,
                "error": reason or None,
                "completeness": self.parallel.env.completeness,
            }
            self._said[agent].outcome = "done" if valid else f"rejected: {reason}"
        self._awaiting.clear()
        self._acted.clear()
        self._round += 1

    def _others_text(self, agent: str) -> str:
        """What each other agent said and did last, for ``agent``'s prompt."""
        lines = ["Other agents' last turns:"]
        for other in self.parallel.possible_agents:
            if other == agent:
                continue
            said = self._said.get(other)
            if said is None:
                lines.append(f"- {other}: no move yet.")
                continue
            when = "this round, runs before yours" if said.round == self._round else f"round {said.round + 1}"
            words = f' said "{said.text.strip()}";' if said.text and said.text.strip() else ""
            outcome = f" -> {said.outcome}" if said.outcome and said.round < self._round else ""
            idle = f"; since then no legal move ({PASS_TOOL})" if said.idle else ""
            lines.append(f"- {other} ({when}):{words} move {said.move}{outcome}{idle}")
        return "\n".join(lines)


# ====================================================================== a one-call entry point
def run_multi_llm(
    env_id: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    seed: int | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
    max_rounds: int = 200,
    max_retries: int = 2,
    ask_when_idle: bool = False,
    **agent_kwargs: Any,
) -> MultiLLMEpisode:
    """One episode of ``env_id`` with one :class:`LLMAgent` per actor, all on the same endpoint
    (``model``, ``base_url`` and ``agent_kwargs`` go to each ``LLMAgent``). For a CLI command."""
    runner = MultiLLMRunner(
        env_id,
        lambda _agent: LLMAgent(model=model, base_url=base_url, **agent_kwargs),
        env_kwargs=env_kwargs,
        max_rounds=max_rounds,
        max_retries=max_retries,
        ask_when_idle=ask_when_idle,
    )
    return runner.run(seed=seed)


__all__ = ["PASS_TOOL", "ActorView", "MultiLLMEpisode", "MultiLLMRunner", "actor_actions", "run_multi_llm"]
