"""The sleep cycle's prompts. The wire shape they ask for is the LLM exchange contract."""

from __future__ import annotations

from collections.abc import Sequence

from persona_desktop.domain.documents import Document
from persona_desktop.domain.model import Author, Fact

EXTRACTION_SYSTEM = """\
You read a document of captured fragments and propose durable facts for a personal \
assistant's long-term memory about its owner.

Each line of the document is one fragment: `[<ref>] <text>`.
Rules:
- Propose only durable facts (preferences, relationships, health, work, plans, habits), \
not passing remarks.
- `subject` is "owner" only when the fact is about the owner themself; "other" when it is \
about someone else; "unknown" when you cannot tell.
- `refs` must list the exact refs of the lines that support the fact, copied from the \
document. Never invent refs.
- Lines written by the assistant are context only: they are never evidence.
- If a fact updates one of the known facts listed before the document, put that fact's \
number in `updates_fact`.
- `confidence` is a number from 0 to 1.
Answer with JSON: {"candidates": [{"statement": ..., "subject": ..., "refs": [...], \
"category": ..., "confidence": ..., "updates_fact": null}]}. An empty list is a fine answer.
"""

GENERALIZATION_SYSTEM = """\
You look at the candidate facts of a period and describe, as one short observation, the \
recurring themes of the owner's period. This is a hypothesis, never a fact.
Answer with JSON: {"observation": "...", "themes": ["...", ...]}.
"""


def extraction_messages(doc: Document, known_facts: Sequence[Fact]) -> list[dict[str, str]]:
    by_author: dict[Author, list[str]] = {}
    for f in doc.fragments:
        by_author.setdefault(f.author, []).append(f.ref)
    legend = ["Who wrote which lines:"]
    names = {
        Author.OWNER: "the owner",
        Author.OTHER: "other people",
        Author.UNKNOWN: "unknown (e.g. screen text or unattributed speech)",
        Author.ASSISTANT: "the assistant (context only, never evidence)",
    }
    for author, refs in by_author.items():
        legend.append(f"- {names[author]}: {', '.join(refs)}")
    facts_part = ["Known facts (cite the number in updates_fact if a fact changes one):"]
    facts_part += [f"{f.id}: {f.statement}" for f in known_facts[:50]] or ["(none)"]
    return [
        {"role": "system", "content": EXTRACTION_SYSTEM},
        {"role": "user", "content": "\n".join(legend) + "\n\n" + "\n".join(facts_part)},
        {"role": "user", "content": doc.text()},
    ]


def generalization_messages(statements: Sequence[str]) -> list[dict[str, str]]:
    listing = "\n".join(f"- {s}" for s in statements)
    return [
        {"role": "system", "content": GENERALIZATION_SYSTEM},
        {"role": "user", "content": f"Candidate facts of the period:\n{listing}"},
    ]
