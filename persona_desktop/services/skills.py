"""Skills: procedural Markdown notes the assistant may follow, written only on the owner's approval.

The turn review proposes a new skill or a patch to one (a candidate whose proposal is
a `NewSkill` or a `SkillPatch`); approving that candidate calls `apply_proposal`, and
undoing the approval calls `undo_proposal` with what `apply_proposal` returned.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from persona_desktop.domain.proposals import SkillPatch, SkillProposal
from persona_desktop.errors import StateError
from persona_desktop.ports import Skill, UnitOfWork, UnitOfWorkFactory

ACTIVE = "active"
RETIRED = "retired"
MAX_NAME = 64
MAX_CONTENT = 20_000
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def skill_name(raw: object) -> str:
    """A skill's name as a file-safe slug ("Plan a trip" -> "plan-a-trip"); StateError if none is left."""
    text = re.sub(r"[^a-z0-9]+", "-", str(raw or "").strip().lower()).strip("-")[:MAX_NAME].strip("-")
    if not text or not _NAME.match(text):
        raise StateError(f"{raw!r} is not a usable skill name")
    return text


def patched(content: str, old: str, new: str, name: str) -> str:
    if not old:
        raise StateError(f"a patch to skill {name} needs the text to replace")
    found = content.count(old)
    if found != 1:
        where = "not found" if found == 0 else f"found {found} times"
        raise StateError(f"the patch to skill {name} no longer fits: the text to replace is {where}")
    return content.replace(old, new, 1)


def check_proposal(uow: UnitOfWork, proposal: SkillProposal) -> None:
    """Raise StateError when the proposal cannot apply to the skills as they are now."""
    name = skill_name(proposal.name)
    existing = uow.skills.by_name(name)
    if isinstance(proposal, SkillPatch):
        if existing is None or existing.status != ACTIVE:
            raise StateError(f"there is no skill named {name} to patch")
        patched(existing.content, proposal.old, proposal.new, name)
    elif not proposal.content.strip():
        raise StateError(f"skill {name} has no content")


def apply_proposal(uow: UnitOfWork, proposal: SkillProposal, at: datetime) -> dict[str, Any]:
    """Write the proposed skill (or patch); returns what undo needs, for the journal."""
    check_proposal(uow, proposal)
    name = skill_name(proposal.name)
    existing = uow.skills.by_name(name)
    if isinstance(proposal, SkillPatch):
        assert existing is not None
        content = patched(existing.content, proposal.old, proposal.new, name)
    else:
        content = proposal.content.strip() + "\n"
    if existing is None:
        skill_id = uow.skills.add(name, content, at)
        return {"skill_id": skill_id, "skill_name": name, "skill_previous": None}
    uow.skills.update(existing.id, content, ACTIVE, at)
    return {
        "skill_id": existing.id,
        "skill_name": name,
        "skill_previous": existing.content,
        "skill_previous_status": existing.status,
    }


def undo_proposal(uow: UnitOfWork, applied: dict[str, Any], at: datetime) -> None:
    skill_id = int(applied["skill_id"])
    previous = applied.get("skill_previous")
    if previous is None:
        uow.skills.delete(skill_id)
    else:
        uow.skills.update(skill_id, str(previous), str(applied.get("skill_previous_status", ACTIVE)), at)


def retire(uow_factory: UnitOfWorkFactory, name: str, at: datetime) -> None:
    """The owner retires a skill: it leaves the prompt and the export; the journal keeps it."""
    with uow_factory() as uow:
        skill = uow.skills.by_name(skill_name(name))
        if skill is None or skill.status != ACTIVE:
            raise StateError(f"there is no active skill named {name}")
        uow.skills.update(skill.id, skill.content, RETIRED, at)
        uow.journal.append(
            at=at,
            actor="owner",
            action="skill.retired",
            entity="skill",
            entity_id=skill.id,
            data={"name": name},
        )
        uow.commit()


def active_skills(uow_factory: UnitOfWorkFactory) -> list[Skill]:
    with uow_factory.read() as uow:
        return uow.skills.all(ACTIVE)


def summary_line(skill: Skill) -> str:
    """The first meaningful line of a skill, for the chat prompt's skill index."""
    for line in skill.content.splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return text[:160]
    return ""
