"""The MCP server: the official SDK's low-level ``Server`` over stdio or streamable HTTP.

The low-level server, not ``FastMCP``, because the tool list is per session: it is the six
generic tools plus the running episode's env actions, whose JSON schemas come from the env
(:mod:`crab_gym.mcp.tools`). Each MCP session gets its own :class:`~crab_gym.mcp.sessions.Session`
from the server's lifespan, which the SDK enters once per session (one stdio connection, one
``Mcp-Session-Id`` over HTTP) and leaves when it ends -- then a running episode is recorded as
truncated. The SDK's own input check is off: its tool cache is shared by all sessions, and the
env gives a better reason than a schema validator would.

Over stdio, the lines are read and the replies written on the event loop (:mod:`crab_gym.mcp.stdio`)
rather than through the SDK's worker threads. Env steps run on the event loop (microseconds, so a
session's call costs no thread hop) until one is slow (a desktop's: then that episode's calls run
in a worker thread); what may wait on a solver or the disk -- making and resetting an env, the
solves an env deferred to the episode's end, appending to ``episodes.jsonl`` -- runs in a worker
thread, so one session's solve or desktop never stalls the others. A per-session lock keeps one
session's calls in order.

HTTP is guarded as ``crab-gym serve`` is: it binds ``127.0.0.1`` unless told otherwise (and warns
when told otherwise), every request needs ``Authorization: Bearer <token>`` (``--token``, else
``$CRAB_GYM_TOKEN``, else a random one printed on stderr), and on loopback the SDK's DNS-rebinding
check refuses a ``Host`` header that does not name this machine.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import sys
import warnings
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib.metadata import PackageNotFoundError, version
from types import SimpleNamespace
from typing import Any

from crab_gym._optional import require as require_extra
from crab_gym.core import serving
from crab_gym.core.serving import is_loopback, print_err
from crab_gym.mcp import tools
from crab_gym.mcp.recording import EpisodeRecorder
from crab_gym.mcp.sessions import Session, SessionRegistry
from crab_gym.mcp.stdio import open_pipes

#: The token's environment variable: the same one ``crab-gym serve`` reads.
TOKEN_ENV_VAR = serving.TOKEN_ENV_VAR
SERVER_NAME = "crab-gym"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8766
#: Where the streamable HTTP endpoint lives: http://HOST:PORT/mcp
HTTP_PATH = "/mcp"
INSTRUCTIONS = (
    "crab_gym's planning problems (REALM-Bench) and desktop tasks (CrabDesktop-v0, keywords "
    "{\"task\": ..., \"seed\": ...}) as episodes. list_envs and list_instances say what "
    "there is; start_episode(env_id, instance or seed) starts one, after which the env's own actions "
    "are tools (or call act(name, arguments)); observe gives the task, the state in words and the "
    "legal calls. A rejected call leaves the state unchanged and says why. The episode ends when the "
    "env says so (submit_plan submits a whole plan); its last reply gives the env's metrics."
)


def sdk() -> SimpleNamespace:
    """The SDK's parts, imported on first use (the ``mcp`` extra)."""
    lowlevel = require_extra("mcp.server.lowlevel", "mcp")
    return SimpleNamespace(
        types=require_extra("mcp.types", "mcp"), Server=lowlevel.Server,
        NotificationOptions=lowlevel.NotificationOptions, anyio=require_extra("anyio", "mcp"),
    )


