"""Hostile chat files (issue 11 item 4): each one a clear one-line error or a named skip,
never a hang, a traceback or half an import."""

from __future__ import annotations

import json
import os
import threading
import zipfile
from pathlib import Path

import pytest

from tests.chat_exports import OWNER, chatgpt_export, claude_export, tg_export, tg_message, write_json
from tests.conftest import Cli, chat_import_error, chat_line, write_jsonl


def _telegram(tmp_path: Path, messages: list[dict], name: str = "result.json") -> Path:  # type: ignore[type-arg]
    return write_json(
        tmp_path / name, tg_export([{"name": "Bob", "type": "personal_chat", "id": 42, "messages": messages}])
    )


def test_a_fifo_is_refused_without_waiting_for_a_writer(cli: Cli, tmp_path: Path) -> None:
    fifo = tmp_path / "chat.json"
    os.mkfifo(fifo)
    result: list[str] = []
    worker = threading.Thread(target=lambda: result.append(chat_import_error(cli, str(fifo))), daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "reading a FIFO hung"
    assert "is a named pipe (FIFO), not a file" in result[0]


@pytest.mark.parametrize(("target", "kind"), [("/dev/zero", "a character device"), ("folder", "a folder")])
def test_devices_and_folders_are_refused(cli: Cli, tmp_path: Path, target: str, kind: str) -> None:
    path = Path(target) if target.startswith("/") else tmp_path
    assert f"is {kind}, not a file" in chat_import_error(cli, str(path))


def test_the_size_cap_is_named(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _telegram(tmp_path, [tg_message(1, OWNER, "hello")])
    monkeypatch.setattr("persona_desktop.adapters.chat.files.MAX_FILE_BYTES", 100)
    assert "the most one chat file may hold" in chat_import_error(cli, str(path))
    bundle = tmp_path / "chat.zip"
    with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("_chat.txt", "31/12/2023, 21:41 - Ann: hi\n" * 1000)
    monkeypatch.setattr("persona_desktop.adapters.chat.files.MAX_FILE_BYTES", 10_000)
    assert "unpacked is more than" in chat_import_error(cli, str(bundle), "--owner-name", "Ann")


def test_deep_nesting_names_its_place(cli: Cli, tmp_path: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    tg = tmp_path / "deep.json"
    tg.write_text(
        '{"personal_information": {"user_id": 1}, "chats": {"list": [{"id": 1, "type": "personal_chat", '
        f'"messages": [{{"id": 1, "type": "message", "text": {deep}}}]}}]}}}}',
        encoding="utf-8",
    )
    err = chat_import_error(cli, str(tg))
    assert "chats.list[0].messages[0]" in err and "nested deeper than 64 levels" in err
    jsonl = tmp_path / "deep.jsonl"
    jsonl.write_text(chat_line("1", "fine") + "\n" + '{"id": "2", "x": ' + deep + "}\n", encoding="utf-8")
    assert "deep.jsonl line 2 column 81: nested deeper than 64 levels" in chat_import_error(cli, str(jsonl))
    conversations = tmp_path / "conversations.json"
    conversations.write_text('[{"mapping": {}, "current_node": ' + deep + "}]", encoding="utf-8")
    assert "[0].current_node" in chat_import_error(cli, str(conversations))


def test_lone_surrogates_are_replaced(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(
        '{"id": "1", "chat": "saved", "chat_type": "saved", "role": "owner", '
        '"date": "2025-11-29T08:00:00+00:00", "text": "broken \\ud800 half"}\n',
        encoding="utf-8",
    )
    assert cli("ingest", "chat", str(path)).code == 0
    [fragment] = cli("fragments", "--json").json()
    assert fragment["text"] == "broken \ufffd half"
    tg = tmp_path / "result.json"
    tg.write_text(
        json.dumps(
            tg_export([{"type": "saved_messages", "id": 7, "messages": [tg_message(1, OWNER, "X")]}])
        ).replace('"X"', '"lone \\udc00 low"'),
        encoding="utf-8",
    )
    assert cli("ingest", "chat", str(tg)).code == 0
    texts = {f["ref"]: f["text"] for f in cli("fragments", "--json").json()}
    assert not any(0xD800 <= ord(ch) <= 0xDFFF for ch in texts["tg:7:1"])
    assert texts["tg:7:1"].startswith("lone ") and texts["tg:7:1"].endswith(" low")


def test_impossible_dates_and_ids_are_skipped_by_name(cli: Cli, tmp_path: Path) -> None:
    path = _telegram(
        tmp_path,
        [
            tg_message(1, OWNER, "fine"),
            tg_message(2, OWNER, "year one") | {"date_unixtime": None, "date": "0001-01-01T00:00:00"},
            tg_message(3, OWNER, "far future") | {"date_unixtime": None, "date": "9999-12-31T23:59:59"},
            tg_message(4, OWNER, "huge unix time") | {"date_unixtime": "99999999999999999999"},
            tg_message(5, OWNER, "huge id") | {"id": 99999999999999999999},
        ],
    )
    result = cli("ingest", "chat", str(path), "--json")
    assert result.code == 0, result.err
    report = result.json()
    assert report["added"] == 1 and report["skipped"]["unreadable"] == 4
    places = [u["place"] for u in report["unreadable"]]
    assert places == [f"chats.list[0].messages[{i}]" for i in (1, 2, 3, 4)]
    assert "outside 1970-2100" in report["unreadable"][0]["why"]
    assert "id 99999999999999999999 is out of range" in report["unreadable"][3]["why"]
    human = cli("ingest", "chat", str(path))
    assert "skipped as unreadable: chats.list[0].messages[2]: date" in human.err
    jsonl = write_jsonl(tmp_path / "d.jsonl", [chat_line("1", "x").replace(chat_line("1", "x")[-60:-30], "")])
    assert cli("ingest", "chat", str(jsonl)).code == 1  # a broken line is an error, not a skip
    dates = tmp_path / "dates.jsonl"
    line = json.loads(chat_line("9", "old"))
    dates.write_text(json.dumps(line | {"date": "0001-01-01T00:00:00"}) + "\n", encoding="utf-8")
    report = cli("ingest", "chat", str(dates), "--json").json()
    assert report["unreadable"] == [
        {"place": "line 1", "why": "date '0001-01-01T00:00:00' is outside 1970-2100"}
    ]
    big_chat = write_json(
        tmp_path / "bigchat.json",
        tg_export(
            [{"type": "personal_chat", "id": 99999999999999999999, "messages": [tg_message(1, OWNER, "x")]}]
        ),
    )
    assert "chats.list[0].id: 99999999999999999999 is not a chat id" in chat_import_error(cli, str(big_chat))


def test_a_file_broken_after_many_messages_imports_nothing(cli: Cli, tmp_path: Path) -> None:
    """The break comes after several batches were written: the one transaction undoes them all."""
    messages = [tg_message(i, OWNER, f"message {i}") for i in range(1, 5001)]
    good = _telegram(tmp_path, messages)
    broken = tmp_path / "broken.json"
    text = good.read_text(encoding="utf-8")
    broken.write_text(text[: int(len(text) * 0.95)], encoding="utf-8")
    err = chat_import_error(cli, str(broken))
    assert "broken.json: line " in err and " column " in err and "(at chats.list[0].messages[" in err
    assert cli("fragments", "--json").json() == []
    garbage = tmp_path / "garbage.json"
    garbage.write_text(text + "\n{}", encoding="utf-8")
    assert "garbage.json: line " in chat_import_error(cli, str(garbage))
    assert cli("fragments", "--json").json() == []


def test_not_utf8_broken_zip_and_empty_files(cli: Cli, tmp_path: Path) -> None:
    latin = tmp_path / "WhatsApp Chat with Bob.txt"
    latin.write_bytes("31/12/2023, 21:41 - Ann: hi\n31/12/2023, 21:42 - Bob: caf\xe9\n".encode("latin-1"))
    assert "line 2: not UTF-8 text" in chat_import_error(cli, str(latin), "--owner-name", "Ann")
    fake_zip = tmp_path / "chat.zip"
    fake_zip.write_bytes(b"PK\x03\x04" + b"\x00" * 64)
    assert "not a readable zip file" in chat_import_error(cli, str(fake_zip))
    photos = tmp_path / "photos.zip"
    with zipfile.ZipFile(photos, "w") as archive:
        archive.writestr("a.jpg", b"x")
        archive.writestr("b.jpg", b"y")
    assert "holds no chat export" in chat_import_error(cli, str(photos))
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"\xef\xbb\xbf  \n")
    assert "the file is empty" in chat_import_error(cli, str(empty))
    no_conversations = tmp_path / "conversations.json"
    no_conversations.write_text("[]", encoding="utf-8")
    assert "no conversations" in chat_import_error(cli, str(no_conversations))


def test_one_oversized_value_is_refused_with_its_place(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("persona_desktop.adapters.chat.telegram.MAX_MESSAGE_CHARS", 1000)
    path = _telegram(tmp_path, [tg_message(1, OWNER, "ok"), tg_message(2, OWNER, "x" * 5000)])
    assert "chats.list[0].messages[1]: holds more than" in chat_import_error(cli, str(path))
    monkeypatch.setattr("persona_desktop.adapters.chat.json_stream.MAX_TOKEN_BYTES", 200_000)
    huge = _telegram(tmp_path, [tg_message(1, OWNER, "y" * 400_000)], name="huge.json")
    assert "one value is larger than" in chat_import_error(cli, str(huge))
    assert cli("fragments", "--json").json() == []


def test_values_of_the_wrong_type_are_counted_not_crashed_on(cli: Cli, tmp_path: Path) -> None:
    """Found by mutating the fixtures: lists and objects where strings belong (set lookups)."""
    claude = json.loads(claude_export(tmp_path / "claude.json").read_text())
    claude[0]["chat_messages"][0]["sender"] = ["human"]
    claude[0]["chat_messages"][1]["content"][1]["type"] = ["tool_use"]
    claude[1]["chat_messages"][1]["parent_message_uuid"] = {"x": 1}
    gpt = json.loads(chatgpt_export(tmp_path / "gpt.json").read_text())
    gpt[1]["mapping"]["x"]["message"]["content"]["content_type"] = {"text": True}
    gpt[1]["mapping"]["y"]["message"]["create_time"] = "sNaN"
    for name, data in (("claude.json", claude), ("gpt.json", gpt)):
        result = cli("ingest", "chat", str(write_json(tmp_path / name, data)), "--json")
        assert result.code == 0, result.err
        assert result.json()["skipped"]["unreadable"] >= 1
    line = json.loads(chat_line("1", "x")) | {"role": ["owner"]}
    bad_role = write_jsonl(tmp_path / "role.jsonl", [json.dumps(line)])
    assert "line 1: role ['owner'] is not one of owner, assistant, other" in chat_import_error(
        cli, str(bad_role)
    )


def test_a_syntax_error_is_placed_exactly_even_after_escapes(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    path.write_text(
        '{"chats": {"list": [{"id": 1, "type": "saved_messages", "messages": [\n'
        '{"id": 1, "type": "message", "date_unixtime": "1700000000", "text": "a\\\\b \\ud83d\\ude00 \\n"}, x\n'
        "]}]}}",
        encoding="utf-8",
    )
    err = chat_import_error(cli, str(path), "--owner-id", "1")
    assert "result.json: line 2 column 94 (at chats.list[0].messages[0]): lexical error" in err


@pytest.mark.timeout(60)
def test_an_unterminated_string_of_escaped_quotes_does_not_stall_the_nesting_check(
    cli: Cli, tmp_path: Path
) -> None:
    """The JSONL nesting scan restarted its string pattern at every quote of an unterminated
    string: 40,000 characters took 7 s, a 16 MB line would never end."""
    path = tmp_path / "chat.jsonl"
    attack = "{" * 30 + '"' + '\\"' * 400_000 + "[" * 70
    path.write_text(chat_line("1", "fine") + "\n" + attack + "\n", encoding="utf-8")
    assert "chat.jsonl line 2 column " in chat_import_error(cli, str(path))


def test_numbers_too_long_to_read_are_named_not_tracebacks(cli: Cli, tmp_path: Path) -> None:
    """Python refuses to read an integer of more than 4,300 digits (ValueError, or SystemError
    out of ijson's C parser): it reached the owner as an internal error."""
    huge = "9" * 5000
    gpt = tmp_path / "conversations.json"
    gpt.write_text(
        '[{"id": "c", "mapping": {"n1": {"parent": null, "children": [], "message": {"id": "m", '
        '"author": {"role": "user"}, "create_time": ' + huge + ', "content": {"parts": ["hi"]}}}}}]',
        encoding="utf-8",
    )
    err = chat_import_error(cli, str(gpt))
    assert "line 1 column " in err and "a number longer than 4300 digits" in err
    late = tmp_path / "late.json"  # past the first megabyte, where the format is found
    first = json.loads(chatgpt_export(tmp_path / "ok.json").read_text())[0]
    late.write_text(
        json.dumps([first | {"zz_padding": "x" * 1_100_000}])[:-1]
        + ', {"id": "c2", "mapping": {}, "n": '
        + huge
        + "}]",
        encoding="utf-8",
    )
    err = chat_import_error(cli, str(late))
    assert f"late.json: line 1 column {late.read_text().index(huge) + 1}: " in err
    assert "a number longer than 4300 digits" in err
    exponent = tmp_path / "exponent.json"  # Decimal holds no exponent of 19 digits: InvalidOperation
    exponent.write_text(gpt.read_text().replace(huge, "1e" + "9" * 30), encoding="utf-8")
    assert "a number too large to read" in chat_import_error(cli, str(exponent))
    for name, line in (
        ("first.jsonl", '{"id": "1", "chat": ' + huge + ', "chat_type": "personal", "role": "owner"}'),
        ("late.jsonl", chat_line("1", "fine") + '\n{"id": ' + huge + "}"),
    ):
        path = tmp_path / name
        path.write_text(line + "\n", encoding="utf-8")
        err = chat_import_error(cli, str(path))
        assert "a number longer than 4300 digits" in err, err
    assert "first.jsonl: line 1 column 21: " in chat_import_error(cli, str(tmp_path / "first.jsonl"))
    assert "late.jsonl: line 2 column 8: " in chat_import_error(cli, str(tmp_path / "late.jsonl"))
    assert cli("fragments", "--json").json() == []


def test_long_digit_runs_inside_text_are_text(cli: Cli, tmp_path: Path) -> None:
    """Only a number token is refused: the same digits inside a message are the message, in every
    reader, wherever the file's chunks happen to cut them."""
    digits = "7" * 5000
    data = json.loads(chatgpt_export(tmp_path / "gpt.json").read_text())
    node = data[0]["mapping"]["u1b"]["message"]
    node["content"]["parts"] = [f"pi-ish: {digits}, ok"]
    padded = json.dumps([*data, {"title": "x" * 65_530 + digits}])  # the digits again across a chunk's end
    (tmp_path / "conversations.json").write_text(padded, encoding="utf-8")
    assert "[2]: the conversation has no 'conversation_id'" in chat_import_error(
        cli, str(tmp_path / "conversations.json")
    )
    (tmp_path / "conversations.json").write_text(json.dumps(data), encoding="utf-8")
    assert cli("ingest", "chat", str(tmp_path / "conversations.json")).code == 0
    jsonl = write_jsonl(tmp_path / "c.jsonl", [chat_line("1", f"code: {digits}, thanks")])
    assert cli("ingest", "chat", str(jsonl)).code == 0
    texts = {f["text"] for f in cli("fragments", "--json").json()}
    assert f"pi-ish: {digits}, ok" in texts and f"code: {digits}, thanks" in texts


def test_a_fractional_number_where_a_name_belongs_is_stored_as_text(cli: Cli, tmp_path: Path) -> None:
    """Found by the fuzz pass: `"from": 1.5` reached the store as a Decimal, which it cannot save
    (an internal error)."""
    path = _telegram(tmp_path, [tg_message(1, OWNER, "hello") | {"from": 1.5, "reply_to_message_id": 2.5}])
    result = cli("ingest", "chat", str(path))
    assert result.code == 0, result.err
    [fragment] = cli("fragments", "--json").json()
    assert (fragment["locator"]["from"], fragment["locator"]["reply_to"]) == ("1.5", "2.5")
