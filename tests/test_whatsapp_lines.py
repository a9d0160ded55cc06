"""WhatsApp lines under attack: other people's words posing as the owner's, and one message
built to stall the import. The format has no escaping, so what can be ruled out is ruled
out by the line shape; what cannot is marked, never trusted."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.chat_exports import whatsapp_txt, whatsapp_zip
from tests.conftest import Cli


def _import(cli: Cli, path: Path, owner: str = "Alice") -> dict:  # type: ignore[type-arg]
    result = cli("ingest", "chat", str(path), "--owner-name", owner, "--json")
    assert result.code == 0, result.err
    report: dict = result.json()  # type: ignore[type-arg]
    return report


def _by_text(cli: Cli) -> dict[str, dict]:  # type: ignore[type-arg]
    return {f["text"]: f for f in cli("fragments", "--json").json()}


# --- one message that stalls the import (a regex that backtracks) --------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("blank", [" ", "\n", "\t \n"])
def test_a_message_of_whitespace_does_not_stall_the_import(cli: Cli, tmp_path: Path, blank: str) -> None:
    """`\\s*<edited marker>\\s*$` searched from every position is quadratic: 20,000 spaces took 17 s;
    these 400,000 characters would take over an hour."""
    filler = blank * (400_000 // len(blank))
    text = f"31/12/2023, 21:40 - Alice: hi{filler}x <This message was edited>\n31/12/2023, 21:41 - Bob: ok\n"
    report = _import(cli, whatsapp_txt(tmp_path / "WhatsApp Chat with Bob.txt", text))
    assert report["added"] == 2
    mine = next(f for f in cli("fragments", "--json").json() if f["author"] == "owner")
    assert mine["text"].endswith("x") and mine["locator"]["edited"] is True


def test_a_message_of_newlines_counts_against_the_message_size_cap(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Empty continuation lines were free: 300 M newlines after one header were all held and joined."""
    monkeypatch.setattr("persona_desktop.adapters.chat.whatsapp.MAX_MESSAGE_CHARS", 10_000)
    path = whatsapp_zip(tmp_path / "chat.zip", "31/12/2023, 21:40 - Alice: hi" + "\n" * 20_000 + "x\n")
    result = cli("ingest", "chat", str(path), "--owner-name", "Alice")
    assert result.code == 1
    assert "line 1: one message longer than" in result.err and len(result.err.strip().splitlines()) == 1


# --- someone else's message posing as the owner's -------------------------------------------------

HI = "31/12/2023, 21:40 - Alice: hi Bob\n"


def test_a_header_typed_inside_another_senders_message_is_never_owner_trusted(
    cli: Cli, tmp_path: Path
) -> None:
    """Bob's message has a second line in the shape of Alice's (the owner's) header, the same
    minute: it may be a real reply, or Bob's own words; it is stored, but untrusted, saying why."""
    path = whatsapp_txt(
        tmp_path / "WhatsApp Chat with Bob.txt",
        HI
        + "31/12/2023, 21:41 - Bob: check this out:\n"
        + "31/12/2023, 21:41 - Alice: I am allergic to penicillin and my PIN is 4321\n"
        + "31/12/2023, 21:50 - Alice: see you tomorrow\n",
    )
    assert _import(cli, path)["added"] == 4
    frags = _by_text(cli)
    forged = frags["I am allergic to penicillin and my PIN is 4321"]
    assert (forged["author"], forged["trust"]) == ("owner", "untrusted")
    assert "Bob" in forged["locator"]["doubt"] and "same minute" in forged["locator"]["doubt"]
    for genuine in ("hi Bob", "see you tomorrow"):
        assert (frags[genuine]["author"], frags[genuine]["trust"]) == ("owner", "trusted")
        assert "doubt" not in frags[genuine]["locator"]


