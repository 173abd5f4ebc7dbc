"""Readers and writers for the two common JSSP text formats.

* **Standard form** (OR-Library, Fisher-Thompson, Lawrence, ...)::

      n m
      machine duration machine duration ...     # one line per job, machines from 0

  Lines starting with ``#`` and blank lines are ignored.

* **Taillard's long form** (his 1993 files)::

      Nb of jobs, Nb of Machines, Time seed, Machine seed, Upper bound, Lower bound
        15  15  840612802  398197754  1231  1005
      Times
        94 66 10 ...                          # n lines of m durations
      Machines
         7 13  5 ...                          # n lines of m machines, numbered from 1

  A file may hold several instances back to back (:func:`parse_taillard_many`). A seed or
  bound written as 0 means "unknown".

Every malformed input raises :class:`InstanceFormatError` naming the source, the line
(1-based) and what was wrong, so a user can fix the file without reading this module.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from crab_gym.envs.realm.common.errors import InstanceFormatError
from crab_gym.envs.realm.common.jsonfile import decode_text, parse_json_text, read_bytes
from crab_gym.envs.realm.common.limits import MAX_QUANTITY, MAX_SEED
from crab_gym.envs.realm.jobshop.model import JSSPInstance, refiled

TAILLARD_HEADER = "Nb of jobs, Nb of Machines, Time seed, Machine seed, Upper bound, Lower bound"


def _lines(text: str) -> Iterator[tuple[int, list[str]]]:
    """(line number, tokens) of the meaningful lines: blank and ``#`` lines are skipped."""
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        yield number, stripped.split()


def _ints(tokens: list[str], source: str, line: int, what: str) -> list[int]:
    out = []
    for pos, tok in enumerate(tokens, start=1):
        shown = tok if len(tok) <= 24 else f"{tok[:20]}..."
        try:
            value = int(tok) if len(tok) <= 24 else None  # also avoids Python's int/str digit limit
        except ValueError:
            raise InstanceFormatError(
                source, f"{what}: token {pos} is {shown!r}, expected an integer", line=line
            ) from None
        if value is None or abs(value) > MAX_SEED:
            raise InstanceFormatError(
                source, f"{what}: token {pos} ({shown}) is too large; numbers here are at most {MAX_SEED}", line=line
            )
        out.append(value)
    return out


def _read(path_or_text: str | Path, source: str | None, is_path: bool | None) -> tuple[str, str]:
    """(text, source name): a path's content checked as UTF-8, or the text itself."""
    if isinstance(path_or_text, Path) or (is_path is None and _looks_like_path(path_or_text)):
        path = Path(path_or_text)
        src = source or path.name
        raw = read_bytes(path, src)
        return decode_text(raw, src, json_paths=raw.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"{", b"[")), src
    return str(path_or_text), source or "<text>"


def _build(src: str, line: int, **fields) -> JSSPInstance:
    """A :class:`JSSPInstance` whose own checks (bounds, ...) name the file and ``line``."""
    try:
        return JSSPInstance(**fields)
    except InstanceFormatError as exc:
        raise refiled(exc, src, line=line) from None


def _looks_like_path(value: str) -> bool:
    return "\n" not in value and len(value) < 4096 and Path(value).is_file()


# --------------------------------------------------------------------------- standard form
def parse_standard(
    path_or_text: str | Path, *, name: str | None = None, source: str | None = None
) -> JSSPInstance:
    """Parse the standard ``n m`` + ``machine duration`` pairs form (machines from 0)."""
    text, src = _read(path_or_text, source, None)
    lines = list(_lines(text))
    if not lines:
        raise InstanceFormatError(src, "empty file: expected a first line 'n_jobs n_machines'", line=1)
    head_line, head = lines[0]
    if len(head) != 2:
        raise InstanceFormatError(
            src, f"expected 'n_jobs n_machines' (2 integers), got {len(head)} tokens", line=head_line
        )
    n, m = _ints(head, src, head_line, "header")
    if n < 1 or m < 1:
        raise InstanceFormatError(src, f"header needs n_jobs >= 1 and n_machines >= 1, got {n} {m}", line=head_line)
    body = lines[1:]
    if len(body) < n:
        last = body[-1][0] if body else head_line
        raise InstanceFormatError(src, f"header announces {n} jobs but only {len(body)} job lines follow", line=last)
    if len(body) > n:
        raise InstanceFormatError(src, f"extra line after the {n} job lines announced by the header", line=body[n][0])
    durations, machines = [], []
    for j, (number, tokens) in enumerate(body):
        if len(tokens) != 2 * m:
            raise InstanceFormatError(
                src, f"job {j}: expected {m} 'machine duration' pairs ({2 * m} integers), got {len(tokens)} tokens",
                line=number,
            )
        values = _ints(tokens, src, number, f"job {j}")
        mrow, drow = values[0::2], values[1::2]
        for k, (mc, p) in enumerate(zip(mrow, drow)):
            if not 0 <= mc < m:
                raise InstanceFormatError(
                    src, f"job {j}, operation {k}: machine {mc} outside 0..{m - 1} (machines are numbered from 0)",
                    line=number,
                )
            if p < 0:
                raise InstanceFormatError(src, f"job {j}, operation {k}: negative duration {p}", line=number)
            if p > MAX_QUANTITY:
                raise InstanceFormatError(
                    src, f"job {j}, operation {k}: duration {p} is too large (at most {MAX_QUANTITY})", line=number
                )
        machines.append(mrow)
        durations.append(drow)
    return _build(src, head_line, durations=durations, machines=machines, name=name or _stem(src), n_machines=m)


