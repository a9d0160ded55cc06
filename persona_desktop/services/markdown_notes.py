"""The Markdown the export writes: a profile note and one note per skill.

Facts and categories are the model's words: before one becomes a heading, a list
item or a YAML value it is flattened to one line and every Markdown punctuation
mark is backslash-escaped (CommonMark allows it for any ASCII punctuation), so a
statement cannot open a heading, a link, a tag, an HTML block or a second
frontmatter. YAML values are JSON strings, ASCII-escaped (valid YAML 1.2 scalars
that no line break can end).
"""

from __future__ import annotations

import json
import re
from datetime import datetime

from persona_desktop.domain.model import Fact, Subject
from persona_desktop.ports import Skill

MAX_INLINE = 500
_PUNCTUATION = re.compile(r"([!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])")


def yaml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=True)  # a JSON string is a valid YAML scalar


def inline(text: str) -> str:
    """Model text as one inert line of Markdown."""
    flat = " ".join(str(text).split())
    if len(flat) > MAX_INLINE:
        flat = flat[: MAX_INLINE - 1] + "…"
    return _PUNCTUATION.sub(r"\\\1", flat)


def _category(fact: Fact) -> str:
    return " ".join((fact.category or "general").split()).lower() or "general"


def profile_note(facts: list[Fact], at: datetime) -> str:
    owner = [f for f in facts if f.subject is Subject.OWNER]
    others = [f for f in facts if f.subject is not Subject.OWNER]
    categories = sorted({_category(f) for f in owner})
    lines = [
        "---",
        f"title: {yaml_str('Persona profile')}",
        "generator: persona-desktop",
        f"updated: {yaml_str(at.isoformat())}",
        f"facts: {len(facts)}",
        "categories: [" + ", ".join(yaml_str(c) for c in categories) + "]",
        "tags: [persona]",
        "---",
        "",
        "# Persona profile",
        "",
        "What the assistant remembers about you: facts you approved or that were proven.",
        "This note is rewritten by Persona Desktop; edit memory in the app, not here.",
    ]
    for category in categories:
        lines += ["", f"## {inline(category.capitalize())}", ""]
        lines += [f"- {inline(f.statement)} ^fact-{f.id}" for f in owner if _category(f) == category]
    if others:
        lines += ["", "## About other people", ""]
        lines += [f"- {inline(f.statement)} ^fact-{f.id}" for f in others]
    if not facts:
        lines += ["", "_Nothing remembered yet._"]
    return "\n".join(lines) + "\n"


def skill_note(skill: Skill) -> str:
    """The skill's own Markdown (the owner approved it), under a frontmatter of our values."""
    head = [
        "---",
        f"title: {yaml_str(skill.name)}",
        "generator: persona-desktop",
        "kind: skill",
        f"updated: {yaml_str(skill.updated_at.isoformat())}",
        "tags: [persona, skill]",
        "---",
        "",
    ]
    return "\n".join(head) + skill.content.rstrip("\n") + "\n"
