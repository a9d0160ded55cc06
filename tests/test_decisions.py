"""The owner's decisions from the CLI: approve, edit, reject, undo (many levels), revert, forget."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from tests.conftest import Cli, chat_line, write_jsonl
from tests.ollama_server import OllamaServer
from tests.sleep_support import Claim, ScriptedModel

LINES = {
    "I think I might like jazz.": Claim("The owner likes jazz", confidence=0.3),
    "Maybe I will learn Spanish.": Claim("The owner is learning Spanish", confidence=0.3),
    "Perhaps I prefer window seats.": Claim("The owner prefers window seats", confidence=0.3),
}


@pytest.fixture
def pending(cli: Cli, ollama_server: OllamaServer, tmp_path: Path) -> dict[str, int]:
    """Three waiting candidates, by statement."""
    for key, value in [("sleep.enabled", "true"), ("ollama.host", ollama_server.url)]:
        cli("config", "set", key, value)
    ollama_server.default = ScriptedModel(claims=dict(LINES))
    lines = [chat_line(str(i), text, ago=timedelta(hours=2)) for i, text in enumerate(LINES)]
    cli("ingest", "chat", str(write_jsonl(tmp_path / "c.jsonl", lines)))
    assert cli("sleep", "run", "--json").json()["pending"] == 3
    return {c["statement"]: c["id"] for c in cli("candidates", "--json").json()}


def _status(cli: Cli) -> dict[str, str]:
    return {c["statement"]: c["status"] for c in cli("candidates", "--json").json()}


def _facts(cli: Cli) -> dict[str, str]:
    return {f["statement"]: f["status"] for f in cli("facts", "--json").json()}


def test_approve_reject_and_undo_many_levels(cli: Cli, pending: dict[str, int]) -> None:
    jazz, spanish = pending["The owner likes jazz"], pending["The owner is learning Spanish"]
    assert cli("approve", str(jazz)).code == 0
    assert cli("reject", str(spanish)).code == 0
    assert _facts(cli) == {"The owner likes jazz": "applied"}
    assert _status(cli)["The owner is learning Spanish"] == "rejected"

    first = cli("undo")
    assert first.code == 0 and "rejection" in first.out
    assert _status(cli)["The owner is learning Spanish"] == "pending"
    second = cli("undo")
    assert "approval" in second.out
    assert _facts(cli) == {}
    assert _status(cli)["The owner likes jazz"] == "pending"
    third = cli("undo")
    assert third.code == 1 and "nothing to undo" in third.err
    actions = [e["action"] for e in cli("journal", "--json").json()]
    assert actions[-4:] == ["candidate.approved", "candidate.rejected", "decision.undone", "decision.undone"]


def test_edit_then_approve_keeps_the_owners_wording(cli: Cli, pending: dict[str, int]) -> None:
    cid = pending["The owner is learning Spanish"]
    assert cli("approve", str(cid), "--statement", "I am learning Spanish since May").code == 0
    assert _facts(cli) == {"I am learning Spanish since May": "applied"}
    entry = cli("journal", "--json").json()[-1]
    assert entry["data"]["edited_from"] == "The owner is learning Spanish"
    cli("undo")
    assert "The owner is learning Spanish" in _status(cli)


def test_revert_is_journaled_and_undoable(cli: Cli, pending: dict[str, int]) -> None:
    cli("approve", str(pending["The owner likes jazz"]))
    [fact] = cli("facts", "--json").json()
    assert cli("facts", "revert", str(fact["id"])).code == 0
    assert _facts(cli) == {"The owner likes jazz": "reverted"}
    assert cli("journal", "--json").json()[-1]["action"] == "fact.reverted"
    again = cli("facts", "revert", str(fact["id"]))
    assert again.code == 1 and "not applied" in again.err
    cli("undo")
    assert _facts(cli) == {"The owner likes jazz": "applied"}


def test_bad_ids_are_clear_errors(cli: Cli, pending: dict[str, int]) -> None:
    assert "no candidate with id 999" in cli("approve", "999").err
    assert "expected a candidate id" in cli("reject", "abc").err
    assert "no fact with id 5" in cli("facts", "why", "5").err
    cli("approve", str(pending["The owner likes jazz"]))
    twice = cli("approve", str(pending["The owner likes jazz"]))
    assert twice.code == 1 and "not waiting for review" in twice.err


def test_a_rejected_statement_never_auto_applies_later(
    cli: Cli, pending: dict[str, int], ollama_server: OllamaServer, tmp_path: Path
) -> None:
    cli("reject", str(pending["The owner likes jazz"]))
    strong = "I love jazz, I listen to it every day."
    ollama_server.default = ScriptedModel(claims={strong: Claim("The owner likes jazz", confidence=1.0)})
    cli("ingest", "chat", str(write_jsonl(tmp_path / "more.jsonl", [chat_line("9", strong)])))
    cli("sleep", "run", "--json")
    assert _facts(cli) == {}
    waiting = [
        c
        for c in cli("candidates", "--json").json()
        if c["status"] == "pending" and c["statement"] == "The owner likes jazz"
    ]
    assert waiting and "rejected or reverted this before" in waiting[0]["reason"]


def test_forget_a_source_reverts_what_was_learned_from_it(cli: Cli, pending: dict[str, int]) -> None:
    from persona_desktop.bootstrap import open_runtime
    from persona_desktop.services import review

    cli("approve", str(pending["The owner likes jazz"]))
    rt = open_runtime(cli.data_dir)
    try:
        with rt.uow.read() as uow:
            source_id = uow.fragments.all()[0].source_id
        counts = review.forget_source(rt.uow, source_id, rt.clock.now())
    finally:
        rt.close()
    assert counts == {"fragments": 3, "facts_reverted": 1, "candidates_dropped": 2}
    assert cli("fragments", "--json").json() == []
    assert _facts(cli) == {"The owner likes jazz": "reverted"}
    assert cli("journal", "--json").json()[-1]["action"] == "source.forgotten"
    assert "cannot be restored" in cli("undo").err


def test_forget_a_day_of_screen_captures(cli: Cli, tmp_path: Path) -> None:
    import os
    from datetime import datetime

    from tests.screen_support import render_lines

    days = {"2026-11-20": "Quarterly report draft", "2026-11-21": "Holiday packing list"}
    paths = []
    for day, text in days.items():
        path = tmp_path / f"{day}.png"
        render_lines([text], font_px=28).image.save(path)
        noon = datetime.fromisoformat(f"{day}T12:00:00").astimezone().timestamp()
        os.utime(path, (noon, noon))
        paths.append(str(path))
    assert cli("ingest", "screen", *paths).code == 0
    chat = write_jsonl(tmp_path / "c.jsonl", [chat_line("1", "Hello")])
    assert cli("ingest", "chat", str(chat)).code == 0
    sources = cli("sources", "--json").json()
    assert sorted(s["kind"] for s in sources) == ["chat", "screen", "screen"]

    result = cli("forget", "day", "2026-11-20", "--kind", "screen")
    assert result.code == 0, result.err
    assert "1 screen source(s) of 2026-11-20" in result.out
    left = [f["text"] for f in cli("fragments", "--json").json()]
    assert "Hello" in left
    assert any("Holiday" in t for t in left) and not any("Quarterly" in t for t in left)
    entry = cli("journal", "--json").json()[-1]
    assert entry["action"] == "source.forgotten" and entry["data"]["day"] == "2026-11-20"
    assert "YYYY-MM-DD" in cli("forget", "day", "yesterday").err
