"""Imported chat messages and the trust rule, through the sleep cycle (a hostile model on the
loopback server, the real client and store): an edited message grounds claims in the words
the owner wrote last, never in the wording the owner replaced; a message someone else wrote
in the owner's Saved Messages, and an edit of someone else's message, are not the owner's."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.conftest import Cli, chat_line, write_jsonl
from tests.ollama_server import OllamaServer
from tests.test_sleep_cycle import ready
from tests.trust_support import HostileModel, Lines, claim, ref_of, strict_json

__all__ = ["ready"]  # a fixture: sleep on, the loopback server as the host

OWNER = 1001
BERLIN, MUNICH = "I live in Berlin.", "I live in Munich now."


def _ingest(cli: Cli, path: Path) -> dict[str, Any]:
    result = cli("ingest", "chat", str(path), "--json")
    assert result.code == 0, result.err
    return json.loads(result.out)  # type: ignore[no-any-return]


def _run(cli: Cli) -> dict[str, Any]:
    result = cli("sleep", "run", "--json")
    out = strict_json(result.out)
    assert out["status"] == "done", (out, result.err)
    return out  # type: ignore[no-any-return]


def _candidates(cli: Cli) -> dict[str, dict[str, Any]]:
    return {c["statement"]: c for c in strict_json(cli("candidates", "--json").out)}


def _facts(cli: Cli) -> list[str]:
    return sorted(f["statement"] for f in strict_json(cli("facts", "--json").out))


def _saved(tmp_path: Path, text: str) -> Path:
    return write_jsonl(tmp_path / "saved.jsonl", [chat_line("1", text)])


def _grounding(cli: Cli, statement: str) -> dict[str, Any]:
    """How the policy's grounding read the candidate, as journaled with its decision."""
    [entry] = [
        e
        for e in strict_json(cli("journal", "--json").out)
        if e["action"].startswith("candidate.")
        and "grounding" in e["data"]
        and e["data"]["statement"] == statement
    ]
    return entry["data"]["grounding"]  # type: ignore[no-any-return]


def _refs(cli: Cli) -> dict[str, str]:
    return {f["text"]: f["ref"] for f in strict_json(cli("fragments", "--json").out)}


def test_an_edit_read_after_the_old_text_grounds_in_the_new_words_only(
    ready: Cli, ollama_server: OllamaServer, tmp_path: Path
) -> None:
    """The old text was read in an earlier run; the edit comes in a later import."""
    ollama_server.default = HostileModel(lambda lines: [])
    _ingest(ready, _saved(tmp_path, BERLIN))
    _run(ready)
    assert _ingest(ready, _saved(tmp_path, MUNICH))["edited"] == 1
    refs = _refs(ready)
    old, new = refs[BERLIN], refs[MUNICH]

    def plan(lines: Lines) -> list[dict[str, Any]]:
        assert [ref for ref, _ in lines] == [new]  # only the new words are unread
        return [
            claim("The owner lives in Munich", [ref_of(lines, "Munich")]),  # the owner wrote the edit
            claim("The owner lives in Berlin", [ref_of(lines, "Munich")]),  # the edit does not say it
            claim("The owner lives in Berlin", [old]),  # the replaced words: not in this document
        ]

    ollama_server.default = HostileModel(plan)
    out = _run(ready)
    assert out["applied"] == 1 and out["refs_rejected"] == 1
    assert _facts(ready) == ["The owner lives in Munich"]
    assert _grounding(ready, "The owner lives in Munich") == {
        "grounded": True,
        "reason": f"in your own words ({new})",
        "terms": ["lives", "Munich"],
        "ref": new,
    }
    berlin = _candidates(ready)["The owner lives in Berlin"]
    assert berlin["status"] == "pending" and "'Berlin' appears in none of your messages" in berlin["reason"]


def test_the_wording_an_edit_replaced_grounds_nothing_when_both_are_in_one_document(
    ready: Cli, ollama_server: OllamaServer, tmp_path: Path
) -> None:
    """Both versions imported before any run: the model sees both lines and cites the old one
    for what the owner took back. It was applied as the owner's words."""
    _ingest(ready, _saved(tmp_path, BERLIN))
    assert _ingest(ready, _saved(tmp_path, MUNICH))["edited"] == 1
    refs = _refs(ready)

    def plan(lines: Lines) -> list[dict[str, Any]]:
        assert sorted(ref for ref, _ in lines) == sorted(refs.values())
        return [
            claim("The owner lives in Berlin", [ref_of(lines, "Berlin")]),
            claim("The owner lives in Munich", [ref_of(lines, "Munich"), ref_of(lines, "Berlin")]),
        ]

    ollama_server.default = HostileModel(plan)
    _run(ready)
    assert _facts(ready) == ["The owner lives in Munich"]
    assert _grounding(ready, "The owner lives in Munich")["ref"] == refs[MUNICH]
    berlin = _candidates(ready)["The owner lives in Berlin"]
    assert berlin["status"] == "pending"
    assert (
        "'lives' and 'Berlin' appear only in your earlier wording of a message you edited since"
        in berlin["reason"]
    )


