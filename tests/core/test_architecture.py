"""The core and the backends stay free of Qt, so they run and test without a display."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "sandbox_app"
QT_MODULES = ("PySide6", "qasync", "shiboken6")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("layer", ["core", "backends"])
def test_layer_never_imports_qt(layer: str) -> None:
    files = sorted((PACKAGE / layer).rglob("*.py"))
    assert files, f"no modules found under {layer}"
    offenders = {
        str(f.relative_to(PACKAGE)): sorted(
            m for m in imported_modules(f) if m.startswith(QT_MODULES)
        )
        for f in files
    }
    assert {f: m for f, m in offenders.items() if m} == {}
