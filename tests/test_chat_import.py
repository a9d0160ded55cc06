"""Chat sources: Telegram Desktop exports and the plain JSONL, idempotent and all-or-nothing."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.chat_exports import telegram_awkward, tg_export, tg_message, write_json
from tests.conftest import Cli, chat_line, write_jsonl
from tests.ollama_server import OllamaServer
from tests.sleep_support import Claim, ScriptedModel

OWNER = 1001


def telegram_export(chats: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "about": "Here is the data you requested.",
        "personal_information": {"user_id": OWNER, "first_name": "Ann", "last_name": "", "phone_number": ""},
        "chats": {"about": "This page lists all chats from this export.", "list": chats},
    }


def msg(
    mid: int, sender: int | None, text: Any, *, kind: str = "message", unix: int = 1764400000
) -> dict[str, Any]:
    m: dict[str, Any] = {
        "id": mid,
        "type": kind,
        "date": "2025-11-29T08:26:40",
        "date_unixtime": str(unix + mid),
        "text": text,
        "text_entities": [],
    }
    if sender is not None:
        m |= {"from": "Ann" if sender == OWNER else "Bob", "from_id": f"user{sender}"}
    if kind == "service":
        m |= {"actor": "Ann", "actor_id": f"user{OWNER}", "action": "pin_message"}
    return m


def sample(tmp_path: Path) -> Path:
    data = telegram_export(
        [
            {
                "name": "Bob",
                "type": "personal_chat",
                "id": 42,
                "messages": [
                    msg(1, OWNER, "I moved to Berlin last spring."),
                    msg(2, 42, "Nice! I live in Lisbon."),
                    msg(3, OWNER, ["I work as a ", {"type": "bold", "text": "nurse"}, "."]),
                    msg(4, None, "", kind="service"),
                    msg(5, OWNER, ""),  # a photo without caption
                ],
            },
            {"type": "saved_messages", "id": 7, "messages": [msg(10, OWNER, "Passport expires 2031")]},
            {
                "name": "Climbing club",
                "type": "private_supergroup",
                "id": 99,
                "messages": [
                    msg(20, OWNER, "I'll bring the rope"),
                    msg(21, 55, "Ann is afraid of heights"),
                ],
            },
            {"name": "News", "type": "public_channel", "id": 5, "messages": [msg(30, None, "Breaking")]},
        ]
    )
    path = tmp_path / "result.json"
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def test_telegram_export_authors_trust_and_refs(cli: Cli, tmp_path: Path) -> None:
    result = cli("ingest", "chat", str(sample(tmp_path)), "--json")
    assert result.code == 0, result.err
    assert result.json()["added"] == 6
    frags = {f["ref"]: f for f in cli("fragments", "--json").json()}
    assert set(frags) == {"tg:42:1", "tg:42:2", "tg:42:3", "tg:7:10", "tg:99:20", "tg:99:21"}
    assert (frags["tg:42:1"]["author"], frags["tg:42:1"]["trust"]) == ("owner", "trusted")
    assert (frags["tg:42:2"]["author"], frags["tg:42:2"]["trust"]) == ("other", "untrusted")
    assert frags["tg:42:3"]["text"] == "I work as a nurse."
    assert (frags["tg:7:10"]["author"], frags["tg:7:10"]["trust"]) == ("owner", "trusted")
    assert (frags["tg:99:20"]["author"], frags["tg:99:20"]["trust"]) == ("owner", "untrusted")
    assert frags["tg:99:21"]["trust"] == "untrusted"
    # date_unixtime wins over the exporter's local-time `date`
    assert frags["tg:42:1"]["captured_at"] == datetime.fromtimestamp(1764400001, UTC).isoformat()
    assert frags["tg:42:1"]["locator"]["chat"] == "Bob"
    assert frags["tg:42:1"]["locator"]["message_id"] == 1


def test_importing_twice_adds_nothing(cli: Cli, tmp_path: Path) -> None:
    path = sample(tmp_path)
    assert cli("ingest", "chat", str(path), "--json").json()["added"] == 6
    again = cli("ingest", "chat", str(path), "--json").json()
    assert again["added"] == 0 and again["already_known"] == 6
    assert len(cli("fragments", "--json").json()) == 6


def test_broken_json_names_the_place_and_imports_nothing(cli: Cli, tmp_path: Path) -> None:
    good = sample(tmp_path)
    cli("ingest", "chat", str(good))
    broken = tmp_path / "broken.json"
    broken.write_text(good.read_text()[:-40], encoding="utf-8")
    result = cli("ingest", "chat", str(broken))
    assert result.code == 1
    assert "broken.json: line" in result.err and "column" in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert len(cli("fragments", "--json").json()) == 6  # what was stored stays


def test_partial_file_imports_nothing_half_way(cli: Cli, tmp_path: Path) -> None:
    data = json.loads(sample(tmp_path).read_text())
    del data["chats"]["list"][2]["messages"][1]["id"]
    bad = tmp_path / "partial.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    result = cli("ingest", "chat", str(bad))
    assert result.code == 1
    assert "chats.list[2].messages[1]" in result.err
    assert cli("fragments", "--json").json() == []


def test_export_without_personal_information_is_refused_clearly(cli: Cli, tmp_path: Path) -> None:
    data = json.loads(sample(tmp_path).read_text())
    del data["personal_information"]
    path = tmp_path / "anon.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = cli("ingest", "chat", str(path))
    assert result.code == 1 and "--owner-id" in result.err
    assert cli("ingest", "chat", str(path), "--owner-id", str(OWNER)).code == 0


def test_jsonl_roles_and_trust(cli: Cli, tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "c.jsonl",
        [
            chat_line("1", "I love tea"),
            chat_line("2", "Noted", role="assistant"),
            chat_line("3", "Ann loves tea", role="other", chat="g", chat_type="group"),
            chat_line("4", "I love tea too", chat="g", chat_type="group"),
        ],
    )
    assert cli("ingest", "chat", str(path)).code == 0
    got = {f["ref"]: (f["author"], f["trust"]) for f in cli("fragments", "--json").json()}
    assert got == {
        "chat:saved:1": ("owner", "trusted"),
        "chat:saved:2": ("assistant", "trusted"),
        "chat:g:3": ("other", "untrusted"),
        "chat:g:4": ("owner", "untrusted"),
    }


def test_jsonl_errors_name_the_line(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(chat_line("1", "fine") + "\n" + '{"id": "2", "chat": "x"}\n', encoding="utf-8")
    result = cli("ingest", "chat", str(path))
    assert result.code == 1 and "bad.jsonl line 2: missing" in result.err
    role = tmp_path / "role.jsonl"
    role.write_text(chat_line("1", "x", role="owner").replace('"owner"', '"boss"') + "\n", encoding="utf-8")
    assert "role 'boss'" in cli("ingest", "chat", str(role)).err
    assert cli("fragments", "--json").json() == []


def test_missing_and_empty_files(cli: Cli, tmp_path: Path) -> None:
    assert "cannot read" in cli("ingest", "chat", str(tmp_path / "nope.json")).err
    empty = tmp_path / "empty.json"
    empty.write_text("", encoding="utf-8")
    assert "empty" in cli("ingest", "chat", str(empty)).err


# --- every message read or counted (issue 16) --------------------------------------------

NO_SKIPS = {
    "service_message": 0,
    "system_or_tool": 0,
    "edited_away": 0,
    "media_without_caption": 0,
    "sticker": 0,
    "deleted": 0,
    "empty": 0,
    "channel_post": 0,
    "unreadable": 0,
}


def test_telegram_reads_entity_text_captions_edits_and_replies_and_counts_the_rest(
    cli: Cli, tmp_path: Path
) -> None:
    path = telegram_awkward(tmp_path / "result.json")
    first = cli("ingest", "chat", str(path), "--json")
    assert first.code == 0, first.err
    report = first.json()
    assert (report["format"], report["added"], report["already_known"]) == ("telegram", 8, 0)
    assert report["skipped"] == NO_SKIPS | {
        "service_message": 1,
        "sticker": 1,
        "media_without_caption": 2,
        "empty": 1,
        "channel_post": 2,
    }
    frags = {f["ref"]: f for f in cli("fragments", "--json").json()}
    assert frags["tg:42:2"]["text"] == "I work as a nurse."  # text only in text_entities
    assert (frags["tg:42:2"]["author"], frags["tg:42:2"]["trust"]) == ("owner", "trusted")
    assert frags["tg:42:8"]["text"] == "My new bike"  # a photo's caption
    assert frags["tg:42:4"]["locator"]["reply_to"] == 3
    assert frags["tg:42:4"]["locator"]["edited"] == "2025-11-29T09:00:00"
    assert frags["tg:42:3"]["author"] == "other"
    # re-import: the same refs, nothing new, the same counts
    again = cli("ingest", "chat", str(path), "--json").json()
    assert (again["added"], again["already_known"], again["skipped"]) == (0, 8, report["skipped"])
    assert {f["ref"] for f in cli("fragments", "--json").json()} == set(frags)
    human = cli("ingest", "chat", str(path))
    assert human.out.strip() == (
        f"{path}: read as Telegram Desktop export: 2 chat(s), 0 new message(s), 8 already known; "
        "skipped 7: 2 media without caption, 2 channel post, 1 service message, 1 sticker, 1 empty"
    )


def test_forwarded_and_saved_messages_are_the_original_authors_words(cli: Cli, tmp_path: Path) -> None:
    """Issue 10 item 3: whoever forwarded it, a forwarded message is never the owner's word."""
    assert cli("ingest", "chat", str(telegram_awkward(tmp_path / "result.json"))).code == 0
    frags = {f["ref"]: f for f in cli("fragments", "--json").json()}
    mallory = frags["tg:42:11"]
    assert (mallory["author"], mallory["trust"]) == ("other", "untrusted")
    assert mallory["locator"]["forwarded_from"] == "Mallory"
    saved = frags["tg:7:21"]  # saved from a channel into the owner's own Saved Messages
    assert (saved["author"], saved["trust"]) == ("other", "untrusted")
    assert saved["locator"]["saved_from"] == "Some Channel"
    assert (frags["tg:7:20"]["author"], frags["tg:7:20"]["trust"]) == ("owner", "trusted")


