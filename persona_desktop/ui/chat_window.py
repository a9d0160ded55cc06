"""The chat window: talk with the assistant, streamed and cancellable, with the turn review alongside.

Nothing here reads the store on the GUI thread. The conversation to go on with is read
by the window's work queue when it opens (Send waits for it). The answer streams from
the app's one worker (worker.py) iterating the Qt-free `ChatSession.ask` generator with
its cancel flag. When the review schedule (services/review_schedule.py, which the
terminal chat drives too) says a review is due, another worker runs it on a snapshot of
the conversation: never blocking the chat, at most one at a time, cancelled once it
outlives `review.timeout_seconds` (a timer here). Its summary goes out through
`review_summary` for the tray; a failing review is logged and reported once until one
succeeds. A stored turn, and a review that proposed or applied anything, announce a
memory change (memory_events.py), which the tray count and the other windows follow.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QKeyEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from persona_desktop.errors import PersonaError
from persona_desktop.service_configs import recall_config, review_config, sleep_config
from persona_desktop.services.chat import (
    ChatMessage,
    ChatSession,
    TurnOutcome,
    resume_latest,
    system_prompt,
)
from persona_desktop.services.review_schedule import ReviewSchedule
from persona_desktop.services.sleep_cycle import SleepConfig
from persona_desktop.services.turn_review import (
    ReviewConfig,
    ReviewKind,
    ReviewOutcome,
    TurnReview,
    make_snapshot,
)
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.memory_events import CAPTURED, MemoryChange
from persona_desktop.ui.used_memories import UsedMemories
from persona_desktop.ui.window_setup import prepare_window
from persona_desktop.ui.worker import Worker, WorkQueue, create_worker

log = logging.getLogger(__name__)

PLACEHOLDER = "Write to Persona... (Enter sends, Shift+Enter starts a new line)"
LOADING = "Reading the conversation\u2026"


@dataclass(frozen=True)
class ReviewJob:
    conversation_id: str
    messages: tuple[ChatMessage, ...]
    kind: ReviewKind
    config: ReviewConfig
    sleep: SleepConfig
    include_observations: bool


def run_review(ctx: UiContext, job: ReviewJob, cancelled: Callable[[], bool]) -> ReviewOutcome:
    """The turn review of a snapshot of the conversation; on the worker thread."""
    prompt = system_prompt(ctx.uow, job.include_observations)
    snapshot = make_snapshot(job.conversation_id, prompt, job.messages)
    review = TurnReview(ctx.uow, ctx.llm(), ctx.clock, job.config, job.sleep)
    return review.run(snapshot, job.kind, cancelled)


def wrote(outcome: ReviewOutcome) -> MemoryChange | None:
    """What a review changed in memory, if anything."""
    if not (outcome.candidate_ids or outcome.applied or sum(outcome.proposed.values())):
        return None
    return MemoryChange(facts=bool(outcome.applied), candidates=True)


class _Input(QPlainTextEdit):
    submitted = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if enter and not event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self.submitted.emit()
            return
        super().keyPressEvent(event)


@dataclass
class _Line:
    role: str  # owner | assistant | error
    text: str
    note: str = ""


class ChatWindow(QWidget):
    turn_finished = Signal(object)  # TurnOutcome
    review_started = Signal(str)  # the kind
    review_finished = Signal(object)  # ReviewOutcome
    review_summary = Signal(str)  # "Memory review: 1 fact proposed", for the tray
    review_failed = Signal(str)  # once, until a review succeeds again
    warning = Signal(str)  # e.g. an unreadable prompt override
    loaded = Signal()  # the conversation to go on with was read: Send works from now on

    def __init__(self, ctx: UiContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        prepare_window(self, "Chat", 680, 760)
        self.work = WorkQueue(self, on_error=self._on_load_failed, events=ctx.events, name="the chat")
        self.session = self._new_session()  # until the newest conversation is read
        self.is_loaded = False
        self._send_when_loaded: tuple[str | None] | None = None  # sent before the conversation was read
        self.schedule = ReviewSchedule(review_config(ctx.settings.values))
        self.stream: Worker | None = None
        self.reviewer: Worker | None = None
        self.lines: list[_Line] = []
        self._warned: set[str] = set()
        self._review_timer = QTimer(self)
        self._review_timer.setSingleShot(True)
        self._review_timer.timeout.connect(self.cancel_review)
        self._build()
        self._resume()

    def _new_session(self) -> ChatSession:
        return ChatSession(
            self.ctx.uow,
            self.ctx.llm,
            self.ctx.clock,
            include_observations=self.ctx.settings.values.chat.include_observations,
            recall=recall_config(self.ctx.settings.values),
            embedder=self.ctx.embedder,
        )

    def _resume(self) -> None:
        """The newest conversation goes on, its history kept; "New chat" starts another."""
        ctx = self.ctx
        include = ctx.settings.values.chat.include_observations
        recall = recall_config(ctx.settings.values)
        self.work.run(
            lambda: resume_latest(
                ctx.uow,
                ctx.llm,
                ctx.clock,
                include_observations=include,
                recall=recall,
                embedder=ctx.embedder,
            ),
            self._on_resumed,
            read=True,
        )

    def _on_resumed(self, session: ChatSession) -> None:
        self.session = session
        self.lines = [_Line(m.role, m.text) for m in session.conversation.messages] + self.lines
        self._ready()

    def _on_load_failed(self, exc: PersonaError) -> None:
        """The history cannot be read: say so, and talk in a new conversation."""
        self.lines.append(_Line("error", f"The earlier conversation cannot be shown: {exc}"))
        self._ready()

    def _ready(self) -> None:
        self.is_loaded = True
        self.send_button.setEnabled(True)
        self.new_button.setEnabled(True)
        self.status.setText(self._idle_status())
        self._render()
        self.loaded.emit()
        if self._send_when_loaded is not None:
            (text,) = self._send_when_loaded
            self._send_when_loaded = None
            self.send(text)

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        self.banner = QLabel()
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet(
            "QLabel { background: #fff4ce; color: #5c4400; border: 1px solid #e0c060; padding: 6px; }"
        )
        self.banner.hide()
        layout.addWidget(self.banner)
        self.transcript = QTextBrowser()
        self.transcript.setOpenExternalLinks(False)
        layout.addWidget(self.transcript, 1)
        self.used_memories = UsedMemories()  # which facts the last reply's prompt recalled
        layout.addWidget(self.used_memories)
        self.status = QLabel(LOADING)
        self.status.setStyleSheet("QLabel { color: #555; }")
        layout.addWidget(self.status)
        row = QHBoxLayout()
        self.input = _Input()
        self.input.setPlaceholderText(PLACEHOLDER)
        self.input.setFixedHeight(72)
        self.input.submitted.connect(self.send)
        row.addWidget(self.input, 1)
        buttons = QVBoxLayout()
        self.send_button = QPushButton("Send")
        self.send_button.setDefault(True)
        self.send_button.setEnabled(False)  # until the conversation was read
        self.send_button.clicked.connect(self.send)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop the answer; what came so far is kept")
        self.stop_button.clicked.connect(self.cancel)
        self.stop_button.setEnabled(False)
        self.new_button = QPushButton("New chat")
        self.new_button.setToolTip("Start a new conversation; this one stays stored")
        self.new_button.clicked.connect(self.new_chat)
        self.new_button.setEnabled(False)
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.new_button)
        row.addLayout(buttons)
        layout.addLayout(row)
        self._render()

    def _idle_status(self) -> str:
        values = self.ctx.settings.values
        model = values.ollama.model
        review = "memory review on" if values.review.enabled else "memory review off"
        return f"Model {model}; {review}."

    # --- the conversation ---------------------------------------------------------------

    def is_streaming(self) -> bool:
        return self.stream is not None and self.stream.is_running()

    def send(self, text: str | None = None) -> bool:
        """Send `text` (or what is typed); False when nothing was sent. Before the conversation
        was read, the message waits and goes once it is."""
        if not self.is_loaded:
            self._send_when_loaded = (text,)
            return True
        if self.is_streaming():
            return False
        body = (text if text is not None else self.input.toPlainText()).strip()
        if not body:
            return False
        self.input.clear()
        self.session.include_observations = self.ctx.settings.values.chat.include_observations
        self.session.recall = recall_config(self.ctx.settings.values)
        self.used_memories.set_memories([])
        self.lines.append(_Line("owner", body))
        self.lines.append(_Line("assistant", "", "..."))
        session = self.session
        self.stream = create_worker(
            lambda cancelled: session.ask(body, cancelled),
            self,
            "the chat",
            on_yielded=self._on_piece,
            on_returned=self._on_outcome,
            on_errored=self._on_stream_failed,
            on_finished=self._on_stream_finished,
            start=False,
        )
        self.send_button.setEnabled(False)
        self.new_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self.status.setText("Persona is answering...")
        self._render()
        self.stream.start()
        return True

    def new_chat(self) -> bool:
        if self.is_streaming() or not self.is_loaded:
            return False
        self.session = self._new_session()
        self.used_memories.set_memories([])
        self.schedule.new_conversation(review_config(self.ctx.settings.values))
        self.lines = []
        self._render()
        self.input.setFocus()
        return True

    def cancel(self) -> None:
        if self.stream is not None:
            self.stream.quit()
            self.status.setText("Stopping...")

    def _on_piece(self, piece: str) -> None:
        line = self.lines[-1]
        line.text += piece
        line.note = ""
        self._render()

    def _on_outcome(self, outcome: TurnOutcome) -> None:
        line = self.lines[-1]
        if outcome.reply is None:
            self.lines.pop()
        else:
            line.text = outcome.reply.text
            line.note = "stopped" if outcome.cancelled else ""
        if outcome.error:
            self.lines.append(_Line("error", f"The assistant could not answer: {outcome.error}"))
        self.used_memories.set_memories(outcome.memories if outcome.reply is not None else [])
        self._render()
        self.ctx.events.announce(CAPTURED.by(self))  # the turn is stored
        self.turn_finished.emit(outcome)
        self._after_owner_turn(outcome.owner.text)

    def _on_stream_failed(self, exc: PersonaError) -> None:
        if self.lines and self.lines[-1].role == "assistant" and not self.lines[-1].text:
            self.lines.pop()
        self.lines.append(_Line("error", str(exc)))
        self._render()

    def _on_stream_finished(self) -> None:
        self.stream = None
        self.send_button.setEnabled(True)
        self.new_button.setEnabled(True)
        self.stop_button.setEnabled(False)
        if self.reviewer is None:
            self.status.setText(self._idle_status())
        self.input.setFocus()

    # --- the turn review ----------------------------------------------------------------

    def _after_owner_turn(self, text: str) -> None:
        due = self.schedule.owner_turn(text, review_config(self.ctx.settings.values))
        if due is None:
            return
        if not due.start:
            log.info("a review is still running; the %s review of this turn is skipped", due.kind.value)
            return
        self.start_review(due.kind)

    @property
    def skipped_reviews(self) -> int:
        """Reviews that fell due while another still ran."""
        return self.schedule.skipped

    def is_reviewing(self) -> bool:
        return self.reviewer is not None and self.reviewer.is_running()

    def start_review(self, kind: ReviewKind) -> bool:
        """Review a snapshot of the conversation now; False when one is already running."""
        if self.is_reviewing():
            return False
        values = self.ctx.settings.values
        job = ReviewJob(
            self.session.id,
            tuple(self.session.conversation.messages),
            kind,
            self.schedule.config,
            sleep_config(values),
            values.chat.include_observations,
        )
        ctx = self.ctx
        self.reviewer = create_worker(
            lambda cancelled: run_review(ctx, job, cancelled),
            self,
            "the memory review",
            on_returned=self._on_review_outcome,
            on_errored=lambda exc: self._on_review_failed(str(exc)),
            on_finished=self._on_review_finished,
            start=False,
        )
        self._review_timer.start(int(self.schedule.started() * 1000))
        self.reviewer.start()
        self.review_started.emit(kind.value)
        if not self.is_streaming():
            self.status.setText(f"{kind.value.capitalize()} review running in the background...")
        return True

    def cancel_review(self) -> None:
        if self.reviewer is not None:
            self.reviewer.quit()

    def _on_review_outcome(self, outcome: ReviewOutcome) -> None:
        change = wrote(outcome)
        if change is not None:
            self.ctx.events.announce(change.by(self))
        for text in outcome.warnings:
            self._warn(text)
        if outcome.error:
            self._on_review_failed(outcome.error)
        else:
            self.schedule.succeeded()
            if outcome.status != "done":
                log.info("the %s review ended: %s", outcome.kind.value, outcome.status)
        summary = outcome.summary()
        if summary:
            self.review_summary.emit(summary)
        self.review_finished.emit(outcome)

    def _on_review_failed(self, message: str) -> None:
        log.warning("the turn review failed: %s", message)
        if self.schedule.failed():
            self.review_failed.emit(message)

    def _warn(self, text: str) -> None:
        if text in self._warned:
            return
        self._warned.add(text)
        log.warning("%s", text)
        self.banner.setText("\n".join(sorted(self._warned)))
        self.banner.show()
        self.warning.emit(text)

    def _on_review_finished(self) -> None:
        self.reviewer = None
        self.schedule.ended()
        self._review_timer.stop()
        if not self.is_streaming():
            self.status.setText(self._idle_status())

    # --- rendering and lifetime ---------------------------------------------------------

    def _render(self) -> None:
        parts = [
            "<p style='color:#666'>Persona knows the facts you approved. What you write here is kept as "
            "a chat message; a background review may <i>propose</i> memories, which wait for you in "
            "the review window.</p>"
        ]
        for line in self.lines:
            text = html.escape(line.text).replace("\n", "<br>")
            if line.role == "owner":
                parts.append(
                    "<table width='100%' cellpadding='8'><tr><td align='right'>"
                    f"<b>You</b><br>{text}</td></tr></table>"
                )
            elif line.role == "assistant":
                note = f" <i style='color:#888'>({html.escape(line.note)})</i>" if line.note else ""
                parts.append(
                    "<table width='100%' cellpadding='8' bgcolor='#eef3fb'><tr><td>"
                    f"<b>Persona</b>{note}<br>{text}</td></tr></table>"
                )
            else:
                parts.append(f"<p style='color:#a00000'>{text}</p>")
        self.transcript.setHtml("".join(parts))
        bar = self.transcript.verticalScrollBar()
        bar.setValue(bar.maximum())

    def shutdown(self, wait_ms: int = 5000) -> bool:
        """Stop the answer and the review; True when no thread is left running."""
        self._review_timer.stop()
        self.work.shutdown()
        clean = True
        for worker in (self.stream, self.reviewer):
            if worker is not None:
                worker.quit()
                clean &= worker.wait(wait_ms)
        if clean:
            for worker in (self.stream, self.reviewer):
                if worker is not None:
                    worker.abandon()  # what it still sends finds no window to show it in
            self.stream = self.reviewer = None
            self._on_stream_finished()
            self._on_review_finished()
        return clean

    def closeEvent(self, event: QCloseEvent) -> None:
        self.cancel()
        super().closeEvent(event)
