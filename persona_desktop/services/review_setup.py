"""When the turn review runs, which tools it may use, and which prompt it reads.

Counters like Hermes': every `review.memory_interval` owner turns a memory review,
every `review.skill_interval` turns a skill review (both due: one combined review);
an owner who explicitly asks to remember something gets a memory review on that
turn and the memory counter starts over. Tool sets (`review.allowed_toolsets`):
`memory` (propose a fact, an update or a forget) and `skills` (propose a skill or a
patch). Prompts are built in (package data: persona_desktop/resources/prompts, read
with importlib.resources, so a wheel or a frozen bundle has them too); an unreadable
override falls back to the built-in one with a warning for the owner.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Any

from persona_desktop.errors import PersonaError

PROMPTS = ("resources", "prompts")  # in the persona_desktop package


class ReviewKind(StrEnum):
    MEMORY = "memory"
    SKILL = "skill"
    COMBINED = "combined"


TOOLSETS: dict[str, tuple[str, ...]] = {
    "memory": ("propose_fact", "propose_fact_update", "propose_forget"),
    "skills": ("propose_skill", "propose_skill_patch"),
}
KIND_TOOLSETS = {
    ReviewKind.MEMORY: ("memory",),
    ReviewKind.SKILL: ("skills",),
    ReviewKind.COMBINED: ("memory", "skills"),
}
_REFS = {"type": "array", "items": {"type": "string"}, "description": "refs of the owner's messages"}
TOOL_SPECS: dict[str, dict[str, Any]] = {
    "propose_fact": {
        "description": "Propose a new durable fact for the owner to approve.",
        "properties": {
            "statement": {"type": "string", "description": "the fact, one sentence"},
            "subject": {"type": "string", "enum": ["owner", "other", "unknown"]},
            "category": {"type": "string", "description": "e.g. preference, work, health, people"},
            "refs": _REFS,
        },
        "required": ["statement", "refs"],
    },
    "propose_fact_update": {
        "description": "Propose to replace a known fact (by its number) with a corrected statement.",
        "properties": {
            "fact_id": {"type": "integer"},
            "statement": {"type": "string", "description": "the corrected fact"},
            "refs": _REFS,
        },
        "required": ["fact_id", "statement", "refs"],
    },
    "propose_forget": {
        "description": "Propose to forget a known fact (by its number).",
        "properties": {"fact_id": {"type": "integer"}, "reason": {"type": "string"}, "refs": _REFS},
        "required": ["fact_id", "reason"],
    },
    "propose_skill": {
        "description": "Propose a new skill: a short procedural Markdown note.",
        "properties": {
            "name": {"type": "string", "description": "lowercase words joined by dashes"},
            "content": {"type": "string", "description": "the skill in Markdown"},
            "refs": _REFS,
        },
        "required": ["name", "content"],
    },
    "propose_skill_patch": {
        "description": "Propose a fix to an existing skill: exact text to replace and its replacement.",
        "properties": {
            "name": {"type": "string"},
            "old_text": {"type": "string"},
            "new_text": {"type": "string"},
            "refs": _REFS,
        },
        "required": ["name", "old_text", "new_text"],
    },
}
TOOL_NOUNS = {
    "propose_fact": ("fact", "facts"),
    "propose_fact_update": ("fact update", "fact updates"),
    "propose_forget": ("forget", "forgets"),
    "propose_skill": ("skill", "skills"),
    "propose_skill_patch": ("skill patch", "skill patches"),
}
_REMEMBER = re.compile(
    r"\b(remember( that| this|:)?|don'?t forget|do not forget|keep in mind|note that|make a note|memorize)\b",
    re.IGNORECASE,
)


def asks_to_remember(text: str) -> bool:
    return bool(_REMEMBER.search(text))


def tool_schema(name: str) -> dict[str, Any]:
    spec = TOOL_SPECS[name]
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": spec["description"],
            "parameters": {"type": "object", "properties": spec["properties"], "required": spec["required"]},
        },
    }


@dataclass(frozen=True, slots=True)
class ReviewConfig:
    enabled: bool = False
    memory_interval: int = 10
    skill_interval: int = 10
    allowed_toolsets: tuple[str, ...] = ("memory",)
    max_iterations: int = 16
    timeout_s: float = 180.0
    prompt_paths: dict[str, str] = field(default_factory=dict)

    def allowed_tools(self, kind: ReviewKind) -> list[str]:
        """The kind's tools that the allowed tool sets let through."""
        return [t for ts in KIND_TOOLSETS[kind] if ts in self.allowed_toolsets for t in TOOLSETS.get(ts, ())]

    def skills_allowed(self) -> bool:
        return "skills" in self.allowed_toolsets

    def memory_allowed(self) -> bool:
        return "memory" in self.allowed_toolsets


class TurnCounter:
    """When a review is due, counted in owner turns, as Hermes counts them."""

    def __init__(self, config: ReviewConfig) -> None:
        self.config = config
        self.memory_turns = 0
        self.skill_turns = 0

    def owner_turn(self, text: str) -> ReviewKind | None:
        cfg = self.config
        self.memory_turns += 1
        if cfg.skills_allowed():
            self.skill_turns += 1
        memory_due = cfg.memory_allowed() and (
            asks_to_remember(text) or self.memory_turns >= cfg.memory_interval
        )
        skill_due = cfg.skills_allowed() and self.skill_turns >= cfg.skill_interval
        if memory_due:
            self.memory_turns = 0
        if skill_due:
            self.skill_turns = 0
        if memory_due and skill_due:
            return ReviewKind.COMBINED
        if memory_due:
            return ReviewKind.MEMORY
        return ReviewKind.SKILL if skill_due else None


def default_kind(config: ReviewConfig) -> ReviewKind:
    """For a review the owner starts by hand: everything the allowed tool sets cover."""
    if config.skills_allowed():
        return ReviewKind.COMBINED if config.memory_allowed() else ReviewKind.SKILL
    return ReviewKind.MEMORY


def load_prompt(kind: ReviewKind, config: ReviewConfig) -> tuple[str, str | None]:
    """The review prompt and, when an override could not be read, a warning for the owner."""
    name = f"{kind.value}_review.md"
    try:
        builtin = (resources.files("persona_desktop") / PROMPTS[0] / PROMPTS[1] / name).read_text(
            encoding="utf-8"
        )
    except (OSError, UnicodeDecodeError):
        raise PersonaError(
            f"the built-in {kind.value} review prompt is missing from this installation "
            f"(persona_desktop/{'/'.join(PROMPTS)}/{name}); reinstall Persona Desktop"
        ) from None
    path = config.prompt_paths.get(kind.value, "").strip()
    if not path:
        return builtin, None
    setting = f"review.{kind.value}_prompt_path"
    try:
        text = Path(path).expanduser().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        return builtin, f"{setting}: cannot read {path} ({reason}); using the built-in {kind.value} prompt"
    if not text.strip():
        return builtin, f"{setting}: {path} is empty; using the built-in {kind.value} prompt"
    return text, None
