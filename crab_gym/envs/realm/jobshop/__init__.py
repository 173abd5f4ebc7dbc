"""Job-shop scheduling (REALM P11): the env, instances, formats, Taillard's generator, the oracle.

>>> from crab_gym.envs.realm.jobshop import load_jssp_instance
>>> load_jssp_instance("ft06").reference
(55, 'optimum')
"""

from crab_gym.envs.realm.jobshop.formats import (
    parse_standard,
    parse_taillard,
    parse_taillard_many,
    read_jssp_file,
    write_standard,
    write_taillard,
)
from crab_gym.envs.realm.jobshop.generator import (
    TAILLARD_SEEDS,
    generate_taillard,
    random_instance,
    taillard_benchmark,
)
from crab_gym.envs.realm.jobshop.library import list_jssp_instances, load_jssp_instance
from crab_gym.envs.realm.jobshop.model import JSSPInstance
from crab_gym.envs.realm.jobshop.oracle import OracleResult, solve_jssp
from crab_gym.envs.realm.jobshop.references import ReferencePlan, reference_plan

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
