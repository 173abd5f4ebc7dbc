"""GraphEvaluator: measure progress through a DAG of sub-goals.

A binary "task solved?" signal is useless for learning and for comparing agents that fail.
A DAG of evaluators (an edge u -> v: v is only checked once u has passed) gives partial
credit in a principled order, as in CRAB.
"""

from __future__ import annotations

from typing import Any

import networkx as nx

from crab_gym.core.evaluator import Evaluator


class GraphEvaluator:
    """Checks a DAG of closed evaluators against an environment, step after step.

    Args:
        graph: a ``networkx.DiGraph`` whose nodes are closed :class:`Evaluator` objects.
            Nodes with ``require_submit`` are only checked after :meth:`submit`.
    """

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
        self._sinks = [node for node in self._order if graph.out_degree(node) == 0]
        self._total = graph.number_of_nodes()
        self.reset()

    def reset(self) -> None:
        """Forget every pass: back to the start of an episode."""
        self.passed: set[Evaluator] = set()
        self.pass_step: dict[Evaluator, int] = {}
        self.submitted = False
        self.steps = 0
        self.steps_to_complete: int | None = None

    def submit(self) -> None:
        """Mark that the agent declared it is done, enabling ``require_submit`` nodes."""
        self.submitted = True

    def frontier(self) -> list[Evaluator]:
        """Unpassed nodes whose predecessors have all passed."""
        return [
            n for n in self._order if n not in self.passed and all(p in self.passed for p in self._preds[n])
        ]

    def step(self, env: Any = None, **kept: Any) -> list[Evaluator]:
        """Check the frontier, cascading through nodes unlocked in this same step.

        Returns the evaluators that passed during this call (in topological order).
        """
        self.steps += 1
        newly: list[Evaluator] = []
        kept = {"env": env, **kept}
        # topological order guarantees every unlocked node comes after its predecessors,
        # so one pass cascades through everything this step unlocks.
        for node in self._order:
            if node in self.passed or not all(p in self.passed for p in self._preds[node]):
                continue
            if node.require_submit and not self.submitted:
                continue
            if node.run_validated({}, **kept):
                self.passed.add(node)
                self.pass_step[node] = self.steps
                newly.append(node)
        if self.steps_to_complete is None and self.is_complete:
            self.steps_to_complete = self.steps
        return newly

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
        return all(node in self.passed for node in self._sinks)