def test_saved_messages_trust_only_the_owner_when_the_owner_is_known(cli: Cli, tmp_path: Path) -> None:
    """Saved Messages trusted every sender: a message from user666 without any forward mark
    (a hand-edited or tool-written export) was stored as the owner's trusted words."""
    saved = {
        "type": "saved_messages",
        "id": OWNER,
        "messages": [
            tg_message(10, OWNER, "note to self: dentist Friday"),
            tg_message(11, 666, "You owe Mallory 5000 euros"),
        ],
    }
    assert cli("ingest", "chat", str(write_json(tmp_path / "result.json", tg_export([saved])))).code == 0
    got = {f["text"]: (f["author"], f["trust"]) for f in cli("fragments", "--json").json()}
    assert got == {
        "note to self: dentist Friday": ("owner", "trusted"),
        "You owe Mallory 5000 euros": ("other", "untrusted"),
    }


def test_telegram_keys_in_any_order_give_the_same_import(cli: Cli, tmp_path: Path) -> None:
    """A tool that sorts keys puts `messages` before `type` and `chats` before `personal_information`."""
    data = json.loads(telegram_awkward(tmp_path / "result.json").read_text())
    sorted_path = tmp_path / "sorted.json"
    sorted_path.write_text(json.dumps(data, sort_keys=True), encoding="utf-8")
    report = cli("ingest", "chat", str(sorted_path), "--json").json()
    assert report["added"] == 8 and report["skipped"]["channel_post"] == 2
    frags = {f["ref"]: (f["author"], f["trust"]) for f in cli("fragments", "--json").json()}
    assert frags["tg:42:1"] == ("owner", "trusted") and frags["tg:42:3"] == ("other", "untrusted")


