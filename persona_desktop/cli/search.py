"""`search QUERY` over everything captured and known, and `mcp`: the memory served to other assistants."""

from __future__ import annotations

import argparse

from persona_desktop.cli.output import emit_json
from persona_desktop.cli.runtime import data_dir, runtime
from persona_desktop.errors import PersonaError


def cmd_search(args: argparse.Namespace) -> int:
    """Full-text search of every fragment and applied fact; the query is words, never syntax."""
    from persona_desktop.services.search import parse_since, search

    since = parse_since(args.since)
    with runtime(args) as rt:
        results = search(rt.uow, args.query, args.kind, since, args.limit)
    if args.json:
        emit_json([r.to_json() for r in results])
        return 0
    for r in results:
        h = r.hit
        where = f"fact #{h.fact_id}" if h.fact_id is not None else f"[{h.ref}]"
        print(f"{h.captured_at.astimezone():%Y-%m-%d %H:%M} {h.kind:6} {where} {r.line}")
    print(f"{len(results)} hit(s)")
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve the memory over MCP on stdin/stdout (off until `mcp.enabled`)."""
    from persona_desktop.bootstrap import load_settings

    if not load_settings(data_dir(args)).values.mcp.enabled:  # before importing the SDK: a quick no
        raise PersonaError(
            "the MCP server is off; turn it on with `persona-desktop config set mcp.enabled true`"
        )
    from persona_desktop.mcp_server import serve

    return serve(data_dir(args))
