"""Importing a chat again: no message already stored is lost, duplicated or silently kept
with old text. WhatsApp refs are content-addressed within a chat found by its content;
an edited message (the same id, new text) is stored as a new fragment linked to the old
one, which stays as it was, so a fact citing the old words still shows them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.chat_exports import OWNER, tg_export, tg_message, whatsapp_txt, write_json
from tests.conftest import Cli, chat_line, write_jsonl


def _import(cli: Cli, path: Path, *args: str) -> dict[str, Any]:
    result = cli("ingest", "chat", str(path), "--json", *args)
    assert result.code == 0, result.err
    report: dict[str, Any] = result.json()
    return report


def _fragments(cli: Cli) -> list[dict[str, Any]]:
    frags: list[dict[str, Any]] = cli("fragments", "--json").json()
    return frags


def _texts(cli: Cli) -> list[str]:
    return sorted(f["text"] for f in _fragments(cli))


# --- WhatsApp ------------------------------------------------------------------------------------


def test_a_message_written_where_a_deleted_one_was_is_not_taken_for_it(cli: Cli, tmp_path: Path) -> None:
    """Numbering within a minute after skipping deleted messages gave the owner's new message
    the ref of Ann's deleted one: re-imported, it counted as already known and was never stored."""
    first = "31/12/2023, 21:41 - Ann: call me later\n31/12/2023, 21:45 - Me: congrats\n"
    later = (
        "31/12/2023, 21:41 - Ann: This message was deleted\n"
        "31/12/2023, 21:41 - Me: I am moving to Berlin in March\n"
        "31/12/2023, 21:45 - Me: congrats\n"
    )
    _import(cli, whatsapp_txt(tmp_path / "WhatsApp Chat with Ann.txt", first), "--owner-name", "Me")
    (tmp_path / "again").mkdir()
    again = _import(
        cli, whatsapp_txt(tmp_path / "again" / "WhatsApp Chat with Ann.txt", later), "--owner-name", "Me"
    )
    assert (again["added"], again["already_known"], again["skipped"]["deleted"]) == (1, 1, 1)
    assert _texts(cli) == ["I am moving to Berlin in March", "call me later", "congrats"]
    assert len(cli("sources", "--json").json()) == 1


def test_two_chats_both_named_chat_txt_are_two_chats(cli: Cli, tmp_path: Path) -> None:
    """iOS exports unzip to `_chat.txt`: two different chats shared one source and refs."""
    for folder, peer, city in (("x", "Ann", "Lisbon"), ("y", "Carl", "Porto")):
        (tmp_path / folder).mkdir()
        text = f"[31.12.23, 21:41:05] Me: I live in {city}\n[31.12.23, 21:42:05] {peer}: ok\n"
        report = _import(cli, whatsapp_txt(tmp_path / folder / "_chat.txt", text), "--owner-name", "Me")
        assert (report["added"], report["already_known"]) == (2, 0)
    assert _texts(cli) == ["I live in Lisbon", "I live in Porto", "ok", "ok"]
    labels = sorted(s["label"] for s in cli("sources", "--json").json())
    assert labels == ["Ann", "Carl"]  # named after the other person when the file name says nothing


def test_the_same_chat_under_another_file_name_is_the_same_chat(cli: Cli, tmp_path: Path) -> None:
    """A second download is saved as `... (1).txt`: it was imported again in full, as a second chat."""
    text = "[31.12.23, 21:41:05] Me: I live in Lisbon\n[31.12.23, 21:42:05] Ann: ok\n"
    _import(cli, whatsapp_txt(tmp_path / "WhatsApp Chat with Ann.txt", text), "--owner-name", "Me")
    later = text + "[01.01.24, 10:00:00] Me: happy new year\n"
    again = _import(
        cli, whatsapp_txt(tmp_path / "WhatsApp Chat with Ann (1).txt", later), "--owner-name", "Me"
    )
    assert (again["added"], again["already_known"]) == (1, 2)
    assert len(cli("sources", "--json").json()) == 1


