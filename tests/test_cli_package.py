"""The CLI stays thin: small command modules, one way to open the store, no app import but one."""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[1] / "persona_desktop" / "cli"
MAX_LINES = 250


def test_no_cli_module_is_over_250_lines() -> None:
    modules = sorted(CLI.glob("*.py"))
    assert len(modules) > 5, "the cli package moved: point this test at it"
    too_long = {
        p.name: n for p in modules if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not too_long, f"split these CLI modules (at most {MAX_LINES} lines): {too_long}"


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def test_commands_open_the_store_through_runtime_and_call_services_not_units_of_work() -> None:
    for path in CLI.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        if path.name != "runtime.py":
            assert "open_runtime" not in text, f"{path.name}: open the store with runtime()"
        assert "uow.read()" not in text and "uow()" not in text, f"{path.name}: call a service"


def test_only_desktop_app_imports_the_app() -> None:
    for path in CLI.glob("*.py"):
        imported = _imports(path)
        if path.name != "desktop_app.py":
            assert "persona_desktop.app" not in imported, f"{path.name} imports the Qt app"
