"""The command line talks to a person: a mistyped setting gets its likely name, `facts why`
reads as sentences, and an empty list says what to do to fill it."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from tests.conftest import Cli, chat_line, write_jsonl
from tests.ollama_server import OllamaServer
from tests.sleep_support import Claim, ScriptedModel

PEANUTS = "I am allergic to peanuts, so please never suggest peanut dishes."


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("sleep.enable", "sleep.enabled"),
        ("sleep.quiet_minute", "sleep.quiet_minutes"),
        ("ollama.modle", "ollama.model"),
        ("capture.screen", "capture.screen_enabled"),
    ],
)
def test_an_unknown_setting_suggests_the_nearest_key(cli: Cli, typed: str, meant: str) -> None:
    for argv in (("config", "set", typed, "true"), ("config", "get", typed)):
        result = cli(*argv)
        assert result.code == 1
        assert f"did you mean {meant}?" in result.err, result.err
        assert len(result.err.strip().splitlines()) == 1  # one line, not the list of every key


def test_an_unknown_setting_far_from_any_key_points_to_the_list(cli: Cli) -> None:
    result = cli("config", "get", "xyzzy")
    assert result.code == 1 and "did you mean" not in result.err
    assert "config list" in result.err and len(result.err) < 200


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (("fragments",), "ingest chat"),
        (("candidates",), "sleep run"),
        (("facts",), "approve"),
        (("journal",), "Nothing has happened yet"),
        (("sources",), "ingest chat"),
        (("skills",), "chat review"),
    ],
)
def test_an_empty_list_says_what_to_do_next(cli: Cli, argv: tuple[str, ...], hint: str) -> None:
    result = cli(*argv)
    assert result.code == 0
    assert hint in result.out, result.out
    assert cli(*argv, "--json").json() == []  # scripts still get a plain empty list


def test_facts_why_reads_as_sentences(cli: Cli, ollama_server: OllamaServer, tmp_path: Path) -> None:
    ollama_server.default = ScriptedModel({PEANUTS: Claim("The owner is allergic to peanuts")})
    for key, value in (
        ("sleep.enabled", "true"),
        ("ollama.host", ollama_server.url),
        ("ollama.timeout_seconds", "2"),
    ):
        assert cli("config", "set", key, value).code == 0
    lines = [chat_line("1", PEANUTS, ago=timedelta(hours=3)), chat_line("2", PEANUTS, ago=timedelta(hours=2))]
    assert cli("ingest", "chat", str(write_jsonl(tmp_path / "c.jsonl", lines))).code == 0
    assert cli("sleep", "run", "--json").json()["applied"] == 1
    fact_id = cli("facts", "--json").json()[0]["id"]
    out = cli("facts", "why", str(fact_id)).out
    assert "{" not in out and "}" not in out, out  # no Python dicts
    assert f"Fact {fact_id}: The owner is allergic to peanuts" in out
    assert "In memory since" in out
    assert "Added automatically" in out and "score" in out
    assert "Evidence (2):" in out and "said by you" in out and PEANUTS in out
    assert "added to memory" in out  # the decisions, in words
    assert cli("facts", "why", str(fact_id), "--json").json()["fact"]["id"] == fact_id  # JSON unchanged
