"""`facts why ID` for a person: how a fact got into memory, its evidence, the decisions."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from persona_desktop.services.review import Provenance


def print_provenance(prov: Provenance) -> None:
    """How the fact got into memory, its evidence with where it was said, and its history."""
    from persona_desktop.services import explain

    f, c = prov.fact, prov.candidate
    print(f"Fact {f.id}: {f.statement}")
    status = {"applied": "In memory since", "superseded": "Replaced on", "reverted": "Taken back on"}
    since = f.valid_from if f.status.value == "applied" else f.valid_to
    print(f"  {status.get(f.status.value, f.status.value)} {explain.local_time(since)}.")
    if c is None:
        print("  Written directly, without a proposal to review.")
    else:
        owner = any(d["actor"] == "owner" and d["action"] == "candidate.approved" for d in prov.decisions)
        how = "Approved by you" if owner else "Added automatically"
        score = "not scored" if c.score is None else f"score {c.score:.2f}"
        print(f"  {how}; proposal {c.id} ({score}).")
        if c.reason:
            print(f"  {explain.reason_words(c.reason)}")
        if c.signals:
            parts = [
                f"{explain.SIGNAL_WORDS.get(name, name).lower()} {value:.2f}"
                for name, value in c.signals.items()
            ]
            print(f"  Score signals: {', '.join(parts)}.")
    print(
        f"Evidence ({len(prov.evidence)}):"
        if prov.evidence
        else "Evidence: none left (its sources were forgotten)."
    )
    for n, item in enumerate(prov.evidence, 1):
        fr = item.fragment
        where = explain.screen_place(fr.locator) or explain.speech_span(fr.locator)
        said = "said " + explain.byline(fr) if explain.byline(fr).startswith("by") else explain.byline(fr)
        print(
            f"  {n}. {fr.kind.value.capitalize()} \u201c{item.source_label}\u201d,"
            f" {explain.local_time(fr.captured_at)}, {said}"
            f" ({explain.TRUST_WORDS.get(fr.trust.value, fr.trust.value)}):"
        )
        print(f"     \u201c{fr.text}\u201d")
        print(f"     {where + ' ' if where else ''}Source: {fr.ref}")
    if prov.decisions:
        print("History:")
    for d in prov.decisions:
        at = explain.local_time(datetime.fromisoformat(d["at"]))
        print(f"  {at}  {explain.decision_words(d)}")
