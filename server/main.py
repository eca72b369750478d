"""`whileai-mcp`: serve the whileai tools over stdio (default) or streamable HTTP.

stdout belongs to the protocol under stdio, so everything else goes to stderr. Before it serves,
the program restarts itself without secret-looking variables and makes itself non-dumpable
(``whileai_core.seal``): a reward it runs cannot read its token or keys.
"""

from __future__ import annotations

import argparse
import os
import sys

from whileai_core import __version__
from whileai_core.defaults import READ_TIMEOUT_S
from whileai_core.errors import WhileaiError
from whileai_core.interrupts import started, while_starting
from whileai_core.operations import TOOLSETS

from .limits import MCP_HTTP_HOST, MCP_HTTP_PORT, MCP_SESSION_IDLE_S, MCP_TOKEN_ENV


def _kind_mb(text: str) -> tuple[str, float]:
    kind, sep, mb = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected KIND=MB (e.g. rows=2048), got {text!r}")
    try:
        return kind.strip(), float(mb)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{mb!r} is not a number of MB") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="whileai-mcp",
        description="MCP server of the whileai skill pack (stdio by default).")
    parser.add_argument("--root", default=".", metavar="DIR",
                        help="workspace the tools may read from and write to; every path a tool "
                             "gets is relative to it and may not leave it, follow a symlink, or "
                             "name a hard-linked or special file (default: current directory)")
    parser.add_argument("--toolsets", default=None, metavar="NAME[,NAME...]",
                        help="the toolsets whose tools are listed: names separated by commas, or "
                             "all (default: core; the others: " + ", ".join(
                                 t for t in TOOLSETS if t != "core")
                             + "); an agent turns more on with the enable_toolset tool")
    parser.add_argument("--read-only", action="store_true",
                        help="serve only the read-only tools: nothing is written, launched or "
                             "cancelled")
    parser.add_argument("--max-file-mb", action="append", type=_kind_mb, default=[],
                        metavar="KIND=MB",
                        help="largest file the tools read, per kind: rows (rows, traces, judge "
                             "items), tokenizer, config, archive (what an .eval log unpacks "
                             "to); repeatable (defaults 1024, 128, 4, 64; also "
                             "WHILEAI_MAX_<KIND>_MB)")
    parser.add_argument("--read-timeout", type=float, default=None, metavar="S",
                        help=f"longest one file read may take (default {READ_TIMEOUT_S:g} s; "
                             "also WHILEAI_READ_TIMEOUT_S)")
    http = parser.add_argument_group("streamable HTTP")
    http.add_argument("--http", action="store_true",
                      help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio; "
                           f"needs a bearer token on every address (${MCP_TOKEN_ENV} or "
                           "--token-file)")
    http.add_argument("--host", default=MCP_HTTP_HOST,
                      help=f"HTTP bind address (default {MCP_HTTP_HOST}); any other than "
                           "127.0.0.1, ::1 or localhost also needs the Host names clients use "
                           "(--allowed-host)")
    http.add_argument("--port", type=int, default=MCP_HTTP_PORT,
                      help=f"HTTP port (default {MCP_HTTP_PORT})")
    http.add_argument("--token-file", default=None, metavar="FILE",
                      help=f"file holding the bearer token every request must carry (instead of "
                           f"${MCP_TOKEN_ENV}; never pass the token itself as a flag)")
    http.add_argument("--allowed-host", action="append", default=[], metavar="HOST[:PORT]",
                      help="a Host header clients may send (repeatable; needed with a wildcard "
                           "--host such as 0.0.0.0); loopback names are always allowed on a "
                           "loopback bind")
    http.add_argument("--allowed-origin", action="append", default=[], metavar="ORIGIN",
                      help="a browser Origin allowed to call (repeatable; default none, or "
                           "loopback origins on a loopback bind)")
    http.add_argument("--session-idle", type=float, default=MCP_SESSION_IDLE_S, metavar="S",
                      help=f"close an HTTP session with no request for this long, an open "
                           f"stream or not (default {MCP_SESSION_IDLE_S:g})")
    parser.add_argument("--skills", default=None, metavar="DIR",
                        help="skills folder (default: $WHILEAI_SKILLS_DIR, else the checkout's "
                             "skills/, or the copy an installed wheel carries)")
    parser.add_argument("--log-level", default="WARNING",
                        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                        help="stderr log level (default WARNING)")
    parser.add_argument("--version", action="version", version=f"whileai-mcp {__version__}")
    return parser


def main(argv: list[str] | None = None) -> int:
    while_starting(None)  # a Ctrl-C before the server runs: exit 130, no traceback
    try:
        return _main(argv)
    finally:
        started()


def _main(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    if argv is None:  # the program itself (not a call from Python): keep no secret a child reads
        from whileai_core.seal import seal_server

        seal_server()
    http_only = (args.host != MCP_HTTP_HOST or args.port != MCP_HTTP_PORT or args.token_file
                 or args.allowed_host or args.allowed_origin
                 or args.session_idle != MCP_SESSION_IDLE_S)
    if http_only and not args.http:
        print("error: --host/--port/--token-file/--allowed-host/--allowed-origin/--session-idle "
              "only apply with --http. Fix: add --http", file=sys.stderr)
        return 2
    import anyio  # after argument parsing: --help and --version stay instant

    from whileai_core.safepath import Limits

    from .app import build_server
    from .transport import http_settings, serve_http, serve_stdio

    try:
        limits = Limits.from_env(max_mb=dict(args.max_file_mb), timeout_s=args.read_timeout)
        settings = (http_settings(args.host, args.port, token_file=args.token_file,
                                  allowed_hosts=args.allowed_host,
                                  allowed_origins=args.allowed_origin,
                                  session_idle_s=args.session_idle, read_only=args.read_only)
                    if args.http else None)
        server = build_server(args.root, skills_dir=args.skills, log_level=args.log_level,
                              limits=limits, read_only=args.read_only, toolsets=args.toolsets)
    except WhileaiError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    _sweep_in_background(args.root, limits)
    started()
    try:
        if settings is not None:
            root = os.path.realpath(os.path.expanduser(args.root))
            print(settings.describe(root, server.listing()), file=sys.stderr, flush=True)
            anyio.run(lambda: serve_http(server, settings, log_level=args.log_level))
        else:
            anyio.run(serve_stdio, server)
    except KeyboardInterrupt:
        return 130
    return 0


def _sweep_in_background(root: str, limits) -> None:
    """Remove what writes killed mid-way left under the root (hidden temporary files of a
    process that is gone: ``whileai_core.safepath.sweep_root``), without delaying the start."""
    import threading

    from whileai_core.safepath import Root, sweep_root

    door = Root(root, limits=limits)
    threading.Thread(target=sweep_root, args=(door,), daemon=True, name="whileai-sweep").start()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
