"""The yardstick of J2/J3/J4 instances: shipped (``instances/references.json``, built by
:mod:`.build`), else solved once with :func:`~.oracle.reference_record` and cached on disk.

The value is the best plan known for the instance **with every disruption known from the
start** (the hindsight plan): no plan submitted in the env can be shorter than the best such
plan, so 1 means as short as the best plan known. J2/J4 records also hold
``adaptive_value``: CP-SAT re-planning at every strike without foresight, the yardstick of
the adaptation metric in the ``"oracle"`` mode.
"""

from __future__ import annotations

from crab_gym.envs.realm.common.references import Reference, stored_reference
from crab_gym.envs.realm.jobshop.variants.formats import INSTANCES
from crab_gym.envs.realm.jobshop.variants.model import ShopInstance
from crab_gym.envs.realm.jobshop.variants.oracle import reference_record


def time_limit(inst: ShopInstance) -> float:
    """CP-SAT's seconds per solve for an instance of this size (one worker). Beyond 5,000
    operations (J2 large: 10,000) 10 s do not get CP-SAT past loading the model: it hands
    back its hint without a status; 30 s give it a feasible status and a bound."""
    n = inst.n_ops
    return 2.0 if n <= 100 else 5.0 if n <= 1000 else 10.0 if n <= 5000 else 30.0


def reference(inst: ShopInstance) -> Reference:
    """The ``reference`` role: shipped, cached, or solved now (see the module docstring)."""
    return stored_reference(inst.problem, inst, INSTANCES, lambda i: reference_record(i, time_limit(i)))


def bound_reference(inst: ShopInstance) -> Reference:
    """The trivial lower bound (longest job, busiest machine) as a yardstick: no solver.
    It understates optimality, never overstates it."""
    return Reference(value=float(inst.trivial_lower_bound()), status="LOWER_BOUND", source="instance",
                     fingerprint=inst.fingerprint(), extra={"reference_kind": "lower_bound"})
