"""The package's layers point one way (docs/architecture.md, "Layers"): every import of every
module, at module level or inside a function, may point only down the layer order or within its own
package, no two packages import each other, and within a package no modules import each other in a
circle. A new import that breaks the order fails here, naming the file and line."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit  # none of these tests starts a process

PACKAGE = Path(__file__).resolve().parent.parent / "spmi_dbg"

# Lowest first. Units on one line are peers: neither may import the other. A unit is a top-level
# module (errors.py) or a sub-package (mch/); `sample` sits beside mch, above it.
LAYERS: list[tuple[str, ...]] = [
    ("__init__",),  # the version
    ("exits",),  # exit statuses, defined once
    ("errors",),  # one-line errors (and printable text for them)
    # base: native binaries, run-named temp files, ELF, facts as JSON, command lines, sh quoting,
    # the replays' line-buffered stdout, superpmi's failure lines, the command line's parser kind
    # and argument types
    (
        "paths",
        "tempfiles",
        "elf",
        "jsonfacts",
        "superpmi_argv",
        "shell",
        "stdbuf",
        "failures",
        "usage",
    ),
    # outputs checked, written aside and renamed; separate debug files
    ("atomic", "outdir", "debugfiles"),
    ("mch",),
    # the method as the JIT saw it: ECMA-335's opcode table (the sample JIT's IL subset is drawn
    # from it), its IL with names, callees, flags (read from a collection)
    ("method",),
    ("sample",),
    ("analysis",),
    ("report",),
    ("commands",),
    ("ext", "ext.gdb", "ext.lldb"),
    ("driver",),
    ("repro",),
    ("triage",),
    # since when (a repro on builds in order) and is it fixed (on a new build)
    ("bisect",),
    ("recheck",),
    ("cli",),
    # the console script (`mch verify` execs the native verifier, the rest goes to cli) and
    # python -m spmi_dbg
    ("launcher", "__main__"),
]
RANK = {unit: i for i, units in enumerate(LAYERS) for unit in units}


@dataclass(frozen=True)
class Import:
    source: str  # the importing module, dotted
    target: str  # the imported module, dotted
    file: Path
    line: int
    in_function: bool
    names: tuple[str, ...] = ()  # `from target import a, b`: the names imported


def unit_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__"
    if parts[1] == "ext" and len(parts) > 2:  # the in-debugger extensions: each its own unit
        return f"ext.{parts[2]}"
    return parts[1]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, source: str | None = None) -> list[Import]:
    """`source`: the module's dotted name (default: from its path under the package)."""
    source = source or module_name(path)
    package = source if path.name == "__init__.py" else source.rpartition(".")[0]
    found: list[Import] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
            )
            targets: list[str] = []
            names: tuple[str, ...] = ()
            if isinstance(child, ast.Import):
                targets = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - (child.level - 1)]
                    mod = ".".join(base + ([child.module] if child.module else []))
                else:
                    mod = child.module or ""
                # `from spmi_dbg import x` may name a sub-package or module x: count each name as
                # its own target
                targets = [f"{mod}.{a.name}" for a in child.names] if mod == "spmi_dbg" else [mod]
                names = tuple(a.name for a in child.names)
            elif isinstance(child, ast.Call) and _import_module_of(child):
                # importlib.import_module("spmi_dbg.x"): an import too
                targets = [_import_module_of(child)]
            for t in targets:
                if t == "spmi_dbg" or t.startswith("spmi_dbg."):
                    found.append(Import(source, t, path, child.lineno, in_function, names))
            visit(child, nested)

    visit(ast.parse(path.read_text(), str(path)), False)
    return found


def _import_module_of(call: ast.Call) -> str:
    """The module named by `importlib.import_module("...")` (a constant name only), else ""."""
    f = call.func
    named = (isinstance(f, ast.Attribute) and f.attr == "import_module") or (
        isinstance(f, ast.Name) and f.id == "import_module"
    )
    arg = call.args[0] if call.args else None
    return (
        arg.value if named and isinstance(arg, ast.Constant) and isinstance(arg.value, str) else ""
    )


