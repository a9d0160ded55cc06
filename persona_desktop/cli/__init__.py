"""The headless entry point: every action of the app, scriptable (DESIGN.md, CLI contract).

One module per command family, each command a thin call of services on the store that
`runtime()` opens and closes; `parser` wires them to the command line, `main` is the
entry point and the error boundary.
"""

from persona_desktop.cli.main import main

__all__ = ["main"]
