"""``crab-gym serve``: an HTTP server that runs the declared desktop Actions on this machine.

Safe by default:

* binds ``127.0.0.1`` unless told otherwise (and warns when it is told otherwise);
* every request needs ``Authorization: Bearer <token>``; a missing or wrong token gets 401
  before the request body is even read, so nothing runs; if no token is given, a random one
  is generated and printed;
* only the declared Actions (:data:`~crab_gym.envs.desktop.actions.MACHINE_ACTIONS`) run,
  with arguments validated by their pydantic schemas: no code execution, no pickles; file
  paths stay inside the work directory;
* request bodies are limited in size (413 beyond the limit);
* errors are JSON ``{"error": "..."}`` with a status that says whose fault it was
  (400/404/413/422 the client's, 500 the desktop's).

Routes (all JSON): ``GET /v1/info``, ``GET /v1/actions`` (the schemas), and
``POST /v1/actions/{name}`` with body ``{"arguments": {...}}`` -> ``{"result": ...}``.

(No ``from __future__ import annotations``: FastAPI must resolve the route's ``Request``
annotation, which lives in a local scope.)
"""

import contextlib
import json
import secrets
import signal
import socket
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from crab_gym._optional import require as require_extra
from crab_gym.core import serving
from crab_gym.core.action import Action, ActionArgumentError
from crab_gym.core.serving import is_loopback, print_err
from crab_gym.envs.desktop import wire
from crab_gym.envs.desktop.actions import MACHINE_ACTIONS
from crab_gym.envs.desktop.machine import DesktopMachine

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
#: Default largest request body in bytes.
DEFAULT_MAX_BODY = 256 * 1024
TOKEN_ENV_VAR = serving.TOKEN_ENV_VAR


def _fastapi() -> Any:
    """fastapi, imported on first use (the HTTP stack is the optional ``desktop`` extra)."""
    return require_extra("fastapi", "desktop")


def _uvicorn() -> Any:
    return require_extra("uvicorn", "desktop")


# --------------------------------------------------------------------------- ASGI guards
class _Guard:
    """Pure ASGI middleware: bearer-token check, then body-size limit, before any route runs.

    It reads the whole body itself (up to the limit) and replays it to the app, so a route
    never sees a request that is unauthenticated or too large.
    """

    def __init__(self, app: Any, token: str, max_body: int) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()
        self.max_body = max_body

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websockets or other protocols: refuse, unauthenticated
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        headers = dict(scope.get("headers") or [])
        given = headers.get(b"authorization", b"")
        if not secrets.compare_digest(given, self._expected):
            problem = "missing bearer token" if not given else "invalid bearer token"
            await _send_json(send, 401, {"error": f"{problem}: send 'Authorization: Bearer <token>'"},
                             extra_headers=[(b"www-authenticate", b'Bearer realm="crab-gym"')])
            return
        declared = headers.get(b"content-length")
        if declared is not None:
            try:
                too_big = int(declared) > self.max_body
            except ValueError:
                await _send_json(send, 400, {"error": "bad Content-Length header"})
                return
            if too_big:
                await _send_json(send, 413, {"error": f"request body larger than {self.max_body} bytes"})
                return
        body = bytearray()
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body.extend(message.get("body", b""))
            more = message.get("more_body", False)
            if len(body) > self.max_body:
                await _send_json(send, 413, {"error": f"request body larger than {self.max_body} bytes"})
                return
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def _send_json(send: Callable, status: int, payload: dict, extra_headers: list | None = None) -> None:
    data = json.dumps(payload).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers + (extra_headers or [])})
    await send({"type": "http.response.body", "body": data})


# --------------------------------------------------------------------------- the app
def create_app(machine: Any, token: str, *, actions: Mapping[str, Action] | None = None,
               max_body: int = DEFAULT_MAX_BODY) -> Any:
    """The ASGI app serving ``machine`` (a DesktopMachine or anything the actions accept).

    Args:
        machine: injected as the actions' kept ``env`` parameter.
        token: the bearer token every request must carry (non-empty).
        actions: the declared actions (default: every desktop machine action).
        max_body: largest request body in bytes.
    """
    fastapi = _fastapi()
    if not token or not isinstance(token, str):
        raise ValueError("the server needs a non-empty token")
    if actions is None:
        actions = MACHINE_ACTIONS
    declared = dict(actions)
    lock = threading.Lock()  # one desktop: one action at a time
    app = fastapi.FastAPI(title="crab-gym desktop", docs_url=None, redoc_url=None, openapi_url=None)
    _add_read_routes(app, machine, declared, lock)
    _add_action_route(app, fastapi, machine, declared, lock)
    return _wrap(app, token, max_body)


def _add_read_routes(app: Any, machine: Any, declared: dict[str, Action], lock: threading.Lock) -> None:
    """``GET /v1/info`` (the machine's info and the action names) and ``GET /v1/actions`` (schemas)."""

    @app.get("/v1/info")
    def info() -> Any:
        with lock:
            data = machine.info()
        return {**data, "actions": sorted(declared)}

    @app.get("/v1/actions")
    def list_actions() -> Any:
        return [a.to_schema() for a in declared.values()]


def _decode_body(body: bytes) -> tuple[dict[str, Any], str]:
    """A request body -> (its payload, "") or ({}, why it is not ``{"arguments": {...}}``)."""
    try:
        payload = json.loads(body.decode("utf-8") or "{}")
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return {}, f"the body is not valid JSON: {exc}"
    if not isinstance(payload, dict) or set(payload) - {"arguments"}:
        return {}, 'the body must be a JSON object {"arguments": {...}}'
    return payload, ""


