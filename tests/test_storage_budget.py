"""The storage budget: what uses the space, trimming past 100 %, and capture held on a full disk."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pytestqt.qtbot import QtBot

from persona_desktop.bootstrap import Runtime
from persona_desktop.domain.model import Author, Kind, NewFragment, SourceInfo, Subject, Trust
from persona_desktop.domain.proposals import NewFact
from persona_desktop.services.ingest import ingest
from persona_desktop.services.storage_budget import MB, enforce_budget, measure
from tests.conftest import Cli, chat_line, write_jsonl

NOW = datetime.now(UTC)
CROP_BYTES = 2 * MB


def _capture(rt: Runtime, n: int, days_ago: float) -> tuple[int, Path]:
    """A screen capture with one line and a kept 2 MB crop, `days_ago` old."""
    at = NOW - timedelta(days=days_ago)
    crop = rt.data_dir / "screens" / f"{at:%Y-%m-%d}" / f"cap{n}-m1.png"
    rt.media.write(crop, os.urandom(CROP_BYTES), mtime=at.timestamp())
    frag = NewFragment(
        f"scr:cap{n}:m1:l1", Kind.SCREEN, Author.UNKNOWN, Trust.UNTRUSTED, f"line of capture {n}", at,
        {"crop_path": str(crop)}, f"screen:{at:%Y-%m-%d}:m1", 1,
    )  # fmt: skip
    [result] = ingest(rt.uow, [(SourceInfo(f"screen:cap{n}", Kind.SCREEN, f"capture {n}"), [frag])], at)
    return result.source_id, crop


def _cite(rt: Runtime, ref: str, *, fact: bool) -> None:
    common = {"subject": Subject.OWNER, "category": None, "origin": "sleep", "run_id": None,
              "proposal": NewFact(), "supersedes_fact_id": None, "created_at": NOW}  # fmt: skip
    with rt.uow() as uow:
        frag = uow.fragments.by_refs([ref])[ref]
        cid = uow.candidates.add(statement=f"about {ref}", key=ref, **common)  # type: ignore[arg-type]
        uow.candidates.add_evidence(cid, [frag.id], None)
        if fact:
            uow.facts.add(statement=f"about {ref}", subject=Subject.OWNER, key=ref, category=None,
                          candidate_id=cid, valid_from=NOW)  # fmt: skip
        uow.commit()


def test_past_the_budget_only_uncited_captures_go_oldest_first_and_the_journal_says_so(
    runtime: Runtime, cli: Cli, tmp_path: Path
) -> None:
    old_chat = write_jsonl(tmp_path / "c.jsonl", [chat_line("1", "my own words", ago=timedelta(days=60))])
    assert cli("ingest", "chat", str(old_chat)).code == 0  # the oldest source of all: chat is never trimmed
    captures = [_capture(runtime, n, days_ago=10 - n) for n in range(8)]  # cap0 oldest ... cap7 newest
    _cite(runtime, "scr:cap0:m1:l1", fact=True)  # backs a fact
    _cite(runtime, "scr:cap2:m1:l1", fact=False)  # backs a candidate waiting for review
    budget_mb = 12
    before = measure(runtime.uow, runtime.data_dir, budget_mb)
    assert before.fraction > 1.0, before  # 16 MB of crops, more than 12 MB

    result = enforce_budget(runtime.uow, runtime.data_dir, budget_mb, NOW)

    assert result.after.fraction <= 0.9
    gone = {n for n, (_sid, crop) in enumerate(captures) if not crop.exists()}
    assert gone == {1, 3, 4}, gone  # the three oldest uncited: 0 and 2 are cited, 5-7 are newer
    with runtime.uow.read() as uow:
        left = {s.key for _i, s, _n in uow.sources.all()}
        [entry] = [r for r in uow.journal.all() if r.action == "captures.trimmed"]
    assert {"screen:cap0", "screen:cap2", "screen:cap5", "screen:cap6", "screen:cap7"} <= left
    assert not {"screen:cap1", "screen:cap3", "screen:cap4"} & left
    assert any(k.startswith("chat") for k in left)
    assert entry.actor == "storage" and entry.data["sources"] == [captures[n][0] for n in (1, 3, 4)]
    assert "oldest first" in entry.data["rule"] and entry.data["kinds"] == ["screen"]
    # Under budget now: nothing more goes.
    again = enforce_budget(runtime.uow, runtime.data_dir, budget_mb, NOW)
    assert again.captures == 0


def test_when_only_cited_captures_are_left_nothing_more_is_deleted(runtime: Runtime) -> None:
    _sid, crop = _capture(runtime, 0, days_ago=3)
    _capture(runtime, 1, days_ago=2)
    for n in range(2):
        _cite(runtime, f"scr:cap{n}:m1:l1", fact=True)
    result = enforce_budget(runtime.uow, runtime.data_dir, 10, NOW)  # 4 MB in 10 MB: fine
    assert result.captures == 0 and crop.exists()
    for n in range(2, 6):
        _capture(runtime, n, days_ago=1)
        _cite(runtime, f"scr:cap{n}:m1:l1", fact=True)
    result = enforce_budget(runtime.uow, runtime.data_dir, 10, NOW)  # 12 MB, all cited
    assert result.captures == 0 and result.still_over and crop.exists()


def test_sources_and_storage_show_what_uses_the_space(runtime: Runtime, cli: Cli, tmp_path: Path) -> None:
    _capture(runtime, 0, days_ago=1)
    clip = runtime.data_dir / "clips" / "speech" / "rec1" / "0000.ogg"
    runtime.media.write(clip, b"x" * 30_000)
    chat = write_jsonl(tmp_path / "c.jsonl", [chat_line(str(i), f"message number {i}") for i in range(20)])
    assert cli("ingest", "chat", str(chat)).code == 0
    out = cli("sources").out
    assert "screen crops: 2.0 MB" in out and "speech clips: 30.0 kB" in out
    assert "fragments: chat" in out and "screen" in out
    report = cli("storage", "--json").json()
    assert report["encrypted"] is True and report["key"] == "passphrase"
    assert report["crops_bytes"] >= CROP_BYTES and report["clips_bytes"] >= 30_000
    assert set(report["text_bytes_by_kind"]) == {"chat", "screen"}
    assert report["text_bytes_by_kind"]["chat"] > report["text_bytes_by_kind"]["screen"]


def test_a_full_disk_holds_capture_and_room_again_resumes_it(runtime: Runtime, qtbot: QtBot) -> None:
    from persona_desktop.app import build_context, build_shell, storage_watch
    from persona_desktop.services.storage_budget import free_disk

    ctx = build_context(runtime)
    shell = build_shell(ctx)
    calls: list[str] = []

    class Loop:
        def start(self) -> None:
            calls.append("start")

        def stop(self) -> None:
            calls.append("stop")

        def pause(self) -> None:
            calls.append("pause")

        def resume(self) -> None:
            calls.append("resume")

    shell.capture.attach("screen", Loop())
    assert shell.capture.set_enabled("screen", True) and calls == ["start"]
    messages: list[str] = []
    watch = storage_watch(shell)
    watch.message.connect(messages.append)
    # the floor above what the disk has free: the disk is "full" for this owner
    ctx.settings.set("storage.min_free_mb", free_disk(runtime.data_dir) // MB + 1000)
    watch.check()
    qtbot.waitUntil(lambda: watch.held, timeout=10_000)
    assert calls[-1] == "pause" and "paused" in shell.capture.describe()
    assert any("Capture paused" in m and "free on the disk" in m for m in messages)
    shell.capture.resume()  # the owner's resume does not override a full disk
    assert calls[-1] == "pause"
    ctx.settings.set("storage.min_free_mb", 0)
    watch.check()
    qtbot.waitUntil(lambda: not watch.held, timeout=10_000)
    assert calls[-1] == "resume" and any("Capture resumed" in m for m in messages)
    watch.stop()
    shell.capture.shutdown()
    shell.shutdown()


def test_past_80_percent_the_tray_warns_once(runtime: Runtime, qtbot: QtBot) -> None:
    from persona_desktop.app import build_context, build_shell, storage_watch

    for n in range(4):
        _capture(runtime, n, days_ago=1)  # 8 MB of 10
    ctx = build_context(runtime)
    ctx.settings.set("storage.max_mb", 10)
    ctx.settings.set("storage.min_free_mb", 0)
    shell = build_shell(ctx)
    watch = storage_watch(shell)
    messages: list[str] = []
    watch.message.connect(messages.append)
    for _ in range(2):
        watch.check()
        qtbot.waitUntil(lambda: watch.last is not None and not watch._work.busy(), timeout=10_000)
    warnings = [m for m in messages if "of its budget" in m]
    assert len(warnings) == 1 and "8" in warnings[0]
    watch.stop()
    shell.shutdown()


def test_a_store_opened_read_only_is_measured_never_trimmed(runtime: Runtime, qtbot: QtBot) -> None:
    """A damaged store opens read-only: its watch must not try to delete (every minute, failing)."""
    from persona_desktop.app import build_context, build_shell, storage_watch

    crops = [_capture(runtime, n, days_ago=6 - n)[1] for n in range(6)]  # 12 MB in a 10 MB budget
    ctx = build_context(runtime)
    ctx.settings.set("storage.max_mb", 10)
    ctx.settings.set("storage.min_free_mb", 0)
    shell = build_shell(ctx)
    watch = storage_watch(shell, trim=False)
    messages: list[str] = []
    watch.message.connect(messages.append)
    watch.check()
    qtbot.waitUntil(lambda: watch.last is not None and not watch._work.busy(), timeout=10_000)
    assert all(c.exists() for c in crops)
    assert any("of its budget" in m for m in messages)
    assert not any("Storage budget reached" in m for m in messages)
    watch.stop()
    shell.shutdown()
