"""A family's shipped instances and their ``references.json``, declared once and rebuilt by
``python -m <family>.build``.

Shipped instance ``<prefix>_<size>_<k>`` is ``generate(size, seed=k, name=...)``, ``k``
counting from 0 in each size class, written as one JSON file next to ``references.json``,
which maps every name to its reference record. The loop, the file layout, the exhaustive
cross-check on small instances and the progress line are the same for every family that
ships generated instances; what a record holds (solver, certificate) is the family's.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Shipped instances per size class: 20 per problem.
SHIPPED_COUNTS: Mapping[str, int] = {"small": 7, "medium": 7, "large": 6}


@dataclass(frozen=True)
class ShippedSet:
    """The shipped instances of one problem.

    ``references.json`` opens with ``problem`` (the prefix in capitals), ``units``,
    ``value``, ``regenerate`` (the build command, ``python -m <family>.build``: derived, so it
    follows the package when it moves) and ``status``, then the records under ``instances``.

    Attributes:
        folder: the family's ``instances`` folder (inside the family's package).
        prefix: the file-name prefix, e.g. ``"p1"``.
        generate: ``generate(size, seed=k, name=name)`` -> a pydantic instance; defined in
            the family's package, whose ``build`` module regenerates the set.
        reference: the reference record of an instance (a JSON mapping with ``value``,
            ``status`` and ``time_limit_s``).
        units: the unit of ``value``.
        value: what ``value`` measures.
        status: what the statuses mean.
        exact: an exhaustive solver, ``exact(instance) -> (value, plan)``, run on the small
            instances; its value is stored as ``brute_force_value`` (a cross-check).
        counts: instances per size class, in file order.
    """

    folder: Path
    prefix: str
    generate: Callable[..., Any]
    reference: Callable[[Any], dict[str, Any]]
    units: str
    value: str
    status: str
    exact: Callable[[Any], tuple[Any, Any]] | None = None
    counts: Mapping[str, int] = field(default_factory=lambda: dict(SHIPPED_COUNTS))

    @property
    def command(self) -> str:
        """The build command: ``python -m <family>.build``, the family being the package that
        defines ``generate``."""
        family = self.generate.__module__.rsplit(".", 1)[0]
        return f"python -m {family}.build"

    @property
    def header(self) -> dict[str, Any]:
        """What ``references.json`` states before its records."""
        return {"problem": self.prefix.upper(), "units": self.units, "value": self.value,
                "regenerate": self.command, "status": self.status}

    def build(self, verbose: bool = True) -> dict[str, dict[str, Any]]:
        """Rewrite the ``<prefix>_*.json`` files (old ones removed) and ``references.json``;
        returns the records by instance name."""
        self.folder.mkdir(parents=True, exist_ok=True)
        for old in self.folder.glob(f"{self.prefix}_*.json"):
            old.unlink()
        records: dict[str, dict[str, Any]] = {}
        for size, count in self.counts.items():
            for k in range(count):
                name = f"{self.prefix}_{size}_{k:02d}"
                inst = self.generate(size, seed=k, name=name)
                (self.folder / f"{name}.json").write_text(inst.model_dump_json(indent=1, exclude_none=True) + "\n")
                tic = time.perf_counter()
                rec = records[name] = self.reference(inst)
                extra = ""
                if self.exact is not None and size == "small":
                    rec["brute_force_value"] = self.exact(inst)[0]
                    extra = f" brute={rec['brute_force_value']}"
                if verbose:
                    print(f"{name}: value={rec['value']} status={rec['status']} budget={rec['time_limit_s']}s "
                          f"took={time.perf_counter() - tic:.2f}s{extra}", flush=True)
        doc = {**self.header, "instances": records}
        (self.folder / "references.json").write_text(json.dumps(doc, indent=1) + "\n")
        return records

    def main(self, doc: str, argv: list[str] | None = None) -> None:
        """The ``python -m <family>.build`` command; ``doc`` is the build module's docstring
        (its first line is the ``--help`` description). ``--quiet`` drops the line per instance."""
        parser = argparse.ArgumentParser(description=doc.splitlines()[0])
        parser.add_argument("--quiet", action="store_true", help="print nothing per instance")
        self.build(not parser.parse_args(argv).quiet)
