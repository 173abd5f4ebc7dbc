"""Job-shop scheduling (REALM P11): the env, instances, formats, Taillard's generator, the oracle.

>>> from crab_gym.envs.realm.jobshop import load_jssp_instance
>>> load_jssp_instance("ft06").reference
(55, 'optimum')
"""

import importlib
from typing import Any

#: Public name -> the module that defines it, imported on first use: importing the package
#: (the problem index reads ``jobshop.spec``) then loads neither NumPy's heavy parts nor OR-Tools.
_HOMES = {
    **dict.fromkeys(("parse_standard", "parse_taillard", "parse_taillard_many", "read_jssp_file",
                     "write_standard", "write_taillard"), "formats"),
    **dict.fromkeys(("TAILLARD_SEEDS", "generate_taillard", "random_instance", "taillard_benchmark"), "generator"),
    **dict.fromkeys(("list_jssp_instances", "load_jssp_instance"), "library"),
    "JSSPInstance": "model",
    **dict.fromkeys(("OracleResult", "solve_jssp"), "oracle"),  # the common result type, as solve_jssp returns it
    **dict.fromkeys(("ReferencePlan", "reference_plan"), "references"),
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOMES))


__all__ = [
    "JSSPInstance",
    "OracleResult",
    "ReferencePlan",
    "TAILLARD_SEEDS",
    "generate_taillard",
    "list_jssp_instances",
    "load_jssp_instance",
    "parse_standard",
    "parse_taillard",
    "parse_taillard_many",
    "random_instance",
    "read_jssp_file",
    "reference_plan",
    "solve_jssp",
    "taillard_benchmark",
    "write_standard",
    "write_taillard",
]
