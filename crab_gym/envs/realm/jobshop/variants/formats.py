"""Files of J2/J3/J4: crab_gym's JSON form, the shipped instances, and the upstream readers.

**Upstream REALM-Bench files** (read from a user's copy; none is shipped):

* J2 ``datasets/J2/disruptions/<name>_disrupted.json``: the J1 instance as text in
  ``base_instance.raw_content`` (standard or Taillard form; the ``jobs``, ``machines`` and
  ``processing_times`` lists beside it are empty and ignored), cut after 10 lines upstream,
  so the J1 file ``base_instance.source_file`` names is read instead (:mod:`.upstream_j2`);
  and ``disruptions``, one entry with ``type``, ``start_time``, ``duration`` and the type's
  fields.
* J3 ``datasets/J3/custom/j3_custom_NNN.json``: ``processing_times[job][k] = {operation,
  machine, processing_time}``, operations and machines numbered from 1; ``num_jobs``,
  ``num_machines`` and ``total_operations`` must agree.
* J4 ``datasets/J4/custom/j4_custom_NNN.json``: J3's shape (its ``base_instance`` is only a
  name) plus ``disruptions`` (``affected_jobs`` on most).

Repairs, each reported as a :class:`~crab_gym.envs.realm.common.errors.RealmRepairWarning`
naming the file and the field: 1-based machine, job and operation ids are converted to
0-based (once per field and file; a field holding a 0 is taken as 0-based already);
operations listed out of order are sorted by their number; a bare operation number n in
``affected_operations`` is the n-th operation counting job by job from 1; an empty
``affected_machines`` (power outage) or ``affected_operations`` (weather) list means the
whole shop; an empty ``affected_jobs`` list falls back to the shortage share; a
``shortage_percentage`` of at most 1 is a fraction (x 100); a severity written in percent
(above 1) is divided by 100, a severity word is :data:`SEVERITY`; the ``affected_jobs`` of a
disruption of machines is not used; given to J3, a J4 file's disruptions are not used.
Anything else malformed raises :class:`~crab_gym.envs.realm.common.errors.InstanceFormatError`
naming the file and the field, among them a value that would have to be cut to be read
(machine 3.7, a duration of 0.4, operation -1: :mod:`.upstream_values`), a shortage above
100 % or a severity above 100 %, a J4 file without ``disruptions``, and times beyond the
episode's bound (:data:`~.model.MAX_TIME`: the durations plus the latest disruption end).
"""

from __future__ import annotations

import functools
import json
import os
import re
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from crab_gym.envs.realm.common.errors import InstanceFormatError, RealmRepairWarning
from crab_gym.envs.realm.common.jsonfile import read_json_file
from crab_gym.envs.realm.jobshop.variants.model import KINDS, MAX_TIME, Disruption, ShopInstance, check_disruption
from crab_gym.envs.realm.jobshop.variants.upstream_j2 import base_instance
from crab_gym.envs.realm.jobshop.variants.upstream_values import (
    TIME_BOUND,
    id_list,
    missing,
    number,
    one_id,
    operation,
    whole,
)

INSTANCES = Path(__file__).resolve().parent / "instances"
PROBLEMS = ("J2", "J3", "J4")


@functools.cache
def _shipped(problem: str) -> dict[str, dict[str, Any]]:
    path = INSTANCES / f"{problem.lower()}.json"
    if not path.is_file():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))["instances"]


def list_instances(problem: str) -> list[str]:
    """The shipped instance names of ``problem`` (``"J2"``, ``"J3"``, ``"J4"``)."""
    return list(_shipped(problem))


def list_j2() -> list[str]:
    return list_instances("J2")


def list_j3() -> list[str]:
    return list_instances("J3")


def list_j4() -> list[str]:
    return list_instances("J4")


