"""Chat files in UTF-16 / UTF-32 or with a byte order mark, as some phones and Windows tools
write them: each imports as its UTF-8 twin does (same messages, refs and line numbers), or
fails with one line naming the file, the place and the encoding; never zero messages."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.chat_exports import OWNER, chatgpt_export, tg_export, tg_message
from tests.conftest import Cli, chat_import_error, chat_line

WHATSAPP = (
    "31/12/2023, 21:41 - Ann: I moved to Oslo in May\n"
    "31/12/2023, 21:42 - Bob: Nice, and the job?\n"
    "31/12/2023, 21:44 - Ann: Nurse, nights.\r\n"
    "Still the same hospital 🏥\n"
    "31/12/2023, 21:45 - Bob: <Media omitted>\n"
)
Encode = Callable[[str], bytes]
ENCODINGS: dict[str, tuple[Encode, str]] = {  # how the file is written, what the import says it read
    "utf-8 BOM": (lambda s: b"\xef\xbb\xbf" + s.encode(), ""),
    "utf-16le BOM": (lambda s: b"\xff\xfe" + s.encode("utf-16-le"), " in UTF-16LE"),
    "utf-16be BOM": (lambda s: b"\xfe\xff" + s.encode("utf-16-be"), " in UTF-16BE"),
    "utf-16le no BOM": (lambda s: s.encode("utf-16-le"), " in UTF-16LE"),
    "utf-16be no BOM": (lambda s: s.encode("utf-16-be"), " in UTF-16BE"),
    "utf-32le BOM": (lambda s: s.encode("utf-32"), " in UTF-32LE"),
}


def _fragments(cli: Cli) -> dict[str, dict]:  # type: ignore[type-arg]
    return {f["ref"]: f for f in cli("fragments", "--json").json()}


def _jsonl() -> str:
    return chat_line("1", "I like green tea") + "\n" + chat_line("2", "I live in Oslo", role="other") + "\n"


def _telegram() -> str:
    messages = [tg_message(1, OWNER, "Ich heiße Ann, 住所は東京"), tg_message(2, 42, "schön")]
    chats = [{"name": "Bob", "type": "personal_chat", "id": 42, "messages": messages}]
    return json.dumps(tg_export(chats), ensure_ascii=False)


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_whatsapp_in_any_unicode_encoding_imports_as_its_utf8_twin(
    cli: Cli, tmp_path: Path, encoding: str
) -> None:
    encode, said = ENCODINGS[encoding]
    twin = tmp_path / "twin" / "WhatsApp Chat with Bob.txt"
    twin.parent.mkdir()
    twin.write_text(WHATSAPP, encoding="utf-8", newline="")
    result = cli("ingest", "chat", str(twin), "--owner-name", "Ann", "--json")
    assert result.code == 0, result.err
    expected = _fragments(cli)
    assert len(expected) == 3

    other = tmp_path / "WhatsApp Chat with Bob.txt"
    other.write_bytes(encode(WHATSAPP))
    result = cli("ingest", "chat", str(other), "--owner-name", "Ann")
    assert result.code == 0, result.err
    assert (
        f"read as WhatsApp chat (Android){said}: 1 chat(s), 0 new message(s), 3 already known" in result.out
    )
    fresh = Cli(tmp_path / "fresh", cli._capsys)
    result = fresh("ingest", "chat", str(other), "--owner-name", "Ann", "--json")
    assert result.code == 0, result.err
    assert (result.json()["added"], result.json()["encoding"]) == (3, said.removeprefix(" in ") or "UTF-8")
    got = _fragments(fresh)
    assert set(got) == set(expected)  # content-addressed refs: the same chat, whatever the encoding
    for ref, fragment in got.items():
        assert (fragment["text"], fragment["author"], fragment["trust"]) == (
            expected[ref]["text"],
            expected[ref]["author"],
            expected[ref]["trust"],
        )
    texts = {f["text"] for f in got.values()}
    assert "Nurse, nights.\nStill the same hospital 🏥" in texts


@pytest.mark.parametrize("encoding", list(ENCODINGS))
@pytest.mark.parametrize("kind", ["telegram", "jsonl", "chatgpt"])
def test_json_exports_in_any_unicode_encoding_are_detected_and_imported(
    cli: Cli, tmp_path: Path, encoding: str, kind: str
) -> None:
    encode, said = ENCODINGS[encoding]
    if kind == "chatgpt":
        text = chatgpt_export(tmp_path / "plain.json").read_text(encoding="utf-8")
        name, count = "ChatGPT conversations.json", 9
    elif kind == "telegram":
        text, name, count = _telegram(), "Telegram Desktop export", 2
    else:
        text, name, count = _jsonl(), "chat JSONL", 2
    path = tmp_path / "export.json"
    path.write_bytes(encode(text))
    result = cli("ingest", "chat", str(path))
    assert result.code == 0, result.err
    assert f"read as {name}{said}: " in result.out
    assert f", {count} new message(s)" in result.out
    frags = _fragments(cli)
    assert len(frags) == count
    if kind == "telegram":
        assert "Ich heiße Ann, 住所は東京" in {f["text"] for f in frags.values()}
    if kind == "jsonl":  # line numbers are the file's lines, in any encoding
        assert sorted(f["locator"]["line"] for f in frags.values()) == [1, 2]


def test_a_utf16_whatsapp_zip_imports(cli: Cli, tmp_path: Path) -> None:
    bundle = tmp_path / "WhatsApp Chat with Bob.zip"
    with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("_chat.txt", WHATSAPP.encode("utf-16"))
    result = cli("ingest", "chat", str(bundle), "--owner-name", "Ann")
    assert result.code == 0, result.err
    assert "in UTF-16LE: 1 chat(s), 3 new message(s)" in result.out


def test_utf16_lines_and_columns_are_counted_in_characters(cli: Cli, tmp_path: Path) -> None:
    bad_jsonl = tmp_path / "chat.jsonl"
    bad_jsonl.write_bytes((chat_line("1", "ünïcödé 🏥") + "\n" + '{"id": "2", oops}\n').encode("utf-16"))
    assert "chat.jsonl line 2 column 13: " in chat_import_error(cli, str(bad_jsonl))
    bad_json = tmp_path / "result.json"
    text = _telegram().replace('"schön"', '"schön" oops', 1)
    bad_json.write_bytes(text.encode("utf-16-be"))
    line, column = 1, text.index("oops") + 1
    assert f"result.json: line {line} column {column} " in chat_import_error(cli, str(bad_json))
    long_line = tmp_path / "_chat.txt"
    long_line.write_bytes((WHATSAPP + "31/12/2023, 21:46 - Bob: " + "ж" * 600_000 + "\n").encode("utf-16"))
    assert "_chat.txt line 6: longer than 1.0 MB" in chat_import_error(
        cli, str(long_line), "--owner-name", "Ann"
    )


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        # a lone low surrogate in line 3, after a UTF-16LE byte order mark
        (
            b"\xff\xfe"
            + WHATSAPP[:100].encode("utf-16-le")
            + b"\x00\xdc"
            + WHATSAPP[100:].encode("utf-16-le"),
            "_chat.txt line 3: not UTF-16LE text (byte 203: illegal encoding); "
            "the file starts with a UTF-16LE byte order mark",
        ),
        # an odd number of bytes: the last character is cut
        (
            WHATSAPP.encode("utf-16") + b"A",
            f"_chat.txt line 6: not UTF-16LE text (byte {len(WHATSAPP.encode('utf-16')) + 1}: "
            "the file ends inside a character); "
            "the file starts with a UTF-16LE byte order mark",
        ),
        # no byte order mark: UTF-16BE found from its first bytes, a lone high surrogate
        (
            WHATSAPP[:60].encode("utf-16-be") + b"\xd8\x3d\x00A" + WHATSAPP[60:].encode("utf-16-be"),
            "_chat.txt line 2: not UTF-16BE text (byte 121: illegal UTF-16 surrogate); "
            "its first bytes look like UTF-16BE",
        ),
    ],
)
def test_invalid_bytes_after_a_byte_order_mark_are_named(
    cli: Cli, tmp_path: Path, content: bytes, expected: str
) -> None:
    path = tmp_path / "_chat.txt"
    path.write_bytes(content)
    assert expected in chat_import_error(cli, str(path), "--owner-name", "Ann")
    assert cli("fragments", "--json").json() == []


@pytest.mark.parametrize("kind", ["telegram", "jsonl"])
def test_invalid_utf8_after_a_utf8_byte_order_mark_is_named_not_taken_for_another_format(
    cli: Cli, tmp_path: Path, kind: str
) -> None:
    text = _telegram() if kind == "telegram" else _jsonl()
    path = tmp_path / "export.json"
    at = text.index("requested" if kind == "telegram" else '"chat"')  # before anything tells the format
    path.write_bytes(b"\xef\xbb\xbf" + text[:at].encode() + b"\xff\xfe" + text[at:].encode())
    err = chat_import_error(cli, str(path))
    assert f"export.json: line 1 column {at + 1}: not UTF-8 text" in err, err
    assert "not a chat export" not in err
    assert cli("fragments", "--json").json() == []


def test_characters_split_between_reads_are_joined(cli: Cli, tmp_path: Path) -> None:
    """A long UTF-16BE chat whose emoji (surrogate pairs) fall on every offset of the 64 KB reads."""
    lines = [
        f"01/02/2024, {10 + i // 60 % 10}:{i % 60:02d} - {'Ann' if i % 2 else 'Bob'}: "
        + "é" * (i % 7)
        + "🏥" * (1 + i % 3)
        + "x" * (100 + i % 13)
        + f" note {i}\n"
        for i in range(1000)
    ]
    text = "".join(lines)
    assert len(text.encode("utf-16-be")) > 4 * 65536
    twin = tmp_path / "twin" / "chat.txt"
    twin.parent.mkdir()
    twin.write_text(text, encoding="utf-8")
    assert cli("ingest", "chat", str(twin), "--owner-name", "Ann").code == 0
    expected = {f["ref"]: f["text"] for f in cli("fragments", "--json").json()}
    assert len(expected) == 1000
    path = tmp_path / "chat.txt"
    path.write_bytes(text.encode("utf-16-be"))
    fresh = Cli(tmp_path / "fresh", cli._capsys)
    result = fresh("ingest", "chat", str(path), "--owner-name", "Ann")
    assert result.code == 0, result.err
    assert {f["ref"]: f["text"] for f in fresh("fragments", "--json").json()} == expected
