"""Check the tested-versions table of docs/install.md against what is installed (run by .ci/run).

``python scripts/check_tested_versions.py newest`` (after CI's main install, which takes the
newest release each range allows) fails, listing each difference, when a "newest tested" entry
is not the version installed; ``lowest`` does the same for the "lowest tested" column (in CI's
second venv, pinned by ``.ci/lowest.txt``). Rows whose column is ``-`` are not checked.
"""

from __future__ import annotations

import re
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

#: The page holding the table (it moved from the README with the install details, issue 37).
PAGE = Path(__file__).resolve().parents[1] / "docs" / "install.md"
COLUMNS = {"lowest": 1, "newest": 2}


def table() -> list[tuple[list[str], str, str]]:
    """``(distributions, lowest, newest)`` per row of the tested-versions table of docs/install.md."""
    text = PAGE.read_text()
    start = text.index("| dependency | lowest tested | newest tested |")
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        name, lowest, newest = (cell.strip() for cell in line.strip("|").split("|"))
        dists = [re.sub(r"\s*\(.*\)", "", d).strip() for d in name.split("/")]
        rows.append((dists, lowest, newest))
    return rows


def differences(column: str) -> list[str]:
    """One line per distribution whose installed version is not the table's."""
    out = []
    for dists, *values in table():
        expected = values[COLUMNS[column] - 1]
        if expected == "-":
            continue
        for dist in dists:
            try:
                installed = version(dist).split("+")[0]  # torch 2.13.0+cpu is 2.13.0
            except PackageNotFoundError:
                installed = "not installed"
            if installed != expected:
                out.append(f"{dist}: docs/install.md says {expected} ({column} tested), installed {installed}")
    return out


if __name__ == "__main__":
    found = differences(sys.argv[1] if len(sys.argv) > 1 else "newest")
    for line in found:
        print(f"check_tested_versions: {line}", file=sys.stderr)
    if found:
        print("check_tested_versions: update the tested-versions table of docs/install.md", file=sys.stderr)
    sys.exit(1 if found else 0)
