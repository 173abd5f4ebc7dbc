"""Files of J2/J3/J4: crab_gym's JSON form, the shipped instances, and the upstream readers.

**Upstream REALM-Bench files** (read from a user's copy; none is shipped):

* J2 ``datasets/J2/disruptions/<name>_disrupted.json``: the J1 instance as text in
  ``base_instance.raw_content`` (standard form, machines from 0; the ``jobs``, ``machines``
  and ``processing_times`` lists beside it are empty and ignored) and ``disruptions``, one
  entry with ``type``, ``start_time``, ``duration`` and the type's fields.
* J3 ``datasets/J3/custom/j3_custom_NNN.json``: ``processing_times[job][k] = {operation,
  machine, processing_time}``, operations and machines numbered from 1.
* J4 ``datasets/J4/custom/``: J3's shape plus ``disruptions`` (``affected_jobs`` on most).

Repairs, each reported as a :class:`~crab_gym.envs.realm.common.errors.RealmRepairWarning`:
1-based machine, job and operation ids are converted to 0-based (once per field and file;
a field holding a 0 is taken as 0-based already); operations listed out of order are sorted
by their number; an empty ``affected_machines`` (power outage) or ``affected_operations``
(weather) list means the whole shop; an empty ``affected_jobs`` list falls back to the
shortage share; a severity written in percent (above 1) is divided by 100. Anything else
malformed raises :class:`~crab_gym.envs.realm.common.errors.InstanceFormatError` naming the
file and the field.
"""

from __future__ import annotations

import functools
import json
import os
import re
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from crab_gym.envs.realm.common.errors import InstanceFormatError, RealmRepairWarning
from crab_gym.envs.realm.common.jsonfile import read_json_file
from crab_gym.envs.realm.jobshop.formats import parse_standard
from crab_gym.envs.realm.jobshop.variants.model import KINDS, Disruption, ShopInstance, check_disruption

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
    ``processing_times``)."""
    if isinstance(data, Mapping) and "base_instance" in data:
        return convert_j2(dict(data), source, name)
    if isinstance(data, Mapping) and "processing_times" in data:
        return (convert_j4 if data.get("disruptions") else convert_j3)(dict(data), source, name)
    return ShopInstance.from_dict(data, source)


# ====================================================================== upstream readers
def _repair(source: str, message: str) -> None:
    warnings.warn(f"{source}: {message}", RealmRepairWarning, stacklevel=3)


def _number(value: Any, source: str, where: str, low: float = 0) -> float:
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+(\.\d+)?\s*", value):
        value = float(value)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value < low:
        raise InstanceFormatError(source, f"expected a number >= {low}, got {value!r}", field=where)
    return value


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


def _ints(value: Any, source: str, where: str) -> list[int]:
    if value is None:
        return []
    if not isinstance(value, list):
        value = [value]
    out = []
    for i, v in enumerate(value):
        n = _number(v, source, f"{where}[{i}]") if not isinstance(v, str) or v.strip().isdigit() else None
        if n is None:
            digits = re.findall(r"\d+", str(v))
            if len(digits) != 1:
                raise InstanceFormatError(source, f"expected an id, got {v!r}", field=f"{where}[{i}]")
            n = int(digits[0])
        out.append(int(n))
    return out


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
            number = int(_number(op.get("operation", k + 1), source, f"{where}.operation"))
            ops.append((number, int(_number(op["machine"], source, f"{where}.machine")),
                        int(_number(op["processing_time"], source, f"{where}.processing_time"))))
            machines_seen.append(ops[-1][1])
        if [o[0] for o in ops] != sorted(o[0] for o in ops):
            _repair(source, f"processing_times[{j}]: operations listed out of order, sorted by their number")
            ops.sort(key=lambda o: o[0])
        raw_jobs.append(ops)
    shift = 0 if min(machines_seen) == 0 else 1
    if shift:
        _repair(source, "processing_times[*].machine: machine ids numbered from 1 converted to 0-based")
    n_machines = max(machines_seen) + 1 - shift
    declared = data.get("num_machines", data.get("machines"))
    if isinstance(declared, int) and not isinstance(declared, bool) and declared > n_machines:
        n_machines = declared
    jobs = tuple(tuple((m - shift, p) for _, m, p in ops) for ops in raw_jobs)
    label = str(data.get("name") or data.get("instance_name") or name or Path(source).stem)
    return ShopInstance(jobs, n_machines, label, problem)


def convert_j2(data: dict[str, Any], source: str, name: str | None = None) -> ShopInstance:
    """An upstream J2 file: the J1 text in ``base_instance.raw_content`` and one disruption."""
    base = data.get("base_instance")
    if not isinstance(base, Mapping):
        raise InstanceFormatError(source, "expected an object", field="base_instance")
    text = base.get("raw_content")
    if not isinstance(text, str) or not text.strip():
        raise InstanceFormatError(source, "expected the J1 instance as text", field="base_instance.raw_content")
    for key in ("jobs", "machines", "processing_times"):
        if base.get(key) == []:
            _repair(source, f"base_instance.{key} is empty: the instance is read from base_instance.raw_content")
            break
    try:
        j1 = parse_standard(text, source=f"{source}: base_instance.raw_content")
    except InstanceFormatError as exc:
        raise InstanceFormatError(source, exc.problem, field="base_instance.raw_content", line=exc.line) from None
    jobs = tuple(tuple(zip(mrow, drow)) for mrow, drow in zip(j1.machines, j1.durations))
    label = str(data.get("name") or data.get("instance_name") or name or Path(source).stem)
    shell = ShopInstance(jobs, j1.n_machines, label, "J2")
    return shell.with_disruptions(_disruptions(data, source, shell))


def convert_j4(data: dict[str, Any], source: str, name: str | None = None) -> ShopInstance:
    """An upstream J4 file: J3's shape plus its disruptions."""
    shell = convert_j3(data, source, name, problem="J4")
    return shell.with_disruptions(_disruptions(data, source, shell))


