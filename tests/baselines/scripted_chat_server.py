"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for end-to-end tests.

Standard library only: ``http.server`` in a daemon thread on a random free loopback port.
Each POST to ``/v1/chat/completions`` consumes the next script entry:

* a dict -> HTTP 200 with that assistant message (``content`` and/or ``tool_calls``);
* :class:`HTTPFailure` -> that status with an OpenAI-style error body and headers;
* a callable ``f(request_json) -> entry`` -> computed from the request (e.g. from the state).

For concurrency tests it can hold each answer for ``delay`` seconds, records when every
request arrived (``request_times``, monotonic) and the most requests it had in flight at once
(``max_in_flight``); ``usage`` sets the token counts each answer reports.

Bounded: it answers at most ``max_requests`` requests (then 500 with ``x-should-retry: false``)
and shuts itself down after ``lifetime`` seconds even if a test forgets to.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: A script entry: an assistant message dict, an :class:`HTTPFailure`, or a callable making one.
Entry = Any

_ids = itertools.count()


@dataclass
class HTTPFailure:
    """A scripted HTTP error response."""

    status: int
    message: str = "scripted failure"
    headers: dict[str, str] = field(default_factory=dict)


def tool_call(name: str, arguments: Any, call_id: str | None = None) -> dict[str, Any]:
    """An OpenAI tool call; ``arguments`` is a dict (JSON-encoded here) or a raw string."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id or f"call_{next(_ids)}", "type": "function",
            "function": {"name": name, "arguments": args}}


def calls_message(*calls: dict[str, Any], content: str | None = None) -> dict[str, Any]:
    """An assistant message with tool calls."""
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def text_message(content: str) -> dict[str, Any]:
    """An assistant message with text only."""
    return {"role": "assistant", "content": content}


class ScriptedChatServer:
    """Serve a fixed script of chat-completions replies; record every request.

    Use as a context manager; ``url`` is the ``base_url`` for the openai client.
    """

    def __init__(self, script: Sequence[Entry], *, max_requests: int = 500, lifetime: float = 60.0,
                 delay: float = 0.0, usage: dict[str, int] | None = None) -> None:
        self.script = list(script)
        self.max_requests = max_requests
        self.delay = delay
        self.usage = usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        self.requests: list[dict[str, Any]] = []  # {"path", "headers", "json"}
        self.request_times: list[float] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True, name="scripted-chat-server")
        self._timer = threading.Timer(lifetime, self.stop)
        self._timer.daemon = True
        self._stopped = False

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def remaining(self) -> int:
        return len(self.script)

    def start(self) -> ScriptedChatServer:
        self._thread.start()
        self._timer.start()
        return self

    def stop(self) -> None:
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        self._timer.cancel()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ScriptedChatServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # ------------------------------------------------------------------ protocol
    def _next_entry(self, request: dict[str, Any]) -> Any:
        with self._lock:
            if len(self.requests) > self.max_requests or not self.script:
                return HTTPFailure(500, "script exhausted", {"x-should-retry": "false"})
            entry = self.script.pop(0)
        while callable(entry):
            entry = entry(request)
        return entry

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

            def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self._leave()  # the answer is decided: the request no longer counts as in flight
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    payload = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send(400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
                    return
                with server._lock:
                    server.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "json": payload})
                    server.request_times.append(time.monotonic())
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                self._counted = True
                try:
                    if server.delay:
                        time.sleep(server.delay)
                    self._answer(payload)
                finally:
                    self._leave()

            def _leave(self) -> None:
                if getattr(self, "_counted", False):
                    self._counted = False
                    with server._lock:
                        server.in_flight -= 1

            def _answer(self, payload: dict[str, Any]) -> None:
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                    return
                entry = server._next_entry(payload)
                if isinstance(entry, HTTPFailure):
                    self._send(entry.status, {"error": {"message": entry.message, "type": "scripted", "code": entry.status}},
                               entry.headers)
                    return
                message = {"role": "assistant", "content": entry.get("content")}
                if entry.get("tool_calls"):
                    message["tool_calls"] = entry["tool_calls"]
                n = len(server.requests)
                self._send(200, {
                    "id": f"chatcmpl-{n}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": payload.get("model", "scripted"),
                    "choices": [{
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                        "logprobs": None,
                    }],
                    "usage": dict(server.usage),
                })

        return Handler
