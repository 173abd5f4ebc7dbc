"""REALM-Bench problem instances: models, seeded generators, upstream readers, shipped data."""

from crab_gym.datasets.realm.upstream import load_realm_instance

__all__ = ["load_realm_instance"]
