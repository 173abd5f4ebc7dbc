"""Load and latency of ``crab-gym mcp``: many concurrent MCP sessions playing P11 episodes.

One run, three measurements, every client the official SDK's, every server a real
``crab-gym mcp`` process:

1. **the env's own step** (the reference): the same P11 episodes stepped in this process with the
   same calls the sessions send, timed around ``env.step`` alone;
2. **one session** over streamable HTTP on loopback, over stdio, and with no transport (the SDK's
   in-memory streams, client and server in this process), playing one call at a time; and
   crab_gym's own part of a call without the SDK (``tools.call``: the step, the reply's words and
   legal calls, the reply as JSON): the latency, and its overhead over the env's own step (p50 and
   p95 of the call minus p50 and p95 of the step); over HTTP also the CPU time per call of the
   server process and of this client;
3. **the load**: ``--sessions`` sessions at once over HTTP, each playing ``--episodes`` P11
   episodes with a seeded random legal player: episodes/s, tool calls/s and the p50/p95 call
   latency under load. Then every episode is checked against the server's ``episodes.jsonl``:
   one record per episode played (none lost), under its own session's agent name with the
   steps it played, and the calls replayed on a local env give the metrics recorded (none
   mixed). Any failed check is printed and the script exits 1.

The client processes and the server share this machine's cores, so the figures under load
include the clients' own work. Loopback only; every loop is bounded in count and time.

Usage: python benchmarks/mcp_load.py [--sessions 50] [--episodes 2] [--instance ft06] [--calls 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from mcp.shared.memory import create_connected_server_and_client_session

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import crab_gym  # noqa: E402, F401 - registers the ids
from crab_gym.evaluation.episode_runner import finished_metrics  # noqa: E402
from crab_gym.mcp import tools  # noqa: E402
from crab_gym.mcp.recording import EpisodeRecorder  # noqa: E402
from crab_gym.mcp.server import build_server, plain  # noqa: E402
from crab_gym.mcp.sessions import SessionRegistry  # noqa: E402
from tests.mcp_server.client import http_server, http_session, stdio_session  # noqa: E402

ENV_ID = "Realm-P11-v0"
#: Seconds the load phase may take before it is called off (bounded load test).
LOAD_DEADLINE_S = 600.0


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


# ====================================================================== the player
class Player:
    """A seeded random player over the legal calls each reply lists (what every session runs)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def choose(self, legal: list[dict[str, Any]]) -> dict[str, Any]:
        return self.rng.choice(legal)


async def play_episode(session: Any, instance: str, seed: int, agent: str, latencies: list[float]) -> dict[str, Any]:
    """One episode through tool calls; returns its calls and the final reply's record."""
    reply = await session.call_tool("start_episode", {"env_id": ENV_ID, "instance": instance, "seed": seed,
                                                      "agent": agent})
    if reply.isError:
        raise RuntimeError(reply.content[0].text)
    legal, player, calls = reply.structuredContent["legal_calls"], Player(seed), []
    while True:
        chosen = player.choose(legal)
        start = time.perf_counter()
        reply = await session.call_tool(chosen["name"], chosen["arguments"])
        latencies.append(time.perf_counter() - start)
        calls.append(chosen)
        data = reply.structuredContent
        if data.get("done"):
            return {"calls": calls, "result": data["result"], "agent": agent, "seed": seed}
        legal = data["legal_calls"]


# ====================================================================== 1. the env's own step
def bare_steps(instance: str, seeds: list[int]) -> tuple[list[float], list[dict[str, Any]]]:
    """The same player's episodes stepped locally: each step's time, and each episode's metrics."""
    env = gym.make(ENV_ID, instance=instance)
    base = env.unwrapped
    times, episodes = [], []
    for seed in seeds:
        env.reset(seed=seed)
        player, calls, done, info = Player(seed), [], False, {}
        while not done:
            legal = np.flatnonzero(base.action_masks())
            chosen = player.choose([base.codec.flat_to_call(int(i)) for i in legal])
            start = time.perf_counter()
            _, _, terminated, truncated, info = env.step(chosen)
            times.append(time.perf_counter() - start)
            calls.append(chosen)
            done = terminated or truncated
        episodes.append({"calls": calls, "metrics": finished_metrics(env, info)})
    env.close()
    return times, episodes