def all_imports() -> list[Import]:
    return [
        i for p in sorted(PACKAGE.rglob("*.py")) if "_native" not in p.parts for i in imports_of(p)
    ]


def _target_unit(imp: Import) -> str:
    unit = unit_of(imp.target)
    # `from spmi_dbg import __version__`: the package's own __init__, not a unit named __version__
    return "__init__" if unit not in RANK and unit.startswith("__") else unit


def violations(imports: list[Import]) -> list[str]:
    bad = []
    for imp in imports:
        src, dst = unit_of(imp.source), _target_unit(imp)
        if src == dst:
            continue
        where = f"{imp.file.relative_to(PACKAGE.parent)}:{imp.line}"
        kind = "inside a function" if imp.in_function else "at module level"
        if src not in RANK or dst not in RANK:
            bad.append(
                f"{where}: {imp.source} -> {imp.target}: {src if src not in RANK else dst} has no "
                "layer "
                "(add it to LAYERS and docs/architecture.md)"
            )
        elif RANK[dst] >= RANK[src]:
            rel = "a peer" if RANK[dst] == RANK[src] else "a higher layer"
            bad.append(
                f"{where}: {imp.source} imports {imp.target} ({kind}): {dst} is {rel} of {src}"
            )
    return bad


def test_every_unit_of_the_package_has_a_layer() -> None:
    units = {unit_of(module_name(p)) for p in PACKAGE.rglob("*.py") if "_native" not in p.parts}
    assert units - set(RANK) == set(), "modules or packages without a layer"


def test_imports_point_down_the_layer_order() -> None:
    imports = all_imports()
    assert len(imports) > 200  # the walk found the package's imports, also those inside functions
    assert any(i.in_function for i in imports)
    assert violations(imports) == []


def test_no_import_cycle_between_packages() -> None:
    edges: dict[str, set[str]] = {}
    for imp in all_imports():
        src, dst = unit_of(imp.source), _target_unit(imp)
        if src != dst:
            edges.setdefault(src, set()).add(dst)
    cycles = sorted(
        f"{a} <-> {b}" for a, targets in edges.items() for b in targets if a in edges.get(b, set())
    )
    assert cycles == []


# Circles between modules of one package that are known and not yet broken: each is the set of
# modules of one strongly connected component. It may only shrink; the engineer who breaks one
# removes it here. None is left (the repro circle through bundle.py and pipeline.py was untied by
# issue 21 item 1: repro/result.py).
KNOWN_CYCLES: list[frozenset[str]] = []


def modules() -> set[str]:
    return {module_name(p) for p in PACKAGE.rglob("*.py") if "_native" not in p.parts}


def module_edges(imports: list[Import], known: set[str]) -> dict[str, dict[str, Import]]:
    """module -> the modules of its own package it imports (the import that does it). A package's
    __init__ is the package's name; `from spmi_dbg.x import y` imports the module x.y when there is
    one, else x's __init__."""
    edges: dict[str, dict[str, Import]] = {}
    for imp in imports:
        # a name that is no module of the package is one of the package's __init__
        targets = {
            f"{imp.target}.{n}" if f"{imp.target}.{n}" in known else imp.target for n in imp.names
        }
        for t in sorted(targets) or [imp.target]:
            # `import spmi_dbg.mch.collection.x`: the module that has x
            while t not in known and "." in t:
                t = t.rpartition(".")[0]
            if t != imp.source and unit_of(t) == unit_of(imp.source):
                edges.setdefault(imp.source, {}).setdefault(t, imp)
    return edges


