"""Keyword checks for env constructors: a misspelt keyword names the valid ones and the nearest.

``gym.make(id, tsk="x")`` would otherwise end in Python's bare "unexpected keyword argument",
re-raised by Gymnasium as "... was raised from the environment creator". Used by the desktop
env; the REALM envs' ``realm.common.env.checked_init`` builds its messages from the same parts.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable, Iterable, Sequence
from typing import Any


def did_you_mean(word: Any, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the nearest choice (the same word in another case first)."""
    choices = list(choices)
    same_case = [c for c in choices if c.lower() == str(word).lower()]
    close = same_case or difflib.get_close_matches(str(word), choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_keys_message(what: str, unknown: Sequence[Any], valid: Sequence[str], noun: str = "keys") -> str:
    """``unknown generator option 'sise' (did you mean 'size'?); valid keys: n_targets, size``."""
    named = ", ".join(f"{k!r}{did_you_mean(k, valid)}" for k in unknown)
    plural = "s" if len(unknown) > 1 else ""
    return f"unknown {what}{plural} {named}; valid {noun}: {', '.join(valid)}"


def checked_keywords(label: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Decorate an ``__init__`` so that an unknown keyword raises a TypeError naming it, the
    nearest valid keyword and every valid one (``label`` names the env in the message). The
    signature is kept (``inspect.signature`` follows ``__wrapped__``)."""

    def decorate(init: Callable[..., None]) -> Callable[..., None]:
        params = list(inspect.signature(init).parameters.values())[1:]
        keywords = [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        takes_any = any(p.kind is p.VAR_KEYWORD for p in params)

        @functools.wraps(init)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> None:
            unknown = [] if takes_any else [k for k in kwargs if k not in keywords]
            if unknown:
                raise TypeError(f"{label}: " + unknown_keys_message("keyword", unknown, keywords, noun="keywords"))
            init(self, *args, **kwargs)

        return wrapper

    return decorate
