"""`whileai-mcp`: serve the whileai tools over stdio (default) or streamable HTTP.

stdout belongs to the protocol under stdio, so everything else (logs, tracebacks of bugs) goes
to stderr.
"""

from __future__ import annotations

import argparse
import sys

from whileai_core import __version__
from whileai_core.defaults import MCP_HTTP_HOST, MCP_HTTP_PORT
from whileai_core.errors import WhileaiError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="whileai-mcp",
        description="MCP server of the whileai skill pack (stdio by default).")
    parser.add_argument("--root", default=".", metavar="DIR",
                        help="workspace the tools may read from and write to; every path a tool "
                             "gets is relative to it and may not leave it (default: current "
                             "directory)")
    parser.add_argument("--http", action="store_true",
                        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio")
    parser.add_argument("--host", default=MCP_HTTP_HOST,
                        help=f"HTTP bind address (default {MCP_HTTP_HOST})")
    parser.add_argument("--port", type=int, default=MCP_HTTP_PORT,
                        help=f"HTTP port (default {MCP_HTTP_PORT})")
    parser.add_argument("--skills", default=None, metavar="DIR",
                        help="skills folder (default: $WHILEAI_SKILLS_DIR, else the checkout's "
                             "skills/, or the copy an installed wheel carries)")
    parser.add_argument("--log-level", default="WARNING",
                        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                        help="stderr log level (default WARNING)")
    parser.add_argument("--version", action="version", version=f"whileai-mcp {__version__}")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if (args.host != MCP_HTTP_HOST or args.port != MCP_HTTP_PORT) and not args.http:
        print("error: --host/--port only apply with --http. Fix: add --http", file=sys.stderr)
        return 2
    from .app import build_server  # after argument parsing: --help and --version stay instant

    try:
        server = build_server(args.root, skills_dir=args.skills, log_level=args.log_level)
    except WhileaiError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    try:
        if args.http:
            server.run("streamable-http", host=args.host, port=args.port)
        else:
            server.run("stdio")
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