def cycles(edges: dict[str, dict[str, Import]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, {}))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, rest = work[-1]
            w = next(rest, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, {})))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.add(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def _described(component: frozenset[str], edges: dict[str, dict[str, Import]]) -> str:
    inner = [
        f"{a} -> {b} ({i.file.relative_to(PACKAGE.parent)}:{i.line}"
        f"{', inside a function' if i.in_function else ''})"
        for a in sorted(component)
        for b, i in sorted(edges.get(a, {}).items())
        if b in component
    ]
    return "circle: " + "; ".join(inner)


def test_no_import_cycle_within_a_package() -> None:
    known = modules()
    edges = module_edges(all_imports(), known)
    # the walk found the imports between a package's modules
    assert sum(len(t) for t in edges.values()) > 100
    found = cycles(edges)
    new = [_described(c, edges) for c in found if not any(c <= k for k in KNOWN_CYCLES)]
    assert new == [], (
        "modules of one package importing each other in a circle (module level or in a function)"
    )
    stale = [sorted(k) for k in KNOWN_CYCLES if not any(c <= k for c in found)]
    assert stale == [], "no longer a circle: remove it from KNOWN_CYCLES"


def test_the_cycle_check_catches_a_circle() -> None:
    """Through a function-level import and a package's __init__ (`from spmi_dbg.x import y` names
    module x.y)."""

    def imp(
        source: str, target: str, in_function: bool = False, names: tuple[str, ...] = ()
    ) -> Import:
        return Import(source, target, PACKAGE / "x.py", 1, in_function, names)

    known = {"spmi_dbg.x", "spmi_dbg.x.a", "spmi_dbg.x.b", "spmi_dbg.x.c", "spmi_dbg.y"}
    fake = [
        imp("spmi_dbg.x.a", "spmi_dbg.x.b"),
        imp("spmi_dbg.x.b", "spmi_dbg.x.a", in_function=True),
        imp("spmi_dbg.x", "spmi_dbg.x.c"),
        imp("spmi_dbg.x.c", "spmi_dbg.x", names=("c", "nothing_else")),
        imp("spmi_dbg.x.c", "spmi_dbg.x.a.f"),
        imp("spmi_dbg.y", "spmi_dbg.x.a"),
    ]
    edges = module_edges(fake, known)
    assert sorted(sorted(c) for c in cycles(edges)) == [
        ["spmi_dbg.x", "spmi_dbg.x.c"],
        ["spmi_dbg.x.a", "spmi_dbg.x.b"],
    ]
    assert "inside a function" in _described(frozenset({"spmi_dbg.x.a", "spmi_dbg.x.b"}), edges)


def test_the_check_catches_an_upward_import() -> None:
    """The rule is not vacuous: an analysis module importing the report layer from inside a
    function, a report module importing repro at module level, and gdb importing its peer lldb are
    all named."""
    fake = [
        Import(
            "spmi_dbg.analysis.x",
            "spmi_dbg.report.markdown",
            PACKAGE / "analysis" / "x.py",
            2,
            True,
        ),
        Import(
            "spmi_dbg.report.y", "spmi_dbg.repro.pipeline", PACKAGE / "report" / "y.py", 1, False
        ),
        Import(
            "spmi_dbg.ext.gdb.z",
            "spmi_dbg.ext.lldb.view",
            PACKAGE / "ext" / "gdb" / "z.py",
            3,
            False,
        ),
    ]
    found = violations(fake)
    assert len(found) == 3
    assert "inside a function" in found[0] and "higher layer" in found[0]
    assert "at module level" in found[1]
    assert "a peer" in found[2]


@pytest.mark.parametrize(
    "text, target",
    [
        ("from spmi_dbg import __version__\n", "spmi_dbg.__version__"),
        ("from spmi_dbg import paths\n", "spmi_dbg.paths"),
        ("from . import frames\n", "spmi_dbg.analysis"),
        ("from .frames import fold\n", "spmi_dbg.analysis.frames"),
        ("def f():\n    import spmi_dbg.mch.collection\n", "spmi_dbg.mch.collection"),
        (
            "import importlib\nimportlib.import_module('spmi_dbg.commands.spmi')\n",
            "spmi_dbg.commands.spmi",
        ),
    ],
)
def test_import_forms_are_resolved(tmp_path: Path, text: str, target: str) -> None:
    where = tmp_path / "probe.py"
    where.write_text(text)
    assert [i.target for i in imports_of(where, "spmi_dbg.analysis.probe")] == [target]


# ----------------------------------------------------------------------------------------
# function-level imports Imports belong at module level (issue 21 item 6), where a reader sees what
# a module needs and the layer and cycle checks above see it too. The exceptions, each a (module,
# what it imports, reason) entry below: not installed everywhere: the extra spmi-dbg[dask], lldb's
# own Python module
OPTIONAL = "optional dependency"
# costs a command line a user types > 50 ms (measured; each site's comment says how much)
STARTUP = "start-up"
# the console script imports only os, sys and paths before `mch verify`
LAUNCHER = "start-up of the launcher"
# in a module another engineer is changing; remove the entry with the move
TO_MOVE = "to move (issue 21 item 6)"

FUNCTION_IMPORTS_ALLOWED: list[tuple[str, str, str]] = [
    ("spmi_dbg.launcher", "spmi_dbg.cli", LAUNCHER),
    ("spmi_dbg.paths", "pathlib", LAUNCHER),
    # the full parser: `spmi-dbg mch ...` builds only the collection tools' (cli.build_parser)
    ("spmi_dbg.cli", "spmi_dbg.commands.tape_cli", STARTUP),
    ("spmi_dbg.cli", "spmi_dbg.driver.launch", STARTUP),
    ("spmi_dbg.cli", "spmi_dbg.report.cli", STARTUP),
    ("spmi_dbg.cli", "spmi_dbg.repro.cli", STARTUP),
    ("spmi_dbg.cli", "spmi_dbg.repro.demo", STARTUP),
    ("spmi_dbg.cli", "spmi_dbg.sample.commands", STARTUP),
    ("spmi_dbg.cli", "spmi_dbg.triage.cli", STARTUP),
    ("spmi_dbg.cli", "spmi_dbg.bisect.cli", STARTUP),
    ("spmi_dbg.cli", "spmi_dbg.recheck.cli", STARTUP),
    # what runs a bisect or a recheck, as for triage
    ("spmi_dbg.bisect.cli", "spmi_dbg.bisect.output", STARTUP),
    ("spmi_dbg.bisect.cli", "spmi_dbg.bisect.run", STARTUP),
    ("spmi_dbg.bisect.cli", "spmi_dbg.bisect.target", STARTUP),
    ("spmi_dbg.bisect.cli", "spmi_dbg.driver.select", STARTUP),
    ("spmi_dbg.recheck.cli", "spmi_dbg.driver.select", STARTUP),
    ("spmi_dbg.recheck.cli", "spmi_dbg.recheck.run", STARTUP),
    # what runs a triage, not what parses its command line (every command builds triage's parser)
    ("spmi_dbg.triage.cli", "spmi_dbg.triage.result", STARTUP),
    ("spmi_dbg.triage.cli", "spmi_dbg.triage.pipeline", STARTUP),
    ("spmi_dbg.triage.cli", "spmi_dbg.triage.display", STARTUP),
    ("spmi_dbg.triage.cli", "spmi_dbg.repro.options", STARTUP),
    ("spmi_dbg.mch.commands", "rich.progress", STARTUP),  # drawn only for long scans on a terminal
    ("spmi_dbg.mch.commands", "rich.console", STARTUP),
    # capstone (~70 ms) where the CLI's import of the analysis package would pay for it
    ("spmi_dbg.analysis", "capstone", STARTUP),  # preload(): when a debugger loads the extension
    ("spmi_dbg.analysis.instruction", "capstone", STARTUP),
    ("spmi_dbg.analysis.disasm", "capstone", STARTUP),  # 20 ms of every debugger's start
    # pyelftools (~40 ms of every gdb start) when an ELF is first read, not when elf is imported
    ("spmi_dbg.elf", "elftools.common.exceptions", STARTUP),
    ("spmi_dbg.elf", "elftools.elf.elffile", STARTUP),
    ("spmi_dbg.elf", "elftools.elf.sections", STARTUP),
    ("spmi_dbg.driver.lldb.sbapi", "lldb", OPTIONAL),  # on sys.path, or found through `lldb-16 -P`
    ("spmi_dbg.triage.cluster", "distributed", OPTIONAL),
    ("spmi_dbg.triage.cluster", "distributed.comm.addressing", OPTIONAL),
    ("spmi_dbg.triage.cluster", "distributed.security", OPTIONAL),
    ("spmi_dbg.triage.cli", "spmi_dbg.triage.cluster", STARTUP),
    ("spmi_dbg.driver.lldb.worker", "spmi_dbg.ext.lldb.view", OPTIONAL),  # view.py imports lldb
    # what runs a repro or the demo, as for triage (their comments say so)
    ("spmi_dbg.repro.cli", "spmi_dbg.repro.options", STARTUP),
    ("spmi_dbg.repro.cli", "rich.console", STARTUP),
    ("spmi_dbg.repro.cli", "spmi_dbg.repro.display", STARTUP),
    ("spmi_dbg.repro.cli", "spmi_dbg.repro.pipeline", STARTUP),
    ("spmi_dbg.repro.demo", "spmi_dbg.driver.select", STARTUP),
    ("spmi_dbg.repro.demo", "spmi_dbg.repro.command", STARTUP),
    ("spmi_dbg.repro.demo", "spmi_dbg.repro.cli", STARTUP),
    ("spmi_dbg.repro.demo", "spmi_dbg.repro.result", STARTUP),
    ("spmi_dbg.repro.demo", "spmi_dbg.sample.build", STARTUP),
]


@dataclass(frozen=True)
class FunctionImport:
    source: str  # the importing module, dotted
    imported: str  # `from m import x`: m, or m.x when that is a module of the package
    file: Path
    line: int


def function_imports(
    path: Path, known: set[str], source: str | None = None
) -> list[FunctionImport]:
    """Every import statement inside a function (or lambda) of the module at `path`, of any package.
    `known`: the package's modules (module_name)."""
    source = source or module_name(path)
    package = source if path.name == "__init__.py" else source.rpartition(".")[0]
    found: list[FunctionImport] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, ast.Import):
                found.extend(
                    FunctionImport(source, a.name, path, child.lineno) for a in child.names
                )
            elif in_function and isinstance(child, ast.ImportFrom):
                mod = child.module or ""
                if child.level:
                    base = package.split(".")
                    mod = ".".join(base[: len(base) - (child.level - 1)] + ([mod] if mod else []))
                names = {
                    f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod for a in child.names
                }
                found.extend(FunctionImport(source, n, path, child.lineno) for n in sorted(names))
            nested = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            visit(child, in_function or nested)

    visit(ast.parse(path.read_text(), str(path)), False)
    return found


