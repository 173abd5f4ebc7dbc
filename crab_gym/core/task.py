"""Task: what to achieve, in which environment(s), and how success is measured."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from crab_gym.core.action import Action
from crab_gym.core.graph import GraphEvaluator


@dataclass
class Task:
    """A task: a description for agents, setup actions, and an evaluator-graph factory.

    The graph is built by a factory (not stored) because evaluators may close over
    per-episode state, and every episode needs fresh pass flags.

    Attributes:
        id: unique task id.
        description: natural-language goal given to agents.
        environments: names of the environments the task uses.
        evaluator_graph: builds the sub-goal DAG of closed evaluators.
        setup: closed actions (or ``(action, arguments)`` pairs) run on reset.
        instance: the problem instance (REALM tasks).
        oracle: reference solution / value provider (REALM tasks).
        metadata: anything else (difficulty, tags, ...).
    """

    id: str
    description: str
    evaluator_graph: Callable[[], nx.DiGraph]
    environments: Sequence[str] = ()
    setup: Sequence[Action | tuple[Action, dict[str, Any]]] = ()
    instance: Any = None
    oracle: Any = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def build_evaluator(self) -> GraphEvaluator:
        """A fresh :class:`GraphEvaluator` for one episode."""
        return GraphEvaluator(self.evaluator_graph())

    def run_setup(self, **kept: Any) -> None:
        """Run the setup actions in order, injecting kept parameters (e.g. ``env``)."""
        for item in self.setup:
            act, args = (item, {}) if isinstance(item, Action) else item
            act(**dict(args), **kept)
