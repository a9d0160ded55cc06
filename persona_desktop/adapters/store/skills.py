"""The skills table and its repository: procedural Markdown notes, one row per name."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa

from persona_desktop.adapters.store.tables import UTCDateTime, inserted_id, metadata
from persona_desktop.ports import Skill

skills = sa.Table(
    "skills",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String, nullable=False, unique=True),
    sa.Column("content", sa.Text, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("updated_at", UTCDateTime, nullable=False),
)


def _skill(row: Any) -> Skill:
    return Skill(
        id=row.id,
        name=row.name,
        content=row.content,
        status=row.status,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


class SqlSkills:
    def __init__(self, conn: sa.Connection) -> None:
        self._conn = conn

    def get(self, skill_id: int) -> Skill | None:
        row = self._conn.execute(sa.select(skills).where(skills.c.id == skill_id)).first()
        return _skill(row) if row else None

    def by_name(self, name: str) -> Skill | None:
        row = self._conn.execute(sa.select(skills).where(skills.c.name == name)).first()
        return _skill(row) if row else None

    def all(self, status: str | None = None) -> list[Skill]:
        q = sa.select(skills).order_by(skills.c.name)
        if status is not None:
            q = q.where(skills.c.status == status)
        return [_skill(r) for r in self._conn.execute(q)]

    def add(self, name: str, content: str, at: datetime) -> int:
        result = self._conn.execute(
            skills.insert().values(name=name, content=content, status="active", created_at=at, updated_at=at)
        )
        return inserted_id(result)

    def update(self, skill_id: int, content: str, status: str, at: datetime) -> None:
        self._conn.execute(
            skills.update()
            .where(skills.c.id == skill_id)
            .values(content=content, status=status, updated_at=at)
        )

    def delete(self, skill_id: int) -> None:
        self._conn.execute(skills.delete().where(skills.c.id == skill_id))