def load(spec: Any, problem: str) -> ShopInstance:
    """A shipped name, a file (crab_gym's JSON form or an upstream file of ``problem``), a
    mapping, or an instance."""
    if isinstance(spec, ShopInstance):
        return spec
    if isinstance(spec, Mapping):
        return from_mapping(spec, "<mapping>", problem)
    if not isinstance(spec, (str, os.PathLike)):
        raise TypeError(f"a {problem} instance is a name, a path, a mapping or a ShopInstance; got {type(spec).__name__}")
    records = _shipped(problem)
    if str(spec) in records:
        return ShopInstance.from_dict(records[str(spec)], str(spec))
    path = Path(spec)
    if path.is_file():
        return from_mapping(read_json_file(path), str(path), problem, name=path.stem)
    if path.suffix or len(path.parts) > 1:
        raise FileNotFoundError(f"no {problem} instance file {str(path)!r}")
    raise KeyError(f"unknown {problem} instance {str(spec)!r}: not a shipped name nor a file")


def load_j2(spec: Any) -> ShopInstance:
    return load(spec, "J2")


def load_j3(spec: Any) -> ShopInstance:
    return load(spec, "J3")


def load_j4(spec: Any) -> ShopInstance:
    return load(spec, "J4")


def from_mapping(data: Any, source: str, problem: str, name: str | None = None) -> ShopInstance:
    """crab_gym's JSON form, or an upstream file (J2: ``base_instance``; J3/J4:
    ``processing_times``). A J4 file must list its disruptions; J3 does not use a file's."""
    if not isinstance(data, Mapping):
        return ShopInstance.from_dict(data, source)
    if isinstance(data.get("base_instance"), Mapping):
        return convert_j2(dict(data), source, name)
    if "processing_times" in data:
        if problem == "J3":
            return _without_disruptions(convert_j3(dict(data), source, name), data, source)
        return (convert_j4 if problem == "J4" or data.get("disruptions") else convert_j3)(dict(data), source, name)
    if "base_instance" in data and problem == "J2":  # not an object: J2's error names the field
        return convert_j2(dict(data), source, name)
    if "jobs" not in data and "machines" not in data:
        raise _no_instance(data, source, problem)
    inst = ShopInstance.from_dict(data, source)
    if problem == "J3" and inst.disruptions:
        inst = _without_disruptions(ShopInstance(inst.jobs, inst.n_machines, inst.name, "J3"), data, source)
    return inst


def _no_instance(data: Mapping[str, Any], source: str, problem: str) -> InstanceFormatError:
    """The error for a mapping with neither form's instance: it names the upstream key."""
    key = "base_instance" if problem == "J2" else "processing_times"
    what = "the J1 instance" if problem == "J2" else "the jobs' operations"
    found = ", ".join(repr(str(k)) for k in list(data)[:8]) or "none"
    return InstanceFormatError(source, f"missing required key: an upstream REALM-Bench {problem} file has {key!r} "
                                       f"({what}), crab_gym's own form 'machines' and 'jobs' (found: {found})",
                               field=key)


def _without_disruptions(inst: ShopInstance, data: Mapping[str, Any], source: str) -> ShopInstance:
    """J3's instance of a file that lists disruptions (a J4 file, or our own form's): they
    are not used (J3's env would run them unseen)."""
    listed = data.get("disruptions")
    if listed:
        n = len(listed) if isinstance(listed, list) else 1
        _repair(source, f"disruptions: J3 has none; the file's {n} disruption(s) are not used (load it as J4)")
    return inst


# ====================================================================== upstream readers
def _repair(source: str, message: str) -> None:
    warnings.warn(f"{source}: {message}", RealmRepairWarning, stacklevel=3)


def _checked(build: Callable[[], ShopInstance], source: str, fields: Callable[[str], str]) -> ShopInstance:
    """``build()``, its errors naming ``source`` and the file's field (``fields`` maps the
    instance's field, like ``jobs[2][0]``, to the file's)."""
    try:
        return build()
    except InstanceFormatError as exc:
        raise InstanceFormatError(source, exc.problem, field=fields(exc.field or "")) from None


