"""How candidates, facts, journal entries and observations read in the tables: in words, not codes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from persona_desktop.domain.model import Candidate, Fact, Observation, Revision
from persona_desktop.domain.scoring import SIGNALS
from persona_desktop.services.explain import (
    SUBJECT_WORDS,
    action_words,
    actor_words,
    why_waiting,
)
from persona_desktop.services.explain import local_time as local
from persona_desktop.services.queries import FactView
from persona_desktop.services.review_views import EvidenceSummary
from persona_desktop.ui.table_model import Column

_SUBJECT = SUBJECT_WORDS
_ORIGIN = {"policy": "added automatically", "owner": "approved by you"}
_FACT_STATUS = {"applied": "in memory", "superseded": "replaced", "reverted": "taken back"}


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


def why_waiting_text(view: WaitingRow) -> str:
    """The first reason, and how many more (the tooltip and the detail pane list them all)."""
    reasons = why_waiting(view.candidate.reason)
    return reasons[0] + (f" (+{len(reasons) - 1})" if len(reasons) > 1 else "")


CANDIDATE_COLUMNS: list[Column[WaitingRow]] = [
    Column("Statement", lambda v: v.candidate.statement),
    Column("Why waiting", why_waiting_text, lambda v: "\n".join(why_waiting(v.candidate.reason))),
    Column("About", lambda v: _SUBJECT.get(v.candidate.subject.value, v.candidate.subject.value)),
    Column(
        "Score", lambda v: "" if v.candidate.score is None else f"{v.candidate.score:.2f}", signals_tip, True
    ),
    Column(
        "Sources",
        lambda v: "\u2026" if v.summary is None else _sources(v.summary),
        lambda v: "" if v.summary is None else "\n".join(v.summary.sessions),
    ),
]


def _sources(summary: EvidenceSummary) -> str:
    n = summary.count
    where = len(summary.sessions)
    if n == 0:
        return "none left"
    return f"{n} line{'s' if n != 1 else ''}" + (f" in {where} places" if where > 1 else "")


FACT_COLUMNS: list[Column[FactView]] = [
    Column("Statement", lambda v: v.fact.statement),
    Column("How", lambda v: _ORIGIN.get(v.origin, v.origin)),
    Column("When", lambda v: local(v.fact.created_at)),
    Column("Sources", lambda v: str(len(v.refs)), lambda v: "\n".join(v.refs), True),
]

MEMORY_COLUMNS: list[Column[Fact]] = [
    Column("Statement", lambda f: f.statement),
    Column("About", lambda f: _SUBJECT.get(f.subject.value, f.subject.value)),
    Column("Status", lambda f: _FACT_STATUS.get(f.status.value, f.status.value)),
    Column("Since", lambda f: local(f.valid_from)),
]

# --- the journal, in words -------------------------------------------------------------------


def _details(r: Revision) -> str:
    data = r.data
    if r.action == "decision.undone":
        return str(data.get("description") or "")
    if r.action == "fragments.ingested":
        return _ingested(data)
    for key in ("statement", "label", "description", "message", "source", "day"):
        value = data.get(key)
        if isinstance(value, str) and value:
            return f"\u201c{value}\u201d" if key == "statement" else value
    if r.action == "run.finished":
        return (
            f"{data.get('applied', 0)} added, {data.get('pending', 0)} for review ({data.get('status', '')})"
        )
    return json.dumps(data, ensure_ascii=False, default=str)[:200]


def _ingested(data: dict[str, Any]) -> str:
    added = data.get("added", 0)
    return f"{added} {data.get('kind', '')} line{'s' if added != 1 else ''} from {data.get('source', '?')}"


JOURNAL_COLUMNS: list[Column[Revision]] = [
    Column("When", lambda r: local(r.at)),
    Column("Who", lambda r: actor_words(r.actor)),
    Column("What", lambda r: action_words(r.action)),
    Column("Details", _details, lambda r: json.dumps(r.data, ensure_ascii=False, indent=1, default=str)),
]

OBSERVATION_COLUMNS: list[Column[Observation]] = [
    Column("Noticed", lambda o: local(o.created_at)),
    Column("Hypothesis (not a fact)", lambda o: o.text),
    Column("Themes", lambda o: ", ".join(o.themes)),
]