def unlisted(found: list[FunctionImport], allowed: list[tuple[str, str, str]]) -> list[str]:
    listed = {(module, imported) for module, imported, _ in allowed}
    where = {
        f.file: f.file.relative_to(PACKAGE.parent)
        if f.file.is_relative_to(PACKAGE.parent)
        else f.file
        for f in found
    }
    return [
        f"{where[f.file]}:{f.line}: {f.source} imports {f.imported} inside a function: import "
        "it at module level (the exceptions: FUNCTION_IMPORTS_ALLOWED)"
        for f in found
        if (f.source, f.imported) not in listed
    ]


def test_no_import_inside_a_function_but_the_listed_exceptions() -> None:
    known = modules()
    found = [
        f
        for p in sorted(PACKAGE.rglob("*.py"))
        if "_native" not in p.parts
        for f in function_imports(p, known)
    ]
    assert unlisted(found, FUNCTION_IMPORTS_ALLOWED) == []
    used = {(f.source, f.imported) for f in found}
    stale = [entry for entry in FUNCTION_IMPORTS_ALLOWED if entry[:2] not in used]
    assert stale == [], "no longer in a function: remove it from FUNCTION_IMPORTS_ALLOWED"
    reasons = (OPTIONAL, STARTUP, LAUNCHER, TO_MOVE)
    assert [e for e in FUNCTION_IMPORTS_ALLOWED if e[2] not in reasons] == []


