"""Read a user's own copy of an upstream REALM-Bench file, whichever problem it holds.

The upstream repository has no license, so crab_gym ships none of its files; users point
:func:`load_realm_instance` at their own copy. A JSON file's problem is recognised from its
keys (:func:`~crab_gym.envs.realm.common.upstream.problem_keys`, from each problem's
``upstream_keys`` in the index; the first match in this order wins):

===========================================  =======  ============================================
keys                                         problem  converter
===========================================  =======  ============================================
``processing_times`` + ``disruptions``       J4       ``jobshop.variants.formats.convert_j4``
``processing_times``                         J3       ``jobshop.variants.formats.convert_j3``
``base_instance`` + ``disruptions``          J2       ``jobshop.variants.formats.convert_j2``
``suppliers`` + ``facilities`` + ...         P10      ``supply_chain.formats.from_upstream_p10``
the P6 keys + ``disruptions``                P9       ``thanksgiving.formats.from_upstream``
the P5 keys + ``disruptions``                P8       ``wedding.formats.from_upstream_p8``
``regions`` + ``resources``                  P7       ``disaster_relief.formats.from_upstream_p7``
``cooking_tasks`` + ``family_members``       P6       ``thanksgiving.formats.from_upstream``
``guests`` + ``errands`` + ``travel_times``  P5       ``wedding.formats.from_upstream_p5``
the P3 keys + ``disruptions``                P4       ``ridesharing.formats.from_upstream_p4``
``city_map`` + ``ride_requests``             P3       ``ridesharing.formats.from_upstream_p3``
``visitor_groups`` + ``tour_guides``         P2       ``group_tours.formats.from_upstream_p2``
``distances`` + ``time_windows``             P1       ``campus_tour.formats.from_upstream_p1``
===========================================  =======  ============================================

A file that is not JSON (its first character is not ``{`` or ``[``, and its name does not
end in ``.json``) is read as a J1 job-shop text, REALM-Bench's name for P11 (``J1/TA/TA01.txt``:
the standard or Taillard form), by P11's loader.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from crab_gym.envs.realm.common.errors import InstanceFormatError
from crab_gym.envs.realm.common.jsonfile import read_bytes
from crab_gym.envs.realm.common.loading import read_json
from crab_gym.envs.realm.common.upstream import detect_problem, missing_key_error, partial_upstream, problem_keys
from crab_gym.envs.realm.index import problem_spec

#: Problems whose upstream files name another file by a path relative to the ``datasets``
#: folder (J2's ``base_instance.source_file``, the J1 file its cut text comes from): their
#: converter is given the file's whole path, so that it looks in the folders above the file,
#: as ``gym.make(id, instance=path)`` and ``load_instance(problem, path)`` do.
NAMES_OTHER_FILES = frozenset({"J2"})


def converter(problem: str) -> Callable[[Any, str], Any]:
    """The family converter of an upstream problem (``"P3"``), from the problem index."""
    return problem_spec(problem).part("upstream")


def _problems_read() -> str:
    """What the facade reads, from :func:`problem_keys` in index order, e.g. ``"a REALM-Bench
    P1-P10 file, nor a J2, J3 or J4 one"``."""
    names = [p for p, _ in reversed(problem_keys())]
    plain = [p for p in names if p.startswith("P")]
    rest = [p for p in names if not p.startswith("P")]
    head = f"{plain[0]}-{plain[-1]}" if len(plain) > 2 else " or ".join(plain)
    tail = ", ".join(rest[:-1]) + f" or {rest[-1]}" if len(rest) > 1 else "".join(rest)
    return f"a REALM-Bench {head} file" + (f", nor a {tail} one" if tail else "")


def convert_upstream(data: Any, source: str = "<mapping>") -> Any:
    """Convert an already-parsed upstream mapping (see :func:`load_realm_instance`)."""
    problem = detect_problem(data)
    if problem is None:
        if not isinstance(data, dict):
            raise InstanceFormatError(source, f"expected a JSON object, got {type(data).__name__}")
        partial = partial_upstream(data)
        if partial is not None:
            raise missing_key_error(data, partial[0], partial[1], source)
        raise InstanceFormatError(
            source,
            f"not {_problems_read()} (a J1 file, which is P11, is a text): expected the keys of one of "
            + "; ".join(f"{p}: {', '.join(k)}" for p, k in reversed(problem_keys()))
            + f" (found: {', '.join(sorted(map(str, data))) or 'none'})",
        )
    return converter(problem)(data, source)


def _is_text(path: Path) -> bool:
    """Whether ``path`` holds a J1 text rather than JSON: not named ``.json`` and its first
    non-blank character (after a byte-order mark) is neither ``{`` nor ``[`` (an empty file
    is left to the JSON reader, which says it is empty)."""
    if path.suffix.lower() == ".json":
        return False
    head = read_bytes(path, path.name)[:4096].removeprefix(b"\xef\xbb\xbf").lstrip()
    return bool(head) and head[:1] not in (b"{", b"[")


def load_j1_text(path: Path) -> Any:
    """A J1 job-shop text (REALM-Bench's ``J1/...txt``) as P11's instance; a text that is not
    one says that it was read as one, naming the file and line."""
    try:
        return problem_spec("P11").part("load")(path)
    except InstanceFormatError as exc:
        raise InstanceFormatError(
            exc.source, f"not JSON, so read as a REALM-Bench J1 job-shop text (P11: the standard or Taillard "
            f"form), which it is not either: {exc.problem}", field=exc.field, line=exc.line) from None


def load_realm_instance(path: str | Path) -> Any:
    """Read an upstream REALM-Bench file (a P1-P10, J2, J3 or J4 JSON file, or a J1 job-shop
    text, which is P11) and return crab_gym's instance for it.

    Units are converted to minutes from midnight and known upstream bugs repaired; each
    repair is reported as a :class:`~crab_gym.datasets.RealmRepairWarning`. A file that cannot
    be used raises :class:`~crab_gym.datasets.InstanceFormatError` naming the file and the
    field (or line, for malformed JSON). A J2 file's J1 file is looked for in the folders
    above the file (then under ``$CRAB_GYM_REALM_DIR``).
    """
    path = Path(path)
    if not path.is_file():
        raise InstanceFormatError(str(path), "no such file")
    if _is_text(path):
        return load_j1_text(path)
    data = read_json(path)
    return convert_upstream(data, str(path) if detect_problem(data) in NAMES_OTHER_FILES else path.name)
