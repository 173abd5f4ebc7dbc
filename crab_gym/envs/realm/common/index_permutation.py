"""Entities numbered 0..n-1 (P11's jobs and machines), renumbered for an obfuscated env.

Jobs and machines have no names to replace, but a model that memorised ft06's optimal
sequence can replay it by number. An obfuscated job shop renumbers them with seeded
permutations: job ``j`` is shown as ``jobs[j]``, machine ``m`` as ``machines[m]``, in the
observation (rows of the per-job arrays, machine ids inside them, the per-machine array), the
text (``job 3``, ``M2``, ``job_3_completed``), the calls (``dispatch(job)``, ``submit_plan``'s
per-machine lists), the solution and the reference plan; each call is renumbered back before
the inner env runs it. The problem is the same up to the numbering, so a plan scores the same.

:class:`Numbering` says where the numbers are (a problem declares one as its
``ProblemSpec.numbering``); :class:`Renumbering` applies one drawn pair of permutations.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Numbering:
    """Where an env's numbered entities appear.

    Attributes:
        sizes: kind -> the instance attribute counting them (``{"job": "n_jobs"}``).
        rows: observation key -> the kind its first axis runs over.
        values: observation key -> the kind of the numbers it holds.
        arguments: action argument (``"dispatch.job"``) -> the kind of the number it takes.
        lists: action argument or plan/solution key -> (kind of the outer list's positions,
            kind of the numbers inside): ``sequence`` is one list of jobs per machine.
        records: keys of dicts in plans and solutions that hold a number of a kind
            (``{"job": "job", "machine": "machine"}`` in P11's schedule records).
        text: regex with one group of digits -> the kind of the number.
    """

    sizes: Mapping[str, str]
    rows: Mapping[str, str] = field(default_factory=dict)
    values: Mapping[str, str] = field(default_factory=dict)
    arguments: Mapping[str, str] = field(default_factory=dict)
    lists: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    records: Mapping[str, str] = field(default_factory=dict)
    text: Mapping[str, str] = field(default_factory=dict)


class Renumbering:
    """One seeded renumbering of an instance's entities (see :class:`Numbering`)."""

    def __init__(self, numbering: Numbering, instance: Any, rng: np.random.Generator) -> None:
        self.numbering = numbering
        self.new = {kind: rng.permutation(int(getattr(instance, attr))) for kind, attr in numbering.sizes.items()}
        self.old = {kind: np.argsort(perm) for kind, perm in self.new.items()}
        self._text = [(re.compile(pattern), kind) for pattern, kind in numbering.text.items()]

    def _map(self, kind: str, value: Any, table: Mapping[str, np.ndarray]) -> Any:
        perm = table[kind]
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and 0 <= value < len(perm):
            return int(perm[int(value)])
        return value  # out of range or not a number: the inner env says what is wrong

    # ------------------------------------------------------------------ calls and plans
    def call(self, call: Mapping[str, Any], *, back: bool) -> dict[str, Any]:
        """A tool call renumbered: ``back`` to the inner env's numbers, else to the shown ones."""
        arguments = dict(call.get("arguments") or {})
        for name, value in arguments.items():
            kind = self.numbering.arguments.get(f"{call.get('name')}.{name}")
            if kind is not None:
                arguments[name] = self._map(kind, value, self.old if back else self.new)
        return {**call, "arguments": self.plan(arguments, back=back)}

    def plan(self, plan: Any, *, back: bool) -> Any:
        """A plan or a solution renumbered (its per-entity lists and records)."""
        if not isinstance(plan, Mapping):
            return plan
        out = dict(plan)
        for key, value in plan.items():
            if key in self.numbering.lists:
                out[key] = self._lists(value, *self.numbering.lists[key], back=back)
            elif isinstance(value, list):
                out[key] = [self._record(v, back) if isinstance(v, Mapping) else v for v in value]
        return out

    def _lists(self, lists: Any, outer: str, inner: str, *, back: bool) -> Any:
        n = len(self.new[outer])
        if not isinstance(lists, list) or len(lists) != n or not all(isinstance(x, list) for x in lists):
            return lists  # malformed: the inner env rejects it with its own words
        table = self.old if back else self.new
        moved: list[Any] = [None] * n
        for position, items in enumerate(lists):
            target = int((self.old if back else self.new)[outer][position])
            moved[target] = [self._map(inner, v, table) for v in items]
        return moved

    def _record(self, record: Mapping[str, Any], back: bool) -> dict[str, Any]:
        table = self.old if back else self.new
        return {k: self._map(self.numbering.records[k], v, table) if k in self.numbering.records else v
                for k, v in record.items()}

    # ------------------------------------------------------------------ what is shown
    def text(self, text: str) -> str:
        """``job 3`` -> ``job 5`` (the shown numbers), for every pattern of the numbering."""
        for pattern, kind in self._text:
            text = pattern.sub(lambda m, k=kind: self._digits(m, k), text)
        return text

    def _digits(self, match: re.Match[str], kind: str) -> str:
        whole, start = match.group(0), match.start(1) - match.start(0)
        number = self._map(kind, int(match.group(1)), self.new)
        return whole[:start] + str(number) + whole[start + len(match.group(1)):]

    def observation(self, obs: Mapping[str, Any]) -> dict[str, Any]:
        """Rows of per-entity arrays moved to their shown numbers; entity numbers inside renumbered."""
        out = dict(obs)
        for key, kind in self.numbering.values.items():
            if key in out:
                arr = np.asarray(out[key])
                perm = self.new[kind]
                out[key] = np.where((arr >= 0) & (arr < len(perm)), perm[np.clip(arr, 0, len(perm) - 1)], arr).astype(
                    arr.dtype)
        for key, kind in self.numbering.rows.items():
            if key in out:
                out[key] = np.asarray(out[key])[self.old[kind]]
        return out