class _Ids:
    """1-based ids of one field kind converted to 0-based, with one repair note per field."""

    def __init__(self, source: str) -> None:
        self.source, self.noted = source, set()

    def convert(self, values: list[int], where: str, kind: str) -> list[int]:
        if values and min(values) == 0:
            return list(values)
        if values and where not in self.noted:
            self.noted.add(where)
            _repair(self.source, f"{where}: {kind} ids numbered from 1 converted to 0-based")
        return [v - 1 for v in values]


def convert_j3(data: dict[str, Any], source: str, name: str | None = None, problem: str = "J3") -> ShopInstance:
    """An upstream J3 file (``processing_times``, ids from 1)."""
    rows = data.get("processing_times")
    if not isinstance(rows, list) or not rows:
        raise InstanceFormatError(source, "expected a non-empty list of jobs", field="processing_times")
    raw_jobs, machines_seen = [], []
    for j, row in enumerate(rows):
        if not isinstance(row, list) or not row:
            raise InstanceFormatError(source, "expected a non-empty list of operations", field=f"processing_times[{j}]")
        ops = []
        for k, op in enumerate(row):
            where = f"processing_times[{j}][{k}]"
            if not isinstance(op, Mapping):
                raise InstanceFormatError(source, "expected {operation, machine, processing_time}", field=where)
            for key in ("machine", "processing_time"):
                if key not in op:
                    raise InstanceFormatError(source, "missing required key", field=f"{where}.{key}")
            ops.append((whole(op.get("operation", k + 1), source, f"{where}.operation"),
                        whole(op["machine"], source, f"{where}.machine"),
                        whole(op["processing_time"], source, f"{where}.processing_time", 0, MAX_TIME, TIME_BOUND)))
            machines_seen.append(ops[-1][1])
        numbers = [o[0] for o in ops]
        if len(set(numbers)) < len(numbers):
            twice = next(n for n in numbers if numbers.count(n) > 1)
            raise InstanceFormatError(source, f"operation number {twice} repeats within the job",
                                      field=f"processing_times[{j}]")
        if numbers != sorted(numbers):
            _repair(source, f"processing_times[{j}]: operations listed out of order, sorted by their number")
            ops.sort(key=lambda o: o[0])
        raw_jobs.append(ops)
    shift = 0 if min(machines_seen) == 0 else 1
    if shift:
        _repair(source, "processing_times[*].machine: machine ids numbered from 1 converted to 0-based")
    jobs = tuple(tuple((m - shift, p) for _, m, p in ops) for ops in raw_jobs)
    n_machines = _declared_counts(data, source, jobs, max(machines_seen) + 1 - shift)
    label = str(data.get("name") or data.get("instance_id") or data.get("instance_name") or name or Path(source).stem)
    return _checked(lambda: ShopInstance(jobs, n_machines, label, problem), source,
                    lambda f: "processing_times" + f.removeprefix("jobs") if f.startswith("jobs") else f)


def _declared_counts(data: dict[str, Any], source: str, jobs: tuple, used: int) -> int:
    """The machine count (``num_machines`` if it declares more than are used); ``num_jobs``,
    ``num_machines`` and ``total_operations``, when present, must agree with the jobs."""
    found = {"num_jobs": len(jobs), "num_machines": used, "total_operations": sum(len(r) for r in jobs)}
    for key, value in found.items():
        declared = data.get(key)
        if declared is None:
            continue
        ok = isinstance(declared, int) and not isinstance(declared, bool)
        if not ok or (declared < value if key == "num_machines" else declared != value):
            what = "machines used" if key == "num_machines" else key.removeprefix("num_").replace("_", " ")
            raise InstanceFormatError(source, f"declares {declared!r} but processing_times has {value} {what}",
                                      field=key)
    declared = data.get("num_machines", data.get("machines"))
    if not isinstance(declared, int) or isinstance(declared, bool):
        return used
    if declared > found["total_operations"]:  # a machine no operation uses only widens the spaces
        raise InstanceFormatError(source, f"declares {declared} machines but processing_times has only "
                                          f"{found['total_operations']} operations",
                                  field="num_machines" if "num_machines" in data else "machines")
    return max(used, declared)