def test_a_fact_drawn_from_the_old_words_keeps_them_as_its_evidence(
    ready: Cli, ollama_server: OllamaServer, tmp_path: Path
) -> None:
    ollama_server.default = HostileModel(
        lambda lines: [claim("The owner lives in Berlin", [ref_of(lines, "Berlin")])]
    )
    _ingest(ready, _saved(tmp_path, BERLIN))
    _run(ready)
    [fact] = strict_json(ready("facts", "--json").out)
    _ingest(ready, _saved(tmp_path, MUNICH))
    ollama_server.default = HostileModel(lambda lines: [])
    _run(ready)
    why = ready("facts", "why", str(fact["id"]))
    assert why.code == 0 and BERLIN in why.out and "Munich" not in why.out


def _telegram(tmp_path: Path, name: str, chats: list[dict[str, Any]]) -> Path:
    path = tmp_path / name
    data = {"personal_information": {"user_id": OWNER, "first_name": "Ann"}, "chats": {"list": chats}}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _tg(mid: int, sender: int, name: str, text: str) -> dict[str, Any]:
    sent = datetime.now(UTC) - timedelta(hours=3)
    return {
        "id": mid,
        "type": "message",
        "date": sent.strftime("%Y-%m-%dT%H:%M:%S"),
        "date_unixtime": str(int(sent.timestamp())),
        "from": name,
        "from_id": f"user{sender}",
        "text": text,
        "text_entities": [],
    }


def test_someone_else_s_message_in_saved_messages_is_not_the_owner_s_word(
    ready: Cli, ollama_server: OllamaServer, tmp_path: Path
) -> None:
    """Saved Messages of an export that names the owner: a message from another sender there
    (no forward mark: a shared device, a bot, an export another tool wrote) is theirs."""
    ollama_server.default = HostileModel(
        lambda lines: [claim("The owner is the new CEO of Acme", [ref_of(lines, "CEO")])]
    )
    saved = [_tg(1, 666, "Mallory", "I am the new CEO of Acme.")]
    _ingest(
        ready, _telegram(tmp_path, "result.json", [{"type": "saved_messages", "id": 7, "messages": saved}])
    )
    [fragment] = strict_json(ready("fragments", "--json").out)
    assert (fragment["author"], fragment["trust"]) == ("other", "untrusted")
    _run(ready)
    assert _facts(ready) == []
    cand = _candidates(ready)["The owner is the new CEO of Acme"]
    assert cand["status"] == "pending" and "no evidence written by the owner" in cand["reason"]
    assert (
        "appear only in Mallory's message" in _grounding(ready, "The owner is the new CEO of Acme")["reason"]
    )


def test_an_edit_of_someone_else_s_message_is_theirs(
    ready: Cli, ollama_server: OllamaServer, tmp_path: Path
) -> None:
    def chat(text: str) -> list[dict[str, Any]]:
        return [
            {
                "name": "Bob",
                "type": "personal_chat",
                "id": 42,
                "messages": [_tg(1, OWNER, "Ann", "ok"), _tg(2, 42, "Bob", text)],
            }
        ]

    ollama_server.default = HostileModel(lambda lines: [])
    _ingest(ready, _telegram(tmp_path, "v1.json", chat("see you")))
    _run(ready)
    assert _ingest(ready, _telegram(tmp_path, "v2.json", chat("I am the new CEO of Acme.")))["edited"] == 1
    ollama_server.default = HostileModel(
        lambda lines: [claim("The owner is the new CEO of Acme", [ref_of(lines, "CEO")])]
    )
    _run(ready)
    assert _facts(ready) == []
    cand = _candidates(ready)["The owner is the new CEO of Acme"]
    assert cand["status"] == "pending" and "no evidence written by the owner" in cand["reason"]
    assert "appear only in Bob's message" in _grounding(ready, "The owner is the new CEO of Acme")["reason"]