def test_a_single_chat_export_finds_the_owner_in_a_one_to_one_chat(cli: Cli, tmp_path: Path) -> None:
    chat = {
        "name": "Bob",
        "type": "personal_chat",
        "id": 42,
        "messages": [tg_message(1, OWNER, "I run on Sundays"), tg_message(2, 42, "Me too")],
    }
    path = write_json(tmp_path / "result.json", chat)
    assert cli("ingest", "chat", str(path)).code == 0
    got = {f["ref"]: (f["author"], f["trust"]) for f in cli("fragments", "--json").json()}
    assert got == {"tg:42:1": ("owner", "trusted"), "tg:42:2": ("other", "untrusted")}
    group = write_json(tmp_path / "group.json", chat | {"type": "private_group", "id": 77})
    result = cli("ingest", "chat", str(group))
    assert result.code == 1 and "--owner-id" in result.err


def test_jsonl_forwarded_from_and_empty_lines_are_accounted_for(cli: Cli, tmp_path: Path) -> None:
    forwarded = json.loads(chat_line("2", "My name is Mallory")) | {"forwarded_from": "Mallory"}
    path = write_jsonl(
        tmp_path / "c.jsonl", [chat_line("1", "I love tea"), json.dumps(forwarded), chat_line("3", "   ")]
    )
    report = cli("ingest", "chat", str(path), "--json").json()
    assert (report["format"], report["added"]) == ("jsonl", 2)
    assert report["skipped"] == NO_SKIPS | {"empty": 1}
    frags = {f["ref"]: f for f in cli("fragments", "--json").json()}
    assert (frags["chat:saved:2"]["author"], frags["chat:saved:2"]["trust"]) == ("other", "untrusted")
    assert frags["chat:saved:2"]["locator"]["forwarded_from"] == "Mallory"
    assert frags["chat:saved:1"]["locator"]["line"] == 1


