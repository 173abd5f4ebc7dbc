"""A desktop task as plain data, and how it is validated.

A task is a description (``{workdir}`` is replaced by the machine's work directory; in a
task over several environments ``{workdir:NAME}`` by that machine's), setup steps, named
checks with edges between them (the evaluator graph: a check is only tried once its
predecessors passed), and a scripted solution. Every step is a tool call
``{"name": ..., "arguments": {...}}`` of a declared desktop Action
(:mod:`crab_gym.envs.desktop.actions`); a setup step or check of a task over several
environments also says where it runs (``"env": NAME``), and its solution calls the agent's
per-environment actions (``NAME__write_text``).

Checks read the machine's real state (files in the work directory, window titles, focus and
geometry as the window manager reports them, GSettings values, the X clipboard) or, for
``declared_infeasible``, what the agent declared; none of them passes in a task's starting
state, so doing nothing scores 0. ``partial`` is how many solution steps reach a
completeness strictly between 0 and 1 (``None`` where every check passes at once).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from crab_gym.core import Action
from crab_gym.envs.desktop.actions import (
    AGENT_ACTIONS,
    ENV_NAME,
    EPISODE_ACTIONS,
    EPISODE_PROBES,
    PROBE_ACTIONS,
    SETUP_ACTIONS,
)

#: How an agent action is named in a task over several environments: ``pc1__write_text``.
ENV_SEPARATOR = "__"
_ENV_NAME_RE = re.compile(r"^[a-z][a-z0-9]{0,15}$")


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """A tool call, as tasks store them."""
    return {"name": name, "arguments": arguments}


def on(env: str, step: dict[str, Any]) -> dict[str, Any]:
    """A setup step or check that runs on environment ``env`` of a multi-environment task."""
    return {**step, "env": env}


def agent_action_names(envs: tuple[str, ...]) -> dict[str, tuple[str | None, Action]]:
    """The agent's action names for a task's environments -> (environment, base action).

    One environment: the plain names (``write_text``). Several: one copy of each machine
    action per environment (``pc1__write_text``), and the episode actions (``complete``,
    ``declare_infeasible``) once, with no environment.
    """
    if len(envs) == 1:
        return {a.name: (None if a.name in EPISODE_ACTIONS else envs[0], a) for a in AGENT_ACTIONS}
    names: dict[str, tuple[str | None, Action]] = {}
    for env in envs:
        for act in AGENT_ACTIONS:
            if act.name not in EPISODE_ACTIONS:
                names[f"{env}{ENV_SEPARATOR}{act.name}"] = (env, act)
    for act in AGENT_ACTIONS:
        if act.name in EPISODE_ACTIONS:
            names[act.name] = (None, act)
    return names


@dataclass(frozen=True)
class DesktopTask:
    """One desktop task (see the module docstring for the meaning of each field).

    ``envs`` names the environments (machines) the task uses; ``infeasible`` marks a task
    that cannot be done as asked (the agent should ``declare_infeasible``); ``template`` and
    ``seed`` say which template and seed made it (``None`` for a fixed task).
    """

    id: str
    description: str
    setup: tuple[dict[str, Any], ...]
    checks: Mapping[str, dict[str, Any]]
    edges: tuple[tuple[str, str], ...]
    solution: tuple[dict[str, Any], ...]
    partial: int | None = None
    tags: tuple[str, ...] = field(default_factory=tuple)
    envs: tuple[str, ...] = (ENV_NAME,)
    infeasible: bool = False
    template: str | None = None
    seed: int | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DesktopTask:
        """Build and validate a task from plain data (e.g. loaded from JSON)."""
        task = cls(
            id=str(data["id"]),
            description=str(data["description"]),
            setup=tuple(dict(c) for c in data.get("setup", ())),
            checks={str(k): dict(v) for k, v in data["checks"].items()},
            edges=tuple((str(a), str(b)) for a, b in data.get("edges", ())),
            solution=tuple(dict(c) for c in data.get("solution", ())),
            partial=data.get("partial"),
            tags=tuple(data.get("tags", ())),
            envs=tuple(data.get("envs", (ENV_NAME,))),
            infeasible=bool(data.get("infeasible", False)),
            template=data.get("template"),
            seed=data.get("seed"),
        )
        task.validate()
        return task

    def describe(self, workdirs: Mapping[str, str] | str) -> str:
        """The description an agent reads, with the machines' work directories filled in."""
        if isinstance(workdirs, str):
            workdirs = {self.envs[0]: workdirs}
        text = self.description
        for env, path in workdirs.items():
            text = text.replace("{workdir:" + env + "}", path)
        return text.replace("{workdir}", workdirs.get(self.envs[0], ""))

    def graph_structure(self) -> nx.DiGraph:
        """The check names as a DAG (the evaluator graph's shape, without evaluators)."""
        graph = nx.DiGraph()
        graph.add_nodes_from(self.checks)
        graph.add_edges_from(self.edges)
        return graph

    def env_of(self, step: Mapping[str, Any]) -> str:
        """The environment a setup step or check runs on."""
        return str(step.get("env", self.envs[0]))

    def validate(self) -> None:
        """Every step names a declared action with valid arguments on a declared environment;
        the graph is a DAG."""
        self._validate_envs()
        agent = {name: act for name, (_, act) in agent_action_names(self.envs).items()}
        groups = (("setup", self.setup, {a.name: a for a in SETUP_ACTIONS}),
                  ("solution", self.solution, agent),
                  ("checks", tuple(self.checks.values()), {a.name: a for a in (*PROBE_ACTIONS, *EPISODE_PROBES)}))
        for where, steps, by_name in groups:
            for step in steps:
                if step.get("name") not in by_name:
                    raise ValueError(f"task '{self.id}': {where} step {step.get('name')!r} is not one of {sorted(by_name)}")
                if self.env_of(step) not in self.envs:
                    raise ValueError(f"task '{self.id}': {where} step names environment {step['env']!r}, "
                                     f"not one of {list(self.envs)}")
                by_name[step["name"]].validate(step.get("arguments", {}))
        unknown = {n for edge in self.edges for n in edge} - set(self.checks)
        if unknown:
            raise ValueError(f"task '{self.id}': edges name unknown checks {sorted(unknown)}")
        if not self.checks or not nx.is_directed_acyclic_graph(self.graph_structure()):
            raise ValueError(f"task '{self.id}': checks must form a non-empty DAG")
        if self.partial is not None and not 0 < self.partial < len(self.solution):
            raise ValueError(f"task '{self.id}': partial must be within 1..{len(self.solution) - 1}")

    def _validate_envs(self) -> None:
        if not self.envs or len(set(self.envs)) != len(self.envs):
            raise ValueError(f"task '{self.id}': envs must be distinct names, got {list(self.envs)}")
        bad = [e for e in self.envs if not _ENV_NAME_RE.match(e)]
        if bad:
            raise ValueError(f"task '{self.id}': environment names {bad} must be lower-case letters and digits")