def test_whatsapp_refs_do_not_shift_when_an_earlier_message_goes(cli: Cli, tmp_path: Path) -> None:
    """Two identical messages in one minute get an occurrence number; other messages' refs do
    not depend on what else was written in that minute."""
    text = (
        "31/12/2023, 21:41 - Ann: ok\n"
        "31/12/2023, 21:41 - Me: ok\n"
        "31/12/2023, 21:41 - Me: ok\n"
        "31/12/2023, 21:41 - Me: my flight is at 7\n"
    )
    _import(cli, whatsapp_txt(tmp_path / "WhatsApp Chat with Ann.txt", text), "--owner-name", "Me")
    refs = {f["ref"]: f["text"] for f in _fragments(cli)}
    assert len(refs) == 4
    assert all(ref.startswith("wa:") for ref in refs)
    (tmp_path / "b").mkdir()
    fewer = text.replace(
        "31/12/2023, 21:41 - Ann: ok\n", "31/12/2023, 21:41 - Ann: This message was deleted\n"
    )
    again = _import(cli, whatsapp_txt(tmp_path / "b" / "chat.txt", fewer), "--owner-name", "Me")
    assert (again["added"], again["already_known"]) == (0, 3)


# --- edited messages ------------------------------------------------------------------------------


def _telegram(path: Path, text: str, **extra: Any) -> Path:
    chat = {
        "name": "Bob",
        "type": "personal_chat",
        "id": 5,
        "messages": [tg_message(7, OWNER, text, **extra)],
    }
    return write_json(path, tg_export([chat]))


def test_an_edited_telegram_message_is_stored_as_a_new_version_linked_to_the_old(
    cli: Cli, tmp_path: Path
) -> None:
    """The edit was counted 'already known' and the old text kept: the new words were lost."""
    _import(cli, _telegram(tmp_path / "v1.json", "my flight is on the 3rd"))
    [old] = _fragments(cli)
    report = _import(
        cli, _telegram(tmp_path / "v2.json", "my flight is on the 5th", edited="2025-11-30T10:00:00")
    )
    assert (report["added"], report["already_known"], report["edited"]) == (0, 0, 1)
    frags = {f["text"]: f for f in _fragments(cli)}
    assert set(frags) == {"my flight is on the 3rd", "my flight is on the 5th"}
    kept, new = frags["my flight is on the 3rd"], frags["my flight is on the 5th"]
    assert (kept["id"], kept["ref"]) == (old["id"], old["ref"])  # a fact citing it keeps its words
    assert new["locator"]["edit_of"] == old["ref"] and new["ref"] != old["ref"]
    assert (new["author"], new["trust"]) == ("owner", "trusted")
    entries = [e for e in cli("journal", "--json").json() if e["action"] == "fragments.edited"]
    assert len(entries) == 1 and entries[0]["data"]["edits"] == [{"ref": new["ref"], "edit_of": old["ref"]}]
    again = _import(cli, _telegram(tmp_path / "v2.json", "my flight is on the 5th"))
    assert (again["added"], again["already_known"], again["edited"]) == (0, 1, 0)


def test_jsonl_edits_each_become_a_version_and_old_texts_are_known(cli: Cli, tmp_path: Path) -> None:
    def version(text: str) -> Path:
        return write_jsonl(tmp_path / "c.jsonl", [chat_line("1", text, chat="c", chat_type="personal")])

    _import(cli, version("I live in Lisbon"))
    assert _import(cli, version("I live in Porto"))["edited"] == 1
    assert _import(cli, version("I live in Faro"))["edited"] == 1
    back = _import(cli, version("I live in Porto"))  # an older version again: nothing new
    assert (back["added"], back["already_known"], back["edited"]) == (0, 1, 0)
    frags = _fragments(cli)
    assert sorted(f["text"] for f in frags) == ["I live in Faro", "I live in Lisbon", "I live in Porto"]
    assert {f["locator"].get("edit_of") for f in frags} == {None, "chat:c:1"}


def test_an_edit_and_the_same_id_again_in_one_file_is_still_an_error(cli: Cli, tmp_path: Path) -> None:
    _import(cli, write_jsonl(tmp_path / "a.jsonl", [chat_line("1", "first", chat="c", chat_type="personal")]))
    lines = [
        chat_line("1", "second", chat="c", chat_type="personal"),
        chat_line("1", "third", chat="c", chat_type="personal"),
    ]
    result = cli("ingest", "chat", str(write_jsonl(tmp_path / "b.jsonl", lines)))
    assert (
        result.code == 1
        and "line 2: message chat:c:1 was already used at line 1 with different text" in result.err
    )
    assert _texts(cli) == ["first"]