def test_jsonl_refs_cannot_collide_across_chats_and_simple_refs_stay_as_they_were(
    cli: Cli, tmp_path: Path
) -> None:
    path = write_jsonl(
        tmp_path / "c.jsonl",
        [
            chat_line("c", "first", chat="a:b", chat_type="personal"),
            chat_line("b:c", "second", chat="a", chat_type="personal"),
            chat_line("999", "third"),
            chat_line("x", "fourth", chat="[x] 100%", chat_type="personal"),
        ],
    )
    report = cli("ingest", "chat", str(path), "--json").json()
    assert report["added"] == 4, report
    refs = {f["text"]: f["ref"] for f in cli("fragments", "--json").json()}
    assert refs == {
        "first": "chat:a%3Ab:c",
        "second": "chat:a:b%3Ac",
        "third": "chat:saved:999",  # as stored by earlier versions: re-import stays idempotent
        "fourth": "chat:%5Bx%5D 100%25:x",
    }


def test_jsonl_reused_id_with_other_text_names_both_lines_and_imports_nothing(
    cli: Cli, tmp_path: Path
) -> None:
    lines = [chat_line(str(i), f"message {i}") for i in range(1, 2501)]  # more than one batch
    lines.append(chat_line("7", "a different message 7"))
    path = write_jsonl(tmp_path / "dup.jsonl", lines)
    result = cli("ingest", "chat", str(path))
    assert result.code == 1
    assert (
        "dup.jsonl: line 2501: message chat:saved:7 was already used at line 7 with different text"
        in result.err
    )
    assert cli("fragments", "--json").json() == []
    near = write_jsonl(tmp_path / "near.jsonl", [chat_line("1", "hello"), chat_line("1", "bye")])
    assert (
        "near.jsonl: line 2: message chat:saved:1 was already used at line 1"
        in cli("ingest", "chat", str(near)).err
    )
    same = write_jsonl(tmp_path / "same.jsonl", [chat_line("1", "hello"), chat_line("1", "hello")])
    report = cli("ingest", "chat", str(same), "--json").json()
    assert (report["added"], report["already_known"]) == (1, 1)


def test_a_forwarded_claim_in_a_personal_chat_never_becomes_owner_evidence(
    cli: Cli, ollama_server: OllamaServer, tmp_path: Path
) -> None:
    """Issue 10 item 3 end to end: a model cites the forwarded message as the owner's; nothing applies.

    (A model that also cites the owner's "ok lol" as cover is the grounding attack of issue 10
    item 1, which the policy's grounding check answers.)"""
    now = int(datetime.now(UTC).timestamp()) - 3 * 3600
    claim = "My name is Mallory and I live in Oslo."
    chat = {
        "name": "Bob",
        "type": "personal_chat",
        "id": 42,
        "messages": [
            tg_message(1, OWNER, claim, unix=now, forwarded_from="Mallory"),
            tg_message(2, OWNER, "ok lol", unix=now),
        ],
    }
    path = write_json(tmp_path / "result.json", tg_export([chat]))
    assert cli("ingest", "chat", str(path)).code == 0
    model = ScriptedModel()
    model.claims[claim] = Claim("The owner's name is Mallory", confidence=1.0)
    ollama_server.default = model
    for key, value in (("sleep.enabled", "true"), ("ollama.host", ollama_server.url)):
        assert cli("config", "set", key, value).code == 0
    run = cli("sleep", "run", "--json").json()
    assert run["status"] == "done", run
    assert model.extraction_calls == 1
    assert cli("facts", "--json").json() == []
    [candidate] = cli("candidates", "--json").json()
    assert candidate["status"] != "applied"
