"""The layers keep their lines: core, backends and the application layer free of Qt,
dependencies pointing one way, no import cycle, no module holding two ideas' worth of code.

The layers, from the top: ui (the window) and the command line → application (Qt-free: how a
run is built) → backends → core. Every import of a module counts wherever it is written: at the
top, inside a function (a lazy import for start-up speed is still a dependency), under
``if TYPE_CHECKING:`` (a type the module names is one it depends on), and deferred by
``sandbox_app/lazy_import.py``: a ``lazy_import("module")`` call, and a ``"module:attribute"``
string naming one of the package's objects (the backend catalogue's kinds).
"""

from __future__ import annotations

import ast
import importlib.util
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "sandbox_app"
QT_MODULES = ("PySide6", "qasync", "shiboken6")
# The command line's modules: the sandbox_app/cli/ package, and by name wherever they live
# (cli.py, cli_io.py, eval_command.py, eval_outputs.py, run_options.py, terminal*.py).
CLI_NAMES = ("cli", "cli_io", "eval_command", "eval_outputs", "run_options")
CLI_PACKAGES = ("cli", "command_line")
LAYERS = ("ui", "application", "core", "backends")  # each a folder of the package


# ---- reading the package ------------------------------------------------------------------


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_modules(root: Path) -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its __init__.py)."""
    return {module_name(f, root): f for f in sorted(root.rglob("*.py"))}


def _absolute(node: ast.ImportFrom, path: Path, name: str) -> str:
    """The module a ``from … import`` names, a relative one made absolute against ``name``."""
    base = node.module or ""
    if not node.level:
        return base
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    anchor = here[: len(here) - (node.level - 1)]
    return ".".join([*anchor, *([base] if base else [])])


_DOTTED = re.compile(r"(sandbox_app(?:\.\w+)+):\w+")


def deferred(node: ast.AST) -> Iterator[str]:
    """The module a node imports later, by lazy_import.py's means: ``lazy_import("m")``, or
    a ``"sandbox_app.m:attribute"`` string (what ``resolve`` imports)."""
    if isinstance(node, ast.Call) and node.args:
        called = node.func.id if isinstance(node.func, ast.Name) else ""
        first = node.args[0]
        if called == "lazy_import" and isinstance(first, ast.Constant):
            yield str(first.value)
    elif isinstance(node, ast.Constant) and (found := _DOTTED.fullmatch(str(node.value))):
        yield found.group(1)


def imported_modules(path: Path, name: str = "") -> set[str]:
    """Every module a module imports, anywhere in it (``from x import y``: x)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names.update(deferred(node))
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add(_absolute(node, path, name))
    return names


