"""``crab-gym run --policy multi-llm``: one LLM agent per actor, as a benchmark policy.

Importing it needs the ``multiagent`` extra (pettingzoo); the policy registry imports it by
name when the policy is first built. The benchmark runner makes the single env and hands it to a policy; a team of LLMs plays the
multi-agent form of that same env (:class:`~crab_gym.baselines.multi_llm.MultiLLMRunner` over
the env's own base), so the episode is played whole (``play_episode``), not one action at a
time. The runner records it like any episode: return, steps (here: joint rounds), invalid
replies and moves, the env's metrics at the end, and ``usage`` summed over the actors' agents
(tokens and requests; never in the env's info).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym

from crab_gym.baselines.llm_agent import LLMAgent
from crab_gym.baselines.multi_llm import MultiLLMRunner
from crab_gym.evaluation.episode_runner import PlayedEpisode
from crab_gym.multiagent import RealmParallelEnv

#: Turns of history each actor's agent sends by default (its ``max_history_turns``): each tool
#: result repeats the whole state, so an actor that keeps repeating an illegal move would
#: otherwise send hundreds of requests with a history of hundreds of messages.
DEFAULT_HISTORY_TURNS = 20

#: The usage keys summed over the actors' agents.
_SUMMED = ("prompt_tokens", "completion_tokens", "total_tokens", "requests", "latency_s")


class MultiLLMPolicy:
    """One :class:`LLMAgent` per actor of a multi-agent REALM env, all with the same settings.

    Args:
        env: the env made by the runner (a multi-agent REALM id).
        max_retries_per_turn: extra requests within a turn after a reply that is no move of
            the actor's own (then it passes).
        **agent_kwargs: passed to every :class:`LLMAgent` (``model=``, ``base_url=``, ``max_rps=``...);
            ``max_history_turns`` is :data:`DEFAULT_HISTORY_TURNS` unless given (None: the whole history).
    """

    def __init__(self, env: gym.Env, *, max_retries_per_turn: int = 2,
                 agent_factory: Callable[[str], LLMAgent] | None = None, **agent_kwargs: Any) -> None:
        self.agents = RealmParallelEnv(env).possible_agents  # fails early on a single-actor env
        self.agent_kwargs = {"max_history_turns": DEFAULT_HISTORY_TURNS, **agent_kwargs}
        self.agent_factory = agent_factory or (lambda _actor: LLMAgent(**self.agent_kwargs))
        if agent_factory is None:
            LLMAgent(**self.agent_kwargs)  # a missing model or key is an error now, not mid-run
        self.max_retries_per_turn = int(max_retries_per_turn)
        self.usage: dict[str, Any] = {}

    def play_episode(self, env: gym.Env, *, seed: int, max_steps: int) -> PlayedEpisode:
        """Reset ``env`` with ``seed`` and play it to the end (at most ``max_steps`` rounds)."""
        runner = MultiLLMRunner(env, self.agent_factory, max_rounds=max_steps, max_retries=self.max_retries_per_turn)
        self.usage = {}
        try:
            episode = runner.run(seed=seed)
        finally:
            self.usage = _summed_usage(runner.agents.values())
        return PlayedEpisode(
            episode_return=episode.episode_return,
            steps=episode.rounds,
            invalid_actions=sum(episode.invalid.values()),
            completeness=float(runner.parallel.env.completeness),
            terminated=episode.terminated,
            truncated=episode.truncated,
            info={"metrics": episode.metrics, "solution": episode.solution},
        )

    def __call__(self, observation: Any, info: dict[str, Any]) -> Any:
        raise TypeError("MultiLLMPolicy plays whole episodes: call play_episode(env, seed=, max_steps=)")


def _summed_usage(agents: Any) -> dict[str, Any]:
    """Tokens, requests and waiting seconds of every actor's agent, added up; ``actors`` counts them."""
    usage: dict[str, Any] = {"actors": 0}
    for agent in agents:
        usage["actors"] += 1
        for key in _SUMMED:
            value = (agent.usage or {}).get(key)
            if isinstance(value, (int, float)):
                usage[key] = usage.get(key, 0) + value
    return usage


__all__ = ["MultiLLMPolicy"]
