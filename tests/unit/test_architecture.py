"""The package structure rules of docs/architecture.md, checked on the source.

- no module imports a private name (``_x``) from a module of another package;
- no import circles between modules (every import counts: top level, inside functions and
  under ``TYPE_CHECKING``, since each one is a dependency a reader has to follow);
- Streamlit is imported only under ``zsim/app/pages``;
- a module stays under :data:`MAX_LINES` (about 600 lines, more only where one job needs it).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "zsim"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()
TREES = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in MODULES.items()}


def _package(module: str) -> str:
    path = MODULES[module]
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _imports(module: str) -> list[tuple[str, str | None, int]]:
    """(imported module, imported name or None, line) for every zsim import in ``module``."""
    found: list[tuple[str, str | None, int]] = []
    for node in ast.walk(TREES[module]):
        if isinstance(node, ast.Import):
            found += [(a.name, None, node.lineno) for a in node.names if a.name.startswith("zsim")]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if not node.module.startswith("zsim"):
                continue
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                if sub in MODULES:
                    found.append((sub, None, node.lineno))
                else:
                    found.append((node.module, alias.name, node.lineno))
    return found


def test_no_private_name_crosses_a_package() -> None:
    crossings = []
    for module in MODULES:
        for target, name, line in _imports(module):
            if target not in MODULES:
                continue
            private_name = name is not None and name.startswith("_") and not name.startswith("__")
            private_module = any(p.startswith("_") for p in target.split(".")[1:])
            if (private_name or private_module) and _package(target) != _package(module):
                crossings.append(
                    f"{MODULES[module].relative_to(ROOT.parent)}:{line}: {target} {name or ''}"
                )
    assert crossings == []


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for module in MODULES:
        for target, _name, _line in _imports(module):
            if target in MODULES and target != module:
                graph[module].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circles() -> None:
    assert _cycles(_graph()) == []


def test_streamlit_only_under_app_pages() -> None:
    users = []
    for module in MODULES:
        for node in ast.walk(TREES[module]):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n.split(".")[0] == "streamlit" for n in names):
                users.append(module)
    assert [m for m in users if not m.startswith("zsim.app.pages")] == []


MAX_LINES = 700


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_stays_small(module: str) -> None:
    lines = MODULES[module].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{module}: {lines} lines; split it by job"


LAYERS: tuple[tuple[str, ...], ...] = (
    ("units", "errors", "result", "files", "version", "toml_text", "shipped_tables"),
    ("layout", "hardware", "table_cache"),
    ("zfs",),
    ("capacity", "baseline", "reliability"),
    ("scenario",),
    ("machine",),
    ("des",),
    ("analytic",),
    ("simulate",),
    ("resilver",),
    ("grow",),
    ("sweep",),
    ("calibrate",),
    ("validation",),
    ("commands", "cli", "__main__"),
    ("app",),
)
"""The rooms of ``zsim`` from the bottom up (docs/architecture.md): a room imports only rooms
of its own or a lower line; the ``zsim`` package itself (the public API) sits on top."""


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_rooms_import_only_their_own_or_lower_lines() -> None:
    level = {room: i for i, rooms in enumerate(LAYERS) for room in rooms}
    assert set(level) >= {_room(m) for m in MODULES if m != "zsim"}, "a room missing in LAYERS"
    upward = []
    for module in MODULES:
        if module == "zsim":
            continue
        for target, _name, line in _imports(module):
            if target in MODULES and target != "zsim":
                if level[_room(target)] > level[_room(module)]:
                    upward.append(f"{MODULES[module].relative_to(ROOT.parent)}:{line}: {target}")
            elif target == "zsim":
                upward.append(f"{MODULES[module].relative_to(ROOT.parent)}:{line}: zsim")
    assert upward == []
