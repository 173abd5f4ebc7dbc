"""Instance models, seeded generators, loaders and shipped instances."""

from crab_gym.datasets.errors import InstanceFormatError, RealmRepairWarning
from crab_gym.datasets.realm import load_realm_instance

__all__ = ["InstanceFormatError", "RealmRepairWarning", "load_realm_instance"]
