"""One error boundary: every failure the owner meets is one line that says what to do.

The cases come from a fuzz pass over every command with hostile arguments and files
(`tests/test_error_boundary.py::HOSTILE`); each one printed a traceback or hung before.
A bug's traceback goes to a private log file in the data dir, named in the line; the
owner's messages never reach stderr, nor the log (plain text beside an encrypted store).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Cli, chat_line, write_jsonl


def _one_clear_line(err: str) -> str:
    assert "Traceback" not in err
    assert "internal error" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


HOSTILE = [
    (("forget", "day", "9999-12-31"), "forgot"),  # OverflowError before
    (("forget", "day", "0001-01-01", "--kind", "chat"), "forgot"),  # ValueError (year 0) before
    (("ingest", "screen", "/dev/zero"), "is a character device, not a file"),  # read until memory ran out
    (("ingest", "audio", "/dev/zero"), "is a character device, not a file"),
    (("ingest", "screen", "\0"), "not a usable file name"),
    (("ingest", "audio", "a\0b"), "not a usable file name"),
    (("ingest", "audio", "x.wav", "--recorded-at", "9999-12-31T23:59:59-05:00"), "between years 1 and 9999"),
    (("--data-dir", "", "fragments"), "--data-dir is empty"),  # silently used the default data dir
    (("--data-dir", "/dev/null", "fragments"), "is not a folder"),
]


@pytest.mark.parametrize(("args", "expected"), HOSTILE, ids=[" ".join(a) for a, _ in HOSTILE])
def test_hostile_arguments_give_one_clear_line(cli: Cli, args: tuple[str, ...], expected: str) -> None:
    result = cli(*args)  # a --data-dir given here comes last, so it wins
    code, err = result.code, result.err
    if expected == "forgot":
        assert code == 0, err
        return
    assert code == 1
    assert expected in _one_clear_line(err)


@pytest.mark.parametrize("what", ["screen", "audio"])
def test_a_fifo_is_refused_instead_of_hanging(cli: Cli, fifo: Path, what: str) -> None:
    result = cli("ingest", what, str(fifo))
    assert result.code == 1
    assert "is a named pipe (FIFO), not a file" in _one_clear_line(result.err)


def test_a_bug_is_one_line_and_its_traceback_goes_to_a_private_log(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, logged_warnings: list[logging.LogRecord]
) -> None:
    """Injected: the one way to make a deliberate bug. Its text quotes a message, as real ones do
    (built apart from the `raise`, whose source line the traceback shows, as the app's own would)."""
    from persona_desktop.services import queries

    quoted = "unsupported operand: 'I am allergic to " + "peanuts' + 1"

    def broken(*_args: object, **_kw: object) -> object:
        raise TypeError(quoted)

    assert cli("fragments").code == 0
    monkeypatch.setattr(queries, "candidates", broken)
    result = cli("candidates")
    assert result.code == 1
    assert "Traceback" not in result.err and result.err.count("\n") == 1
    assert "internal error (TypeError)" in result.err and "please report it" in result.err
    assert "peanuts" not in result.err, "message text reached stderr"
    log = cli.data_dir / "logs" / "persona-desktop.log"
    assert f"the details are in {log}" in result.err
    text = log.read_text()
    assert (
        "Traceback" in text and "in broken" in text and "TypeError: message withheld (51 characters)" in text
    )
    assert "peanuts" not in text, "message text reached the log file"
    assert os.stat(log).st_mode & 0o777 == 0o600
    assert os.stat(log.parent).st_mode & 0o777 == 0o700
    assert [(r.levelname, r.getMessage()[:14]) for r in logged_warnings] == [("ERROR", "internal error")]


def test_stdout_closed_early_ends_quietly(cli: Cli, tmp_path: Path) -> None:
    lines = [chat_line(str(i), f"line {i} " + "z" * 100) for i in range(400)]
    assert cli("ingest", "chat", str(write_jsonl(tmp_path / "c.jsonl", lines))).code == 0
    proc = subprocess.Popen(
        [sys.executable, "-m", "persona_desktop", "--data-dir", str(cli.data_dir), "fragments", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()  # like `| head -c 10`
    with proc.stderr:
        err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