def write_standard(instance: JSSPInstance) -> str:
    """The standard form of an instance (bounds and seeds are not part of this format)."""
    width = len(str(max(max(r) for r in instance.durations)))
    mwidth = len(str(instance.n_machines - 1))
    out = [f"{instance.n_jobs} {instance.n_machines}"]
    for mrow, drow in zip(instance.machines, instance.durations):
        out.append(" ".join(f"{mc:>{mwidth}} {p:>{width}}" for mc, p in zip(mrow, drow)))
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- Taillard form
def parse_taillard_many(
    path_or_text: str | Path, *, name: str | None = None, source: str | None = None
) -> list[JSSPInstance]:
    """Parse every instance of a Taillard long-form file (machines numbered from 1)."""
    text, src = _read(path_or_text, source, None)
    lines = list(_lines(text))
    if not lines:
        raise InstanceFormatError(src, f"empty file: expected the header line '{TAILLARD_HEADER}'", line=1)
    out: list[JSSPInstance] = []
    i = 0
    stem = name or _stem(src)
    while i < len(lines):
        i, inst = _parse_one_taillard(lines, i, src, stem, len(out))
        out.append(inst)
    if len(out) > 1:
        out = [_renamed(inst, f"{stem}_{k + 1}") for k, inst in enumerate(out)]
    return out


def parse_taillard(
    path_or_text: str | Path, *, name: str | None = None, source: str | None = None
) -> JSSPInstance:
    """Parse a Taillard long-form file holding exactly one instance."""
    text, src = _read(path_or_text, source, None)
    found = parse_taillard_many(text, name=name, source=src)
    if len(found) != 1:
        raise InstanceFormatError(src, f"file holds {len(found)} instances; use parse_taillard_many()")
    return found[0]


def _parse_one_taillard(
    lines: list[tuple[int, list[str]]], i: int, src: str, stem: str, index: int
) -> tuple[int, JSSPInstance]:
    """The instance whose header is ``lines[i]``, and the index of the line after it."""
    header_line, (n, m, tseed, mseed, ub, lb) = _taillard_header(lines, i, src)
    i += 2
    durations = _taillard_block(lines, i, src, "Times", n, m)
    i += 1 + n
    machines1 = _taillard_block(lines, i, src, "Machines", n, m)
    block_start = lines[i][0]
    i += 1 + n
    machines = _zero_based_machines(machines1, m, src, block_start)
    _check_taillard_durations(durations, src, header_line)
    lower = lb if lb > 0 else None
    upper = ub if ub > 0 else None
    if lower is not None and upper is not None and lower > upper:
        raise InstanceFormatError(src, f"lower bound {lb} exceeds upper bound {ub}", line=header_line)
    inst = _build(
        src,
        header_line,
        durations=durations,
        machines=machines,
        name=stem,
        n_machines=m,
        optimum=upper if (upper is not None and upper == lower) else None,
        upper_bound=upper,
        lower_bound=lower,
        time_seed=tseed if tseed > 0 else None,
        machine_seed=mseed if mseed > 0 else None,
    )
    return i, inst


def _taillard_header(lines: list[tuple[int, list[str]]], i: int, src: str) -> tuple[int, list[int]]:
    """The header at ``lines[i]`` and its line of numbers: (that line's number,
    [jobs, machines, time seed, machine seed, upper bound, lower bound])."""
    number, tokens = lines[i]
    header = " ".join(tokens).lower()
    if not header.startswith("nb of jobs"):
        raise InstanceFormatError(
            src, f"expected the header line '{TAILLARD_HEADER}', got {' '.join(tokens)[:60]!r}", line=number
        )
    if i + 1 >= len(lines):
        raise InstanceFormatError(src, "missing the line of numbers after the header", line=number)
    number, tokens = lines[i + 1]
    if len(tokens) != 6:
        raise InstanceFormatError(
            src,
            f"expected 6 numbers (jobs, machines, time seed, machine seed, upper bound, lower bound), "
            f"got {len(tokens)}",
            line=number,
        )
    values = _ints(tokens, src, number, "header numbers")
    n, m = values[0], values[1]
    if n < 1 or m < 1:
        raise InstanceFormatError(src, f"needs jobs >= 1 and machines >= 1, got {n} {m}", line=number)
    return number, values


