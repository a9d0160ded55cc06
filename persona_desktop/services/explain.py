"""The memory explaining itself in the owner's words, for the windows and the command line alike.

The policy, the journal and the fragments speak in codes ("about other, not the owner",
"candidate.applied", author "unknown", locator "speaker: likely-owner"); this module
turns each into a few plain words, in one place, so that every screen says the same.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from persona_desktop.domain.dates import as_local
from persona_desktop.domain.model import Fragment, Kind

# What each score signal measures, in the owner's words (the weights stay behind a disclosure).
SIGNAL_WORDS = {
    "relevance": "How much it says about you",
    "frequency": "How often it came up",
    "diversity": "In how many separate conversations",
    "recency": "How recently it was said",
    "consolidation": "How well it fits what is already known",
    "richness": "How specific it is",
}

SUBJECT_WORDS = {"owner": "you", "other": "someone else", "unknown": "unclear"}
TRUST_WORDS = {"trusted": "your private channel", "untrusted": "not a private channel"}
_AUTHOR = {"owner": "you", "assistant": "the assistant", "other": "someone else", "unknown": "unknown author"}


def local_time(at: datetime | None) -> str:
    return "" if at is None else as_local(at).strftime("%Y-%m-%d %H:%M")  # 9999-12-31 east of UTC too


# --- the policy's reasons ---------------------------------------------------------------------

_WAITING_WORDS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"about other\b"), "About someone else"),
    (re.compile(r"about unknown\b"), "Not clearly about you"),
    (re.compile(r"no evidence written by the owner|cited none of your messages"), "Not in your own words"),
    (re.compile(r"contradicts fact"), "Contradicts what is remembered"),
    (re.compile(r"cited ref\(s\) were not in the document"), "Cites lines that do not exist"),
    (re.compile(r"below threshold"), "Not sure enough yet"),
    (re.compile(r"a skill always waits"), "A skill: always asks you"),
    (re.compile(r"a forget always waits"), "A forget: always asks you"),
    (re.compile(r"a change to a known fact always waits"), "A change to what is remembered: always asks you"),
    (re.compile(r"over MCP: you rejected"), "Another assistant proposed it again: you said no before"),
    (re.compile(r"by another assistant over MCP"), "Another assistant proposed it: only you decide"),
]
_APPLIED_WORDS = {
    "proven owner fact over threshold": "Your own words, with a high enough score: added by itself.",
}


def why_waiting(reason: str | None) -> list[str]:
    """Every reason a candidate waits, each in a few words (an unknown reason as written)."""
    if not reason:
        return ["Waiting for you"]
    found: list[str] = []
    for part in (p.strip() for p in re.split(r";\s*", reason) if p.strip()):
        words = next((w for pattern, w in _WAITING_WORDS if pattern.search(part)), None)
        text = words or (part[:1].upper() + part[1:])
        if text not in found:
            found.append(text)
    return found


def reason_words(reason: str | None) -> str:
    """A policy reason as the owner reads it (a waiting one as its list of reasons)."""
    if not reason:
        return ""
    for applied, words in _APPLIED_WORDS.items():  # "..., in your own words (chat:saved:1)"
        if reason.startswith(applied):
            return words
    return "; ".join(why_waiting(reason)) + "."


# --- the journal --------------------------------------------------------------------------------

_ACTORS = {
    "owner": "You",
    "policy": "Automatic rule",
    "sleep": "Sleep cycle",
    "capture": "Capture",
    "review": "Chat review",
    "mcp": "Another assistant (MCP)",
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
    "fragments.edited": "stored the new text of edited messages",
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
    "proposal.not_stored": "sent more proposals than are kept (not stored)",
}


def actor_words(actor: str) -> str:
    return _ACTORS.get(actor, actor.capitalize())


def action_words(action: str) -> str:
    return _ACTIONS.get(action, action.replace(".", " ").replace("_", " "))


def decision_words(d: dict[str, Any]) -> str:
    """A journal entry as `why` lists it: "You approved", "Automatic rule added to memory"."""
    return f"{actor_words(str(d.get('actor', '')))} {action_words(str(d.get('action', '')))}"


# --- where a fragment came from -------------------------------------------------------------------


def author_words(f: Fragment) -> str:
    """Who said it: microphone speech is "likely you", never "unknown author"."""
    if f.kind is Kind.SPEECH and f.author.value == "unknown":
        speaker = f.locator.get("speaker")
        if speaker == "likely-owner":
            return "likely you"
        if speaker == "other":
            return "sound the computer played"
        return "unknown speaker"
    return _AUTHOR.get(f.author.value, f.author.value)


def byline(f: Fragment) -> str:
    """The author as a heading says it: "by you", "likely you (microphone)"."""
    who = author_words(f)
    if who == "likely you":
        return "likely you (microphone)"
    if who.startswith(("sound", "unknown speaker")):
        return who
    return f"by {who}"


def screen_place(loc: dict[str, Any]) -> str:
    """Where on the screen a line was read: the window, its app, which monitor."""
    parts = []
    if loc.get("window"):
        parts.append(f"in the window \u201c{loc['window']}\u201d")
    if loc.get("app"):
        parts.append(f"of {loc['app']}")
    monitor = loc.get("monitor")
    if isinstance(monitor, int) and not isinstance(monitor, bool) and monitor >= 1:
        parts.append(f"on screen {monitor}")  # mss numbers monitors from 1
    return ("Read " + " ".join(parts) + ".") if parts else ""


def _clock(seconds: float) -> str:
    whole = max(0, int(seconds))
    return f"{whole // 60}:{whole % 60:02d}"


def speech_span(loc: dict[str, Any]) -> str:
    try:
        start, end = float(loc["start_s"]), float(loc["end_s"])
    except (KeyError, TypeError, ValueError):
        return ""
    return f"Said {_clock(start)}\u2013{_clock(max(end, start + 1))} into the recording."