def test_the_check_catches_an_import_inside_a_function(tmp_path: Path) -> None:
    """A new function-level import is named, whatever its form (in a function, a method's nested
    function, a relative import); the exception listed for one module does not cover another; module
    level and TYPE_CHECKING imports are not function-level."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from typing import TYPE_CHECKING\nimport json\n"
        "if TYPE_CHECKING:\n    import shlex\n"
        "def f():\n    import capstone\n"
        "class C:\n    def m(self):\n        def inner():\n"
        "            from . import frames, nope\n"
        "x = 1\n"
        "def h():\n    from spmi_dbg.mch import commands\n"
    )
    known = {"spmi_dbg.analysis.frames", "spmi_dbg.mch.commands"}
    found = function_imports(probe, known, "spmi_dbg.analysis.probe")
    assert [(f.imported, f.line) for f in found] == [
        ("capstone", 6),
        ("spmi_dbg.analysis", 10),
        ("spmi_dbg.analysis.frames", 10),
        ("spmi_dbg.mch.commands", 13),
    ]
    allowed = [
        ("spmi_dbg.analysis.probe", "capstone", STARTUP),
        ("spmi_dbg.other", "spmi_dbg.mch.commands", STARTUP),
    ]
    bad = unlisted(found, allowed)
    assert len(bad) == 3
    assert bad[2].startswith(
        f"{probe}:13: spmi_dbg.analysis.probe imports spmi_dbg.mch.commands inside a function"
    )
    assert not any("capstone" in line for line in bad)


def test_the_readmes_architecture_table_matches_the_tree() -> None:
    """Every module and package at the top of spmi_dbg/ is named in the README's architecture table
    (its first column), in the order of LAYERS, and the table names nothing that is not there."""
    readme = (PACKAGE.parent / "README.md").read_text()
    table = readme.partition("| layer | what |\n|---|---|\n")[2].partition("\n\n")[0]
    named: list[str] = []
    for row in table.splitlines():
        first = row.split(" | ")[0]
        for word in first.split("`")[1::2]:
            top = word.split("/")[0].removesuffix(".py")
            if top not in named:
                named.append(top)
    tree = {
        p.stem if p.is_file() else p.name
        for p in PACKAGE.iterdir()
        if (p.suffix == ".py" or (p / "__init__.py").is_file()) and p.name != "_native"
    } - {"__init__"}
    assert sorted(set(named)) == sorted(tree)
    ranks = [RANK[n] for n in named]
    assert ranks == sorted(ranks), "the table's rows follow LAYERS, lowest first"


# (module, function) that still take more than MAX_PARAMETERS: the struct mirrors of mch/encode.py
# (one parameter a field of the recorded struct) and what is left to fold (issue 40 item 4)
MAX_PARAMETERS = 7
MANY_PARAMETERS_ALLOWED = {
    ("spmi_dbg/mch/encode.py", "compile_method_value"),  # a struct mirror
    ("spmi_dbg/mch/encode.py", "alloc_mem_value"),  # a struct mirror
}


def test_no_function_takes_more_than_seven_parameters() -> None:
    found = set()
    for p in sorted(PACKAGE.rglob("*.py")):
        if "_native" in p.parts:
            continue
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
                names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
                if names[:1] in (["self"], ["cls"]):
                    names = names[1:]
                if len(names) > MAX_PARAMETERS:
                    found.add((str(p.relative_to(PACKAGE.parent)), node.name))
    assert found - MANY_PARAMETERS_ALLOWED == set(), "pass one settings value instead"
    assert MANY_PARAMETERS_ALLOWED - found == set(), "folded: remove it from the list"
