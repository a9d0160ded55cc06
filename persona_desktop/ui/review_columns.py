"""How candidates, facts, journal entries and observations read in the tables: in words, not codes."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from persona_desktop.domain.dates import as_local
from persona_desktop.domain.model import Candidate, Fact, Observation, Revision
from persona_desktop.domain.scoring import SIGNALS
from persona_desktop.services.queries import FactView
from persona_desktop.services.review_views import EvidenceSummary
from persona_desktop.ui.table_model import Column

_SUBJECT = {"owner": "you", "other": "someone else", "unknown": "unclear"}
_ORIGIN = {"policy": "added automatically", "owner": "approved by you"}
_FACT_STATUS = {"applied": "in memory", "superseded": "replaced", "reverted": "taken back"}

# What each score signal measures, in the owner's words (the weights stay behind a disclosure).
SIGNAL_WORDS = {
    "relevance": "How much it says about you",
    "frequency": "How often it came up",
    "diversity": "In how many separate conversations",
    "recency": "How recently it was said",
    "consolidation": "How well it fits what is already known",
    "richness": "How specific it is",
}


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


# The policy's reasons (domain/policy.py and the chat review), shortened for a column.
_WAITING_WORDS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"about other\b"), "About someone else"),
    (re.compile(r"about unknown\b"), "Not clearly about you"),
    (re.compile(r"no evidence written by the owner|cited none of your messages"), "Not in your own words"),
    (re.compile(r"contradicts fact"), "Contradicts what is remembered"),
    (re.compile(r"cited ref\(s\) were not in the document"), "Cites lines that do not exist"),
    (re.compile(r"below threshold"), "Not sure enough yet"),
    (re.compile(r"a skill always waits"), "A skill: always asks you"),
    (re.compile(r"a forget always waits"), "A forget: always asks you"),
]


def why_waiting(reason: str | None) -> list[str]:
    """Every reason a candidate waits, each in a few words (unknown reasons as written)."""
    if not reason:
        return ["Waiting for you"]
    found: list[str] = []
    for part in (p.strip() for p in re.split(r";\s*", reason) if p.strip()):
        words = next((w for pattern, w in _WAITING_WORDS if pattern.search(part)), None)
        text = words or (part[:1].upper() + part[1:])
        if text not in found:
            found.append(text)
    return found


def why_waiting_text(view: WaitingRow) -> str:
    """The first reason, and how many more (the tooltip and the detail pane list them all)."""
    reasons = why_waiting(view.candidate.reason)
    return reasons[0] + (f" (+{len(reasons) - 1})" if len(reasons) > 1 else "")


_APPLIED_WORDS = {
    "proven owner fact over threshold": "Your own words, with a high enough score: added by itself.",
}


def reason_words(reason: str | None) -> str:
    """A policy reason as the owner reads it (a waiting one as its list of reasons)."""
    if not reason:
        return ""
    if reason in _APPLIED_WORDS:
        return _APPLIED_WORDS[reason]
    return "; ".join(why_waiting(reason)) + "."


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

_ACTORS = {
    "owner": "You",
    "policy": "Automatic rule",
    "sleep": "Sleep cycle",
    "capture": "Capture",
    "review": "Chat review",
}
_ACTIONS = {
    "candidate.approved": "approved",
    "candidate.rejected": "rejected",
    "candidate.applied": "added to memory",
    "candidate.pending": "asked for your review",
    "candidate.dropped": "set aside",
    "candidate.proposed": "proposed",
    "candidate.seen_again": "saw again",
    "fact.applied": "added to memory",
    "fact.reverted": "reverted",
    "decision.undone": "undid",
    "source.forgotten": "forgot",
    "captured_data.deleted": "deleted all captured data",
    "fragments.ingested": "stored new text",
    "fragments.purged": "deleted expired text",
    "observation.added": "noticed a pattern",
    "observation.failed": "found no pattern",
    "run.started": "started",
    "run.resumed": "resumed",
    "run.finished": "finished",
    "cursor.moved": "moved on",
    "extraction.failed": "could not read a document",
    "extraction.problem": "had a problem with the model's reply",
    "llm.retry": "retried the model",
    "document.abandoned": "gave up on a document",
    "skill.retired": "retired a skill",
}


def actor_words(actor: str) -> str:
    return _ACTORS.get(actor, actor.capitalize())


def action_words(action: str) -> str:
    return _ACTIONS.get(action, action.replace(".", " ").replace("_", " "))


def decision_words(d: dict[str, Any]) -> str:
    """A journal entry as `why` lists it: "You approved", "Automatic rule added to memory"."""
    return f"{actor_words(str(d.get('actor', '')))} {action_words(str(d.get('action', '')))}"


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