def test_a_header_of_another_shape_is_a_line_of_the_message_it_is_in(cli: Cli, tmp_path: Path) -> None:
    """The line shape, date order and clock are fixed by the file's first message: an iOS header in
    an Android file, a 12-hour time in a 24-hour file, seconds where there are none, other date
    separators, or a date impossible in the file's order cannot start a message."""
    other_shapes = [
        "[31.12.23, 21:42:05] Alice: an iOS line",
        "31/12/2023, 9:42 PM - Alice: a 12-hour clock",
        "31/12/2023, 21:42:07 - Alice: with seconds",
        "31.12.2023, 21:42 - Alice: dots",
        "31/12/23, 21:42 - Alice: a two-digit year",
        "12/31/2023, 21:42 - Alice: month first",
        "31/12/2023, 29:42 - Alice: no such hour",
    ]
    text = (
        HI
        + "31/12/2023, 21:41 - Bob: look:\n"
        + "\n".join(other_shapes)
        + "\n31/12/2023, 21:50 - Alice: ok\n"
    )
    report = _import(cli, whatsapp_txt(tmp_path / "WhatsApp Chat with Bob.txt", text))
    assert (report["added"], report["skipped_total"]) == (3, 0)
    bob = next(f for f in cli("fragments", "--json").json() if f["author"] == "other")
    assert bob["text"] == "look:\n" + "\n".join(other_shapes)


@pytest.mark.parametrize(
    ("forged", "why"),
    [
        ("31/12/2023, 21:30 - Alice: I owe Bob 500 euros", "before"),  # breaks the time order
        ("31/12/2023, 22:30 - Alice: I owe Bob 500 euros", "after"),  # dated after the next message
    ],
)
def test_a_header_out_of_time_order_after_another_sender_is_never_owner_trusted(
    cli: Cli, tmp_path: Path, forged: str, why: str
) -> None:
    path = whatsapp_txt(
        tmp_path / "WhatsApp Chat with Bob.txt",
        HI + f"31/12/2023, 21:41 - Bob: note\n{forged}\n31/12/2023, 21:50 - Alice: ok\n"
        "31/12/2023, 21:55 - Alice: bye\n",
    )
    _import(cli, path)
    frags = _by_text(cli)
    assert frags["I owe Bob 500 euros"]["trust"] == "untrusted"
    assert why in frags["I owe Bob 500 euros"]["locator"]["doubt"]
    # After a line dated later than it, "ok" could be a second forged line: doubted too.
    assert frags["ok"]["trust"] == ("trusted" if why == "before" else "untrusted")
    assert frags["bye"]["trust"] == "trusted"  # in order after the owner's own: trusted again


def test_forged_lines_one_after_another_are_all_doubted(cli: Cli, tmp_path: Path) -> None:
    """A second forged owner line follows a forged one (the same sender): still inside Bob's message."""
    path = whatsapp_txt(
        tmp_path / "WhatsApp Chat with Bob.txt",
        HI
        + "31/12/2023, 21:41 - Bob: fyi\n"
        + "31/12/2023, 21:41 - Alice: my PIN is 4321\n"
        + "31/12/2023, 21:41 - Alice: and I live at Rua Falsa 1\n"
        + "31/12/2023, 21:55 - Alice: bye\n",
    )
    _import(cli, path)
    frags = _by_text(cli)
    assert frags["my PIN is 4321"]["trust"] == frags["and I live at Rua Falsa 1"]["trust"] == "untrusted"
    assert frags["bye"]["trust"] == "trusted"


def test_a_quick_reply_in_a_later_minute_stays_trusted(cli: Cli, tmp_path: Path) -> None:
    """What cannot be told apart is doubted; what can (a later minute, in order) is not."""
    path = whatsapp_txt(
        tmp_path / "WhatsApp Chat with Bob.txt",
        HI
        + "31/12/2023, 21:41 - Bob: where do you live now?\n"
        + "31/12/2023, 21:42 - Alice: in Porto since March\n"
        + "31/12/2023, 21:42 - Alice: near the river\n",
    )
    report = _import(cli, path)
    assert report["doubted"] == 0
    assert {f["trust"] for f in cli("fragments", "--json").json() if f["author"] == "owner"} == {"trusted"}


def test_the_report_says_how_many_of_the_owners_messages_were_doubted(cli: Cli, tmp_path: Path) -> None:
    path = whatsapp_txt(
        tmp_path / "WhatsApp Chat with Bob.txt",
        HI + "31/12/2023, 21:41 - Bob: ok?\n31/12/2023, 21:41 - Alice: ok\n",
    )
    result = cli("ingest", "chat", str(path), "--owner-name", "Alice")
    assert result.code == 0
    assert "1 of your messages stored as untrusted" in result.err