# ====================================================================== the server
def build_server(registry: SessionRegistry) -> Any:
    """The SDK server answering every session from ``registry``."""
    mcp = sdk()
    anyio = mcp.anyio

    @asynccontextmanager
    async def session_lifespan(_server: Any) -> AsyncIterator[Session]:
        session = registry.open()
        session.extra["lock"] = anyio.Lock()
        try:
            yield session
        finally:
            with anyio.CancelScope(shield=True):  # the record is written even when the session is cancelled
                await anyio.to_thread.run_sync(registry.close, session)

    server = mcp.Server(SERVER_NAME, version=_version(), instructions=INSTRUCTIONS, lifespan=session_lifespan)

    @server.list_tools()
    async def list_tools() -> Any:
        session: Session = server.request_context.lifespan_context
        return mcp.types.ListToolsResult(tools=[_tool(mcp.types, d) for d in tools.definitions(session)])

    @server.call_tool(validate_input=False)
    async def call_tool(name: str, arguments: dict[str, Any] | None) -> Any:
        session: Session = server.request_context.lifespan_context
        async with session.extra["lock"]:
            reply = await _answer(anyio, session, name, arguments)
        if reply.tools_changed:
            await server.request_context.session.send_tool_list_changed()
        return mcp.types.CallToolResult(content=[mcp.types.TextContent(type="text", text=reply.text)],
                                        structuredContent=plain(reply.data), isError=reply.error)

    return server


async def _answer(anyio: Any, session: Session, name: str, arguments: Any) -> tools.ToolReply:
    """The tool's reply: on the loop, or in a thread for the tools that may wait."""
    if tools.blocking(session, name):
        reply = await anyio.to_thread.run_sync(tools.call, session, name, arguments)
    else:
        reply = tools.call(session, name, arguments)
    while reply.then is not None:
        reply = await anyio.to_thread.run_sync(reply.then)
    return reply


def _tool(types: Any, definition: tools.ToolDef) -> Any:
    hints = types.ToolAnnotations(readOnlyHint=True) if definition.read_only else None
    return types.Tool(name=definition.name, description=definition.description,
                      inputSchema=definition.input_schema, annotations=hints)


def plain(data: Any) -> dict[str, Any]:
    """``data`` as plain JSON values (numpy scalars and arrays become numbers and lists)."""
    def convert(value: Any) -> Any:
        for attr in ("item", "tolist"):
            if hasattr(value, attr):
                return getattr(value, attr)()
        return str(value)

    return json.loads(json.dumps(data, default=convert))


def _version() -> str:
    try:
        return version("crab_gym")
    except PackageNotFoundError:  # pragma: no cover - a source tree that was never installed
        return "0"


def _options(server: Any) -> Any:
    return server.create_initialization_options(sdk().NotificationOptions(tools_changed=True))


class _SessionEndNoise(logging.Filter):
    """Drops the SDK's traceback for a GET stream closed because its session ended (a client's
    DELETE): that is the normal end of an HTTP session, not an error."""

    def filter(self, record: logging.LogRecord) -> bool:
        closed = record.exc_info is not None and type(record.exc_info[1]).__name__ == "ClosedResourceError"
        return not (closed and "standalone SSE writer" in record.getMessage())


def _quiet_sdk() -> None:
    """The SDK warns on every call of a tool it has not listed in *any* session ("no validation
    will be performed"): per-session tool lists make that the normal case, so only errors show."""
    logging.getLogger("mcp.server.lowlevel.server").setLevel(logging.ERROR)
    logging.getLogger("mcp.server.streamable_http").addFilter(_SessionEndNoise())


# ====================================================================== stdio
def serve_stdio(recorder: EpisodeRecorder) -> None:
    """Answer one MCP client on stdin/stdout until it closes them."""
    mcp = sdk()
    stdio = require_extra("mcp.server.stdio", "mcp")
    registry = SessionRegistry(recorder)
    server = build_server(registry)
    _quiet_sdk()

    # The protocol owns stdout (copies of its descriptor): anything else printed while serving
    # goes to stderr.
    sys.stdout.flush()
    stdin_fd, stdout_fd = sys.stdin.fileno(), sys.stdout.fileno()
    saved, sys.stdout = sys.stdout, sys.stderr

    async def main() -> None:
        pipes = await open_pipes(stdin_fd, stdout_fd)
        if pipes is None:  # stdin is a regular file: the SDK reads and writes through its threads
            out = open(os.dup(stdout_fd), "w", encoding="utf-8")  # noqa: SIM115 - closed with the transport
            streams = stdio.stdio_server(stdout=mcp.anyio.wrap_file(out))
        else:
            streams = stdio.stdio_server(stdin=pipes[0], stdout=pipes[1])
        try:
            async with streams as (read, write):
                await server.run(read, write, _options(server))
        finally:
            if pipes is not None:
                pipes[1].close()

    try:
        mcp.anyio.run(main)
    finally:
        registry.close_all()
        sys.stdout = saved


