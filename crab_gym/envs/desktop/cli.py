"""The ``crab-gym serve`` subcommand (wired into ``crab_gym.cli`` by the lead).

Usage from ``crab_gym/cli.py``::

    from crab_gym.envs.desktop.cli import add_serve_parser
    add_serve_parser(subparsers)      # sets func=run_serve on the sub-parser
    ...
    return args.func(args)
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from crab_gym.envs.desktop.server import DEFAULT_HOST, DEFAULT_MAX_BODY, DEFAULT_PORT, TOKEN_ENV_VAR, serve


def _size(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT, e.g. 1024x640, got {text!r}")
    return int(match.group(1)), int(match.group(2))


def add_serve_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``serve`` to an ``argparse`` sub-parsers object; returns the new parser."""
    parser = subparsers.add_parser(
        "serve",
        help="serve this machine's desktop to CrabDesktop-v0 envs over HTTP",
        description=(
            "Run an HTTP server that executes the desktop Actions (click, write_text, ... and "
            "the tasks' setup steps and checks) on a display of this machine, for "
            "gym.make('CrabDesktop-v0', remote_url=..., token=...). Every request needs the "
            f"bearer token: --token, else ${TOKEN_ENV_VAR}, else a random token is generated "
            "and printed. Binds 127.0.0.1 unless --host says otherwise."
        ),
    )
    parser.add_argument("--host", default=DEFAULT_HOST,
                        help="address to bind (default %(default)s: this machine only)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (default %(default)s)")
    parser.add_argument("--token", default=None,
                        help=f"bearer token clients must send (prefer ${TOKEN_ENV_VAR}: "
                             "command lines are visible to other users)")
    parser.add_argument("--display", default=None,
                        help="attach to this existing X display (e.g. :0) instead of starting Xvfb")
    parser.add_argument("--screen", type=_size, default=(1024, 640), metavar="WxH",
                        help="size of a started Xvfb screen (default 1024x640)")
    parser.add_argument("--workdir", default=None,
                        help="directory the tasks work in; emptied on every reset "
                             "(default: a new temporary directory)")
    parser.add_argument("--max-body", type=int, default=DEFAULT_MAX_BODY,
                        help="largest request body in bytes (default %(default)s)")
    parser.add_argument("--log-level", default="info",
                        choices=["critical", "error", "warning", "info", "debug"],
                        help="server log level (default: %(default)s)")
    parser.set_defaults(func=run_serve)
    return parser


def run_serve(args: argparse.Namespace) -> int:
    """Run the server until interrupted (Ctrl-C); returns the exit status."""
    serve(host=args.host, port=args.port, token=args.token, display=args.display,
          screen_size=tuple(args.screen), workdir=args.workdir, max_body=args.max_body,
          log_level=args.log_level)
    return 0