def _disruptions(data: dict[str, Any], source: str, shell: ShopInstance) -> tuple[Disruption, ...]:
    raw = data.get("disruptions")
    if not isinstance(raw, list):
        raise InstanceFormatError(source, "expected a list of disruptions", field="disruptions")
    ids = _Ids(source)
    out = []
    for i, raw_d in enumerate(raw):
        d = _disruption(raw_d, source, f"disruptions[{i}]", shell, ids)
        try:
            check_disruption(d, shell, f"disruptions[{i}]")
        except InstanceFormatError as exc:
            raise InstanceFormatError(source, exc.problem, field=exc.field) from None
        out.append(d)
    return tuple(sorted(out, key=lambda d: d.start))


def _disruption(d: Any, source: str, where: str, shell: ShopInstance, ids: _Ids) -> Disruption:
    if not isinstance(d, Mapping):
        raise InstanceFormatError(source, "expected an object", field=where)
    fields = {**{k: v for k, v in d.items()}, **(d.get("parameters") or d.get("details") or {})}
    kind = fields.get("type", fields.get("disruption_type"))
    if kind not in KINDS:
        raise InstanceFormatError(source, f"unknown type {kind!r}; known: {', '.join(KINDS)}", field=f"{where}.type")
    start = int(_number(fields.get("start_time", fields.get("start")), source, f"{where}.start_time"))
    duration = int(_number(fields.get("duration"), source, f"{where}.duration", 1))
    return Disruption(kind, start, duration, _params(kind, fields, source, where, shell, ids))


def _machines(fields: dict, key: str, source: str, where: str, ids: _Ids) -> list[int]:
    return ids.convert(_ints(fields.get(key), source, f"{where}.{key}"), f"{where}.{key}", "machine")


def _params(kind: str, f: dict, source: str, where: str, shell: ShopInstance, ids: _Ids) -> tuple:
    m_all = list(range(shell.n_machines))
    if kind == "machine_breakdown":
        return (("machine", _machines(f, "machine_id", source, where, ids)[0]),)
    if kind == "power_outage":
        machines = _machines(f, "affected_machines", source, where, ids)
        if not machines:
            _repair(source, f"{where}.affected_machines is empty: the outage stops every machine")
        return (("machines", tuple(sorted(set(machines or m_all)))),)
    if kind == "emergency_shutdown":
        return (("facility", str(f.get("facility", ""))),)
    if kind == "cascading_failure":
        primary = _machines(f, "primary_machine", source, where, ids)
        cascade = _machines(f, "cascading_machines", source, where, ids)
        return (("primary_machine", primary[0]), ("cascading_machines", tuple(sorted(set(cascade)))))
    if kind == "supply_delay":
        jobs = ids.convert(_ints(f.get("affected_jobs"), source, f"{where}.affected_jobs"), f"{where}.affected_jobs", "job")
        if "affected_jobs" in f and not jobs:
            _repair(source, f"{where}.affected_jobs is empty: the shortage share picks the jobs held")
        share = float(_number(f.get("shortage_percentage", 0), source, f"{where}.shortage_percentage"))
        return (("resource", str(f.get("resource", ""))), ("shortage_percentage", min(share, 100.0)),
                ("jobs", tuple(sorted(set(jobs)))))
    return _weather(f, source, where, shell, ids)


def _weather(f: dict, source: str, where: str, shell: ShopInstance, ids: _Ids) -> tuple:
    severity = float(_number(f.get("severity", 0.5), source, f"{where}.severity"))
    if severity > 1:
        _repair(source, f"{where}.severity {severity:g} read as a percentage: {severity / 100:g}")
        severity = min(1.0, severity / 100)
    flat = [(j, k) for j, row in enumerate(shell.jobs) for k in range(len(row))]
    ops = []
    for i, entry in enumerate(f.get("affected_operations") or []):
        if isinstance(entry, Mapping):
            ops.append((int(_number(entry.get("job"), source, f"{where}.affected_operations[{i}].job")),
                        int(_number(entry.get("operation"), source, f"{where}.affected_operations[{i}].operation"))))
            continue
        numbers = [int(x) for x in re.findall(r"\d+", str(entry))]
        if len(numbers) == 2:
            ops.append((numbers[0], numbers[1]))
        elif len(numbers) == 1 and 1 <= numbers[0] <= len(flat):
            ops.append(tuple(x + 1 for x in flat[numbers[0] - 1]))  # the n-th operation, job by job
        else:
            raise InstanceFormatError(source, f"expected an operation, got {entry!r}", field=f"{where}.affected_operations[{i}]")
    if not ops:
        _repair(source, f"{where}.affected_operations is empty: the weather slows every machine")
        ops = [flat[next(i for i, (j, k) in enumerate(flat) if shell.jobs[j][k][0] == m)]
               for m in range(shell.n_machines) if any(mc == m for r in shell.jobs for mc, _ in r)]
        return (("operations", tuple(sorted(set(ops)))), ("severity", severity))
    if min(min(o) for o in ops) >= 1:
        _repair(source, f"{where}.affected_operations: job and operation ids numbered from 1 converted to 0-based")
        ops = [(j - 1, k - 1) for j, k in ops]
    return (("operations", tuple(sorted(set(ops)))), ("severity", severity))
