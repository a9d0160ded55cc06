"""The SQLite store: SQLAlchemy Core tables, Alembic migrations, the unit of work."""
