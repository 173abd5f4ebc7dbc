"""Names and ids that must not repeat inside an instance (places, vehicles, passengers, ...).

Every family's instance model checks them the same way, naming the field of the first repeat
(``locations[3]``) in a :class:`~crab_gym.envs.realm.common.errors.FieldProblem`, which the
loaders turn into an ``InstanceFormatError`` naming the file too.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

from crab_gym.envs.realm.common.errors import FieldProblem


def check_unique(values: Iterable[Hashable], field: str, what: str, rule: str = "names must be unique") -> None:
    """Raise :class:`FieldProblem` at the first value equal to an earlier one.

    Args:
        values: the names or ids, in the instance's order.
        field: the field of one value, with ``{}`` for its index (``"vehicles[{}].vehicle_id"``).
        what: what a value is, in words (``"location"``, ``"vehicle id"``).
        rule: the rule, in words, that ends the message.
    """
    seen: set[Hashable] = set()
    for i, value in enumerate(values):
        if value in seen:
            raise FieldProblem(field.format(i), f"{what} {value!r} repeats; {rule}")
        seen.add(value)
