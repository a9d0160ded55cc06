"""Encryption at rest: nothing captured is readable from the data dir without the key.

The attacks: someone copies the data dir (a backup, a stolen disk, another user with
a root shell) and reads the files; someone tries a wrong passphrase, or runs the app
where it cannot ask for one; a migration is killed halfway.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from persona_desktop.adapters.keys import key_info
from persona_desktop.adapters.media_vault import MAGIC, media_files
from persona_desktop.adapters.ocr_tesseract import TesseractOcr
from persona_desktop.adapters.store.cipher import SQLITE_HEADER
from persona_desktop.adapters.store.database import DB_FILE
from persona_desktop.bootstrap import Runtime, open_runtime
from persona_desktop.capture.screen_pipeline import ScreenPipeline
from persona_desktop.capture.screen_privacy import ExclusionRules
from persona_desktop.config import Settings
from persona_desktop.domain.model import Author, Kind, NewFragment, SourceInfo, Trust
from persona_desktop.ports.screen import Frame, Monitor
from persona_desktop.services.ingest import ingest
from tests.conftest import TEST_PASSPHRASE, Cli, chat_line, write_jsonl
from tests.screen_support import render_lines, show_window, xvfb
from tests.speech_support import SENTENCES, synth
from tests.store_support import kill_when, raw_connect, run_without_passphrase, store_key

CHAT_SECRET = "ZEBRAFISH-7731"
SCREEN_SECRET = "ORCHID"
SPEECH_SECRET = "Lisbon"


def _files(data_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(data_dir)): p.read_bytes() for p in sorted(data_dir.rglob("*")) if p.is_file()}


def _leaks(data_dir: Path, secrets: list[str]) -> list[str]:
    found = []
    for name, content in _files(data_dir).items():
        for secret in secrets:
            for form in {secret, secret.lower(), secret.upper()}:
                if form.encode() in content:
                    found.append(f"{secret} in {name}")
    return found


def _settings(data_dir: Path, **values: object) -> None:
    s = Settings.load(data_dir / "settings.json")
    for k, v in values.items():
        s.set(k, v)
    s.save()


def _screen_capture(data_dir: Path, text: list[str], at: datetime) -> None:
    rt = open_runtime(data_dir)
    try:
        pipe = ScreenPipeline(
            TesseractOcr("eng", 40), ExclusionRules.of([], []), image_dir=data_dir / "screens", media=rt.media
        )
        import numpy as np

        rgba = np.asarray(render_lines(text, size=(900, 300)).image.convert("RGBA"))
        frame = Frame(Monitor(1, 0, 0, 900, 300), np.ascontiguousarray(rgba[:, :, [2, 1, 0, 3]]), bgra=True)
        result = pipe.process(frame, [], at)
        assert result.source is not None
        ingest(rt.uow, [(result.source, result.fragments)], at)
    finally:
        rt.close()


def test_a_run_with_secrets_leaves_none_of_them_readable_in_the_data_dir(
    cli: Cli, data_dir: Path, tmp_path: Path
) -> None:
    assert cli("config", "set", "capture.keep_audio", "true").code == 0
    chat = write_jsonl(tmp_path / "c.jsonl", [chat_line("1", f"The alarm code is {CHAT_SECRET}, keep it.")])
    assert cli("ingest", "chat", str(chat)).code == 0
    _screen_capture(data_dir, ["Vault combination", f"{SCREEN_SECRET} 5521 on the left"], datetime.now(UTC))
    r = cli("ingest", "audio", str(synth(tmp_path / "s.wav", SENTENCES[0])))
    assert r.code == 0, r.err
    frags = cli("fragments", "--json").json()
    text = " ".join(f["text"] for f in frags)
    assert CHAT_SECRET in text and SCREEN_SECRET in text and SPEECH_SECRET in text, (
        text
    )  # all three were stored

    rt = open_runtime(data_dir)  # open: the WAL and SHM exist now
    try:
        with rt.uow() as uow:
            uow.kv.set("probe", CHAT_SECRET)  # a write that sits in the WAL
            uow.commit()
        assert (data_dir / f"{DB_FILE}-wal").exists()
        kept = list(media_files(data_dir))
        assert {p.parts[len(data_dir.parts)] for p in kept} == {"screens", "clips"}
        assert not _leaks(data_dir, [CHAT_SECRET, SCREEN_SECRET, SPEECH_SECRET])
        for path in kept:  # sealed, and the app still opens them
            assert path.read_bytes().startswith(MAGIC)
            assert rt.media.read(path)[:4] in (b"\x89PNG", b"OggS")
    finally:
        rt.close()
    assert (data_dir / DB_FILE).read_bytes()[:16] != SQLITE_HEADER
    assert not _leaks(data_dir, [CHAT_SECRET, SCREEN_SECRET, SPEECH_SECRET])
    keyinfo = (data_dir / key_info.KEY_INFO_FILE).read_text()
    assert TEST_PASSPHRASE not in keyinfo and "passphrase" in keyinfo


def test_capture_screen_through_the_app_s_own_wiring_keeps_its_crop_sealed(
    cli: Cli, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`capture screen` (a keyboard shortcut's command, and the tray's "Capture this screen
    now") builds its grabber, window list and pipeline itself: whatever path builds them,
    the crop it keeps is sealed and the screen's text is in no file of the data dir."""
    assert cli("config", "set", "capture.keep_images", "true").code == 0
    with xvfb(1000, 360) as display:
        monkeypatch.setenv("DISPLAY", display)
        monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
        monkeypatch.setenv("XDG_SESSION_TYPE", "x11")
        window = show_window(display, "Notes - editor", f"Vault combination {SCREEN_SECRET} 5521",
                             (40, 40, 900, 200), font_px=28)  # fmt: skip
        try:
            r = cli("capture", "screen", "--json")
        finally:
            window.close()
    assert r.code == 0, r.err
    texts = " ".join(f["text"] for f in cli("fragments", "--kind", "screen", "--json").json())
    assert SCREEN_SECRET in texts, texts  # it was read and stored
    kept = list(media_files(data_dir))
    assert kept, "no crop was kept"
    assert all(p.read_bytes().startswith(MAGIC) for p in kept), [p.name for p in kept]
    assert not _leaks(data_dir, [SCREEN_SECRET])


