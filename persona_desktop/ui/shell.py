"""The app's coordinator: the shared menu actions, the windows, the state in words.

The tray icon and the fallback main window are two views of one `Shell`: both show
its actions and its state, so a desktop without a tray loses nothing. The tray count
and the Markdown export follow the app's one "memory changed" signal (memory_events.py),
like every window; nothing here wires one window's writes to another by hand.
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from persona_desktop.domain.model import RunStatus
from persona_desktop.errors import PersonaError
from persona_desktop.ports import JournalCheck
from persona_desktop.services import review_views
from persona_desktop.services.journal_integrity import verify_journal
from persona_desktop.services.markdown_export import ExportResult, export_if_enabled
from persona_desktop.services.ollama_diagnosis import Diagnosis
from persona_desktop.services.reading_plan import Backlog, history_backlog
from persona_desktop.services.sleep_cycle import Progress, RunOutcome
from persona_desktop.ui.capture_control import CaptureController
from persona_desktop.ui.chat_window import ChatWindow
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.first_run import FirstRunDialog
from persona_desktop.ui.global_hotkey import GlobalHotkey
from persona_desktop.ui.icons import TrayState, app_icon
from persona_desktop.ui.memory_browser import MemoryBrowser
from persona_desktop.ui.memory_events import MemoryChange
from persona_desktop.ui.review_window import ReviewWindow
from persona_desktop.ui.scheduler import SleepScheduler
from persona_desktop.ui.screen_access import ScreenAccess
from persona_desktop.ui.search_window import AppShortcut, SearchWindow
from persona_desktop.ui.settings_dialog import SettingsDialog
from persona_desktop.ui.window_setup import bring_forward
from persona_desktop.ui.worker import WorkQueue

log = logging.getLogger(__name__)

COUNT_REFRESH_MS = 60_000


class Shell(QObject):
    state_changed = Signal()
    notified = Signal(str, str)  # title, message: what the owner was told
    warned = Signal(str, str)  # title, message: something is wrong (the journal was tampered with)

    def __init__(self, ctx: UiContext, capture: CaptureController, scheduler: SleepScheduler) -> None:
        super().__init__()
        self.ctx = ctx
        self.capture = capture
        self.scheduler = scheduler
        self.work = WorkQueue(
            self,
            on_error=lambda exc: self.notify("Persona Desktop", str(exc)),
            events=ctx.events,
            name="the app",
        )
        self.pending = 0
        self.backlog: Backlog | None = None  # unread history, for the tooltip
        self.journal_problem = ""  # set when the start-up check finds the journal broken
        self._manual = False
        self.review: ReviewWindow | None = None
        self.memory: MemoryBrowser | None = None
        self.chat: ChatWindow | None = None
        self.search: SearchWindow | None = None
        self.settings_dialog: SettingsDialog | None = None
        self.first_run: FirstRunDialog | None = None
        self.screen_access: ScreenAccess | None = None  # screen capture's desktop side (app.py)
        self.run_anyway_box: QMessageBox | None = None
        self.help_window: QWidget | None = None
        self.about_box: QWidget | None = None
        self._anyway_queued = False
        self._build_actions()
        capture.changed.connect(self._on_state_inputs)
        capture.failed.connect(lambda msg: self.notify("Capture", msg))
        scheduler.started.connect(self._on_state_inputs)
        scheduler.progress.connect(self._on_progress)
        scheduler.finished.connect(self._on_cycle_finished)
        scheduler.failed.connect(self._on_cycle_failed)
        self.search_shortcut = AppShortcut("Ctrl+Shift+F", self)
        self.search_shortcut.triggered.connect(self.open_search)
        self.global_hotkey: GlobalHotkey | None = None
        scheduler.idle.connect(self._on_scheduler_idle)  # `finished` comes while the thread still ends
        self._count_timer = QTimer(self)
        self._count_timer.setInterval(COUNT_REFRESH_MS)
        self._count_timer.timeout.connect(self.refresh_counts)
        ctx.events.changed.connect(self._on_memory_changed)
        self._sync_actions()

    # --- actions ------------------------------------------------------------------------

    def _action(self, text: str, slot: Any, checkable: bool = False) -> QAction:
        a = QAction(text, self)
        a.setCheckable(checkable)
        (a.toggled if checkable else a.triggered).connect(slot)
        return a

    def _build_actions(self) -> None:
        self.screen_action = self._action("Screen capture", lambda on: self._toggle("screen", on), True)
        self.speech_action = self._action("Speech capture", lambda on: self._toggle("speech", on), True)
        self.pause15_action = self._action("Pause for 15 minutes", lambda: self.capture.pause(15))
        self.pause60_action = self._action("Pause for 1 hour", lambda: self.capture.pause(60))
        self.pause_hold_action = self._action("Pause until I resume", lambda: self.capture.pause(None))
        self.resume_action = self._action("Resume capture", self.capture.resume)
        self.state_action = QAction("", self)  # the state in words, first line of the menu
        self.state_action.setEnabled(False)
        self.review_action = self._action("Review\u2026", self.open_review)
        self.run_action = self._action("Run sleep cycle now", self.run_cycle_now)
        self.cancel_action = self._action("Cancel the running cycle", self.scheduler.cancel)
        self.memory_action = self._action("Memory\u2026", self.open_memory)
        self.search_action = self._action("Search\u2026", self.open_search)
        self.search_action.setShortcut("Ctrl+Shift+F")
        self.chat_action = self._action("Chat\u2026", self.open_chat)
        self.settings_action = self._action("Settings\u2026", self.open_settings)
        self.help_action = self._action("Help", self.open_help)
        self.about_action = self._action("About Persona Desktop", self.open_about)
        self.quit_action = self._action("Quit", self.quit)

    def attach_screen_access(self, access: ScreenAccess) -> None:
        """The Wayland permission flow and "Capture this screen now" (in the menu from now on)."""
        self.screen_access = access
        access.notified.connect(self.notify)
        access.changed.connect(self._on_state_inputs)

    def menu_actions(self) -> list[QAction | None]:
        """The menu, top to bottom; None is a separator."""
        now = [self.screen_access.capture_now_action] if self.screen_access is not None else []
        return [
            self.state_action,
            None,
            self.screen_action,
            *now,
            self.speech_action,
            self.pause15_action,
            self.pause60_action,
            self.pause_hold_action,
            self.resume_action,
            None,
            self.review_action,
            self.run_action,
            self.cancel_action,
            None,
            self.chat_action,
            self.search_action,
            self.memory_action,
            self.settings_action,
            None,
            self.help_action,
            self.about_action,
            self.quit_action,
        ]

    def _toggle(self, kind: str, on: bool) -> None:
        if self.capture.is_enabled(kind) != on:
            self.capture.set_enabled(kind, on)

    def _sync_actions(self) -> None:
        for action, kind in ((self.screen_action, "screen"), (self.speech_action, "speech")):
            action.blockSignals(True)
            action.setChecked(self.capture.is_enabled(kind))
            action.blockSignals(False)
        paused = self.capture.is_paused()
        any_on = self.capture.any_enabled()
        self.pause15_action.setVisible(any_on and not paused)
        self.pause60_action.setVisible(any_on and not paused)
        self.pause_hold_action.setVisible(any_on and not paused)
        self.resume_action.setVisible(paused)
        self.review_action.setText(f"Review {self.pending} waiting\u2026" if self.pending else "Review\u2026")
        self.state_action.setText(self.headline())
        running = self.scheduler.is_running()
        self.run_action.setEnabled(not running)
        self.cancel_action.setVisible(running)

    # --- state --------------------------------------------------------------------------

    def state(self) -> TrayState:
        if self.scheduler.is_running():
            return TrayState.RUNNING
        if self.pending:
            return TrayState.WAITING
        if self.capture.any_enabled():
            return TrayState.PAUSED if self.capture.is_paused() else TrayState.CAPTURING
        return TrayState.OFF

    def describe(self) -> str:
        parts = [self.capture.describe()]
        if self.scheduler.is_running():
            p = self.scheduler.last_progress
            step = f"{p.phase} {p.done}/{p.total}" if p is not None and p.total else "starting"
            parts.append(f"sleep cycle running ({step})")
        elif self.ctx.settings.values.sleep.enabled:
            start, end = self.scheduler.window()
            parts.append(f"sleep cycle nightly {start:%H:%M}-{end:%H:%M}")
        else:
            parts.append("sleep cycle off")
        if self.pending:
            parts.append(f"{self.pending} waiting for your review")
        if self.backlog is not None and self.backlog.history_left:
            b = self.backlog
            parts.append(f"history: {b.history_left:,} of {b.history_total:,} older messages left to read")
        if self.journal_problem:
            parts.append(f"WARNING: {self.journal_problem}")
        return "Persona Desktop: " + "; ".join(parts)

    def headline(self) -> str:
        """The state in a few words, for the first line of the menu:
        "Capturing screen · 6 waiting · next cycle 02:00"."""
        capture = self.capture.describe()
        parts = [capture[:1].upper() + capture[1:]]
        if self.pending:
            parts.append(f"{self.pending} waiting")
        if self.scheduler.is_running():
            parts.append("sleep cycle running")
        elif self.ctx.settings.values.sleep.enabled:
            start, _end = self.scheduler.window()
            parts.append(f"next cycle {start:%H:%M}")
        else:
            parts.append("sleep cycle off")
        return " \u00b7 ".join(parts)

    def _on_state_inputs(self) -> None:
        self._sync_actions()
        self.state_changed.emit()

    def _on_scheduler_idle(self) -> None:
        self._on_state_inputs()
        if self._anyway_queued:
            self._anyway_queued = False
            self.run_cycle_now(skip_quiet=True)

    def _on_memory_changed(self, change: MemoryChange) -> None:
        """After every write: the tray counts again; changed facts are mirrored to Markdown."""
        if change.candidates or change.captured:
            self.refresh_counts()
        if change.facts:
            self.export_memory()

    def refresh_counts(self) -> None:
        uow, clock, settings = self.ctx.uow, self.ctx.clock, self.ctx.settings
        self.work.run(lambda: review_views.pending_count(uow), self._on_count)
        period = settings.values.sleep.period_days
        self.work.run(lambda: history_backlog(uow, clock.now(), period), self._on_backlog, read=True)

    def _on_backlog(self, backlog: Backlog) -> None:
        if backlog != self.backlog:
            self.backlog = backlog
            self._on_state_inputs()

    def check_journal(self) -> None:
        """At start: is the journal's hash chain intact and are its triggers in place?"""
        uow = self.ctx.uow
        self.work.run(lambda: verify_journal(uow), self._on_journal_checked, read=True)

    def _on_journal_checked(self, check: JournalCheck) -> None:
        if check.ok:
            return
        self.journal_problem = f"the journal was tampered with: {check.message}"
        log.warning("journal verify: %s", check.message)
        self.warned.emit(
            "Persona Desktop: journal warning", f"{check.message}. Run `persona-desktop journal verify`."
        )
        self._on_state_inputs()

    def _on_count(self, pending: int) -> None:
        if pending != self.pending:
            self.pending = pending
            self._on_state_inputs()

    # --- sleep cycle --------------------------------------------------------------------

    def run_cycle_now(self, skip_quiet: bool = False) -> None:
        if not self.ctx.settings.values.sleep.enabled:
            self.notify("Sleep cycle", "The sleep cycle is off. Turn it on in Settings first.")
            return
        if self.scheduler.run_now(skip_quiet):
            self._manual = True
        elif skip_quiet:
            self._anyway_queued = True  # the deferred run's thread is still ending: start once it is gone
        else:
            self.notify("Sleep cycle", "A cycle is already running.")

    def _offer_run_anyway(self, outcome: RunOutcome) -> None:
        """A run the owner asked for waited for the quiet time: offer to run it now."""
        if self.run_anyway_box is not None:
            self.run_anyway_box.close()
        minutes = outcome.counters.get("owner_active_minutes_ago")
        quiet = self.ctx.settings.values.sleep.quiet_minutes
        when = f"{minutes} min ago" if isinstance(minutes, int) else "recently"
        box = QMessageBox(QMessageBox.Icon.Question, "Sleep cycle", f"You were active {when}.")
        box.setWindowIcon(app_icon())
        box.setInformativeText(
            f"The sleep cycle normally waits until you have been away for {quiet} minutes, so that it"
            " does not slow your computer down while you use it. Run it anyway?"
        )
        anyway = box.addButton("Run anyway", QMessageBox.ButtonRole.AcceptRole)
        box.addButton("Not now", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(anyway)
        box.setStyleSheet("QLabel { min-width: 360px; }")
        anyway.clicked.connect(lambda: self.run_cycle_now(skip_quiet=True))
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.destroyed.connect(lambda _o=None: setattr(self, "run_anyway_box", None))
        self.run_anyway_box = box
        box.open()

    def _on_progress(self, _event: Progress) -> None:
        self.state_changed.emit()

    def _on_cycle_finished(self, outcome: RunOutcome) -> None:
        self._on_state_inputs()  # the counts and the windows follow the run's memory change
        manual, self._manual = self._manual, False
        if manual and outcome.status is RunStatus.DEFERRED:
            self._offer_run_anyway(outcome)
            return
        if outcome.status is RunStatus.FAILED and self.ctx.diagnoser is not None:
            self._notify_with_next_step(outcome.message)
            return
        # a scheduled run retries each tick while deferred: only the owner's own click hears of it
        if manual or outcome.status.value not in ("deferred", "skipped"):
            self.notify("Persona Desktop", outcome.message)

    def _notify_with_next_step(self, message: str) -> None:
        """A failed run: say what is wrong with the model host, if that is it, and what to do."""
        assert self.ctx.diagnoser is not None
        diagnose, s = self.ctx.diagnoser(), self.ctx.settings
        host, model = s.ollama_host(), s.values.ollama.model

        def told(d: Diagnosis) -> None:
            extra = "" if d.ready else f" {d.summary} Next step: {d.next_step.replace('`', '')}"
            self.notify("Sleep cycle failed", message + extra)

        self.work.run(
            lambda: diagnose(host, model), told, lambda _e: self.notify("Sleep cycle failed", message)
        )

    def _on_cycle_failed(self, message: str) -> None:
        self._on_state_inputs()
        self.notify("Sleep cycle failed", message)

    # --- windows ------------------------------------------------------------------------

    def open_review(self) -> ReviewWindow:
        if self.review is None:
            self.review = ReviewWindow(self.ctx)
        else:
            self.review.reload()
        self.review.bring_forward()
        return self.review

    def open_memory(self) -> MemoryBrowser:
        if self.memory is None:
            self.memory = MemoryBrowser(self.ctx)
        else:
            self.memory.reload()
        self.memory.show()
        self.memory.raise_()
        self.memory.activateWindow()
        return self.memory

    def open_chat(self) -> ChatWindow:
        if self.chat is None:
            self.chat = ChatWindow(self.ctx)
            self.chat.review_summary.connect(self._on_review_summary)
            self.chat.review_failed.connect(lambda msg: self.notify("Memory review failed", msg))
            self.chat.warning.connect(lambda msg: self.notify("Memory review", msg))
            self.chat.used_memories.why_requested.connect(self.show_fact)
        self.chat.show()
        self.chat.raise_()
        self.chat.activateWindow()
        return self.chat

    def open_search(self) -> SearchWindow:
        if self.search is None:
            self.search = SearchWindow(self.ctx)
        self.search.bring_forward()
        return self.search

    def show_fact(self, fact_id: int) -> MemoryBrowser:
        """The memory browser with this fact selected and its provenance shown."""
        memory = self.open_memory()
        if memory.facts.row_of(fact_id) is not None:
            memory.select_fact(fact_id)
        else:  # the reload is still running: select once the facts are in

            def select() -> None:
                memory.loaded.disconnect(select)
                memory.select_fact(fact_id)

            memory.loaded.connect(select)
        return memory

    def export_memory(self) -> None:
        """Mirror memory into the Markdown folder after a change, when export.enabled."""
        export, uow, clock = self.ctx.settings.values.export, self.ctx.uow, self.ctx.clock
        if not export.enabled:
            return
        self.work.run(
            lambda: export_if_enabled(export.enabled, export.path, uow, clock.now()),
            self._on_exported,
            lambda exc: self.notify("Markdown export failed", str(exc)),
        )

    def _on_exported(self, result: ExportResult | None) -> None:
        if result is not None and result.needs_attention:
            self.notify("Markdown export", result.message())

    def _on_review_summary(self, summary: str) -> None:
        self.notify("Persona Desktop", summary)  # the counts and windows follow its memory change

    def open_settings(self) -> SettingsDialog:
        if self.settings_dialog is None or not self.settings_dialog.isVisible():
            self.settings_dialog = SettingsDialog(
                self.ctx, self.capture, self.work, screen=self.screen_access
            )
            self.settings_dialog.saved.connect(self._on_state_inputs)
            self.settings_dialog.saved.connect(self.start_global_shortcut)
        self.settings_dialog.show()
        self.settings_dialog.raise_()
        self.settings_dialog.activateWindow()
        return self.settings_dialog

    def open_help(self) -> QWidget:
        from persona_desktop.ui.about import HelpWindow

        if self.help_window is None:
            self.help_window = HelpWindow(self.ctx)
        bring_forward(self.help_window)
        return self.help_window

    def open_about(self) -> QWidget:
        from persona_desktop.ui.about import about_box

        if self.about_box is None or not self.about_box.isVisible():
            self.about_box = about_box(self.ctx)
        bring_forward(self.about_box)
        return self.about_box

    def open_first_run(self) -> FirstRunDialog:
        dialog = FirstRunDialog(self.ctx, self.capture)
        dialog.finished.connect(lambda _r: self._after_first_run(dialog))
        self.first_run = dialog
        dialog.show()
        return dialog

    def _after_first_run(self, dialog: FirstRunDialog) -> None:
        self._on_state_inputs()
        if dialog.wants_settings:
            self.open_settings()

    # --- feedback and lifetime ----------------------------------------------------------

    def notify(self, title: str, message: str) -> None:
        log.info("%s: %s", title, message)
        self.notified.emit(title, message)

    def start_global_shortcut(self) -> None:
        """The owner's desktop-wide search key, if one is set; a key that cannot be had is said once."""
        if self.global_hotkey is not None:
            self.global_hotkey.stop()
            self.global_hotkey = None
        key = self.ctx.settings.values.search.global_shortcut.strip()
        if not key:
            return
        grabber = self.ctx.key_grabber
        if grabber is None:
            self.notify("Search shortcut", "a desktop-wide shortcut is not available in this app")
            return
        try:
            grab = grabber(key)
        except PersonaError as exc:
            self.notify("Search shortcut", str(exc))
            return
        hotkey = GlobalHotkey(grab, self)
        hotkey.pressed.connect(self.open_search)
        self.global_hotkey = hotkey

    def start(self) -> None:
        self.start_global_shortcut()
        self._count_timer.start()
        self.scheduler.start()
        self.refresh_counts()
        self.check_journal()

    def quit(self) -> None:
        app = QApplication.instance()
        if app is not None:
            app.quit()

    def shutdown(self, wait_ms: int = 5000) -> bool:
        """Stop timers, workers and windows; False when a cycle was still blocked at the end."""
        self._count_timer.stop()
        clean = self.scheduler.shutdown(wait_ms)
        self.capture.shutdown()
        self.search_shortcut.remove()
        if self.global_hotkey is not None:
            self.global_hotkey.stop()
        for window in (self.review, self.memory, self.search):
            if window is not None:
                window.shutdown()
                window.close()
        for dialog in (
            self.settings_dialog,
            self.first_run,
            self.run_anyway_box,
            self.help_window,
            self.about_box,
        ):
            if dialog is not None:
                dialog.hide()
        if self.chat is not None:
            clean &= self.chat.shutdown(wait_ms)
            self.chat.close()
        self.work.shutdown()
        if self.screen_access is not None:
            self.screen_access.shutdown()
        return clean
