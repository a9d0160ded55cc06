"""Search everything: hits as a timeline by day and source, each opening its evidence.

The query runs on the read worker, never on the GUI thread; a newer query's results
replace an older one's even when the older arrives last. A fragment hit opens the same
evidence card the review window uses (chat context, screen crop with the line's box,
speech clip); a fact hit opens its provenance. When memory or the captures change
(a forgotten source, a decision, a chat turn), the query shown runs again.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from datetime import datetime, timedelta
from itertools import groupby

from PySide6.QtCore import QEvent, QObject, QTimer, QUrl, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QTextBrowser,
    QWidget,
)

from persona_desktop.errors import PersonaError
from persona_desktop.services import review
from persona_desktop.services.review import EvidenceItem, Provenance
from persona_desktop.services.search import SearchResult, hit_evidence, search
from persona_desktop.ui.context import UiContext
from persona_desktop.ui.evidence_view import AudioPlayer, EvidenceCard
from persona_desktop.ui.layouts import clear_layout, list_with_detail, with_margins
from persona_desktop.ui.memory_events import MemoryChange
from persona_desktop.ui.window_setup import prepare_window
from persona_desktop.ui.worker import WorkQueue

KIND_CHOICES = [
    ("Everything", None),
    ("Facts", "fact"),
    ("Chat", "chat"),
    ("Screen", "screen"),
    ("Speech", "speech"),
]
SINCE_CHOICES = [
    ("Any time", None),
    ("Past day", 1),
    ("Past week", 7),
    ("Past month", 30),
    ("Past year", 365),
]
_MARK = "<span style='background:#ffe066;color:#000;font-weight:bold'>{}</span>"
_KIND_LABEL = {"fact": "fact", "chat": "chat", "screen": "screen", "speech": "speech"}


def highlighted(line: str, spans: Sequence[tuple[int, int]]) -> str:
    """The line as HTML with each matched span marked; everything else escaped."""
    out, at = [], 0
    for start, end in sorted(spans):
        if start < at:
            continue
        out.append(html.escape(line[at:start]))
        out.append(_MARK.format(html.escape(line[start:end])))
        at = end
    out.append(html.escape(line[at:]))
    return "".join(out)


def timeline_html(results: Sequence[SearchResult]) -> str:
    """Newest day first; within a day, grouped by source (facts as their own group)."""
    if not results:
        return ""
    ordered = sorted(enumerate(results), key=lambda p: p[1].hit.captured_at, reverse=True)
    parts: list[str] = []
    for day, day_hits in groupby(ordered, key=lambda p: p[1].hit.captured_at.astimezone().date()):
        parts.append(f"<h3 style='margin-bottom:2px'>{day:%A, %d %B %Y}</h3>")
        by_source: dict[str, list[tuple[int, SearchResult]]] = {}
        for index, result in day_hits:
            source = "Facts you know" if result.hit.fact_id is not None else result.hit.source_label
            by_source.setdefault(source, []).append((index, result))
        for source, hits in by_source.items():
            parts.append(f"<p style='margin:6px 0 2px 0;color:#5f6368'><b>{html.escape(source)}</b></p>")
            for index, result in hits:
                h = result.hit
                when = h.captured_at.astimezone().strftime("%H:%M")
                parts.append(
                    f"<p style='margin:1px 0 1px 12px'><a href='hit:{index}' style='text-decoration:none'>"
                    f"<span style='color:#5f6368'>{when} {_KIND_LABEL.get(h.kind, h.kind)}</span></a> "
                    f"{highlighted(result.line, result.spans)}</p>"
                )
    return "".join(parts)


class SearchWindow(QMainWindow):
    searched = Signal(int)  # how many hits the newest query found
    evidence_shown = Signal(object)  # EvidenceItem or Provenance

    def __init__(self, ctx: UiContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        prepare_window(self, "Search", 1180, 720)
        self._ctx = ctx
        self.work = WorkQueue(self, on_error=self._show_error, name="the search")
        self._seq = 0
        self.results: list[SearchResult] = []
        self.cards: list[EvidenceCard] = []
        self._player: AudioPlayer | None = None
        self.query = QLineEdit()
        self.query.setPlaceholderText('Search what you saw, said and know... ("a phrase", word*)')
        self.query.setClearButtonEnabled(True)
        self.kind = QComboBox()
        for label, value in KIND_CHOICES:
            self.kind.addItem(label, value)
        self.since = QComboBox()
        for label, days in SINCE_CHOICES:
            self.since.addItem(label, days)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(250)
        self._debounce.timeout.connect(self.run_search)
        self.query.textChanged.connect(lambda _t: self._debounce.start())
        self.query.returnPressed.connect(self.run_search)
        self.kind.currentIndexChanged.connect(lambda _i: self.run_search())
        self.since.currentIndexChanged.connect(lambda _i: self.run_search())
        self.timeline = QTextBrowser()
        self.timeline.setOpenLinks(False)
        self.timeline.anchorClicked.connect(self._on_anchor)
        top = QHBoxLayout()
        top.addWidget(self.query, 1)
        top.addWidget(self.kind)
        top.addWidget(self.since)
        pane = list_with_detail(top, self.timeline, "Type to search. Click a hit to see where it came from.")
        self.detail_label, self.detail_box = pane.label, pane.box
        pane.split.setSizes([self.width() * 4 // 7, self.width() * 3 // 7])
        self.setCentralWidget(with_margins(pane.split))
        self.status = QLabel("")
        self.statusBar().addWidget(self.status, 1)
        ctx.events.changed.connect(self._on_memory_changed)

    # --- searching ----------------------------------------------------------------------

    def _on_memory_changed(self, _change: MemoryChange) -> None:
        """What the hits show may have changed (a forgotten source is gone): ask again."""
        if self.query.text().strip():
            self.run_search()

    def run_search(self) -> None:
        self._debounce.stop()
        text = self.query.text()
        kind = self.kind.currentData()
        days = self.since.currentData()
        since = datetime.now().astimezone() - timedelta(days=days) if days else None
        self._seq += 1
        seq, uow = self._seq, self._ctx.uow
        if not text.strip():
            self._on_results(seq, [])
            return
        self.work.run(lambda: search(uow, text, kind, since), lambda r: self._on_results(seq, r), read=True)

    def _on_results(self, seq: int, results: list[SearchResult]) -> None:
        if seq != self._seq:
            return  # an older query answered late
        self.results = results
        self.timeline.setHtml(timeline_html(results))
        shown = len(results)
        if self.query.text().strip():
            self.status.setStyleSheet("")
            self.status.setText(f"{shown} hit(s)" if shown else "Nothing found. Try fewer or other words.")
        else:
            self.status.setText("")
        self.searched.emit(shown)

    # --- evidence -----------------------------------------------------------------------

    def _on_anchor(self, url: QUrl) -> None:
        target = url.toString()
        if target.startswith("hit:") and target[4:].isdigit():
            self.open_hit(int(target[4:]))

    def open_hit(self, index: int) -> None:
        if not 0 <= index < len(self.results):
            return
        hit, uow = self.results[index].hit, self._ctx.uow
        if hit.fact_id is not None:
            fact_id = hit.fact_id
            self.work.run(lambda: review.why(uow, fact_id), self._show_provenance, read=True)
        elif hit.ref is not None:
            ref = hit.ref
            self.work.run(lambda: hit_evidence(uow, ref), self._show_item, read=True)

    def _show_item(self, item: EvidenceItem) -> None:
        self.detail_label.setText(
            f"<h3>Where this comes from</h3><p><code>{html.escape(item.fragment.ref)}</code></p>"
        )
        self._set_cards([item])
        self.evidence_shown.emit(item)

    def _show_provenance(self, prov: Provenance) -> None:
        f = prov.fact
        self.detail_label.setText(
            f"<h3>{html.escape(f.statement)}</h3><p>Fact {f.id}, {f.status.value}. "
            f"Why you know it: {len(prov.evidence)} piece(s) of evidence.</p>"
        )
        self._set_cards(prov.evidence)
        self.evidence_shown.emit(prov)

    def _set_cards(self, items: Sequence[EvidenceItem]) -> None:
        clear_layout(self.detail_box)
        if self._player is None and any(i.fragment.kind.value == "speech" for i in items):
            self._player = AudioPlayer()
        self.cards = [EvidenceCard(i, self._ctx.media, self._player) for i in items]
        for card in self.cards:
            self.detail_box.addWidget(card)

    def _show_error(self, exc: PersonaError) -> None:
        self.status.setStyleSheet("color: #b3261e;")
        self.status.setText(str(exc))

    def bring_forward(self) -> None:
        self.show()
        self.raise_()
        self.activateWindow()
        self.query.setFocus()
        self.query.selectAll()

    def shutdown(self) -> None:
        self._debounce.stop()
        self.work.shutdown()
        if self._player is not None:
            self._player.close()


class AppShortcut(QObject):
    """A key that works in every window of the app (Ctrl+Shift+F opens search), in one place.

    An application-wide event filter rather than a QShortcut per window: the windows come
    and go, and a tray app has no main window to hang a shortcut on.
    """

    triggered = Signal()

    def __init__(self, sequence: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.sequence = QKeySequence(sequence)
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent) and not event.isAutoRepeat():
            pressed = QKeySequence(event.keyCombination())
            if pressed.matches(self.sequence) == QKeySequence.SequenceMatch.ExactMatch:
                self.triggered.emit()
                return True
        return False

    def remove(self) -> None:
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)