def test_the_leak_check_finds_plain_text_where_the_owner_opted_out(
    cli: Cli, data_dir: Path, tmp_path: Path
) -> None:
    r = cli("config", "set", "storage.encrypted", "false")
    assert r.code == 0 and "warning" in r.err
    chat = write_jsonl(tmp_path / "c.jsonl", [chat_line("1", f"The alarm code is {CHAT_SECRET}, keep it.")])
    assert cli("ingest", "chat", str(chat)).code == 0
    assert (data_dir / DB_FILE).read_bytes()[:16] == SQLITE_HEADER
    assert _leaks(data_dir, [CHAT_SECRET])


def test_the_log_file_holds_no_message_text_from_a_bug_or_a_driver_error(
    cli: Cli, data_dir: Path, monkeypatch: pytest.MonkeyPatch, logged_warnings: list[logging.LogRecord]
) -> None:
    """The log is plain text in the data dir. A bug's exception quotes a message, a real SQLite
    error quotes the query ("no such column: <word>"), a log call passes text: none reaches it."""
    import sqlcipher3.dbapi2 as sqlcipher

    from persona_desktop.services import queries

    secret = "MARMALADE9921"
    assert cli("fragments").code == 0

    def broken(*_args: object, **_kw: object) -> object:
        conn = sqlcipher.connect(":memory:")
        conn.execute("CREATE VIRTUAL TABLE f USING fts5(text)")
        try:
            conn.execute("SELECT * FROM f WHERE f MATCH ?", (f"{secret}:x",)).fetchall()
        except sqlcipher.OperationalError as exc:
            raise ValueError(f"the search for {secret} failed") from exc
        raise AssertionError("the query should have failed")

    monkeypatch.setattr(queries, "candidates", broken)
    r = cli("candidates")
    assert r.code == 1 and "internal error (ValueError)" in r.err and secret not in r.err
    logging.getLogger("persona_desktop.probe").warning("the model replied %s (%d bytes)", secret, 13)
    logging.getLogger("ollama.probe").warning(f"a library's own text: {secret}")
    log = data_dir / "logs" / "persona-desktop.log"
    text = log.read_text()
    assert "OperationalError: SQLITE_ERROR" in text and "ValueError: message withheld" in text
    assert "the model replied <withheld> (13 bytes)" in text and "a message of ollama.probe" in text
    assert not _leaks(data_dir, [secret, CHAT_SECRET])
    assert any(r.name == "persona_desktop.probe" for r in logged_warnings)


