"""The imports run one way: protocol <- engine <- readers/tables <- trace <- widgets/cli.

The test reads every module's imports (at module level and inside functions; not those
under ``if TYPE_CHECKING:``), and fails on an import cycle or on an import of a higher
layer. One kind of upward import is allowed, by name: :class:`~mcp_notebook.trace.Trace`'s
convenience methods (``t.to_otlp()``, ``t.redact()``, ...) import their export module when
called (:data:`DELEGATIONS`); those edges are left out of the cycle search too.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Container
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "mcp_notebook"

#: layer of each module, by the longest matching name prefix (0 is the lowest)
LAYERS: dict[str, int] = {
    "mcp_notebook.protocol": 0,
    "mcp_notebook.engine": 1,
    "mcp_notebook.readers": 2,
    "mcp_notebook.fast": 2,  # the NDJSON/tap scanners and the column store
    "mcp_notebook.table": 2,
    "mcp_notebook.lazytext": 2,
    "mcp_notebook.info": 2,  # the frames' info column, made lazily from their text
    "mcp_notebook.textsources": 2,
    "mcp_notebook.bundled": 2,
    "mcp_notebook.capture": 2,  # the recorders write what the readers read (no pandas)
    "mcp_notebook.trace": 3,
    "mcp_notebook.peers": 3,
    "mcp_notebook.load": 3,
    "mcp_notebook.collection": 3,
    "mcp_notebook.compare": 3,
    "mcp_notebook.boundary": 3,
    "mcp_notebook.conversation": 3,  # the conversation rules read payloads through the trace
    "mcp_notebook.otlp": 3,
    "mcp_notebook.perfetto": 3,
    "mcp_notebook.export": 3,
    "mcp_notebook.har_out": 3,
    "mcp_notebook.redact": 3,
    "mcp_notebook.report_formats": 3,
    "mcp_notebook.fleet_dask": 3,
    "mcp_notebook.widgets": 4,
    "mcp_notebook.teach": 4,
    "mcp_notebook.notebook": 4,
    "mcp_notebook.cli": 4,
    "mcp_notebook._apidoc": 4,
    "mcp_notebook": 4,  # the package: its names load lazily, from every layer
}
LAYER_NAMES = ("protocol", "engine", "readers/tables", "trace", "widgets/cli")

#: Trace's methods that hand over to an export module (module -> modules it may call up to)
DELEGATIONS: dict[str, set[str]] = {
    "mcp_notebook.trace": {"mcp_notebook.boundary", "mcp_notebook.otlp",
                           "mcp_notebook.perfetto", "mcp_notebook.har_out",
                           "mcp_notebook.redact", "mcp_notebook.export"},
    # the fleet view of a collection, and a collection's Dask form
    "mcp_notebook.collection": {"mcp_notebook.widgets.fleet", "mcp_notebook.widgets.fleetrender",
                                "mcp_notebook.fleet_dask"},
}


def modules() -> dict[str, Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        parts = list(p.relative_to(PKG.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of the package that ``name`` imports at run time."""
    return {m for m in targets(name, path, known) if m in known and m != name}


