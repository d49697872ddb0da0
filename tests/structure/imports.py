"""The import graph of ``fabriccfg/``, read from the source with :mod:`ast` (nothing is imported).

Every ``import`` / ``from ... import`` counts wherever it sits (module level or inside a function: a late
import dodging a cycle is still a cycle), except the ones under ``if TYPE_CHECKING:``, which never run.
Importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` too, so those count as edges as well.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import fabriccfg

PKG = Path(fabriccfg.__file__).parent


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    late: bool
    """Inside a function (or class body), not at module level."""


def module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _resolve(name: str) -> str | None:
    """The deepest module of ``fabriccfg`` that ``name`` (a dotted path) names or lives in."""
    mods = modules()
    while name:
        if name in mods:
            return name
        name = name.rpartition(".")[0]
    return None


def _targets(node: ast.Import | ast.ImportFrom, here: str, is_pkg: bool) -> list[str]:
    names: list[str] = []
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:
            parts = here.split(".")
            keep = len(parts) - node.level + (1 if is_pkg else 0)
            base = ".".join(parts[:keep] + ([base] if base else []))
        names = [f"{base}.{a.name}" for a in node.names] + [base]
    out = []
    for n in names:
        if not n.startswith("fabriccfg"):
            continue
        mod = _resolve(n)
        if mod is None:
            continue
        # importing a.b.c runs the __init__ of every package on the way
        parts = mod.split(".")
        out += [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return out


@cache
def edges() -> tuple[Edge, ...]:
    found: set[Edge] = set()
    for name, path in modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        is_pkg = path.name == "__init__.py"

        def walk(node: ast.AST, late: bool, name: str = name, is_pkg: bool = is_pkg) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and _is_type_checking(child.test):
                    for sub in child.orelse:
                        walk(sub, late)
                    continue
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    for t in _targets(child, name, is_pkg):
                        if t != name and not name.startswith(t + "."):  # a package's own parents
                            found.add(Edge(name, t, child.lineno, late))
                    continue
                scoped = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
                inner = late or isinstance(child, scoped)
                walk(child, inner)

        walk(tree, False)
    return tuple(sorted(found, key=lambda e: (e.source, e.target, e.line)))


def graph() -> dict[str, set[str]]:
    g: dict[str, set[str]] = {m: set() for m in modules()}
    for e in edges():
        g[e.source].add(e.target)
    return g


def cycles() -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    g = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0

    def strong(v: str) -> None:
        nonlocal counter
        work = [(v, iter(sorted(g[v])))]
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g[w]))))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            strong(v)
    return sorted(out)