def _hashes(data_dir: Path) -> dict[str, str]:
    return {k: hashlib.sha256(v).hexdigest() for k, v in _files(data_dir).items()}


def test_a_wrong_passphrase_is_one_line_and_changes_nothing(cli: Cli, data_dir: Path, tmp_path: Path) -> None:
    chat = write_jsonl(tmp_path / "c.jsonl", [chat_line("1", "hello")])
    assert cli("ingest", "chat", str(chat)).code == 0
    before = _hashes(data_dir)
    for args in (
        ["fragments"],
        ["ingest", "chat", str(chat)],
        ["config", "set", "storage.encrypted", "false"],
    ):
        r = cli.process(*args, env={"PERSONA_DESKTOP_PASSPHRASE": "not the passphrase"})
        assert r.code == 1, r
        lines = [line for line in r.err.strip().splitlines() if "warning" not in line]
        assert len(lines) == 1, r.err
        assert "wrong passphrase" in lines[0] and "Traceback" not in r.err
        assert "not the passphrase" not in r.err
    assert _hashes(data_dir) == before  # no new empty store, no decryption, not even the setting
    assert len(cli("fragments", "--json").json()) == 1


def test_without_keyring_and_passphrase_a_command_names_the_three_ways(
    cli: Cli, data_dir: Path, tmp_path: Path
) -> None:
    r = cli.process("fragments", env={"PERSONA_DESKTOP_PASSPHRASE": ""})
    assert r.code == 1 and "empty" in r.err  # an empty passphrase is refused, not used
    proc = run_without_passphrase(data_dir, "fragments")
    assert proc.returncode == 1
    [line] = proc.stderr.strip().splitlines()
    assert "PERSONA_DESKTOP_PASSPHRASE" in line and "terminal" in line and "keyring" in line
    assert not (data_dir / DB_FILE).exists() and not (data_dir / key_info.KEY_INFO_FILE).exists()


def test_the_key_is_never_in_a_url_repr_or_error(data_dir: Path) -> None:
    import sqlalchemy as sa

    rt = open_runtime(data_dir)
    try:
        key = rt.store.key
        assert key is not None
        texts = [repr(rt.engine), str(rt.engine.url), repr(rt.engine.pool), repr(rt), repr(rt.store)]
        with pytest.raises(sa.exc.DBAPIError) as err, rt.engine.connect() as conn:
            conn.exec_driver_sql("SELECT * FROM no_such_table WHERE x = ?", ("v",))
        texts.append(str(err.value))
    finally:
        rt.close()
    texts.append((data_dir / key_info.KEY_INFO_FILE).read_text())
    for text in texts:
        assert key.hex() not in text.lower() and TEST_PASSPHRASE not in text


def test_the_default_passphrase_cost_is_memory_hard(data_dir: Path, cli: Cli) -> None:
    r = cli.process("fragments")  # a new store, made by a process without the tests' cheap cost
    assert r.code == 0, r.err
    kdf = json.loads((data_dir / key_info.KEY_INFO_FILE).read_text())["current"]["kdf"]
    assert kdf == {"name": "scrypt", "n": 2**17, "r": 8, "p": 1}  # 128 MiB per guess


def test_a_hostile_keyinfo_cannot_make_the_app_allocate_gigabytes(data_dir: Path) -> None:
    rt = open_runtime(data_dir)
    rt.close()
    path = data_dir / key_info.KEY_INFO_FILE
    raw = json.loads(path.read_text())
    raw["current"]["kdf"]["n"] = 2**30
    path.write_text(json.dumps(raw))
    from persona_desktop.errors import PersonaError

    with pytest.raises(PersonaError, match="out of range"):
        open_runtime(data_dir)