# ====================================================================== 2. one session
async def one_session(connect: Any, instance: str, calls: int) -> tuple[list[float], int]:
    """Sequential calls in one session until at least ``calls`` action calls were timed; returns
    their latencies and the number of tool calls made (each episode's start_episode too)."""
    latencies: list[float] = []
    async with connect() as session:
        seed = 0
        while len(latencies) < calls:
            await play_episode(session, instance, seed, "latency", latencies)
            seed += 1
    return latencies, len(latencies) + seed


@asynccontextmanager
async def in_memory_session() -> AsyncIterator[Any]:
    """The server's code with the SDK's in-memory streams instead of a transport (this process):
    what the tools and the SDK's session cost before any pipe or socket."""
    async with create_connected_server_and_client_session(build_server(SessionRegistry(EpisodeRecorder()))) as session:
        yield session


def tool_layer(instance: str, calls: int) -> list[float]:
    """crab_gym's own part of a call, without the SDK: ``tools.call`` (the env step, the reply's
    words and legal calls) and the reply made JSON, as the server does for each action call."""
    session = SessionRegistry(EpisodeRecorder()).open()
    latencies: list[float] = []
    seed = 0
    while len(latencies) < calls:
        reply = tools.call(session, "start_episode", {"env_id": ENV_ID, "instance": instance, "seed": seed})
        player = Player(seed)
        while reply.then is None:  # the episode's last call leaves its record to finish
            chosen = player.choose(reply.data["legal_calls"])
            start = time.perf_counter()
            reply = tools.call(session, chosen["name"], chosen["arguments"])
            plain(reply.data)
            latencies.append(time.perf_counter() - start)
        reply.then()
        seed += 1
    return latencies


def process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ====================================================================== 3. the load
async def load(url: str, sessions: int, episodes: int, instance: str) -> tuple[list[dict[str, Any]], list[float], float]:
    latencies: list[float] = []

    async def session_run(number: int) -> list[dict[str, Any]]:
        async with http_session(url) as session:
            return [await play_episode(session, instance, 1000 * number + e, f"load-{number:02d}", latencies)
                    for e in range(episodes)]

    start = time.perf_counter()
    runs = await asyncio.wait_for(asyncio.gather(*(session_run(i) for i in range(sessions))), LOAD_DEADLINE_S)
    return [episode for run in runs for episode in run], latencies, time.perf_counter() - start


def check_records(played: list[dict[str, Any]], records: list[dict[str, Any]], instance: str) -> list[str]:
    """Every episode played has exactly one record, its own, with the metrics a local replay gives."""
    problems = []
    by_key = {}
    for record in records:
        key = (record["policy"], record["seed"])
        if key in by_key:
            problems.append(f"two records for {key}")
        by_key[key] = record
    for episode in played:
        key = (episode["agent"], episode["seed"])
        record = by_key.pop(key, None)
        if record is None:
            problems.append(f"lost: no record of {key}")
            continue
        if record["steps"] != len(episode["calls"]) or record["env_kwargs"] != {"instance": instance}:
            problems.append(f"mixed: {key} recorded {record['steps']} steps on {record['env_kwargs']}, "
                            f"played {len(episode['calls'])} on {instance}")
        if record["metrics"] != episode["result"]["metrics"]:
            problems.append(f"mixed: {key}'s record and its last reply disagree")
    problems += [f"a record nobody played: {key}" for key in by_key]
    return problems


def check_replays(played: list[dict[str, Any]], instance: str) -> list[str]:
    """The calls of each episode played again locally give the metrics the server recorded."""
    env = gym.make(ENV_ID, instance=instance)
    problems = []
    for episode in played:
        env.reset(seed=episode["seed"])
        info: dict[str, Any] = {}
        for chosen in episode["calls"]:
            *_, info = env.step(chosen)
        local = json.loads(json.dumps(finished_metrics(env, info)))
        if local != episode["result"]["metrics"]:
            problems.append(f"mixed: {episode['agent']} seed {episode['seed']}: replayed metrics differ")
    env.close()
    return problems