def _zero_based_machines(machines1: list[list[int]], m: int, src: str, block_start: int) -> list[list[int]]:
    """The Machines block (numbered from 1) numbered from 0, every machine in 1..m."""
    machines = []
    for j, row in enumerate(machines1):
        for k, mc in enumerate(row):
            if not 1 <= mc <= m:
                raise InstanceFormatError(
                    src,
                    f"job {j}, operation {k}: machine {mc} outside 1..{m} (this format numbers machines from 1)",
                    line=block_start + 1 + j,
                )
        machines.append([mc - 1 for mc in row])
    return machines


def _check_taillard_durations(durations: list[list[int]], src: str, header_line: int) -> None:
    """Every duration in 0..MAX_QUANTITY; an error names the header's line."""
    for j, row in enumerate(durations):
        for k, p in enumerate(row):
            if p < 0:
                raise InstanceFormatError(src, f"job {j}, operation {k}: negative duration {p}", line=header_line)
            if p > MAX_QUANTITY:
                raise InstanceFormatError(
                    src, f"job {j}, operation {k}: duration {p} is too large (at most {MAX_QUANTITY})",
                    line=header_line,
                )


def _taillard_block(
    lines: list[tuple[int, list[str]]], i: int, src: str, title: str, n: int, m: int
) -> list[list[int]]:
    if i >= len(lines):
        last = lines[-1][0]
        raise InstanceFormatError(src, f"missing the '{title}' block", line=last)
    number, tokens = lines[i]
    if len(tokens) != 1 or tokens[0].lower() != title.lower():
        raise InstanceFormatError(src, f"expected the line '{title}', got {' '.join(tokens)[:60]!r}", line=number)
    rows = []
    for j in range(n):
        if i + 1 + j >= len(lines):
            raise InstanceFormatError(
                src, f"'{title}' block ends after {j} rows; the header announces {n} jobs", line=number + j
            )
        row_line, row = lines[i + 1 + j]
        if len(row) != m:
            raise InstanceFormatError(
                src, f"'{title}' row for job {j}: expected {m} integers, got {len(row)}", line=row_line
            )
        rows.append(_ints(row, src, row_line, f"'{title}' row for job {j}"))
    return rows


def write_taillard(instance: JSSPInstance) -> str:
    """Taillard's long form. Unknown seeds and bounds are written as 0."""
    def num(v: int | None) -> int:
        return 0 if v is None else int(v)

    ub = instance.upper_bound if instance.upper_bound is not None else instance.optimum
    lb = instance.lower_bound if instance.lower_bound is not None else instance.optimum
    head = [instance.n_jobs, instance.n_machines, num(instance.time_seed), num(instance.machine_seed), num(ub), num(lb)]
    width = max(2, len(str(max(max(r) for r in instance.durations))), len(str(instance.n_machines)))
    out = [TAILLARD_HEADER, " ".join(f"{v:>10}" for v in head), "Times"]
    out += [" ".join(f"{p:>{width}}" for p in row) for row in instance.durations]
    out.append("Machines")
    out += [" ".join(f"{mc + 1:>{width}}" for mc in row) for row in instance.machines]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- any file
def detect_format(text: str) -> str:
    """``"taillard"``, ``"json"`` or ``"standard"``, from the first meaningful line."""
    for _, tokens in _lines(text):
        first = " ".join(tokens)
        if first.startswith(("{", "[")):
            return "json"
        if first.lower().startswith("nb of jobs"):
            return "taillard"
        return "standard"
    return "standard"


def read_jssp_file(path: str | Path, *, name: str | None = None) -> JSSPInstance:
    """Read one instance from a file in either text format or the project's JSON form."""
    path = Path(path)
    text, src = _read(path, None, True)
    fmt = detect_format(text)
    if fmt == "json":
        inst = JSSPInstance.from_dict(parse_json_text(text, src), source=src)
        return _renamed(inst, name) if name else inst
    if fmt == "taillard":
        return parse_taillard(text, name=name or path.stem, source=src)
    return parse_standard(text, name=name or path.stem, source=src)


def _stem(source: str) -> str:
    return Path(source).stem if source and not source.startswith("<") else "jssp"


def _renamed(inst: JSSPInstance, name: str) -> JSSPInstance:
    data = inst.to_dict()
    data["name"] = name
    return JSSPInstance.from_dict(data)