def internal_imports(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module → the package's modules it imports. ``from p import m`` is an import of p.m
    when that is a module, else of p (the name comes from p's __init__). A package's
    __init__ running before its submodules is Python's order, not a dependency a module
    states: it is not counted."""
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets.update(m for m in deferred(node) if m in modules)
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names if a.name in modules)
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node, path, name)
                for alias in node.names:
                    if f"{base}.{alias.name}" in modules:
                        targets.add(f"{base}.{alias.name}")
                    elif base in modules:
                        targets.add(base)
        graph[name] = targets - {name}
    return graph


def layer_of(name: str) -> str:
    """ui, application, core, backends, cli, or "" (the package's own top: __main__, …)."""
    parts = name.split(".")[1:]
    if parts and parts[0] in LAYERS:
        return parts[0]
    if parts and (parts[0] in CLI_PACKAGES or parts[-1] in CLI_NAMES):
        return "cli"
    if parts and parts[-1].startswith("terminal"):
        return "cli"
    return ""


# ---- the rules ----------------------------------------------------------------------------

# What each layer never imports. ui → application → backends → core; the command line may use
# application, backends and core; nothing below reaches up.
FORBIDDEN = {
    "core": ("ui", "application", "backends", "cli"),
    "backends": ("ui", "application", "cli"),
    "application": ("ui", "cli"),
    "ui": ("cli",),  # the window and the terminal are two front ends, neither under the other
}
QT_FREE = ("core", "backends", "application")


def layer_offences(root: Path) -> dict[str, list[str]]:
    """Module → what it imports against FORBIDDEN (Qt too, for a Qt-free layer)."""
    modules = package_modules(root)
    graph = internal_imports(modules)
    offences: dict[str, list[str]] = {}
    for name, path in modules.items():
        layer = layer_of(name)
        bad = sorted(t for t in graph[name] if layer_of(t) in FORBIDDEN.get(layer, ()))
        if layer in QT_FREE:
            qt = (m for m in imported_modules(path, name) if m.split(".")[0] in QT_MODULES)
            bad += sorted({m.split(".")[0] for m in qt})
        if bad:
            offences[name] = bad
    return offences


# Inside a layer, its subpackages in one order, each importing only those before it (a
# package-level cycle is a layer that is only folders). A new subpackage takes its place here.
PACKAGE_ORDER = {
    "core": (
        "untrusted",
        "tools",
        "react_format",
        "scenarios",
        "running",
        "estimates",
        "results",
        "history",
        "otel",
        "comparing",
        "optimizing",
    ),
    # What a kind is, then how bytes travel, then the kinds (the OpenAI-compatible one first:
    # others reuse its client), then what is not a model; the registry, a module at the
    # layer's top, sits above them all.
    "backends": (
        "catalogue",
        "transport",
        "chat_completions",
        "messages_api",
        "gemini_api",
        "ollama_api",
        "responses_api",
        "offline",
        "local_servers",
        "mcp_client",
    ),
    # What every part of the window shares (rules, the frame clock, the workspace's signal),
    # then the trace a pane draws, the tools a run calls, the grades a run is given, the lane
    # that runs it; what a test set's runs add up to, the comparison of lanes, their history,
    # the prompt versions and improving them, telemetry; the window that builds it all on top.
    "ui": (
        "common",
        "trace",
        "tools",
        "grading",
        "lane",
        "results",
        "compare",
        "history",
        "versions",
        "optimizing",
        "telemetry",
        "window",
    ),
}


def order_offences(root: Path, layer: str, order: tuple[str, ...]) -> list[str]:
    """Each import from a subpackage of ``layer`` to one after it in ``order``, or from or to
    a subpackage ``order`` does not place: "importer → imported". The layer's own top-level
    modules (backends/registry.py) stand above its subpackages: they may import any of them,
    none of them imports one."""
    graph = internal_imports(package_modules(root))
    offences: list[str] = []
    for name, targets in graph.items():
        here = name.split(".")
        if len(here) < 3 or here[1] != layer or not (root / layer / here[2]).is_dir():
            continue
        for target in sorted(targets):
            there = target.split(".")
            if len(there) < 3 or there[1] != layer or there[2] == here[2]:
                continue
            placed = here[2] in order and there[2] in order
            if not placed or order.index(there[2]) > order.index(here[2]):
                offences.append(f"{name} → {target}")
    return offences


def import_cycles(root: Path) -> list[str]:
    """Each group of modules importing one another, as one cycle through it: "a → b → a"."""
    graph = internal_imports(package_modules(root))
    cycles: list[str] = []
    for group in _strongly_connected(graph):
        left = set(group) if len(group) > 1 else set()
        while left:  # the shortest cycle through each module not yet in one reported
            cycle = _shortest_cycle(min(left), set(group), graph)
            cycles.append(" → ".join(cycle))
            left -= set(cycle)
    return cycles


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (no recursion limit on a long import chain)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterable[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(iter(children), None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                groups.append(sorted(group))
    return groups


def _shortest_cycle(start: str, members: set[str], graph: dict[str, set[str]]) -> list[str]:
    """The shortest cycle from ``start`` back to it within its group (breadth first)."""
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if child not in came_from:
                    came_from[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"no cycle through {start}")  # in a group of two or more, never


# ---- the package ----------------------------------------------------------------------------


@pytest.mark.parametrize("layer", ["core", "backends", "application", "ui", "cli"])
def test_layer_exists(layer: str) -> None:
    # The rules below check folders by name: a renamed layer would pass them empty.
    assert sorted((PACKAGE / layer).rglob("*.py")), f"no modules found under {layer}"


def test_dependencies_point_one_way_and_lower_layers_never_import_qt() -> None:
    assert layer_offences(PACKAGE) == {}


def test_no_import_cycle_between_modules() -> None:
    assert import_cycles(PACKAGE) == []


@pytest.mark.parametrize("layer", sorted(PACKAGE_ORDER))
def test_subpackages_import_only_those_before_them(layer: str) -> None:
    order = PACKAGE_ORDER[layer]
    found = {p.name for p in (PACKAGE / layer).iterdir() if (p / "__init__.py").exists()}
    assert found == set(order)  # every subpackage placed, none listed that is gone
    assert order_offences(PACKAGE, layer, order) == []


def test_only_what_builds_the_window_imports_it() -> None:
    # Helpers (menus, recordings, presenter, exports) get the narrow parts they act on (the
    # panes, a status line), never the window: the window imports them, not the other way.
    graph = internal_imports(package_modules(PACKAGE))
    window = "sandbox_app.ui.window.main_window"
    assert window in graph  # moved or renamed, the rule below would hold for nothing
    importers = {name for name, targets in graph.items() if window in targets}
    assert importers <= {"sandbox_app.ui.window.app", "sandbox_app.ui.window.self_test"}


def test_no_folder_holds_more_than_twenty_modules() -> None:
    # A folder past 20 modules is a layer's worth of jobs: give them subpackages.
    sizes = {
        str(folder.relative_to(PACKAGE)): len(list(folder.glob("*.py")))
        for folder in [PACKAGE, *PACKAGE.rglob("*")]
        if folder.is_dir() and folder.name != "__pycache__"
    }
    assert {folder: n for folder, n in sizes.items() if n > 20} == {}


def test_no_module_holds_two_ideas_worth_of_code() -> None:
    # A module past ~350 lines has usually grown a second idea: split it by job.
    sizes = {
        str(f.relative_to(PACKAGE)): len(f.read_text(encoding="utf-8").splitlines())
        for f in PACKAGE.rglob("*.py")
    }
    assert {f: n for f, n in sizes.items() if n > 360} == {}


# ---- the rules themselves, on a package made for them ---------------------------------------


def _package(root: Path, files: dict[str, str]) -> Path:
    package = root / "sandbox_app"
    for relative, text in {"__init__.py": "", **files}.items():
        path = package / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return package


def test_a_cycle_is_found_however_its_imports_are_written(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "ui/__init__.py": "",
            "ui/menus.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from sandbox_app.ui.window import Window\n"
            ),
            "ui/window.py": "def build():\n    from sandbox_app.ui import menus\n",
            "ui/pane.py": "from . import stepper\n",
            "ui/stepper.py": "import sandbox_app.ui.pane\n",
            "ui/alone.py": "from sandbox_app.ui import menus\n",
        },
    )
    assert sorted(import_cycles(package)) == [
        "sandbox_app.ui.menus → sandbox_app.ui.window → sandbox_app.ui.menus",
        "sandbox_app.ui.pane → sandbox_app.ui.stepper → sandbox_app.ui.pane",
    ]


def test_every_import_deferred_by_lazy_import_names_a_module_that_exists() -> None:
    """A typo in a ``lazy_import("…")`` or a catalogue's ``"module:NAME"`` fails here, not at
    the first use of what it names (its attribute: the catalogue's own test resolves each)."""
    modules = package_modules(PACKAGE)
    named = {
        (name, target)
        for name, path in modules.items()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        for target in deferred(node)
    }
    assert len(named) >= 20  # asyncio's in each module that uses it, the catalogue's kinds
    missing = sorted(
        f"{name}: {target}"
        for name, target in named
        if target not in modules and importlib.util.find_spec(target) is None
    )
    assert missing == []


def test_an_import_deferred_by_lazy_import_is_still_an_import(tmp_path: Path) -> None:
    """A ``lazy_import("m")`` and a catalogue's ``"m:NAME"`` are dependencies like any other."""
    package = _package(
        tmp_path,
        {
            "core/__init__.py": "",
            "core/a.py": 'engine = lazy_import("sandbox_app.ui.b")\n',
            "ui/__init__.py": "",
            "ui/b.py": 'KINDS = ("sandbox_app.core.a:KIND",)\n',
        },
    )
    assert import_cycles(package) == ["sandbox_app.core.a → sandbox_app.ui.b → sandbox_app.core.a"]
    assert layer_offences(package) == {"sandbox_app.core.a": ["sandbox_app.ui.b"]}


def test_a_longer_cycle_is_reported_as_its_path(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "core/__init__.py": "",
            "core/a.py": "from sandbox_app.core.b import x\n",
            "core/b.py": "from sandbox_app.core import c\nx = 1\n",
            "core/c.py": "def f():\n    import sandbox_app.core.a\n",
        },
    )
    assert import_cycles(package) == [
        "sandbox_app.core.a → sandbox_app.core.b → sandbox_app.core.c → sandbox_app.core.a"
    ]


def test_a_name_from_a_package_init_is_an_import_of_the_init(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "core/__init__.py": "",
            "core/tools/__init__.py": "from sandbox_app.core.tools.mock import Mock\n",
            "core/tools/mock.py": "from sandbox_app.core.tools import helper\nMock = 1\n",
        },
    )
    assert import_cycles(package) == [
        "sandbox_app.core.tools → sandbox_app.core.tools.mock → sandbox_app.core.tools"
    ]


def test_the_application_layer_is_held_to_its_rules_once_it_exists(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "cli.py": "from sandbox_app.application.runs import build_run\n",
            "terminal_person.py": "from sandbox_app.application import runs\n",
            "ui/__init__.py": "",
            "ui/window.py": "from sandbox_app.application.runs import build_run\n",
            "application/__init__.py": "",
            "application/runs.py": (
                "from sandbox_app.core.engine import Engine\n"
                "from sandbox_app.backends.registry import make\n"
                "def f():\n    from PySide6.QtCore import QObject\n"
                "    from sandbox_app.ui import window\n"
                "    import sandbox_app.cli\n"
            ),
            "core/__init__.py": "",
            "core/engine.py": "def f():\n    from sandbox_app.application import runs\n",
            "backends/__init__.py": "",
            "backends/registry.py": "from sandbox_app.application.runs import build_run\n",
        },
    )
    assert layer_offences(package) == {
        "sandbox_app.application.runs": ["sandbox_app.cli", "sandbox_app.ui.window", "PySide6"],
        "sandbox_app.core.engine": ["sandbox_app.application.runs"],
        "sandbox_app.backends.registry": ["sandbox_app.application.runs"],
    }