# ====================================================================== main
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--episodes", type=int, default=2, help="episodes per session under load")
    parser.add_argument("--instance", default="ft06")
    parser.add_argument("--calls", type=int, default=1000, help="action calls timed in the one-session runs")
    args = parser.parse_args()

    step_times, _ = bare_steps(args.instance, list(range(max(1, args.calls // 30))))
    with tempfile.TemporaryDirectory() as tmp:
        with http_server(Path(tmp)) as server:
            server_cpu, client_cpu = process_cpu_s(server.process.pid), time.process_time()
            http_lat, n_calls = asyncio.run(one_session(lambda: http_session(server.url), args.instance, args.calls))
            cpu = ((process_cpu_s(server.process.pid) - server_cpu) / n_calls, (time.process_time() - client_cpu) / n_calls)
            played, load_lat, wall = asyncio.run(load(server.url, args.sessions, args.episodes, args.instance))
            time.sleep(0.5)
            records = [r for r in server.records if r["policy"].startswith("load-")]
        stdio_lat, _ = asyncio.run(one_session(stdio_session, args.instance, args.calls))
    memory_lat, _ = asyncio.run(one_session(in_memory_session, args.instance, args.calls))
    layer_lat = tool_layer(args.instance, args.calls)
    problems = check_records(played, records, args.instance) + check_replays(played, args.instance)
    report(args, step_times, {"one session, HTTP": http_lat, "one session, stdio": stdio_lat,
                              "no transport (in-process)": memory_lat, "crab_gym's part (no SDK)": layer_lat},
           played, load_lat, wall, records)
    print(f"one session, HTTP, CPU per tool call: server {ms(cpu[0])}, client {ms(cpu[1])} "
          "(CPU time: what the call costs, whatever else runs on the machine)")
    for problem in problems:
        print("FAILED:", problem)
    return 1 if problems else 0


def report(args: Any, step_times: list[float], single: dict[str, list[float]],
           played: list[dict[str, Any]], load_lat: list[float], wall: float, records: list[dict[str, Any]]) -> None:
    s50, s95 = percentile(step_times, 50), percentile(step_times, 95)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"crab-gym mcp on {ENV_ID} ({args.instance}), random legal player; {os.cpu_count()} CPUs, "
          f"load average {load} (1, 5, 15 min) at the end of the run\n")
    print(f"env's own step (reference):   p50 {ms(s50)}, p95 {ms(s95)} over {len(step_times)} steps")
    for name, lat in single.items():
        c50, c95 = percentile(lat, 50), percentile(lat, 95)
        print(f"{name + ':':30s}tool call p50 {ms(c50)}, p95 {ms(c95)}; overhead over the step "
              f"p50 {ms(c50 - s50)}, p95 {ms(c95 - s95)} ({len(lat)} calls)")
    calls = sum(len(e["calls"]) for e in played) + len(played)  # each episode's start_episode too
    print(f"\nload: {args.sessions} concurrent HTTP sessions x {args.episodes} episodes = {len(played)} episodes "
          f"in {wall:.1f} s: {len(played) / wall:.1f} episodes/s, {calls / wall:.0f} tool calls/s")
    print(f"load: action-call latency p50 {ms(percentile(load_lat, 50))}, p95 {ms(percentile(load_lat, 95))}, "
          f"max {ms(max(load_lat))} ({len(load_lat)} calls)")
    makespans = [e["result"]["metrics"]["makespan"] for e in played]
    print(f"load: {len(records)} records for {len(played)} episodes played; mean makespan "
          f"{statistics.mean(makespans):.1f}, optimality {statistics.mean(e['result']['metrics']['optimality'] for e in played):.3f}")


if __name__ == "__main__":
    raise SystemExit(main())
