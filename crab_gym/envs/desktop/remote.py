"""The client side of ``crab-gym serve``: a core Environment backend that runs actions over HTTP.

``gym.make("CrabDesktop-v0", remote_url=..., token=...)`` uses :class:`RemoteBackend`
instead of an in-process desktop: every action (agent input, task setup, state checks,
screenshots) is validated here, posted as JSON, validated again by the server and run there.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from crab_gym._optional import require as require_extra
from crab_gym.core.action import Action, ActionArgumentError
from crab_gym.envs.desktop import wire
from crab_gym.envs.desktop.server import TOKEN_ENV_VAR


class RemoteDesktopError(RuntimeError):
    """The server refused or failed a request; carries the HTTP status and its message."""

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        super().__init__(f"desktop server answered {status}: {message}")


class RemoteBackend:
    """Runs desktop Actions on a ``crab-gym serve`` machine.

    Args:
        url: the server's base URL, e.g. ``"http://127.0.0.1:8765"``.
        token: its bearer token (default: ``$CRAB_GYM_TOKEN``).
        timeout: seconds to wait for one request.
    """

    def __init__(self, url: str, token: str | None = None, *, timeout: float = 30.0) -> None:
        httpx = require_extra("httpx", "desktop")  # imported on first use: an optional extra
        token = token or os.environ.get(TOKEN_ENV_VAR)
        if not token:
            raise ValueError(f"a remote desktop needs token=... (or ${TOKEN_ENV_VAR}): the token `crab-gym serve` printed")
        self.url = url.rstrip("/")
        self._client = httpx.Client(base_url=self.url, timeout=timeout,
                                    headers={"Authorization": f"Bearer {token}"})

    def _check(self, response: Any) -> Any:
        try:
            payload = response.json()
        except ValueError:
            payload = {"error": response.text[:500]}
        if response.status_code >= 400:
            message = payload.get("error") if isinstance(payload, dict) else None
            raise RemoteDesktopError(response.status_code, str(message or payload))
        return payload

    def run(self, action: Action, arguments: Mapping[str, Any]) -> Any:
        """Validate locally (same error as in-process), then run on the server."""
        values = action.validate(arguments)
        response = self._client.post(f"/v1/actions/{action.name}",
                                     json={"arguments": action.to_json_arguments(values)})
        if response.status_code == 422:
            raise ActionArgumentError(action.name, None, self._error_text(response))
        return wire.decode(self._check(response)["result"])

    @staticmethod
    def _error_text(response: Any) -> str:
        try:
            return str(response.json().get("error"))
        except ValueError:
            return response.text[:500]

    def info(self) -> dict[str, Any]:
        """Screen size, work directory, apps and action names of the remote machine."""
        return self._check(self._client.get("/v1/info"))

    def close(self) -> None:
        self._client.close()
