"""Alembic environment: runs on the connection the store hands it."""

from alembic import context

from persona_desktop.adapters.store.tables import metadata

config = context.config
connection = config.attributes.get("connection")

if connection is None:  # `alembic` command line during development
    from sqlalchemy import create_engine

    engine = create_engine(config.get_main_option("sqlalchemy.url") or "sqlite://")
    with engine.connect() as conn:
        context.configure(connection=conn, target_metadata=metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
else:
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()
