"""The keywords every REALM env takes after its own, declared once: those of
:class:`~crab_gym.envs.realm.common.env.RealmEnv` (``reference``, ``reference_solve``), of
:class:`~crab_gym.envs.base.CrabEnv` (``render_mode``, ``invalid_action_penalty``,
``progress_weight``, ``optimality_weight``), and ``obfuscate`` (``RealmEnv.__new__``'s).

An env's ``__init__`` names its own arguments, takes the shared ones as ``**options`` and
passes them on to ``super().__init__``; :func:`realm_keywords` gives it the full signature,
so ``inspect.signature``, ``help()`` and :func:`~crab_gym.envs.realm.common.env.checked_init`
(which explains a misspelled keyword) list every keyword with its default::

    @checked_init
    @realm_keywords
    def __init__(self, instance: str = "p1_small_00", *, generator: int | None = None, **options: Any) -> None:
        ...
        super().__init__(actions, **options)
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from crab_gym.envs.base import CrabEnv
from crab_gym.envs.realm.common.env import RealmEnv


def shared_keywords() -> list[inspect.Parameter]:
    """The keyword-only parameters of ``RealmEnv.__init__``, ``CrabEnv.__init__`` then
    ``RealmEnv.__new__`` (``obfuscate``, which ``__new__`` takes), in order."""
    return [
        p
        for method in (RealmEnv.__init__, CrabEnv.__init__, RealmEnv.__new__)
        for p in inspect.signature(method, eval_str=True).parameters.values()
        if p.kind is p.KEYWORD_ONLY
    ]


def realm_keywords(init: Callable[..., None]) -> Callable[..., None]:
    """Give ``init`` (which ends with ``**options``, passed on to ``RealmEnv.__init__``) the
    signature it really has: its own parameters, then the shared keywords with their defaults."""
    sig = inspect.signature(init)
    own = [p for p in sig.parameters.values() if p.kind is not p.VAR_KEYWORD]
    if len(own) == len(sig.parameters):
        raise TypeError(f"{init.__qualname__} must take **options to pass the shared keywords on")
    clash = {p.name for p in own} & {p.name for p in shared_keywords()}
    if clash:
        raise TypeError(f"{init.__qualname__} names shared keywords itself: {', '.join(sorted(clash))}")
    init.__signature__ = sig.replace(parameters=[*own, *shared_keywords()])  # type: ignore[attr-defined]
    return init