def test_fts5_works_in_the_encrypted_store(runtime: object, data_dir: Path) -> None:
    conn = raw_connect(data_dir)
    try:
        conn.execute("CREATE VIRTUAL TABLE probe_fts USING fts5(text)")
        conn.execute("INSERT INTO probe_fts VALUES ('the quick brown fox')")
        assert conn.execute("SELECT text FROM probe_fts WHERE probe_fts MATCH 'brown'").fetchall()
    finally:
        conn.close()


def test_sqlite_s_temporary_tables_and_sorts_stay_in_memory(runtime: Runtime, data_dir: Path) -> None:
    """Search marks matched lines in a scratch FTS5 table in SQLite's temp database, and a
    big sort spills to temp files. SQLCipher never encrypts those: with `temp_store` FILE
    (the default of a build without SQLITE_TEMP_STORE=2) matched message text would reach
    /tmp in the clear. Every connection of the store keeps them in memory, whatever the build."""
    from persona_desktop.adapters.store.cipher import connect

    with runtime.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA temp_store").scalar() == 2  # MEMORY
    with runtime.uow.read() as uow:
        assert uow.connection.exec_driver_sql("PRAGMA temp_store").scalar() == 2
    other = connect(data_dir / DB_FILE, store_key(data_dir))  # conversions and re-keys use this
    try:
        assert other.execute("PRAGMA temp_store").fetchone()[0] == 2
    finally:
        other.close()


# --- lifecycle: migration, opt-out, re-key -----------------------------------------------


def _plain_store_with(data_dir: Path, messages: int, crops: int) -> list[Path]:
    """A store from before encryption: plain SQLite, plain crops."""
    _settings(data_dir, **{"storage.encrypted": False})
    rt = open_runtime(data_dir)
    paths = []
    try:
        at = datetime.now(UTC) - timedelta(days=1)
        frags = [
            NewFragment(
                f"chat:old:{i}",
                Kind.CHAT,
                Author.OWNER,
                Trust.TRUSTED,
                f"{CHAT_SECRET} line {i} " + "x" * 200,
                at,
                {},
                "s",
                i,
            )
            for i in range(messages)
        ]
        ingest(rt.uow, [(SourceInfo("chat:old", Kind.CHAT, "old chat"), frags)], at)
        for i in range(crops):
            path = data_dir / "screens" / "2026-11-01" / f"c{i}-m0.png"
            rt.media.write(path, b"\x89PNG fake crop " + SCREEN_SECRET.encode() + os.urandom(4000))
            paths.append(path)
    finally:
        rt.close()
    assert (data_dir / DB_FILE).read_bytes()[:16] == SQLITE_HEADER
    _settings(data_dir, **{"storage.encrypted": True})  # as after an upgrade to this version
    return paths


def test_a_plaintext_store_is_encrypted_in_place_with_its_crops(data_dir: Path, cli: Cli) -> None:
    crops = _plain_store_with(data_dir, 50, 3)
    rt = open_runtime(data_dir)
    try:
        with rt.uow.read() as uow:
            assert len(uow.fragments.all()) == 50
            actions = [r.action for r in uow.journal.all()]
        assert "store.encrypted" in actions and "media.sealed" in actions
        assert all(rt.media.read(p).startswith(b"\x89PNG fake crop") for p in crops)
    finally:
        rt.close()
    assert (data_dir / DB_FILE).read_bytes()[:16] != SQLITE_HEADER
    assert not _leaks(data_dir, [CHAT_SECRET, SCREEN_SECRET])  # the plaintext is gone, not just renamed
    assert not (data_dir / "media-pending.json").exists()
    hits = cli("search", "ZEBRAFISH", "--json").json()  # the FTS5 index came along, and still follows
    assert len(hits) == 50


