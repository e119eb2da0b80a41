"""The layers keep their lines: core and backends free of Qt, dependencies pointing one way."""

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


# Dependencies point one way: ui → core, backends → core; core imports neither.
FORBIDDEN = {
    "core": ("sandbox_app.ui", "sandbox_app.backends", "sandbox_app.cli"),
    "backends": ("sandbox_app.ui", "sandbox_app.cli"),
}


@pytest.mark.parametrize("layer", list(FORBIDDEN))
def test_dependencies_point_one_way(layer: str) -> None:
    offenders = {
        str(f.relative_to(PACKAGE)): sorted(
            m for m in imported_modules(f) if m.startswith(FORBIDDEN[layer])
        )
        for f in sorted((PACKAGE / layer).rglob("*.py"))
    }
    assert {f: m for f, m in offenders.items() if m} == {}


def test_no_module_holds_two_ideas_worth_of_code() -> None:
    # A module past ~350 lines has usually grown a second idea: split it by job.
    sizes = {
        str(f.relative_to(PACKAGE)): len(f.read_text(encoding="utf-8").splitlines())
        for f in PACKAGE.rglob("*.py")
    }
    assert {f: n for f, n in sizes.items() if n > 360} == {}