def test_the_stored_text_then_other_text_in_one_file_is_an_error(cli: Cli, tmp_path: Path) -> None:
    _import(cli, write_jsonl(tmp_path / "a.jsonl", [chat_line("1", "first", chat="c", chat_type="personal")]))
    lines = [
        chat_line("1", "first", chat="c", chat_type="personal"),
        chat_line("1", "second", chat="c", chat_type="personal"),
    ]
    result = cli("ingest", "chat", str(write_jsonl(tmp_path / "b.jsonl", lines)))
    assert result.code == 1 and "line 2: message chat:c:1 was already used at line 1" in result.err
    assert _texts(cli) == ["first"]


def test_the_human_report_counts_edits(cli: Cli, tmp_path: Path) -> None:
    _import(cli, _telegram(tmp_path / "v1.json", "my flight is on the 3rd"))
    result = cli("ingest", "chat", str(_telegram(tmp_path / "v2.json", "my flight is on the 5th")))
    assert (
        "0 new message(s), 0 already known, 1 edited since (the new text stored beside the old)" in result.out
    )
    assert json.loads(cli("fragments", "--json").out)[-1]["locator"]["edit_of"] == "tg:5:7"


# --- refs stored by the JSONL importer before refs were escaped -----------------------------------

LEGACY = [  # (chat, id, role, text) as the first importer stored them
    ("Work: team", "1", "other", "standup at 9"),
    ("Work: team", "2", "owner", "I will be late"),
    ("saved", "x y", "owner", "tab\tid"),  # a space in an id is not escaped: the same ref either way
    ("saved", "3", "owner", "plain"),
]


def _store_as_the_first_importer_did(data_dir: Path) -> None:
    """Rows exactly as `parse_jsonl` of the project skeleton (f5d49da) wrote them:
    ref `chat:{chat}:{id}` and source `chat:{chat}`, nothing escaped."""
    from datetime import UTC, datetime

    from persona_desktop.bootstrap import open_runtime
    from persona_desktop.domain.model import Author, Kind, NewFragment, SourceInfo, Trust
    from persona_desktop.services.ingest import ingest

    at = datetime(2024, 1, 1, 10, tzinfo=UTC)
    chats: dict[str, list[NewFragment]] = {}
    for lineno, (chat, mid, role, text) in enumerate(LEGACY, start=1):
        chat_type = "saved" if chat == "saved" else "group"
        chats.setdefault(chat, []).append(
            NewFragment(
                ref=f"chat:{chat}:{mid}",
                kind=Kind.CHAT,
                author=Author(role),
                trust=Trust.TRUSTED if chat_type == "saved" else Trust.UNTRUSTED,
                text=text,
                captured_at=at,
                locator={
                    "chat_id": chat,
                    "chat": chat,
                    "chat_type": chat_type,
                    "message_id": mid,
                    "from": None,
                },
                session=f"chat:{chat}",
                seq=lineno,
            )
        )
    rt = open_runtime(data_dir)
    try:
        sources = [
            (
                SourceInfo(
                    f"chat:{chat}",
                    Kind.CHAT,
                    chat,
                    {"chat_type": frags[0].locator["chat_type"], "format": "jsonl"},
                ),
                frags,
            )
            for chat, frags in chats.items()
        ]
        ingest(rt.uow, sources, at)
    finally:
        rt.close()


def _legacy_jsonl(path: Path, extra: list[tuple[str, str, str, str]] = ()) -> Path:  # type: ignore[assignment]
    lines = []
    for chat, mid, role, text in [*LEGACY, *extra]:
        chat_type = "saved" if chat == "saved" else "group"
        lines.append(
            json.dumps(
                {
                    "id": mid,
                    "chat": chat,
                    "chat_type": chat_type,
                    "role": role,
                    "date": "2024-01-01T10:00:00Z",
                    "text": text,
                }
            )
        )
    return write_jsonl(path, lines)