def _add_action_route(app: Any, fastapi: Any, machine: Any, declared: dict[str, Action],
                      lock: threading.Lock) -> None:
    """``POST /v1/actions/{name}``: validate, run under the lock, and say whose fault an error is."""
    from fastapi.concurrency import run_in_threadpool  # noqa: PLC0415 - the optional desktop extra
    from fastapi.responses import JSONResponse  # noqa: PLC0415

    def error(status: int, message: str, **extra: Any) -> Any:
        return JSONResponse({"error": message, **extra}, status_code=status)

    def execute(act: Action, values: dict[str, Any]) -> Any:
        with lock:
            return act.run_validated(values, env=machine)

    @app.post("/v1/actions/{name}")
    async def run_action(name: str, request: fastapi.Request) -> Any:
        if name not in declared:
            return error(404, f"unknown action '{name}'", available=sorted(declared))
        payload, problem = _decode_body(await request.body())
        if problem:
            return error(400, problem)
        act = declared[name]
        try:
            values = act.validate(payload.get("arguments", {}))
        except ActionArgumentError as exc:
            return error(422, str(exc), action=name, parameter=exc.parameter)
        try:
            result = await run_in_threadpool(execute, act, values)
        except ActionArgumentError as exc:
            return error(422, str(exc), action=name, parameter=exc.parameter)
        except (ValueError, KeyError) as exc:
            return error(400, f"action '{name}': {exc}", action=name)
        except Exception as exc:  # the desktop failed, not the request
            return error(500, f"action '{name}' failed: {type(exc).__name__}: {exc}", action=name)
        return JSONResponse({"result": wire.encode(result)})


def _wrap(app: Any, token: str, max_body: int) -> Any:
    """Put the guard in front of the whole app (outside FastAPI's own middleware)."""
    guarded = _Guard(app, token, max_body)
    guarded.fastapi_app = app  # type: ignore[attr-defined]
    return guarded


# --------------------------------------------------------------------------- running
def resolve_token(token: str | None, *, announce: Callable[[str], None] | None = None) -> str:
    """The given token, else ``$CRAB_GYM_TOKEN``, else a new random one (announced)."""
    say = announce or print_err
    return serving.resolve_token(token, lambda new: say(
        f"crab-gym serve: generated token (clients send it as gym.make(..., token=...) or $CRAB_GYM_TOKEN): {new}"))


class ServerThread:
    """Run the server in a background thread of this process (tests, notebooks).

    ``port=0`` picks a free port; :attr:`url` says which. :meth:`stop` shuts it down.
    """

    def __init__(self, app: Any, host: str = DEFAULT_HOST, port: int = 0, log_level: str = "warning") -> None:
        uvicorn = _uvicorn()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._sock = socket.socket(family, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((host, port))
        self.host, self.port = host, self._sock.getsockname()[1]
        config = uvicorn.Config(app, log_level=log_level, lifespan="off", timeout_graceful_shutdown=2)
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self._sock]}, daemon=True)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self, timeout: float = 10.0) -> "ServerThread":
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the desktop server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()

    def __enter__(self) -> "ServerThread":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


#: Signals that stop ``crab-gym serve`` the way Ctrl-C does (desktop stopped, folders removed).
TERMINATING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def _exit_cleanly_on_termination() -> Iterator[None]:
    """Turn SIGTERM/SIGHUP into ``SystemExit(128 + signal)``, so ``finally`` blocks run.

    Without this a SIGTERM (``kill``, systemd, ``docker stop``) ends the process on the spot:
    uvicorn catches it to shut down gracefully, then re-raises it under the previous -- the
    default -- handler, which kills the process before any cleanup, leaving Xvfb, openbox
    and the temporary folders behind. Only the first signal raises: a second one must not
    interrupt the cleanup the first started. A no-op outside the main thread.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    raised = False

    def handler(signum: int, frame: Any) -> None:
        nonlocal raised
        if not raised:
            raised = True
            raise SystemExit(128 + signum)

    previous = {sig: signal.signal(sig, handler) for sig in TERMINATING_SIGNALS}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def serve(*, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, token: str | None = None,
          display: str | None = None, screen_size: tuple[int, int] = (1024, 640),
          workdir: str | None = None, max_body: int = DEFAULT_MAX_BODY,
          log_level: str = "info") -> None:
    """Start (or attach to) a desktop and serve its Actions until interrupted."""
    uvicorn = _uvicorn()
    token = resolve_token(token)
    if not is_loopback(host):
        warnings.warn(
            f"serving on {host}: anyone who can reach this address and has the token controls "
            "this desktop, and HTTP is not encrypted -- put it behind TLS (an SSH tunnel or a "
            "reverse proxy)", stacklevel=2,
        )
    with _exit_cleanly_on_termination():
        machine = DesktopMachine(display=display, screen_size=screen_size, workdir=workdir)
        try:
            print_err(f"crab-gym serve: desktop on display {machine.desktop.display}, "
                       f"work directory {machine.workdir}, listening on http://{host}:{port}")
            uvicorn.run(create_app(machine, token, max_body=max_body), host=host, port=port,
                        log_level=log_level, lifespan="off")
        finally:
            machine.close()