def targets(name: str, path: Path, known: Container[str] = ()) -> set[str]:
    """Every module ``name`` imports at run time, of the package or not, there or not (a
    name imported from a module is the module, unless it is a module of ``known``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and "TYPE_CHECKING" in ast.unparse(node.test)
                   for sub in node.body for n in ast.walk(sub)}
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                full = f"{target}.{alias.name}"
                out.add(full if full in known else target)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def layer(name: str) -> int:
    best = max((p for p in LAYERS if name == p or name.startswith(p + ".")), key=len)
    return LAYERS[best]


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {m: imports(m, p, set(mods)) for m, p in mods.items()}


def upward(edges: dict[str, set[str]]) -> list[str]:
    bad = []
    for a, targets in sorted(edges.items()):
        for b in sorted(targets):
            # ``from mcp_notebook import __version__``: the package's names load lazily
            # (test_the_package_loads_nothing_eagerly), so importing it loads no layer
            if b == "mcp_notebook":
                continue
            if layer(b) > layer(a) and b not in DELEGATIONS.get(a, set()):
                bad.append(f"{a} ({LAYER_NAMES[layer(a)]}) imports {b} "
                           f"({LAYER_NAMES[layer(b)]})")
    return bad


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    edges = {a: {b for b in bs if b not in DELEGATIONS.get(a, set()) and b != "mcp_notebook"}
             for a, bs in edges.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_every_module_has_a_layer():
    assert all(layer(m) is not None for m in modules())


def test_no_import_cycles():
    assert cycles(graph()) == []


def test_no_upward_imports():
    assert upward(graph()) == []


def test_the_package_loads_nothing_eagerly():
    code = ("import sys, mcp_notebook\n"
            "print(sorted(m for m in sys.modules if m.startswith('mcp_notebook.')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, cwd=PKG.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


#: packages that went (issue 16: the aliases of ``core/`` re-exported protocol and engine)
GONE = ("mcp_notebook.core",)
#: where code that could import the package lives, besides the package itself
USERS = ("tests", "notebooks", "scripts", "benchmarks")


def gone_imports(paths: list[Path], root: Path = PKG.parent) -> list[str]:
    """``file: module`` for each import of a :data:`GONE` package in these files under
    ``root`` (relative imports resolved as in the package)."""
    found = []
    for path in paths:
        rel = path.relative_to(root)
        parts = list(rel.with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        try:
            mods = targets(name, path)
        except SyntaxError:
            continue  # not plain Python: nothing it imports runs
        found += [f"{rel.as_posix()}: {m}" for m in sorted(mods)
                  if any(m == g or m.startswith(g + ".") for g in GONE)]
    return found


def test_the_gone_packages_stay_gone():
    """No module of ``mcp_notebook.core`` comes back, and nothing imports one: not the
    package, the tests, the notebooks' sources, the scripts nor the benchmarks."""
    assert not [m for m in modules() for g in GONE if m == g or m.startswith(g + ".")]
    files = [p for d in ("mcp_notebook", *USERS) for p in sorted((PKG.parent / d).rglob("*.py"))]
    assert len(files) > 100
    assert gone_imports(files) == []


def test_a_gone_import_is_found(tmp_path: Path):
    """The check above can fail: an absolute and a relative import of ``core`` are found,
    the relative one inside a function too."""
    engine = tmp_path / "mcp_notebook" / "engine"
    engine.mkdir(parents=True)
    (engine / "a.py").write_text("from mcp_notebook.core import versions\n", encoding="utf-8")
    (engine / "b.py").write_text("def f():\n    from ..core import rules\n", encoding="utf-8")
    (engine / "c.py").write_text("from ..protocol import versions\n", encoding="utf-8")
    assert gone_imports(sorted(engine.glob("*.py")), root=tmp_path) == [
        "mcp_notebook/engine/a.py: mcp_notebook.core",
        "mcp_notebook/engine/b.py: mcp_notebook.core"]


def test_the_checks_find_what_they_look_for():
    """The graph test can fail: a cycle and an upward import are found."""
    edges = {"mcp_notebook.engine.a": {"mcp_notebook.engine.b"},
             "mcp_notebook.engine.b": {"mcp_notebook.engine.a", "mcp_notebook.trace"},
             "mcp_notebook.trace": set()}
    assert cycles(edges) == [["mcp_notebook.engine.a", "mcp_notebook.engine.b"]]
    assert upward(edges) == ["mcp_notebook.engine.b (engine) imports mcp_notebook.trace (trace)"]


@pytest.mark.parametrize("module", ["mcp_notebook.protocol.rules", "mcp_notebook.protocol.envelope",
                                    "mcp_notebook.protocol.versions", "mcp_notebook.protocol.vocab"])
def test_protocol_imports_no_pandas_nor_numpy(module: str):
    code = (f"import sys, {module}\n"
            "print(sorted(m for m in ('pandas', 'numpy') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, cwd=PKG.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_the_engine_imports_no_pandas():
    code = ("import sys, mcp_notebook.engine.checks, mcp_notebook.engine.pairing, "
            "mcp_notebook.engine.direction\n"
            "mcp_notebook.engine.checks.load_rule_modules()\n"
            "print('pandas' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, cwd=PKG.parent)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"
