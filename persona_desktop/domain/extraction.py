"""The LLM exchange contract (DESIGN.md): request schemas and reply validation.

The reply is untrusted input. Parsing never raises on bad content: it returns
what could be used and a list of problems, each of which the caller journals.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from persona_desktop.domain.finite import finite_number, is_non_finite, loads_finite
from persona_desktop.domain.model import Subject

MAX_REPLY_CHARS = 200_000
MAX_CANDIDATES = 100
MAX_STATEMENT_CHARS = 500
MAX_REFS = 50
MAX_ID = 2**63 - 1  # what the store can hold as a row id

EXTRACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "candidates": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "statement": {"type": "string"},
                    "subject": {"type": "string", "enum": ["owner", "other", "unknown"]},
                    "refs": {"type": "array", "items": {"type": "string"}},
                    "category": {"type": "string"},
                    "confidence": {"type": "number"},
                    "updates_fact": {"type": ["integer", "null"]},
                },
                "required": ["statement", "subject", "refs"],
            },
        }
    },
    "required": ["candidates"],
}

GENERALIZATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "observation": {"type": "string"},
        "themes": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["observation", "themes"],
}


@dataclass(frozen=True, slots=True)
class ExtractedCandidate:
    statement: str
    subject: Subject
    refs: tuple[str, ...]
    rejected_refs: tuple[str, ...]
    category: str | None
    confidence: float | None
    updates_fact: int | None
    raw: dict[str, Any]


@dataclass(slots=True)
class ExtractionResult:
    candidates: list[ExtractedCandidate] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    malformed: bool = False


def _load_object(content: str, problems: list[str]) -> dict[str, Any] | None:
    if len(content) > MAX_REPLY_CHARS:
        problems.append(f"reply too large ({len(content)} characters), ignored")
        return None
    try:
        data = loads_finite(content)
    except json.JSONDecodeError as exc:
        problems.append(f"reply is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")
        return None
    if not isinstance(data, dict):
        problems.append(f"reply is JSON {type(data).__name__}, expected an object")
        return None
    return data


def parse_extraction(content: str, document_refs: frozenset[str]) -> ExtractionResult:
    result = ExtractionResult()
    data = _load_object(content, result.problems)
    if data is None:
        result.malformed = True
        return result
    items = data.get("candidates")
    if not isinstance(items, list):
        result.problems.append("reply has no 'candidates' list")
        result.malformed = True
        return result
    if len(items) > MAX_CANDIDATES:
        result.problems.append(f"{len(items)} candidates in one reply, kept the first {MAX_CANDIDATES}")
        items = items[:MAX_CANDIDATES]
    for index, item in enumerate(items):
        parsed = _parse_candidate(index, item, document_refs, result.problems)
        if parsed is not None:
            result.candidates.append(parsed)
    return result


def _parse_candidate(
    index: int, item: object, document_refs: frozenset[str], problems: list[str]
) -> ExtractedCandidate | None:
    where = f"candidate {index}"
    if not isinstance(item, dict):
        problems.append(f"{where}: not an object")
        return None
    statement = item.get("statement")
    if not isinstance(statement, str) or not statement.strip():
        problems.append(f"{where}: 'statement' missing or not a string")
        return None
    statement = " ".join(statement.split())
    if len(statement) > MAX_STATEMENT_CHARS:
        problems.append(f"{where}: statement longer than {MAX_STATEMENT_CHARS} characters, dropped")
        return None
    raw_subject = item.get("subject")
    try:
        subject = Subject(raw_subject) if isinstance(raw_subject, str) else Subject.UNKNOWN
    except ValueError:
        problems.append(f"{where}: subject {raw_subject!r} is not owner/other/unknown; taken as unknown")
        subject = Subject.UNKNOWN
    raw_refs = item.get("refs")
    if not isinstance(raw_refs, list):
        problems.append(f"{where}: 'refs' missing or not a list")
        return None
    refs: list[str] = []
    rejected: list[str] = []
    for ref in raw_refs[:MAX_REFS]:
        if isinstance(ref, str) and ref.strip("[] ") in document_refs:
            clean = ref.strip("[] ")
            if clean not in refs:
                refs.append(clean)
        else:
            rejected.append(str(ref)[:200])
    if rejected:
        problems.append(f"{where}: refs not in the document rejected: {', '.join(rejected)}")
    category = item.get("category")
    confidence = item.get("confidence")
    conf = finite_number(confidence)
    if conf is not None:
        conf = conf / 100 if 1 < conf <= 100 else conf
        conf = min(max(conf, 0.0), 1.0)
    elif confidence is not None:
        shown = repr(confidence) if is_non_finite(confidence) else type(confidence).__name__
        problems.append(f"{where}: confidence {shown} is not a finite number, dropped")
    updates = item.get("updates_fact")
    if updates is not None and not (_is_id(updates)):
        problems.append(f"{where}: updates_fact {str(updates)[:40]!r} is not a fact number, dropped")
        updates = None
    return ExtractedCandidate(
        statement=statement,
        subject=subject,
        refs=tuple(refs),
        rejected_refs=tuple(rejected),
        category=category[:60] if isinstance(category, str) and category.strip() else None,
        confidence=conf,
        updates_fact=updates if _is_id(updates) else None,
        raw={k: item[k] for k in list(item)[:20]},
    )


def _is_id(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_ID


@dataclass(frozen=True, slots=True)
class Generalization:
    observation: str
    themes: list[str]


def parse_generalization(content: str, problems: list[str]) -> Generalization | None:
    data = _load_object(content, problems)
    if data is None:
        return None
    text = data.get("observation")
    if not isinstance(text, str) or not text.strip():
        problems.append("generalization reply has no 'observation' string")
        return None
    themes_raw = data.get("themes", [])
    themes = [t[:120] for t in themes_raw if isinstance(t, str)][:20] if isinstance(themes_raw, list) else []
    return Generalization(" ".join(text.split())[:2000], themes)
