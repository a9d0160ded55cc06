"""The tripwires themselves (conftest.py, tests/tripwires.py): a test that leaves something behind
or logs a warning it did not ask for fails; one that cleans up passes.

Each attack is a small test run by pytest in a child process, under this suite's own
fixtures and Qt settings."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

CONFTEST = f"""
import sys
sys.path.insert(0, {str(REPO)!r})
import tests.tripwires
tests.tripwires.GRACE_S = 0.5
from tests.conftest import _isolated_home, _log_tripwire, _qt_leak_tripwire, logged_warnings
"""

ATTACKS = """
import logging
import threading

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QWidget

from persona_desktop.ui.memory_events import MemoryEvents
from persona_desktop.ui.worker import create_worker


def test_logs_an_unexpected_warning():
    logging.getLogger("persona_desktop.attack").warning("something is off")


def test_logs_an_expected_warning(logged_warnings):
    logging.getLogger("persona_desktop.attack").warning("the owner was told")
    assert [r.getMessage() for r in logged_warnings] == ["the owner was told"]


def test_leaves_a_window_open(qapp):
    test_leaves_a_window_open.window = QWidget()
    test_leaves_a_window_open.window.setWindowTitle("forgotten")
    test_leaves_a_window_open.window.show()


def test_leaves_an_app_timer_running(qapp):
    owner = MemoryEvents()
    test_leaves_an_app_timer_running.owner = owner
    QTimer(owner).start(60_000)


def test_an_emitted_qt_warning_fails(qapp):
    from PySide6.QtCore import qWarning
    qWarning("a real Qt warning")


def test_cleans_up(qtbot):
    window = QWidget()
    qtbot.addWidget(window)
    window.show()
    owner = MemoryEvents()
    timer = QTimer(owner)
    timer.start(60_000)
    worker = create_worker(lambda cancelled: 42, owner, "quick work")
    with qtbot.waitSignal(worker.returned) as got:
        pass
    assert got.args == [42]
    timer.stop()
def test_leaves_a_worker_running(qapp):
    owner = MemoryEvents()
    test_leaves_a_worker_running.owner = owner
    release = threading.Event()
    create_worker(lambda cancelled: release.wait(2), owner, "the attack")
    # last: it outlives its test, which would count against the next one
"""


def test_each_leak_and_unexpected_warning_fails_its_test(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makeini(
        "[pytest]\nqt_api = pyside6\nqt_log_level_fail = WARNING\n"
        "qt_log_ignore = ^This plugin does not support\n"
    )
    pytester.makepyfile(test_attacks=ATTACKS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rA")
    out = result.stdout.str()
    errors = {line.split("::")[1].split(" ")[0] for line in out.splitlines() if line.startswith("ERROR ")}
    failed = {line.split("::")[1].split(" ")[0] for line in out.splitlines() if line.startswith("FAILED ")}
    assert errors == {
        "test_logs_an_unexpected_warning",
        "test_leaves_a_window_open",
        "test_leaves_an_app_timer_running",
        "test_leaves_a_worker_running",
    }, out
    assert failed == {"test_an_emitted_qt_warning_fails"}, out
    assert "something is off" in out
    assert "a top-level QWidget ('forgotten') was left open" in out
    assert "a QTimer of MemoryEvents started at test_attacks" in out
    assert "the app's worker for the attack has not finished" in out
    passed = {line.split("::")[1].split(" ")[0] for line in out.splitlines() if line.startswith("PASSED ")}
    assert {"test_logs_an_expected_warning", "test_cleans_up"} <= passed, out