def test_a_chat_stored_with_unescaped_refs_is_found_again(cli: Cli, data_dir: Path, tmp_path: Path) -> None:
    """`chat:Work: team:1` was stored before refs were escaped; the same file imported after the
    upgrade added every message again, under `chat:Work%3A team:1`, in a second source."""
    _store_as_the_first_importer_did(data_dir)
    before = {f["ref"] for f in _fragments(cli)}
    assert "chat:Work: team:1" in before
    report = _import(cli, _legacy_jsonl(tmp_path / "old.jsonl"))
    assert (report["added"], report["already_known"], report["edited"]) == (0, 4, 0)
    assert {f["ref"] for f in _fragments(cli)} == before
    assert sorted(s["key"] for s in cli("sources", "--json").json()) == ["chat:Work: team", "chat:saved"]


def test_new_and_edited_messages_of_a_legacy_chat_join_what_is_stored(
    cli: Cli, data_dir: Path, tmp_path: Path
) -> None:
    _store_as_the_first_importer_did(data_dir)
    path = _legacy_jsonl(tmp_path / "more.jsonl", [("Work: team", "9", "owner", "I am back")])
    path.write_text(path.read_text().replace("I will be late", "I will be 10 minutes late"), encoding="utf-8")
    report = _import(cli, path)
    assert (report["added"], report["already_known"], report["edited"]) == (1, 3, 1)
    frags = {f["text"]: f for f in _fragments(cli)}
    assert frags["I will be 10 minutes late"]["locator"]["edit_of"] == "chat:Work: team:2"
    assert len(cli("sources", "--json").json()) == 2  # no second source for the same chat
    work = {f["session"] for f in frags.values() if f["locator"]["chat"] == "Work: team"}
    assert work == {"chat:Work: team"}  # new messages sit in the stored conversation


def test_an_old_ref_of_another_chat_is_not_taken_for_this_one(
    cli: Cli, data_dir: Path, tmp_path: Path
) -> None:
    """Old `chat:Work: team:1` may be chat `Work: team` message `1` or chat `Work` message
    ` team:1`: only a stored message of the same chat and id is the same message."""
    _store_as_the_first_importer_did(data_dir)
    other = write_jsonl(
        tmp_path / "other.jsonl",
        [
            json.dumps(
                {
                    "id": " team:1",
                    "chat": "Work",
                    "chat_type": "group",
                    "role": "other",
                    "date": "2024-01-01T10:00:00Z",
                    "text": "x",
                }
            )
        ],
    )
    report = _import(cli, other)
    assert (report["added"], report["already_known"]) == (1, 0)


# --- which stored text of a message is its newest -------------------------------------------------


def test_version_refs_name_their_message_and_nothing_else() -> None:
    from persona_desktop.domain.message_versions import message_ref, version_ref

    v = version_ref("chat:saved:1", "I live in Munich")
    assert v.startswith("chat:saved:1:v:") and message_ref(v) == "chat:saved:1"
    assert message_ref(version_ref(v, "x")) == v  # never made (edits link the first ref), but exact
    for ref in ("chat:saved:1", "chat:a:v:b:1", "chat:a:v:0123456789abc", "wa:x:20240101T100000:ab12"):
        assert message_ref(ref) == ref


def test_the_newest_version_is_found_by_its_message_only(cli: Cli, data_dir: Path, tmp_path: Path) -> None:
    """Message 10's ref starts like message 1's: it is not a version of it."""
    from persona_desktop.bootstrap import open_runtime

    def lines(first: str) -> list[str]:
        return [chat_line("1", first), chat_line("10", "ten")]

    _import(cli, write_jsonl(tmp_path / "a.jsonl", lines("one")))
    _import(cli, write_jsonl(tmp_path / "b.jsonl", lines("one, edited")))
    ids = {f["text"]: f["id"] for f in _fragments(cli)}
    rt = open_runtime(data_dir)
    try:
        with rt.uow.read() as uow:
            newest = uow.fragments.newest_versions(["chat:saved:1", "chat:saved:10", "chat:saved:2"])
    finally:
        rt.close()
    assert newest == {"chat:saved:1": ids["one, edited"], "chat:saved:10": ids["ten"]}
