"""The package's import graph (every import, lazy ones included): no cycles, argparse only in cli/, layers point down."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "troubleshooter"
# Lower layers never import higher ones; packages on the same layer do not import each other.
LAYERS = {"": 0, "core": 0, "report": 1, "scan": 1, "logs": 1, "launch": 1, "live": 2, "run": 3, "distributed": 4,
          "tui": 5, "cli": 6, "__main__": 7}
# Known upward imports (lazy, inside functions), each named: the knowledge loader validates each feature's section
# with that feature's own schema (log signatures with the analyzer's matcher, symptom wordings, scanner patterns,
# live patterns), and
# the fact catalog collects every feature's fact declarations.
ALLOWED_UPWARD = {
    "troubleshooter.core.ruleset": {"troubleshooter.logs.signatures", "troubleshooter.logs.symptomwords",
                                    "troubleshooter.scan.patterns", "troubleshooter.live.rules"},
    "troubleshooter.core.rulecheck": {"troubleshooter.logs.signatures"},
    "troubleshooter.core.factcatalog": {"troubleshooter.distributed", "troubleshooter.live", "troubleshooter.logs",
                                        "troubleshooter.scan"},
}


def modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package modules ``name`` imports anywhere in its file (``from pkg import module`` names the module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        out |= {t for t in targets if t in known and t != name}
    return out


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def layer(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_no_import_cycles():
    edges = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in edges[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    assert cycles == []


def test_argparse_only_in_the_cli_layer():
    users = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if "argparse" in p.read_text(encoding="utf-8"))
    assert users and all(u.startswith("cli/") for u in users), users


def test_layers_point_down():
    wrong = []
    for name, targets in graph().items():
        for target in targets:
            if layer(name) != layer(target) and LAYERS[layer(target)] >= LAYERS[layer(name)] and layer(target) != "":
                if target not in ALLOWED_UPWARD.get(name, ()):
                    wrong.append(f"{name} -> {target}")
    assert wrong == []


def test_every_package_has_a_layer():
    assert {layer(name) for name in modules()} <= set(LAYERS)
