"""The card of a ``crab-gym run`` (:class:`~crab_gym.evaluation.card.RunCard`) and ``--rerun``.

The card is written into ``report.json`` (and opens ``report.md``); ``crab-gym run --rerun
report.json`` reads the command back from it and runs it again, into the same ``--out`` (which
then resumes) or into the one given.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from crab_gym.evaluation.card import RunCard
from crab_gym.evaluation.episode import EnvCase

#: Policies that call a solver by construction (docs/evaluation.md, "Evaluation tracks").
SOLVER_POLICIES = frozenset({"oracle"})
#: What may be given beside ``--rerun``: where the results go and how the episodes are spread.
RERUN_OPTIONS = ("--rerun", "--out", "--workers", "--quiet", "--backend", "--address", "--retry-errors")


class RerunError(ValueError):
    """A ``--rerun`` file that holds no card: the message names the file and what is missing."""


def run_card(argv: Sequence[str], cases: Sequence[EnvCase], seeds: Sequence[int], max_steps: int,
             policies: Sequence[str], track: str, models: Mapping[str, str], prices: Any) -> RunCard:
    """The card of a run: ``track`` is the user's policies' (the oracle is ``solver-allowed``)."""
    selection: dict[str, dict[str, Any]] = {}
    for case in cases:
        chosen = selection.setdefault(case.env_id, {"split": case.split, "instances": []})
        if case.instance is not None:
            chosen["instances"].append(case.instance)
    return RunCard(
        argv=[a for a in argv if a != "--rerun"],
        selection=selection,
        seeds={name: list(seeds) for name in policies},
        max_steps=max_steps,
        tracks={name: "solver-allowed" if name in SOLVER_POLICIES else track for name in policies},
        models=dict(models),
        prices=prices.to_json() if prices else None,
        date=datetime.date.today().isoformat(),
    )


#: The card beside a run's episodes (``crab-gym report DIR`` puts it back into the report).
CARD_FILE = "card.json"


def write_card(out: str | Path, card: Mapping[str, Any]) -> Path:
    """Write the card into the run's directory (made if missing)."""
    path = Path(out) / CARD_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(card, indent=2, default=str))
    return path


def read_card(directory: str | Path) -> dict[str, Any] | None:
    """The card of the run in ``directory``, or None (a run made before cards; an unreadable card
    loses the report nothing but its card)."""
    try:
        card = json.loads((Path(directory) / CARD_FILE).read_text())
    except (OSError, json.JSONDecodeError):
        return None
    return card if isinstance(card, dict) else None


def rerun_argv(report: str | Path, given: Sequence[str]) -> list[str]:
    """The ``crab-gym`` arguments that made ``report`` (a ``report.json`` or its directory),
    with the options of :data:`RERUN_OPTIONS` in ``given`` (the ``--rerun`` command line) in
    place of the card's own."""
    others = [a.split("=", 1)[0] for a in given if a.startswith("--") and a.split("=", 1)[0] not in RERUN_OPTIONS]
    if others:
        raise RerunError(f"--rerun runs the command on the card of {report}; beside it give only "
                         f"{', '.join(RERUN_OPTIONS[1:])} (not {', '.join(others)})")
    path = Path(report)
    if path.is_dir():
        path = path / "report.json"
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise RerunError(f"--rerun {report}: cannot read {path} ({exc.strerror or exc})") from None
    except json.JSONDecodeError as exc:
        raise RerunError(f"--rerun {report}: {path} is not JSON ({exc.msg} at line {exc.lineno})") from None
    card = data.get("card") if isinstance(data, dict) else None
    if not isinstance(card, dict):
        raise RerunError(f"--rerun {report}: {path} has no 'card' (it was written before runs had cards, "
                         "or is no crab-gym report)")
    try:
        argv = list(RunCard.from_json(card).argv)
    except (TypeError, ValueError) as exc:
        raise RerunError(f"--rerun {report}: {path} field 'card': {exc}") from None
    if argv[:1] != ["run"]:
        raise RerunError(f"--rerun {report}: {path} field 'card.argv' is not a `crab-gym run` command: {argv[:3]}")
    overrides = _options(list(given), RERUN_OPTIONS[1:])
    return [*_without(argv, {name for name, _ in overrides}), *(a for _, values in overrides for a in values)]


def _options(argv: list[str], names: Sequence[str]) -> list[tuple[str, list[str]]]:
    """The options of ``names`` in ``argv``, each with its words (``--out DIR``)."""
    found: list[tuple[str, list[str]]] = []
    for i, arg in enumerate(argv):
        name = arg.split("=", 1)[0]
        if name in names:
            words = [arg]
            for nxt in argv[i + 1:]:
                if nxt.startswith("--") or "=" in arg:
                    break
                words.append(nxt)
            found.append((name, words))
    return found


def _without(argv: list[str], names: set[str]) -> list[str]:
    """``argv`` without the options of ``names`` and their values."""
    kept: list[str] = []
    dropping = False
    for arg in argv:
        if arg.startswith("--"):
            dropping = arg.split("=", 1)[0] in names
        if not dropping:
            kept.append(arg)
    return kept
