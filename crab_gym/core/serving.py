"""What every crab_gym server (``crab-gym serve``, ``crab-gym mcp --http``) decides the same
way: whether an address is reachable from this machine only, and the bearer token clients
must send (given, from ``$CRAB_GYM_TOKEN``, or made up and announced)."""

from __future__ import annotations

import ipaddress
import os
import secrets
import sys
import warnings
from collections.abc import Callable

#: The environment variable a server and its clients read the token from.
TOKEN_ENV_VAR = "CRAB_GYM_TOKEN"


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def resolve_token(token: str | None, announce: Callable[[str], None]) -> str:
    """The given token, else ``$CRAB_GYM_TOKEN``, else a new random one, passed to
    ``announce`` (the server says how its clients send it); a short token is warned about."""
    token = token or os.environ.get(TOKEN_ENV_VAR) or ""
    if token:
        if len(token) < 16:
            warnings.warn("the server token is shorter than 16 characters: easy to guess", stacklevel=3)
        return token
    token = secrets.token_urlsafe(32)
    announce(token)
    return token


def print_err(message: str) -> None:
    """A line on stderr, flushed (a server's notices)."""
    print(message, file=sys.stderr, flush=True)
