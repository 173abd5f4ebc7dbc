"""A family's instance files in one object: its shipped names, and a loader that reads
crab_gym's own JSON or a user's upstream REALM-Bench file, told apart by the file's keys.

A family with one instance type per problem declares one :class:`InstanceFiles` (its problem
id, model, ``instances`` folder and upstream converter) instead of writing the same three
functions again; loading rules and errors are those of :mod:`crab_gym.envs.realm.common.loading`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from crab_gym.envs.realm.common.loading import load_instance, shipped_names, validate_model
from crab_gym.envs.realm.common.upstream import is_upstream_for

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class InstanceFiles(Generic[M]):
    """Where a problem's instances come from.

    Attributes:
        problem: the problem id, ``"P1"``; its lower case is the shipped files' prefix.
        model: the instance type (a pydantic model).
        instance_dir: the folder of the shipped ``<prefix>_*.json`` files.
        from_upstream: ``from_upstream(data, source)`` converts an upstream mapping.
        what: names the problem in errors, e.g. ``"campus tour (P1)"``.
    """

    problem: str
    model: type[M]
    instance_dir: Path
    from_upstream: Callable[[Any, str], M]
    what: str

    def names(self) -> list[str]:
        """The shipped instance names, sorted."""
        return shipped_names(self.instance_dir, self.problem.lower())

    def from_mapping(self, data: Any, source: str) -> M:
        """An instance from parsed JSON: upstream's shape if it has upstream keys, else ours."""
        if is_upstream_for(data, source, (self.problem,), self.what):
            return self.from_upstream(data, source)
        return validate_model(self.model, data, source)

    def load(self, instance: str | Path | dict | M) -> M:
        """An instance from a shipped name, a JSON path (ours or upstream's), a mapping or itself."""
        return load_instance(
            instance, self.model, instance_dir=self.instance_dir, problem=self.problem, from_mapping=self.from_mapping
        )