def test_the_rules_hold_without_an_application_layer(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "cli.py": "from sandbox_app.backends.registry import make\n",
            "ui/__init__.py": "",
            "ui/window.py": "import PySide6.QtCore\nfrom sandbox_app.core.engine import Engine\n",
            "core/__init__.py": "",
            "core/engine.py": "from typing import TYPE_CHECKING\n",
            "backends/__init__.py": "",
            "backends/registry.py": "from sandbox_app.core import engine\n",
        },
    )
    assert layer_offences(package) == {}
    assert import_cycles(package) == []


def test_the_command_line_is_known_by_its_modules_names_wherever_they_live() -> None:
    for name in (
        "sandbox_app.cli",
        "sandbox_app.cli_io",
        "sandbox_app.eval_command",
        "sandbox_app.eval_outputs",
        "sandbox_app.run_options",
        "sandbox_app.terminal",
        "sandbox_app.terminal_person",
        "sandbox_app.cli.terminal",
        "sandbox_app.command_line.main",
    ):
        assert layer_of(name) == "cli", name
    assert layer_of("sandbox_app.core.records") == "core"
    assert layer_of("sandbox_app.application.runs") == "application"
    assert layer_of("sandbox_app.__main__") == ""


def test_an_import_against_the_package_order_is_found(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "core/__init__.py": "",
            "core/low/__init__.py": "",
            "core/low/a.py": "def f():\n    from sandbox_app.core.high import b\n",
            "core/high/__init__.py": "",
            "core/high/b.py": "from sandbox_app.core.low.a import f\n",
            "core/loose/__init__.py": "",
            "core/top.py": "from sandbox_app.core.high import b\n",
            "core/high/c.py": "from sandbox_app.core import top\n",
        },
    )
    assert order_offences(package, "core", ("low", "high")) == [
        "sandbox_app.core.high.c → sandbox_app.core.top",  # a top-level module: above them all
        "sandbox_app.core.low.a → sandbox_app.core.high.b",
    ]
    assert order_offences(package, "core", ("high", "low")) == [
        "sandbox_app.core.high.b → sandbox_app.core.low.a",
        "sandbox_app.core.high.c → sandbox_app.core.top",
    ]