def test_a_migration_killed_during_the_copy_leaves_the_old_store_whole_and_the_next_start_finishes(
    data_dir: Path,
) -> None:
    _plain_store_with(data_dir, 20_000, 0)
    temp = data_dir / f"{DB_FILE}.encrypting"
    kill_when(data_dir, lambda: temp.exists() and temp.stat().st_size > 0, "the encrypted copy being written")
    plain = sqlite3.connect(data_dir / DB_FILE)  # the old store: plain, whole, opens with plain SQLite
    try:
        assert plain.execute("SELECT count(*) FROM fragments").fetchone()[0] == 20_000
    finally:
        plain.close()
    rt = open_runtime(data_dir)
    try:
        with rt.uow.read() as uow:
            assert len(uow.fragments.all(limit=30_000)) == 20_000
    finally:
        rt.close()
    assert (data_dir / DB_FILE).read_bytes()[:16] != SQLITE_HEADER
    assert not temp.exists()
    assert not _leaks(data_dir, [CHAT_SECRET])


def test_a_migration_killed_while_sealing_crops_is_finished_by_the_next_start(data_dir: Path) -> None:
    crops = _plain_store_with(data_dir, 10, 400)

    def halfway() -> bool:
        if (data_dir / DB_FILE).read_bytes()[:16] == SQLITE_HEADER:
            return False
        return sum(p.read_bytes().startswith(MAGIC) for p in crops[:40]) >= 5

    kill_when(data_dir, halfway, "the crops being sealed")
    sealed = sum(p.read_bytes().startswith(MAGIC) for p in crops)
    assert 0 < sealed < len(crops), "the kill did not land while the crops were being sealed"
    assert (data_dir / "media-pending.json").exists()
    rt = open_runtime(data_dir)
    try:
        assert all(p.read_bytes().startswith(MAGIC) for p in crops)
        assert all(rt.media.read(p).startswith(b"\x89PNG fake crop") for p in crops)
        with rt.uow.read() as uow:
            assert len(uow.fragments.all()) == 10
    finally:
        rt.close()
    assert not (data_dir / "media-pending.json").exists()
    assert not _leaks(data_dir, [CHAT_SECRET, SCREEN_SECRET])


