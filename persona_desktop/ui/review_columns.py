"""How candidates, facts, journal entries and observations read in the review tables."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

from persona_desktop.domain.dates import as_local
from persona_desktop.domain.model import Candidate, Fact, Observation, Revision
from persona_desktop.domain.scoring import SIGNALS
from persona_desktop.services.queries import FactView
from persona_desktop.services.review_views import EvidenceSummary
from persona_desktop.ui.table_model import Column

_SUBJECT = {"owner": "you", "other": "someone else", "unknown": "unclear"}
_ORIGIN = {"policy": "applied overnight", "owner": "approved by you"}


def local(at: datetime | None) -> str:
    return "" if at is None else as_local(at).strftime("%Y-%m-%d %H:%M")  # 9999-12-31 east of UTC too


@dataclass
class WaitingRow:
    """A waiting candidate; its evidence summary arrives after the list is shown."""

    candidate: Candidate
    summary: EvidenceSummary | None = None


def signals_tip(view: WaitingRow) -> str:
    c = view.candidate
    if not c.signals:
        return "not scored yet"
    parts = [f"{name}: {c.signals.get(name, 0.0):.2f}" for name in SIGNALS]
    return f"score {c.score or 0:.2f} = weighted " + ", ".join(parts)


CANDIDATE_COLUMNS: list[Column[WaitingRow]] = [
    Column("Statement", lambda v: v.candidate.statement),
    Column("About", lambda v: _SUBJECT.get(v.candidate.subject.value, v.candidate.subject.value)),
    Column(
        "Score", lambda v: "" if v.candidate.score is None else f"{v.candidate.score:.2f}", signals_tip, True
    ),
    Column("Evidence", lambda v: "" if v.summary is None else str(v.summary.count), None, True),
    Column(
        "Sources",
        lambda v: "\u2026" if v.summary is None else ", ".join(v.summary.sessions),
        lambda v: "" if v.summary is None else "\n".join(v.summary.sessions),
    ),
]

FACT_COLUMNS: list[Column[FactView]] = [
    Column("Statement", lambda v: v.fact.statement),
    Column("About", lambda v: _SUBJECT.get(v.fact.subject.value, v.fact.subject.value)),
    Column("How", lambda v: _ORIGIN.get(v.origin, v.origin)),
    Column("Since", lambda v: local(v.fact.created_at)),
    Column("Status", lambda v: v.fact.status.value),
    Column("Evidence", lambda v: str(len(v.refs)), lambda v: "\n".join(v.refs), True),
]


def _details(r: Revision) -> str:
    data = r.data
    for key in ("description", "statement", "label", "message", "source"):
        if isinstance(data.get(key), str) and data[key]:
            return str(data[key])
    return json.dumps(data, ensure_ascii=False, default=str)[:200]


MEMORY_COLUMNS: list[Column[Fact]] = [
    Column("Statement", lambda f: f.statement),
    Column("About", lambda f: _SUBJECT.get(f.subject.value, f.subject.value)),
    Column("Status", lambda f: f.status.value),
    Column("Since", lambda f: local(f.valid_from)),
    Column("Until", lambda f: local(f.valid_to)),
]

JOURNAL_COLUMNS: list[Column[Revision]] = [
    Column("When", lambda r: local(r.at)),
    Column("Who", lambda r: r.actor),
    Column("What", lambda r: r.action),
    Column("On", lambda r: f"{r.entity} {r.entity_id}" if r.entity_id is not None else r.entity),
    Column("Details", _details, lambda r: json.dumps(r.data, ensure_ascii=False, indent=1, default=str)),
]

OBSERVATION_COLUMNS: list[Column[Observation]] = [
    Column("Noticed", lambda o: local(o.created_at)),
    Column("Hypothesis (not a fact)", lambda o: o.text),
    Column("Themes", lambda o: ", ".join(o.themes)),
]
