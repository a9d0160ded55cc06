"""What the owner types into search is words, never FTS5 syntax: hostile queries, fuzzed.

Through the `search` CLI (with and without `--`) and through the search service that the
search window and the MCP server call. No query may raise, print a traceback, leak an
FTS5 error, or find a line that holds none of its words.
"""

from __future__ import annotations

import random

import pytest

from persona_desktop.bootstrap import Runtime
from persona_desktop.domain.model import Kind
from persona_desktop.domain.search_query import parse_query
from persona_desktop.services.search import search
from tests.conftest import Cli, CliResult
from tests.search_support import add_source

LINES = ["heat pump installed", "NEAR the pump", "text statement -foo", "a * star and a - dash"]

DASHED = ["-foo", "--foo", "-x", "-", "---", "-NEAR(", '-"foo', "-*", "--json-foo", "-5x"]
SYNTAX = ['"', '""', '"""', "*", "**", "* * *", "NEAR(", "NEAR(heat pump, 2)", "(", ")", "()", "^", ":", "+"]
SYNTAX += ["AND", "OR NOT", "heat AND", "text:heat", "{text}:heat", "heat NEAR/2 pump", '"heat" *', "heat)"]
SYNTAX += ["\x00", "\x00heat", "heat\x00pump", "\t", "\n-foo", "'", "\\", "\ue000", "\ufeff"]
SYNTAX += ["heat\u200bpump"]

# Pieces a fuzzed query is made of: FTS5's operators and quotes, words, folding cases.
_ALPHABET = [*"\"*-():^+{}/,\\' \x00", "NEAR", "AND", "OR", "NOT", "heat", "pump", "foo", "2"]
_ALPHABET += ["ß", "İ", "ﬁ", "Ｐ", "\ue000", "\u0301"]


def _fuzzed(count: int, seed: int = 14) -> list[str]:
    r = random.Random(seed)
    return ["".join(r.choice(_ALPHABET) for _ in range(r.randint(1, 8))) for _ in range(count)]


def _usage(cli: Cli, capsys: pytest.CaptureFixture[str], *args: str) -> CliResult:
    """A usage error of the in-process CLI: argparse exits, we read what it printed."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        cli(*args)
    captured = capsys.readouterr()
    return CliResult(int(exited.value.code or 0), captured.out, captured.err)


def _holds_a_word(query: str, text: str) -> bool:
    wanted = set(parse_query(query).words())
    return not wanted or bool(wanted & set(parse_query(text).words())) or "*" in query


def test_the_search_service_takes_any_query_as_words(runtime: Runtime) -> None:
    """The service the search window (and MCP's search_memory) call: never raises."""
    add_source(runtime, "chat:s", Kind.CHAT, LINES)
    for query in DASHED + SYNTAX + _fuzzed(80):
        for kind in (None, "chat", "fact"):
            for result in search(runtime.uow, query, kind):
                assert _holds_a_word(query, result.hit.text), (query, result.hit.text)
    assert [r.hit.ref for r in search(runtime.uow, "-foo")] == ["chat:s:2"]
    assert [r.hit.ref for r in search(runtime.uow, '"a * star" -')] == ["chat:s:3"]


def test_the_cli_takes_any_query_after_dashes_as_words(runtime: Runtime, cli: Cli) -> None:
    add_source(runtime, "chat:s", Kind.CHAT, LINES)
    for query in DASHED + SYNTAX + _fuzzed(40, seed=11):
        result = cli("search", "--json", "--", query)
        assert result.code == 0, (query, result.err)
        assert "fts5" not in result.err.lower() and "syntax" not in result.err.lower()
        assert all(_holds_a_word(query, hit["full_text"]) for hit in result.json()), query
    assert [h["ref"] for h in cli("search", "--json", "--", "-foo").json()] == ["chat:s:2"]
    assert [h["ref"] for h in cli("search", "--json", "--", "-NEAR(").json()] == ["chat:s:1"]


def test_a_query_without_a_leading_dash_needs_no_double_dash(runtime: Runtime, cli: Cli) -> None:
    add_source(runtime, "chat:s", Kind.CHAT, LINES)
    for query in [q for q in SYNTAX + _fuzzed(30, seed=5) if not q.startswith("-")]:
        result = cli("search", query, "--json")
        assert result.code == 0, (query, result.err)
        assert isinstance(result.json(), list)
    assert [h["ref"] for h in cli("search", "foo -pump", "--json").json()] == []  # words, not NOT
    assert [h["ref"] for h in cli("search", "-foo statement", "--json").json()] == ["chat:s:2"]


@pytest.mark.parametrize(
    "args",
    [
        ("search", "-foo"),
        ("search", "-x"),
        ("search", "--foo"),
        ("search", "heat", "-x"),
        ("search", "--json", "-NEAR("),
        ("search", "-foo", "--kind", "chat"),
    ],
)
def test_a_query_that_starts_with_a_dash_says_how_to_search_for_it(
    cli: Cli, capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    result = _usage(cli, capsys, *args)
    assert result.code == 2
    assert result.err.count("\n") == 1, result.err
    assert "put -- before it: persona-desktop search -- " in result.err, result.err  # the next step
    assert "Traceback" not in result.err


def test_other_search_usage_errors_get_no_dash_advice(cli: Cli, capsys: pytest.CaptureFixture[str]) -> None:
    result = _usage(cli, capsys, "search", "heat", "--kind", "video")
    assert result.code == 2 and "invalid choice" in result.err
    assert "--  -" not in result.err and "starts with a dash" not in result.err


def test_the_installed_command_says_it_too(cli: Cli) -> None:
    result = cli.process("search", "-foo")
    assert result.code == 2 and result.err.count("\n") == 1
    assert "persona-desktop search -- -foo" in result.err and "Traceback" not in result.err