def test_a_crop_whose_sealing_was_cut_short_leaves_no_plain_copy_behind(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sealing replaces a crop, then zeroes the old content under a second name (`.NAME.old`).
    Cut short between the two (a kill, a power cut), the plain crop sits under that hidden
    name, which media listings, retention and the budget skip: the next start scrubs it."""
    from persona_desktop.adapters import media_vault

    crops = _plain_store_with(data_dir, 2, 6)
    scrub = media_vault.scrub
    calls = []

    def cut_short(path: Path) -> None:
        calls.append(path)
        if len(calls) == 3:
            raise KeyboardInterrupt  # stands for the kill: nothing after this point runs
        scrub(path)

    monkeypatch.setattr(media_vault, "scrub", cut_short)
    with pytest.raises(KeyboardInterrupt):
        open_runtime(data_dir)
    monkeypatch.setattr(media_vault, "scrub", scrub)
    assert [p.name for p in crops[2].parent.glob(".*.old")] == [f".{crops[2].name}.old"]
    assert _leaks(data_dir, [SCREEN_SECRET])  # the plain crop, under its hidden name
    rt = open_runtime(data_dir)
    try:
        assert all(rt.media.read(p).startswith(b"\x89PNG fake crop") for p in crops)
    finally:
        rt.close()
    assert not _leaks(data_dir, [SCREEN_SECRET])
    assert not [p.name for p in crops[0].parent.iterdir() if p.name.startswith(".")]


def test_a_crop_cut_short_before_its_replacement_keeps_its_content(data_dir: Path) -> None:
    """Cut short right after the second name was made, before the sealed file replaced the
    crop: both names are the same file, so the leftover name goes and the crop is kept."""
    crops = _plain_store_with(data_dir, 2, 3)
    os.link(crops[1], crops[1].with_name(f".{crops[1].name}.old"))
    rt = open_runtime(data_dir)
    try:
        assert all(rt.media.read(p).startswith(b"\x89PNG fake crop") for p in crops)
    finally:
        rt.close()
    assert all(p.read_bytes().startswith(MAGIC) for p in crops)
    assert not [p.name for p in crops[0].parent.iterdir() if p.name.startswith(".")]
    assert not _leaks(data_dir, [SCREEN_SECRET])


def test_opting_out_decrypts_the_store_and_its_crops(cli: Cli, data_dir: Path) -> None:
    rt = open_runtime(data_dir)
    crop = data_dir / "screens" / "2026-11-01" / "c1-m0.png"
    try:
        rt.media.write(crop, b"\x89PNG crop")
    finally:
        rt.close()
    assert crop.read_bytes().startswith(MAGIC)
    r = cli("config", "set", "storage.encrypted", "false")
    assert r.code == 0
    assert "warning" in r.err and "decrypted" in r.err
    assert (data_dir / DB_FILE).read_bytes()[:16] == SQLITE_HEADER
    assert crop.read_bytes() == b"\x89PNG crop"
    assert not (data_dir / key_info.KEY_INFO_FILE).exists()
    actions = [e["action"] for e in cli("journal", "--json").json()]
    assert "store.decrypted" in actions and "media.unsealed" in actions


def test_changing_the_passphrase_re_keys_the_store(
    cli: Cli, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rt = open_runtime(data_dir)
    old_crop = data_dir / "screens" / "d" / "old.png"
    try:
        rt.media.write(old_crop, b"old crop")
        old_key = rt.store.key
    finally:
        rt.close()
    monkeypatch.setenv("PERSONA_DESKTOP_NEW_PASSPHRASE", "a new passphrase")
    r = cli("storage", "passphrase")
    assert r.code == 0, r.err
    monkeypatch.delenv("PERSONA_DESKTOP_NEW_PASSPHRASE")
    assert "wrong passphrase" in cli("fragments").err  # the old passphrase no longer opens it
    monkeypatch.setenv("PERSONA_DESKTOP_PASSPHRASE", "a new passphrase")
    rt = open_runtime(data_dir)
    try:
        assert rt.store.key != old_key  # a new store key, not only a new wrapping of the old one
        assert rt.media.read(old_crop) == b"old crop"  # older crops keep their media key
        new_crop = data_dir / "screens" / "d" / "new.png"
        rt.media.write(new_crop, b"new crop")
        assert new_crop.read_bytes()[8:12] != old_crop.read_bytes()[8:12]  # sealed under a new media key
    finally:
        rt.close()
    from persona_desktop.adapters.store.cipher import opens_with

    assert old_key is not None and not opens_with(data_dir / DB_FILE, old_key)
    assert "store.rekeyed" in [e["action"] for e in cli("journal", "--json").json()]


def test_a_re_key_killed_before_the_swap_is_abandoned_and_the_old_passphrase_still_opens(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rt = open_runtime(data_dir)
    try:
        with rt.uow() as uow:
            for i in range(3000):
                uow.kv.set(f"filler.{i}", "y" * 2000)
            uow.commit()
    finally:
        rt.close()
    temp = data_dir / f"{DB_FILE}.rekeying"
    kill_when(
        data_dir,
        lambda: temp.exists() and temp.stat().st_size > 0,
        "the re-key copy",
        ("storage", "passphrase"),
        {"PERSONA_DESKTOP_NEW_PASSPHRASE": "brand new"},
    )
    assert json.loads((data_dir / key_info.KEY_INFO_FILE).read_text()).get("next")  # the change was under way
    rt = open_runtime(data_dir)  # the old passphrase (the tests' env) opens it and tidies up
    try:
        with rt.uow.read() as uow:
            assert uow.kv.get("filler.2999") == "y" * 2000
            assert "store.rekey_abandoned" in [r.action for r in uow.journal.all()]
    finally:
        rt.close()
    assert not temp.exists()
    assert "next" not in json.loads((data_dir / key_info.KEY_INFO_FILE).read_text())


def test_an_encrypted_store_that_is_up_to_date_opens_without_importing_alembic(data_dir: Path) -> None:
    open_runtime(data_dir).close()  # created and migrated
    code = (
        "import sys; from pathlib import Path; from persona_desktop.bootstrap import open_runtime; "
        f"rt = open_runtime(Path({str(data_dir)!r})); print('alembic' in sys.modules); rt.close()"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "False", out.stderr
