"""What the review window's detail pane says about the selection, in plain words.

One candidate: what it claims, why it waits, its score explained signal by signal
(the weights and the arithmetic behind a "How is the score computed?" link), what a
chat-review proposal would change. Several: how many and which. None: what to do.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

from persona_desktop.domain.model import Candidate
from persona_desktop.domain.proposals import Forget, NewSkill, Proposal, SkillPatch
from persona_desktop.domain.scoring import SIGNALS
from persona_desktop.services.explain import SIGNAL_WORDS, why_waiting
from persona_desktop.services.explain import local_time as local

WEIGHTS_LINK = "weights"
MUTED = "color:#5f6368"
_SUBJECT = {"owner": "you", "other": "someone else", "unknown": "unclear who"}
_ORIGIN = {
    "sleep": "the nightly sleep cycle",
    "review": "the chat review",
    "import": "an import",
    "mcp": "another assistant (MCP)",
}
SHOWN_IN_LIST = 12


def _bar(value: float, width: int = 10) -> str:
    filled = max(0, min(width, round(value * width)))
    return (
        "<span style='color:#3f6fc4'>" + "\u2588" * filled + "</span>"
        "<span style='color:#c8d3e6'>" + "\u2588" * (width - filled) + "</span>"
    )


def _level(value: float) -> str:
    if value >= 0.75:
        return "high"
    if value >= 0.4:
        return "medium"
    return "low"


def score_html(c: Candidate, weights: Mapping[str, float], threshold: float, show_weights: bool) -> str:
    """The score signal by signal in words; the weights and the sum only when asked for."""
    if c.score is None or not c.signals:
        return f"<p style='{MUTED}'>Not scored yet.</p>"
    verdict = (
        "counted only from your own material; a proposal from another assistant is never added by itself"
        if c.from_outside
        else "high enough to be added by itself, if it is also proven to be your own words"
        if c.score >= threshold
        else f"below the {threshold:.2f} needed to be added by itself"
    )
    rows = []
    for name in SIGNALS:
        value = float(c.signals.get(name, 0.0))
        extra = (
            f"<td align=right style='{MUTED}'>{value:.2f} &times; {weights.get(name, 0.0):.2f}</td>"
            if show_weights
            else ""
        )
        rows.append(
            f"<tr><td>{html.escape(SIGNAL_WORDS.get(name, name))}</td><td>{_bar(value)}</td>"
            f"<td style='{MUTED}'>{_level(value)}</td>{extra}</tr>"
        )
    link = "Hide the arithmetic" if show_weights else "How is the score computed?"
    parts = [
        f"<p><b>Score {c.score:.2f}</b>: {verdict}.</p>",
        f"<table cellspacing=3>{''.join(rows)}</table>",
        f"<p><a href='{WEIGHTS_LINK}'>{link}</a></p>",
    ]
    if show_weights:
        terms = " + ".join(f"{weights.get(n, 0.0):.2f}&times;{n}" for n in SIGNALS)
        parts.append(
            f"<p style='{MUTED}'>score = {terms} = {c.score:.2f}. Each signal runs from 0 to 1; the"
            " weights (Settings, Advanced) always add up to 1.</p>"
        )
    return "".join(parts)


def proposal_html(proposal: Proposal) -> str:
    """What a chat-review proposal would change, in full: a skill's Markdown, a patch, a forget."""
    pre = "<pre style='white-space: pre-wrap; background:#f6f6f6; color:#202124'>{}</pre>"
    if isinstance(proposal, NewSkill):
        return f"<p><b>New skill {html.escape(proposal.name)}</b></p>" + pre.format(
            html.escape(proposal.content)
        )
    if isinstance(proposal, SkillPatch):
        return (
            f"<p><b>Patch of skill {html.escape(proposal.name)}</b>: replace</p>"
            + pre.format(html.escape(proposal.old))
            + "<p>with</p>"
            + pre.format(html.escape(proposal.new))
        )
    if isinstance(proposal, Forget):
        return f"<p><b>Forget fact {proposal.fact_id}</b>, because: {html.escape(proposal.reason)}</p>"
    return ""


def candidate_html(c: Candidate, weights: Mapping[str, float], threshold: float, show_weights: bool) -> str:
    about = _SUBJECT.get(c.subject.value, c.subject.value)
    origin = _ORIGIN.get(c.origin, c.origin)
    category = f" &middot; {html.escape(c.category)}" if c.category else ""
    reasons = "".join(f"<li>{html.escape(r)}</li>" for r in why_waiting(c.reason))
    return (
        f"<h3>{html.escape(c.statement)}</h3>"
        f"<p style='{MUTED}'>About {about} &middot; proposed by {html.escape(origin)}"
        f" on {local(c.created_at)}{category}</p>"
        f"<p><b>Why it waits for you</b></p><ul style='margin-left:-20px'>{reasons}</ul>"
        f"{score_html(c, weights, threshold, show_weights)}"
        f"{proposal_html(c.proposal)}"
        "<p><b>Where it comes from</b></p>"
    )


def selection_html(candidates: Sequence[Candidate]) -> str:
    shown = "".join(f"<li>{html.escape(c.statement)}</li>" for c in candidates[:SHOWN_IN_LIST])
    more = len(candidates) - SHOWN_IN_LIST
    tail = f"<li style='{MUTED}'>and {more} more</li>" if more > 0 else ""
    return (
        f"<h3>{len(candidates)} selected</h3><ul style='margin-left:-20px'>{shown}{tail}</ul>"
        f"<p style='{MUTED}'>Approve (A) or Reject (R) acts on all of them; Ctrl+Z undoes one at a time."
        " Select a single one to see its score and evidence, or to edit it.</p>"
    )
