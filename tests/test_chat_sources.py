"""ChatGPT, Claude and WhatsApp exports: what is imported, as whose words, and what is counted."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from persona_desktop.bootstrap import Runtime
from persona_desktop.services.chat import load_messages
from persona_desktop.services.turn_review import ReviewKind, make_snapshot
from tests.chat_exports import (
    ANDROID_24H,
    GROUP,
    IOS_12H,
    chatgpt_export,
    claude_export,
    whatsapp_txt,
    whatsapp_zip,
)
from tests.chat_support import reviewer, use_server
from tests.conftest import Cli
from tests.ollama_server import OllamaServer
from tests.test_chat_import import NO_SKIPS

GPT1 = "c0ffee00-0000-4000-8000-000000000001"
GPT2 = "c0ffee00-0000-4000-8000-000000000002"


def _fragments(cli: Cli) -> dict[str, dict[str, Any]]:
    return {f["ref"]: f for f in cli("fragments", "--json").json()}


def _who(frags: dict[str, dict[str, Any]]) -> dict[str, tuple[str, str, str]]:
    return {ref: (f["author"], f["trust"], f["text"]) for ref, f in frags.items()}


# --- ChatGPT ------------------------------------------------------------------------------------


def test_chatgpt_imports_the_current_branch_and_counts_the_rest(cli: Cli, tmp_path: Path) -> None:
    path = chatgpt_export(tmp_path / "conversations.json")
    report = cli("ingest", "chat", str(path), "--json").json()
    assert (report["format"], report["chats"], report["added"]) == ("chatgpt", 2, 9)
    assert report["skipped"] == NO_SKIPS | {"system_or_tool": 3, "edited_away": 2, "media_without_caption": 1}
    who = _who(_fragments(cli))
    assert who == {
        f"gpt:{GPT1}:u1b": ("owner", "trusted", "I moved to Porto in 2021."),
        f"gpt:{GPT1}:a1b": ("assistant", "trusted", "Porto is lovely."),
        f"gpt:{GPT1}:u2": ("owner", "trusted", "What is the weather in Porto today?"),
        f"gpt:{GPT1}:a2": ("assistant", "trusted", "It is sunny, 21 °C."),
        f"gpt:{GPT1}:u4": ("owner", "trusted", "I play the cello on Sundays."),  # a voice transcript
        f"gpt:{GPT1}:a4": ("assistant", "trusted", "Lovely instrument."),
        f"gpt:{GPT1}:u5": ("owner", "trusted", "Thanks!"),
        f"gpt:{GPT2}:x": ("owner", "trusted", "I have two cats, Miso and Tofu."),
        f"gpt:{GPT2}:y": ("assistant", "trusted", "Great names!"),
    }
    sources = {s["key"]: s for s in report["sources"]}
    assert sources[f"chat:gpt:{GPT1}"]["label"] == "Moving to Porto"
    again = cli("ingest", "chat", str(path), "--json").json()
    assert (again["added"], again["already_known"]) == (0, 9)
    assert set(_fragments(cli)) == set(who)


def test_chatgpt_zip_from_the_data_export_is_read_too(cli: Cli, tmp_path: Path) -> None:
    conversations = chatgpt_export(tmp_path / "conversations.json")
    bundle = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(bundle, "w") as archive:
        archive.write(conversations, "conversations.json")
        archive.writestr("chat.html", "<html></html>")
        archive.writestr("user.json", "{}")
    report = cli("ingest", "chat", str(bundle), "--json").json()
    assert (report["format"], report["added"]) == ("chatgpt", 9)


# --- Claude -------------------------------------------------------------------------------------


def test_claude_reads_content_blocks_and_the_current_branch(cli: Cli, tmp_path: Path) -> None:
    path = claude_export(tmp_path / "conversations.json")
    report = cli("ingest", "chat", str(path), "--json").json()
    assert (report["format"], report["chats"], report["added"]) == ("claude", 2, 7)
    assert report["skipped"] == NO_SKIPS | {"media_without_caption": 1, "system_or_tool": 1, "edited_away": 2}
    a, b = "claude:5e1f0000-0000-4000-8000-00000000000a", "claude:5e1f0000-0000-4000-8000-00000000000b"
    assert _who(_fragments(cli)) == {
        f"{a}:m1": ("owner", "trusted", "I grow tomatoes on my balcony."),
        f"{a}:m2": (
            "assistant",
            "trusted",
            "Tomatoes need sun. Let me check the forecast.\n\nSix hours a day is ideal.",
        ),
        f"{a}:m5": ("owner", "trusted", "My balcony faces south.\n\nIt is on the fifth floor."),
        f"{a}:m6": ("assistant", "trusted", "South is perfect."),
        f"{a}:m7": ("owner", "trusted", "I also like basil."),
        f"{b}:n3": ("owner", "trusted", "I am 31 years old."),
        f"{b}:n4": ("assistant", "trusted", "Noted, 31."),
    }
    assert cli("ingest", "chat", str(path), "--json").json()["already_known"] == 7


def test_the_turn_review_runs_on_an_imported_chatgpt_conversation(
    cli: Cli, runtime: Runtime, ollama_server: OllamaServer, tmp_path: Path
) -> None:
    report = cli("ingest", "chat", str(chatgpt_export(tmp_path / "conversations.json")), "--json").json()
    source_id = next(s["id"] for s in report["sources"] if s["key"] == f"chat:gpt:{GPT1}")
    use_server(runtime, ollama_server)
    messages = load_messages(runtime.uow, source_id)
    assert [m.role for m in messages] == [
        "owner",
        "assistant",
        "owner",
        "assistant",
        "owner",
        "assistant",
        "owner",
    ]
    owner_ref, assistant_ref = f"gpt:{GPT1}:u4", f"gpt:{GPT1}:a4"
    ollama_server.reply(
        "",
        tool_calls=[
            ("propose_fact", {"statement": "The owner plays the cello", "refs": [owner_ref, assistant_ref]})
        ],
    )
    ollama_server.reply("Done.")
    outcome = reviewer(runtime, ollama_server).run(make_snapshot(GPT1, "system", messages), ReviewKind.MEMORY)
    assert outcome.status == "done", outcome.error
    [cid] = outcome.candidate_ids
    with runtime.uow.read() as uow:
        evidence = [f.ref for f in uow.candidates.evidence(cid)]
    assert evidence == [owner_ref]  # the owner's words; the assistant's are never evidence
    listing = ollama_server.chat_bodies()[0]["messages"][-1]["content"]
    assert "I play the cello on Sundays." in listing and "I moved to Lisbon" not in listing


# --- WhatsApp -----------------------------------------------------------------------------------


def test_whatsapp_android_24_hour_multi_line_media_and_system_lines(cli: Cli, tmp_path: Path) -> None:
    path = whatsapp_txt(tmp_path / "WhatsApp Chat with Bob.txt", ANDROID_24H)
    report = cli("ingest", "chat", str(path), "--owner-name", "Ann", "--json").json()
    assert (report["format"], report["format_name"], report["added"]) == (
        "whatsapp",
        "WhatsApp chat (Android)",
        5,
    )
    assert report["skipped"] == NO_SKIPS | {"service_message": 2, "media_without_caption": 2, "deleted": 1}
    frags = _fragments(cli)
    by_text = {f["text"]: f for f in frags.values()}
    assert {(f["author"], f["trust"], f["text"]) for f in frags.values()} == {
        ("owner", "trusted", "Happy new year! I finally moved to Porto."),
        ("other", "untrusted", "Wow, congrats"),
        ("owner", "trusted", "My address is:\nRua das Flores 12\n4050-262 Porto"),
        ("owner", "trusted", "The view from my window"),
        ("owner", "trusted", "I start at the new job on Monday"),
    }
    stamps = sorted(ref.split(":")[2] for ref in frags)
    assert stamps == [
        "20231231T214100",
        "20231231T214100",
        "20231231T214300",
        "20240101T091700",
        "20240113T180000",
    ]
    assert by_text["I start at the new job on Monday"]["locator"]["edited"] is True
    assert by_text["Wow, congrats"]["locator"]["from"] == "Bob"
    assert by_text["Happy new year! I finally moved to Porto."]["locator"]["chat_type"] == "personal"
    assert {f["locator"]["chat"] for f in frags.values()} == {"Bob"}
    again = cli("ingest", "chat", str(path), "--owner-name", "Ann", "--json").json()
    assert (again["added"], again["already_known"]) == (0, 5)


def test_whatsapp_ios_12_hour_in_a_zip(cli: Cli, tmp_path: Path) -> None:
    path = whatsapp_zip(tmp_path / "WhatsApp Chat - Bob.zip", IOS_12H)
    report = cli("ingest", "chat", str(path), "--owner-name", "ann", "--json").json()
    assert (report["format_name"], report["added"]) == ("WhatsApp chat (iOS)", 4)
    assert report["skipped"] == NO_SKIPS | {"service_message": 1, "media_without_caption": 2, "sticker": 1}
    frags = _fragments(cli)
    assert sorted((ref.split(":")[2], *who) for ref, who in _who(frags).items()) == [
        ("20231231T214105", "owner", "trusted", "I adopted a dog called Pixel."),
        ("20231231T214130", "other", "untrusted", "Cute!"),
        ("20240101T000500", "owner", "trusted", "He is a beagle.\nHe sleeps all day."),  # 12:05 AM
        ("20240113T130000", "other", "untrusted", "See you!"),  # 1:00 PM, month first
    ]


def test_whatsapp_group_chats_are_untrusted(cli: Cli, tmp_path: Path) -> None:
    path = whatsapp_txt(tmp_path / "WhatsApp Chat with Climbing.txt", GROUP)
    report = cli("ingest", "chat", str(path), "--owner-name", "Ann", "--json").json()
    assert (report["format_name"], report["added"], report["skipped"]["service_message"]) == (
        "WhatsApp chat (iOS, group)",
        3,
        2,
    )
    assert {(f["author"], f["trust"]) for f in _fragments(cli).values()} == {
        ("owner", "untrusted"),
        ("other", "untrusted"),
    }


def test_whatsapp_without_owner_name_lists_the_senders_or_refuses_an_unknown_one(
    cli: Cli, tmp_path: Path
) -> None:
    path = whatsapp_txt(tmp_path / "WhatsApp Chat with Climbing.txt", GROUP)
    missing = cli("ingest", "chat", str(path))  # stdin is not a terminal here
    assert missing.code == 1
    assert "--owner-name with one of: Ann, Bob, Cleo" in missing.err
    assert len(missing.err.strip().splitlines()) == 1
    wrong = cli("ingest", "chat", str(path), "--owner-name", "Zed")
    assert wrong.code == 1 and "nobody named 'Zed'" in wrong.err and "Ann, Bob, Cleo" in wrong.err
    assert cli("fragments", "--json").json() == []


@pytest.mark.skipif(not hasattr(pty, "openpty"), reason="needs a pseudo-terminal")
def test_whatsapp_asks_which_sender_you_are_on_a_terminal(cli: Cli, data_dir: Path, tmp_path: Path) -> None:
    path = whatsapp_txt(tmp_path / "WhatsApp Chat with Climbing.txt", GROUP)
    leader, follower = pty.openpty()
    try:
        os.write(leader, b"2\n")
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "persona_desktop",
                "--data-dir",
                str(data_dir),
                "ingest",
                "chat",
                str(path),
            ],
            stdin=follower,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(follower)
        os.close(leader)
    assert proc.returncode == 0, proc.stderr
    assert "1. Ann" in proc.stderr and "3. Cleo" in proc.stderr
    owners = {f["locator"]["from"] for f in _fragments(cli).values() if f["author"] == "owner"}
    assert owners == {"Bob"}


# --- detection ----------------------------------------------------------------------------------


def test_the_format_is_found_by_content_not_by_name(cli: Cli, tmp_path: Path) -> None:
    misnamed = tmp_path / "export.txt"
    misnamed.write_bytes(claude_export(tmp_path / "c.json").read_bytes())
    assert cli("ingest", "chat", str(misnamed), "--json").json()["format"] == "claude"
    unknown = tmp_path / "notes.json"
    unknown.write_text('{"notes": ["buy milk"]}', encoding="utf-8")
    result = cli("ingest", "chat", str(unknown))
    assert result.code == 1
    assert "not a chat export this app knows; looked for a Telegram Desktop result.json" in result.err
    assert "WhatsApp" in result.err and "JSONL" in result.err and len(result.err.strip().splitlines()) == 1
    prose = tmp_path / "prose.txt"
    prose.write_text("Dear diary,\ntoday I moved to Porto.\n", encoding="utf-8")
    assert "not a chat export this app knows" in cli("ingest", "chat", str(prose)).err


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        # US Android, 12-hour clock: month first, 12 AM is midnight, 12 PM is noon
        (
            ["1/2/24, 12:05\u202fAM - Ann: a", "1/2/24, 12:30\u202fPM - Ann: b", "1/3/24, 9:41 PM - Bob: c"],
            ["20240102T000500", "20240102T123000", "20240103T214100"],
        ),
        # day and month both 12 or less, 24-hour: the order in which the dates keep increasing wins
        (
            ["05.01.24, 08:00 - Ann: a", "12.01.24, 08:00 - Bob: b", "02.02.24, 08:00 - Ann: c"],
            ["20240105T080000", "20240112T080000", "20240202T080000"],
        ),
        (
            ["01/05/24, 08:00 - Ann: a", "01/12/24, 08:00 - Bob: b", "02/02/24, 08:00 - Ann: c"],
            ["20240105T080000", "20240112T080000", "20240202T080000"],
        ),
    ],
)
def test_whatsapp_date_order_and_clock_are_read_from_the_file(
    cli: Cli, tmp_path: Path, lines: list[str], expected: list[str]
) -> None:
    path = whatsapp_txt(tmp_path / "WhatsApp Chat with Bob.txt", "\n".join(lines) + "\n")
    assert cli("ingest", "chat", str(path), "--owner-name", "Ann").code == 0
    stamps = sorted(f["ref"].split(":")[2] for f in _fragments(cli).values())
    assert stamps == expected
