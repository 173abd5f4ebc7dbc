"""What the MCP tests share: the server as a real process (``crab-gym mcp``), the SDK's own
client over stdio or streamable HTTP, and two players (the oracle plan, a seeded random legal
player) that play through tool calls only, as an agent would."""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

pytest.importorskip("mcp")

import httpx  # noqa: E402 - only once the SDK (which brings it) is known to be there
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from crab_gym.baselines.oracle_policy import OraclePolicy  # noqa: E402
from crab_gym.evaluation.episode import EpisodeSpec  # noqa: E402
from crab_gym.evaluation.episode_runner import EpisodeContext, finished_metrics, run_episode  # noqa: E402

TOKEN = "test-token-0123456789abcdef"
SERVER_START_S = 60.0
#: What a server process needs: this checkout's package, a cache of the test's own.
COMMAND = [sys.executable, "-m", "crab_gym.cli", "mcp"]


def _server_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2]) + os.pathsep + env.get("PYTHONPATH", "")
    return env


# ====================================================================== transports
@asynccontextmanager
async def stdio_session(out: Path | None = None, env: dict[str, str] | None = None) -> AsyncIterator[ClientSession]:
    """A stdio session with a fresh ``crab-gym mcp`` process (it ends with the session);
    ``env``: more environment variables of the server process."""
    args = [*COMMAND[1:], *(["--out", str(out)] if out else [])]
    params = StdioServerParameters(command=COMMAND[0], args=args, env={**_server_env(), **(env or {})})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class HttpServer:
    """A running ``crab-gym mcp --http`` process."""

    url: str
    out: Path
    process: subprocess.Popen

    @property
    def records(self) -> list[dict[str, Any]]:
        path = self.out / "episodes.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@contextmanager
def http_server(out: Path) -> Iterator[HttpServer]:
    """``crab-gym mcp --http`` on a free loopback port, with a token, until the block ends."""
    port = free_port()
    process = subprocess.Popen([*COMMAND, "--http", "--port", str(port), "--out", str(out)],
                               env={**_server_env(), "CRAB_GYM_TOKEN": TOKEN},
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        _wait_for(port, process)
        yield HttpServer(url, out, process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_for(port: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"crab-gym mcp --http exited with {process.returncode}: {process.stderr.read()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"crab-gym mcp --http did not listen on port {port} within {SERVER_START_S} s")


@asynccontextmanager
async def http_session(url: str, token: str = TOKEN) -> AsyncIterator[ClientSession]:
    """A streamable HTTP session with the bearer token."""
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as client, \
            streamable_http_client(url, http_client=client) as (read, write, _), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


# ====================================================================== players
@dataclass
class Played:
    """An episode played through MCP: the calls sent and the last reply's record."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] = field(default_factory=dict)
    replies: list[Any] = field(default_factory=list)


async def call(session: ClientSession, name: str, arguments: dict[str, Any] | None = None) -> Any:
    reply = await session.call_tool(name, arguments or {})
    assert reply.content and reply.content[0].type == "text"
    return reply


async def start(session: ClientSession, env_id: str, **arguments: Any) -> Any:
    reply = await call(session, "start_episode", {"env_id": env_id, **arguments})
    assert not reply.isError, reply.content[0].text
    return reply


async def play_oracle(session: ClientSession, env_id: str, seed: int, *, started: bool = False,
                      **kwargs: Any) -> Played:
    """Submit the reference plan of the instance the server's env draws for ``seed`` (read by
    the test from a local env of the same id, kwargs and seed) until the env ends the episode;
    ``started``: the session's running episode is that one (else it starts it)."""
    if not started:
        await start(session, env_id, seed=seed, keywords=kwargs or None)
    env = gym.make(env_id, **kwargs)
    env.reset(seed=seed)
    plan = {"name": "submit_plan", "arguments": OraclePolicy(env, verbose=False).plan_arguments(env.unwrapped)}
    env.close()
    played = Played()
    for _ in range(20):  # a disruption pauses some envs: the oracle then submits again
        reply = await _send(session, plan, played)
        if reply.structuredContent.get("done"):
            break
    return played


async def play_random(session: ClientSession, env_id: str, seed: int, *, max_calls: int = 400) -> Played:
    """A seeded random player: it picks among the legal calls each reply lists."""
    reply = await start(session, env_id, seed=seed)
    legal = reply.structuredContent["legal_calls"]
    rng = random.Random(seed)
    played = Played()
    for _ in range(max_calls):
        assert legal, f"{env_id}: no legal call left before the end ({played.calls[-3:]})"
        reply = await _send(session, rng.choice(legal), played)
        if reply.structuredContent.get("done"):
            break
        legal = reply.structuredContent["legal_calls"]
    return played


async def _send(session: ClientSession, chosen: dict[str, Any], played: Played) -> Any:
    reply = await call(session, chosen["name"], chosen["arguments"])
    played.calls.append(chosen)
    played.replies.append(reply)
    played.result = reply.structuredContent.get("result", {})
    return reply


# ====================================================================== references
def run_reference(env_id: str, seed: int, policy: str = "oracle", **kwargs: Any) -> dict[str, Any]:
    """What ``crab-gym run``'s runner records for the same episode, as JSON values."""
    factories = {"oracle": lambda env: OraclePolicy(env, verbose=False)}
    result = run_episode(EpisodeSpec(env_id, kwargs, policy, 0, seed, 10_000), EpisodeContext(factories))
    assert result.error is None, result.error
    return json.loads(json.dumps(result.to_dict()))


def replay(env_id: str, seed: int, calls: list[dict[str, Any]]) -> dict[str, Any]:
    """The calls played again on a local env, stepped and finished as ``crab-gym run`` does."""
    env = gym.make(env_id)
    env.reset(seed=seed)
    info: dict[str, Any] = {}
    for chosen in calls:
        *_, info = env.step(chosen)
    metrics = finished_metrics(env, info)
    env.close()
    return json.loads(json.dumps(metrics))
