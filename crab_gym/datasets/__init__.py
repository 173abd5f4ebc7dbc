"""Instance models, seeded generators, loaders and shipped instances."""

from crab_gym.datasets.errors import InstanceFormatError, RealmRepairWarning

__all__ = ["InstanceFormatError", "RealmRepairWarning"]
