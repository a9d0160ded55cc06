"""Chat sources: Telegram Desktop exports and the plain JSONL, idempotent and all-or-nothing."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.conftest import Cli, chat_line, write_jsonl

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
