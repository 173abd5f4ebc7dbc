"""GraphEvaluator: measure progress through a DAG of sub-goals.

A binary "task solved?" signal is useless for learning and for comparing agents that fail.
A DAG of evaluators (an edge u -> v: v is only checked once u has passed) gives partial
credit in a principled order, as in CRAB.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import networkx as nx

from crab_gym.core.evaluator import Evaluator


class GraphEvaluator:
    """Checks a DAG of closed evaluators against an environment, step after step.

    Args:
        graph: a ``networkx.DiGraph`` whose nodes are closed :class:`Evaluator` objects.
            Nodes with ``require_submit`` are only checked after :meth:`submit`.
    """

    #: set when the evaluator is built and never changed: the env contract check's state
    #: snapshot (``crab_gym.checks.contract``) skips them and compares the passes alone
    static_attributes = ("graph", "_order", "_preds", "_succs", "_sinks", "_sink_set", "_checks", "_total")

    def __init__(self, graph: nx.DiGraph) -> None:
        if not isinstance(graph, nx.DiGraph):
            raise TypeError(f"GraphEvaluator needs a networkx.DiGraph, got {type(graph).__name__}")
        if not nx.is_directed_acyclic_graph(graph):
            raise ValueError("the evaluator graph has a cycle: sub-goals must form a DAG")
        for node in graph.nodes:
            if not isinstance(node, Evaluator):
                raise TypeError(f"graph node {node!r} is not an Evaluator")
            if not node.is_closed:
                raise ValueError(
                    f"graph node '{node.name}' still needs arguments {node.required_params}; "
                    "bind them (evaluator.bind(...)) before adding it to a graph"
                )
        self.graph = graph
        self._order = list(nx.topological_sort(graph))
        self._preds = {node: list(graph.predecessors(node)) for node in self._order}
        self._succs = {node: list(graph.successors(node)) for node in self._order}
        self._sinks = [node for node in self._order if graph.out_degree(node) == 0]
        self._sink_set = frozenset(self._sinks)
        self._checks = {node: _check_of(node) for node in self._order}
        self._total = graph.number_of_nodes()
        self.reset()

    def fresh(self) -> GraphEvaluator:
        """A new evaluator over the same graph with no passes: what the next episode of an
        env whose graph did not change needs, without checking and sorting the graph again."""
        new = copy.copy(self)
        new.reset()
        return new

    def reset(self) -> None:
        """Forget every pass: back to the start of an episode."""
        self.passed: set[Evaluator] = set()
        self.pass_step: dict[Evaluator, int] = {}
        self.submitted = False
        self.steps = 0
        self.steps_to_complete: int | None = None
        # the nodes not passed yet, in topological order, and how many of each node's
        # predecessors have not passed: a step looks at open nodes only, in O(1) each
        self._open: list[Evaluator] = list(self._order)
        self._waiting: dict[Evaluator, int] = {node: len(preds) for node, preds in self._preds.items()}
        self._sinks_left = len(self._sinks)

    def submit(self) -> None:
        """Mark that the agent declared it is done, enabling ``require_submit`` nodes."""
        self.submitted = True

    def frontier(self) -> list[Evaluator]:
        """Unpassed nodes whose predecessors have all passed."""
        return [n for n in self._open if not self._waiting[n]]

    def step(self, env: Any = None, **kept: Any) -> list[Evaluator]:
        """Check the frontier, cascading through nodes unlocked in this same step.

        Returns the evaluators that passed during this call (in topological order).
        """
        self.steps += 1
        newly: list[Evaluator] = []
        kept = {"env": env, **kept}
        waiting = self._waiting
        # topological order guarantees every unlocked node comes after its predecessors,
        # so one pass cascades through everything this step unlocks.
        for node in self._open:
            if waiting[node] or (node.require_submit and not self.submitted):
                continue
            if self._checks[node](kept):
                self._pass(node)
                newly.append(node)
        if newly:
            self._open = [node for node in self._open if node not in self.passed]
        if self.steps_to_complete is None and self.is_complete:
            self.steps_to_complete = self.steps
        return newly

    def _pass(self, node: Evaluator) -> None:
        """Latch ``node`` as passed now and unlock its successors by one predecessor."""
        self.passed.add(node)
        self.pass_step[node] = self.steps
        for succ in self._succs[node]:
            self._waiting[succ] -= 1
        if node in self._sink_set:
            self._sinks_left -= 1

    @property
    def total(self) -> int:
        """Number of sub-goals."""
        return self._total

    @property
    def completeness(self) -> float:
        """Share of sub-goals passed, in [0, 1] (1.0 for an empty graph)."""
        return len(self.passed) / self._total if self._total else 1.0

    @property
    def is_complete(self) -> bool:
        """True once every sink (final sub-goal) has passed."""
        return not self._sinks_left


def _check_of(node: Evaluator) -> Callable[[dict[str, Any]], bool]:
    """How a step checks ``node`` with the kept parameters: a plain function evaluator that
    reads only the env is called directly (what ``run_validated({}, env=...)`` does for it,
    without the generic argument handling), any other through ``run_validated``."""
    if type(node) is Evaluator and node.kept_params == ("env",) and not node.parameters.model_fields:
        entry = node.entry
        return lambda kept: bool(entry(env=kept["env"]))
    return lambda kept: bool(node.run_validated({}, **kept))