def convert_j2(data: dict[str, Any], source: str, name: str | None = None) -> ShopInstance:
    """An upstream J2 file: the J1 text in ``base_instance.raw_content`` (or the J1 file it
    was cut from, :mod:`.upstream_j2`) and one disruption. A file in J3/J4's shape
    (``processing_times`` and a ``base_instance`` that is only a name) goes to their reader."""
    base = data.get("base_instance")
    if not isinstance(base, Mapping) and isinstance(data.get("processing_times"), list):
        return from_mapping(data, source, "J4", name)
    if not isinstance(base, Mapping):
        raise InstanceFormatError(source, "expected an object", field="base_instance")
    empty = [key for key in ("jobs", "machines", "processing_times") if base.get(key) == []]
    if empty:
        _repair(source, f"base_instance.{', '.join(empty)}: empty lists ignored, the instance is the J1 text")
    j1 = base_instance(base, source)
    jobs = tuple(tuple(zip(mrow, drow)) for mrow, drow in zip(j1.machines, j1.durations))
    label = str(data.get("name") or data.get("instance_id") or data.get("instance_name") or name or Path(source).stem)
    shell = _checked(lambda: ShopInstance(jobs, j1.n_machines, label, "J2"), source,
                     lambda f: "base_instance.raw_content" if f.startswith("jobs") else f)
    return shell.with_disruptions(_disruptions(data, source, shell))


def convert_j4(data: dict[str, Any], source: str, name: str | None = None) -> ShopInstance:
    """An upstream J4 file: J3's shape plus its disruptions."""
    shell = convert_j3(data, source, name, problem="J4")
    return shell.with_disruptions(_disruptions(data, source, shell))


def _disruptions(data: dict[str, Any], source: str, shell: ShopInstance) -> tuple[Disruption, ...]:
    if "disruptions" not in data:
        raise InstanceFormatError(source, f"missing required key: a {shell.problem} file lists its disruptions"
                                          + (" (a file without them is J3's)" if shell.problem == "J4" else ""),
                                  field="disruptions")
    raw = data.get("disruptions")
    if not isinstance(raw, list):
        raise InstanceFormatError(source, "expected a list of disruptions", field="disruptions")
    ids = _Ids(source)
    out, unused = [], []
    for i, raw_d in enumerate(raw):
        where = f"disruptions[{i}]"
        d = _disruption(raw_d, source, where, shell, ids)
        try:
            check_disruption(d, shell, where)
        except InstanceFormatError as exc:
            raise _named_upstream(exc, source, where, ids) from None
        if d.kind in MACHINE_KINDS and raw_d.get("affected_jobs"):
            unused.append(i)
        out.append(d)
    if unused:
        _repair(source, f"disruptions[{', '.join(map(str, unused))}].affected_jobs not used: a disruption of "
                        "machines delays whichever jobs need them (docs/jobshop.md, the disruption table)")
    return tuple(sorted(out, key=lambda d: d.start))


#: The upstream name of each field of a :class:`Disruption`, for errors about a file.
_UPSTREAM_FIELDS = {"start": "start_time", "duration": "duration", "machine": "machine_id",
                    "machines": "affected_machines", "jobs": "affected_jobs", "operations": "affected_operations",
                    "primary_machine": "primary_machine", "cascading_machines": "cascading_machines"}


