"""The ``crab-gym mcp`` subcommand: the suite as an MCP server (stdio, or streamable HTTP).

Wired into ``crab_gym.cli`` with :func:`add_mcp_parser`, as ``serve`` is. The SDK is the
optional ``mcp`` extra: without it the command says which ``pip install`` to run (exit code 2).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from crab_gym._optional import require_installed
from crab_gym.evaluation.episode_store import EpisodeStoreError
from crab_gym.mcp.recording import EpisodeRecorder
from crab_gym.mcp.server import DEFAULT_HOST, DEFAULT_PORT, HTTP_PATH, TOKEN_ENV_VAR, serve_http, serve_stdio


def add_mcp_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``mcp`` to an ``argparse`` sub-parsers object; returns the new parser."""
    parser = subparsers.add_parser(
        "mcp",
        help="serve the envs to MCP clients (agent frameworks, chat apps) over stdio or HTTP",
        description=(
            "Run a Model Context Protocol server: tools to list the envs and their instances, start an "
            "episode, observe it in words, and call the env's own actions (with their JSON schemas) up to "
            "the env's metrics. Speaks stdio by default (a client starts this command); with --http, "
            f"streamable HTTP at http://HOST:PORT{HTTP_PATH}, where every request needs the bearer token "
            f"(--token, else ${TOKEN_ENV_VAR}, else a random token is printed). With --out DIR, each "
            "finished episode is appended to DIR/episodes.jsonl, which `crab-gym report DIR` reads."
        ),
    )
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    parser.add_argument("--host", default=DEFAULT_HOST, help="--http: address to bind (default %(default)s: this machine only)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="--http: port (default %(default)s)")
    parser.add_argument("--token", default=None,
                        help=f"--http: bearer token clients must send (prefer ${TOKEN_ENV_VAR}: command lines are "
                             "visible to other users)")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="append each finished episode to DIR/episodes.jsonl (default: keep none)")
    parser.add_argument("--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"],
                        help="--http: server log level (default: %(default)s)")
    parser.set_defaults(func=run_mcp)
    return parser


def run_mcp(args: argparse.Namespace) -> int:
    """Serve until the client leaves (stdio) or Ctrl-C (HTTP); returns the exit status."""
    require_installed("mcp", "mcp")
    if not args.http and (args.token or args.host != DEFAULT_HOST or args.port != DEFAULT_PORT):
        return _usage("--host, --port and --token go with --http (stdio needs none of them)")
    try:
        recorder = EpisodeRecorder(args.out).open()
    except EpisodeStoreError as exc:
        return _usage(f"{exc} (use another --out)")
    try:
        if args.http:
            serve_http(recorder, host=args.host, port=args.port, token=args.token, log_level=args.log_level)
        else:
            serve_stdio(recorder)
    except KeyboardInterrupt:
        return 130
    finally:
        recorder.close()
        if args.out:
            print(f"crab-gym mcp: {recorder.recorded} episode(s) appended to {recorder.path}", file=sys.stderr)
    return 0


def _usage(message: str) -> int:
    print(f"crab-gym mcp: error: {message}", file=sys.stderr)
    return 2
