"""A run's card: what a reader needs to trust a report and to rerun it.

A number in a report means little without the set it describes and the budget it was given:
the card names the split and instances, the seeds, the step cap, each policy's solver track,
the model and its prices, the versions of everything that shapes a score, the date, and the
command line (``crab-gym run --rerun report.json`` runs that command again). Budgets actually
spent (episodes' wall time, an LLM's tokens) come from the episodes themselves.
"""

from __future__ import annotations

import platform
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from importlib import metadata
from typing import Any

#: The distributions whose versions can move a score or a timing (absent ones are left out).
VERSIONED = ("crab_gym", "gymnasium", "numpy", "ortools", "pydantic", "torch", "stable-baselines3", "sb3-contrib",
             "openai")
#: The evaluation tracks (docs/evaluation.md): may the agent call a solver?
TRACKS = ("solver-free", "solver-allowed")


def installed_versions(names: Iterable[str] = VERSIONED) -> dict[str, str]:
    """The installed version of each distribution (left out when not installed), and Python's."""
    found = {"python": platform.python_version()}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


@dataclass
class RunCard:
    """The card of one run (see the module docstring).

    Attributes:
        argv: the ``crab-gym`` arguments that made the run (``["run", "--env", ...]``).
        selection: per env id, the split played and its instances.
        seeds: the seeds of each policy's episodes (every policy's, unless it has its own).
        max_steps: the step cap of every episode.
        tracks: per policy, ``solver-free`` or ``solver-allowed``.
        models: per LLM policy row, its model; ``prices``: per million tokens.
        versions: :func:`installed_versions` when the run was made.
        date: the day the run was made (ISO 8601).
    """

    argv: list[str]
    selection: dict[str, dict[str, Any]] = field(default_factory=dict)
    seeds: dict[str, list[int]] = field(default_factory=dict)
    max_steps: int | None = None
    tracks: dict[str, str] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)
    prices: dict[str, Any] | None = None
    versions: dict[str, str] = field(default_factory=installed_versions)
    date: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunCard:
        """Rebuild a card from a report's ``card`` (unknown keys from newer versions are ignored)."""
        known = set(cls.__dataclass_fields__)
        if not isinstance(data.get("argv"), list):
            raise ValueError("the card has no 'argv' list (the command that made the run)")
        return cls(**{k: v for k, v in data.items() if k in known})

    def markdown(self, spent: Mapping[str, Any] | None = None) -> list[str]:
        """The card as the lines a report's Markdown opens with."""
        lines = ["**Run card**", ""]
        for env_id, chosen in self.selection.items():
            names = chosen.get("instances", [])
            shown = ", ".join(names[:6]) + (f", ... ({len(names)} in all)" if len(names) > 6 else "")
            lines.append(f"- {env_id}: split `{chosen.get('split')}`: {shown or 'its default instance'}")
        for policy, seeds in self.seeds.items():
            lines.append(f"- {policy}: seeds {_ranges(seeds)}; track `{self.tracks.get(policy, 'solver-free')}`"
                         + (f"; model `{self.models[policy]}`" if policy in self.models else ""))
        budget = f"- budget: at most {self.max_steps} steps per episode"
        for name, value in (spent or {}).items():
            budget += f"; {name} {value}"
        lines.append(budget)
        if self.prices:
            lines.append(f"- prices per million tokens: {self.prices}")
        lines.append("- versions: " + ", ".join(f"{k} {v}" for k, v in self.versions.items()))
        lines.append(f"- made {self.date or 'on an unknown date'} by `crab-gym {' '.join(self.argv)}`; "
                     "rerun with `crab-gym run --rerun report.json`")
        return lines


def _ranges(seeds: Sequence[int]) -> str:
    """``0-4`` for a run of consecutive seeds, else the list."""
    values = sorted(seeds)
    if len(values) > 2 and values == list(range(values[0], values[-1] + 1)):
        return f"{values[0]}-{values[-1]}"
    return ", ".join(map(str, values))