# ====================================================================== streamable HTTP
class BearerGuard:
    """Pure ASGI: a request without ``Authorization: Bearer <token>`` gets 401 and reaches nothing."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                problem = "invalid bearer token" if given else "missing bearer token"
                body = json.dumps({"error": f"{problem}: send 'Authorization: Bearer <token>'"}).encode()
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": body})
                return
        elif scope["type"] != "lifespan":  # no websockets
            return
        await self.app(scope, receive, send)


class _Endpoint:
    """The session manager as an ASGI app (a class instance, so Starlette's Route passes it raw ASGI)."""

    def __init__(self, manager: Any) -> None:
        self.manager = manager

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        await self.manager.handle_request(scope, receive, send)


def http_app(registry: SessionRegistry, token: str, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
             json_response: bool = True) -> Any:
    """The ASGI app of the streamable HTTP endpoint (``/mcp``), behind the token check.

    ``json_response``: each call's answer is one JSON body (the default: fewer bytes and no SSE
    stream per call); notifications (the tool list changed) go on the session's GET stream."""
    if not token:
        raise ValueError("the HTTP server needs a non-empty token")
    mcp = sdk()
    manager_mod = require_extra("mcp.server.streamable_http_manager", "mcp")
    security = require_extra("mcp.server.transport_security", "mcp")
    starlette = SimpleNamespace(app=require_extra("starlette.applications", "mcp"),
                                routing=require_extra("starlette.routing", "mcp"))
    # On loopback, a Host header that is not this machine's is a DNS-rebinding page: refused. On
    # another address the clients' names for this machine are not known here; the token guards it.
    hosts = sorted({f"{host}:{port}", f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"})
    settings = security.TransportSecuritySettings(
        enable_dns_rebinding_protection=is_loopback(host), allowed_hosts=hosts,
        allowed_origins=[f"http://{h}" for h in hosts])
    manager = manager_mod.StreamableHTTPSessionManager(
        app=build_server(registry), json_response=json_response, security_settings=settings)

    @asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        async with manager.run():
            try:
                yield
            finally:
                with mcp.anyio.CancelScope(shield=True):
                    await mcp.anyio.to_thread.run_sync(registry.close_all)

    app = starlette.app.Starlette(routes=[starlette.routing.Route(HTTP_PATH, endpoint=_Endpoint(manager))],
                                  lifespan=lifespan)
    return BearerGuard(app, token)


def resolve_token(token: str | None) -> str:
    """The given token, else ``$CRAB_GYM_TOKEN``, else a new random one (printed on stderr)."""
    return serving.resolve_token(token, lambda new: print_err(
        f"crab-gym mcp: generated token (clients send 'Authorization: Bearer <token>'): {new}"))


def serve_http(recorder: EpisodeRecorder, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT,
               token: str | None = None, log_level: str = "warning") -> None:
    """Serve streamable HTTP at http://HOST:PORT/mcp until interrupted."""
    uvicorn = require_extra("uvicorn", "mcp")
    token = resolve_token(token)
    if not is_loopback(host):
        warnings.warn(f"serving MCP on {host}: anyone who can reach this address and has the token plays "
                      "episodes here, and HTTP is not encrypted -- put it behind TLS", stacklevel=2)
    registry = SessionRegistry(recorder)
    app = http_app(registry, token, host=host, port=port)
    print(f"crab-gym mcp: streamable HTTP on http://{host}:{port}{HTTP_PATH}", file=sys.stderr, flush=True)
    _quiet_sdk()
    try:
        uvicorn.run(app, host=host, port=port, log_level=log_level)
    finally:
        registry.close_all()
