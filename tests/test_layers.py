"""The package's layers point one way (docs/architecture.md, "Layers"): every import of every module, at module
level or inside a function, may point only down the layer order or within its own package, and no two
packages import each other. A new import that breaks the order fails here, naming the file and line."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "spmi_dbg"

# Lowest first. Units on one line are peers: neither may import the other. A unit is a top-level module
# (errors.py) or a sub-package (mch/); `sample` sits beside mch, above it.
LAYERS: list[tuple[str, ...]] = [
    ("__init__",),  # the version
    ("exits",),  # exit statuses, defined once
    ("errors",),  # one-line errors (and printable text for them)
    ("paths", "tempfiles", "elf", "replay", "shell", "stdbuf", "failures", "usage"),  # base: native binaries,
    # run-named temp files, ELF, command lines, sh quoting, the replays' line-buffered stdout, superpmi's failure
    # lines, the command line's parser kind and argument types
    ("atomic", "outdir", "debugfiles"),  # outputs checked, written aside and renamed; separate debug files
    ("mch",),
    ("sample",),
    ("analysis",),
    ("report",),
    ("commands",),
    ("gdb", "lldb"),
    ("driver",),
    ("repro",),
    ("triage",),
    ("cli",),
    ("launcher", "__main__"),  # the console script (`mch verify` execs the native verifier, the rest goes to
    # cli) and python -m spmi_dbg
]
RANK = {unit: i for i, units in enumerate(LAYERS) for unit in units}


@dataclass(frozen=True)
class Import:
    source: str  # the importing module, dotted
    target: str  # the imported module, dotted
    file: Path
    line: int
    in_function: bool


def unit_of(module: str) -> str:
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


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
            nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            targets: list[str] = []
            if isinstance(child, ast.Import):
                targets = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[:len(base) - (child.level - 1)]
                    mod = ".".join(base + ([child.module] if child.module else []))
                else:
                    mod = child.module or ""
                # `from spmi_dbg import x` may name a sub-package or module x: count each name as its own target
                targets = [f"{mod}.{a.name}" for a in child.names] if mod == "spmi_dbg" else [mod]
            for t in targets:
                if t == "spmi_dbg" or t.startswith("spmi_dbg."):
                    found.append(Import(source, t, path, child.lineno, in_function))
            visit(child, nested)

    visit(ast.parse(path.read_text(), str(path)), False)
    return found


def all_imports() -> list[Import]:
    return [i for p in sorted(PACKAGE.rglob("*.py")) if "_native" not in p.parts for i in imports_of(p)]


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
            bad.append(f"{where}: {imp.source} -> {imp.target}: {src if src not in RANK else dst} has no layer "
                       "(add it to LAYERS and docs/architecture.md)")
        elif RANK[dst] >= RANK[src]:
            rel = "a peer" if RANK[dst] == RANK[src] else "a higher layer"
            bad.append(f"{where}: {imp.source} imports {imp.target} ({kind}): {dst} is {rel} of {src}")
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
    cycles = sorted(f"{a} <-> {b}" for a, targets in edges.items() for b in targets if a in edges.get(b, set()))
    assert cycles == []


def test_the_check_catches_an_upward_import() -> None:
    """The rule is not vacuous: an analysis module importing the report layer from inside a function, a report
    module importing repro at module level, and gdb importing its peer lldb are all named."""
    fake = [Import("spmi_dbg.analysis.x", "spmi_dbg.report.markdown", PACKAGE / "analysis" / "x.py", 2, True),
            Import("spmi_dbg.report.y", "spmi_dbg.repro.pipeline", PACKAGE / "report" / "y.py", 1, False),
            Import("spmi_dbg.gdb.z", "spmi_dbg.lldb.view", PACKAGE / "gdb" / "z.py", 3, False)]
    found = violations(fake)
    assert len(found) == 3
    assert "inside a function" in found[0] and "higher layer" in found[0]
    assert "at module level" in found[1]
    assert "a peer" in found[2]


@pytest.mark.parametrize("text, target", [
    ("from spmi_dbg import __version__\n", "spmi_dbg.__version__"),
    ("from spmi_dbg import paths\n", "spmi_dbg.paths"),
    ("from . import frames\n", "spmi_dbg.analysis"),
    ("from .frames import fold\n", "spmi_dbg.analysis.frames"),
    ("def f():\n    import spmi_dbg.mch.collection\n", "spmi_dbg.mch.collection"),
])
def test_import_forms_are_resolved(tmp_path: Path, text: str, target: str) -> None:
    where = tmp_path / "probe.py"
    where.write_text(text)
    assert [i.target for i in imports_of(where, "spmi_dbg.analysis.probe")] == [target]

