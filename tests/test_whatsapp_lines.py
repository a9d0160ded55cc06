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