def _named_upstream(exc: InstanceFormatError, source: str, where: str, ids: _Ids) -> InstanceFormatError:
    """A disruption's error with the file's field name (``machine_id``, not ``machine``),
    saying when the ids in it were converted from 1-based."""
    field = _UPSTREAM_FIELDS.get((exc.field or "").removeprefix(f"{where}."))
    shifted = any(n.startswith(f"{where}.") for n in ids.noted)
    note = " (after converting the file's ids, numbered from 1, to 0-based)" if shifted else ""
    return InstanceFormatError(source, exc.problem + note, field=f"{where}.{field}" if field else exc.field)


#: The types whose effect is machines down; their ``affected_jobs`` (J4) is not used.
MACHINE_KINDS = ("machine_breakdown", "power_outage", "emergency_shutdown", "cascading_failure")

#: REALM-Bench's weather severities (J2: moderate, severe; J4 adds extreme) as the share of
#: capacity lost over the window (docs/jobshop.md).
SEVERITY = {"moderate": 0.25, "severe": 0.5, "extreme": 0.75}


def _disruption(d: Any, source: str, where: str, shell: ShopInstance, ids: _Ids) -> Disruption:
    if not isinstance(d, Mapping):
        raise InstanceFormatError(source, "expected an object", field=where)
    extra = d.get("parameters") or d.get("details") or {}
    fields = {**{k: v for k, v in d.items()}, **(extra if isinstance(extra, Mapping) else {})}
    if "type" not in fields and "disruption_type" not in fields:
        raise missing(source, f"{where}.type")
    kind = fields.get("type", fields.get("disruption_type"))
    if not isinstance(kind, str) or kind not in KINDS:
        raise InstanceFormatError(source, f"unknown type {kind!r}; known: {', '.join(KINDS)}", field=f"{where}.type")
    for key in ("start_time", "duration"):
        if key not in fields and not (key == "start_time" and "start" in fields):
            raise missing(source, f"{where}.{key}")
    start = whole(fields.get("start_time", fields.get("start")), source, f"{where}.start_time", 0, MAX_TIME, TIME_BOUND)
    duration = whole(fields["duration"], source, f"{where}.duration", 1, MAX_TIME, TIME_BOUND)
    return Disruption(kind, start, duration, _PARAMS[kind](fields, source, where, shell, ids))


def _machines(fields: dict, key: str, source: str, where: str, ids: _Ids) -> list[int]:
    return ids.convert(id_list(fields.get(key), source, f"{where}.{key}"), f"{where}.{key}", "machine")


def _one_machine(f: dict, key: str, source: str, where: str, ids: _Ids) -> int:
    """The one machine a field names (``[2, 3]`` is refused, not read as 2)."""
    one_id(f.get(key), source, f"{where}.{key}")
    return _machines(f, key, source, where, ids)[0]


def _breakdown(f: dict, source: str, where: str, shell: ShopInstance, ids: _Ids) -> tuple:
    return (("machine", _one_machine(f, "machine_id", source, where, ids)),)


def _outage(f: dict, source: str, where: str, shell: ShopInstance, ids: _Ids) -> tuple:
    machines = _machines(f, "affected_machines", source, where, ids)
    if not machines:
        _repair(source, f"{where}.affected_machines is empty: the outage stops every machine")
    return (("machines", tuple(sorted(set(machines or range(shell.n_machines))))),)


def _shutdown(f: dict, source: str, where: str, shell: ShopInstance, ids: _Ids) -> tuple:
    return (("facility", str(f.get("facility", ""))),)


def _cascade(f: dict, source: str, where: str, shell: ShopInstance, ids: _Ids) -> tuple:
    primary = _one_machine(f, "primary_machine", source, where, ids)
    cascade = _machines(f, "cascading_machines", source, where, ids)
    return (("primary_machine", primary), ("cascading_machines", tuple(sorted(set(cascade)))))


def _supply(f: dict, source: str, where: str, shell: ShopInstance, ids: _Ids) -> tuple:
    jobs = ids.convert(id_list(f.get("affected_jobs"), source, f"{where}.affected_jobs"), f"{where}.affected_jobs", "job")
    if not jobs and _entries(f, "affected_operations"):
        jobs = sorted({j for j, _ in _operations(f, source, where, shell, "the jobs of")})
    elif "affected_jobs" in f and not jobs:
        _repair(source, f"{where}.affected_jobs is empty: the shortage share picks the jobs held")
    share = float(number(f.get("shortage_percentage", 0), source, f"{where}.shortage_percentage", 0, 100))
    if 0 < share <= 1:
        _repair(source, f"{where}.shortage_percentage {share:.4g} read as a fraction: {100 * share:.4g} %")
        share *= 100
    return (("resource", str(f.get("resource", ""))), ("shortage_percentage", share),
            ("jobs", tuple(sorted(set(jobs)))))


def _severity(f: dict, source: str, where: str) -> float:
    value = f.get("severity", 0.5)
    if isinstance(value, str) and value.strip().lower() in SEVERITY:
        return SEVERITY[value.strip().lower()]
    if isinstance(value, str) and not re.fullmatch(r"\s*\d+(\.\d+)?\s*", value):
        known = ", ".join(f"{k} ({v:g})" for k, v in SEVERITY.items())
        raise InstanceFormatError(source, f"expected a number or one of {known}, got {value!r}", field=f"{where}.severity")
    severity = float(number(value, source, f"{where}.severity", 0, 100))
    if severity > 1:
        _repair(source, f"{where}.severity {severity:g} read as a percentage: {severity / 100:g}")
        severity /= 100
    return severity


def _weather(f: dict, source: str, where: str, shell: ShopInstance, ids: _Ids) -> tuple:
    severity = _severity(f, source, where)
    ops = _operations(f, source, where, shell, "the machines of")
    if not ops:
        _repair(source, f"{where}.affected_operations is empty: the weather slows every machine")
        flat = [(j, k) for j, row in enumerate(shell.jobs) for k in range(len(row))]
        ops = [flat[next(i for i, (j, k) in enumerate(flat) if shell.jobs[j][k][0] == m)]
               for m in range(shell.n_machines) if any(mc == m for r in shell.jobs for mc, _ in r)]
    return (("operations", tuple(sorted(set(ops)))), ("severity", severity))


def _operations(f: dict, source: str, where: str, shell: ShopInstance, use: str) -> list[tuple[int, int]]:
    """``affected_operations`` as 0-based ``(job, operation)``: ``{job, operation}`` objects,
    ``"J1_O2"`` strings, or a bare number n (REALM-Bench's form): the n-th operation counting
    job by job from 1."""
    flat = [(j, k) for j, row in enumerate(shell.jobs) for k in range(len(row))]
    pairs, bare = [], []
    for i, entry in enumerate(_entries(f, "affected_operations")):
        kind, value = operation(entry, source, f"{where}.affected_operations[{i}]", len(flat))
        if kind == "pair":
            pairs.append(value)
        else:
            bare.append(flat[value - 1])
    if bare:
        _repair(source, f"{where}.affected_operations: {len(bare)} bare number(s) read as the n-th operation "
                        f"counting job by job from 1; the disruption uses {use} them")
    if pairs and min(min(o) for o in pairs) >= 1:
        _repair(source, f"{where}.affected_operations: job and operation ids numbered from 1 converted to 0-based")
        pairs = [(j - 1, k - 1) for j, k in pairs]
    return pairs + bare


def _entries(f: dict, key: str) -> list[Any]:
    """A list field's entries: absent, null, ``""`` or ``[]`` is none; one value alone is a
    list of one (so operation ``0`` is refused, not read as none)."""
    value = f.get(key)
    if value is None or value == "" or value == []:
        return []
    return value if isinstance(value, list) else [value]


_PARAMS = {"machine_breakdown": _breakdown, "power_outage": _outage, "emergency_shutdown": _shutdown,
           "cascading_failure": _cascade, "supply_delay": _supply, "weather_effect": _weather}
