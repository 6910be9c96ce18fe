"""Reports: report.json against its shipped schema, report.md in dotnet/runtime's bug template
rendered from report.json alone (`spmi-dbg report` gives the same), `--gh-issue`, `--redact` (no
home directory, user name or host name left in any file of the bundle), and bad bundles as one-line
errors. Real gdb, real processes."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from spmi_dbg.repro.result import BUNDLE_FILES

from .support.common import Collections, mc_bytes, seed_collection
from .support.natives import SEED_COMMAND
from .support.pipeline import report, repro, repro_args, validate


def spmi_report(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "spmi_dbg", "report", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
    )


def test_report_json_follows_its_schema(seed_bundle: tuple[Path, str]) -> None:
    bundle, _ = seed_bundle
    data = report(bundle)
    validate(data)
    assert data["schema"] == 5
    broken = json.loads(json.dumps(data))
    broken["issue"]["reproduction"]["steps"] = []
    with pytest.raises(jsonschema.ValidationError):  # the schema is not vacuous
        validate(broken)


@pytest.mark.unit
def test_known_bugs_the_pipeline_adds(seed_bundle: tuple[Path, str]) -> None:
    data = report(seed_bundle[0])
    ids = [b["id"] for b in data["known_bugs"]]
    assert ids == ["dotnet/runtime#91257", "dotnet/runtime#56506"]  # the crash was in a -p worker
    # not in the debugger
    assert "dotnet/runtime#56506" not in [b["id"] for b in data["diagnosis"]["known_bugs"]]


def test_markdown_and_text_rerender_from_the_data(seed_bundle: tuple[Path, str]) -> None:
    bundle, stdout = seed_bundle
    r = spmi_report(str(bundle), cwd=bundle.parent)
    assert r.returncode == 0, r.stderr
    assert r.stdout == (bundle / "report.md").read_text()
    t = spmi_report(str(bundle / "report.json"), "--format", "text", cwd=bundle.parent)
    assert t.stdout.splitlines() == stdout.splitlines()  # the summary the repro printed
    j = spmi_report(str(bundle), "--format", "json", cwd=bundle.parent)
    assert json.loads(j.stdout) == report(bundle)


def test_gh_issue_command(seed_bundle: tuple[Path, str]) -> None:
    bundle, _ = seed_bundle
    r = spmi_report(str(bundle), "--gh-issue", cwd=bundle.parent)
    assert r.returncode == 0, r.stderr
    argv = shlex.split(r.stdout)
    assert argv[:5] == ["gh", "issue", "create", "--repo", "dotnet/runtime"]
    assert argv[argv.index("--title") + 1] == report(bundle)["title"]
    assert Path(argv[argv.index("--body-file") + 1]) == bundle / "report.md"
    assert len((bundle / "report.md").read_text()) < 65536


def test_redact_leaves_no_home_user_or_host(cols: Collections, tmp_path: Path) -> None:
    host = socket.gethostname()
    home = tmp_path / "home" / "jdoe"
    work = home / host / "runs"  # the host name in a path too
    work.mkdir(parents=True)
    mch = work / "seed.mch"
    mch.write_bytes(seed_collection(cols).read_bytes())
    env = dict(os.environ, HOME=str(home), USER="jdoe", LOGNAME="jdoe", COLUMNS="200")
    r = repro(
        *repro_args(
            *SEED_COMMAND, str(mch), out="b", workers=2, verify_runs=1, options=("--redact",)
        ),
        cwd=work,
        env=env,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    bundle = work / "b"
    texts = [p for p in bundle.iterdir() if p.name not in ("repro.mch", "repro.mch.mct")]
    assert {p.name for p in texts} >= {
        "report.md",
        "report.json",
        "diagnosis.json",
        "debugger.log",
        "repro.sh",
        "replay.stdout",
        "replay.stderr",
    }
    # The user and host are names: a short host name ("vm") may be letters inside a random
    # temporary directory's suffix, which is not the host name and is not redacted.
    names = [
        re.compile(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])") for n in ("jdoe", host)
    ]
    for p in bundle.iterdir():
        content = p.read_bytes().decode(errors="replace")
        assert str(home) not in content, p.name
        for name in names:
            assert not name.search(content), (p.name, name.pattern)
    data = report(bundle)
    assert data["command"]["input"] == "$HOME/$HOSTNAME/runs/seed.mch"  # still readable
    # the record is never rewritten
    assert (bundle / "repro.mch").read_bytes() == mc_bytes(mch, 300)
    # repro.sh still runs: the home directory is "$HOME" in it.
    run = subprocess.run(
        [str(bundle / "repro.sh")], capture_output=True, cwd="/", env=env, timeout=60
    )
    assert run.returncode == -signal.SIGSEGV
    out = spmi_report(str(bundle), "--redact", "--gh-issue", cwd=work, env=env)
    body = Path(shlex.split(out.stdout)[-1])
    assert body.name == "report.redacted.md" and "jdoe" not in body.read_text()


def test_bad_bundles_are_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "report.json").write_text('{"schema": 5,\n "title": ')
    old = tmp_path / "old"
    old.mkdir()
    (old / "report.json").write_text('{"schema": 1}')
    cases = {
        "empty": "not a bundle: no report.json",
        "missing": "missing: not found",
        "bad": "report.json: line 2 column 11 (offset 24): not valid JSON",
        "old": "schema 1, expected 5",
    }
    for name, text in cases.items():
        r = spmi_report(str(tmp_path / name), cwd=tmp_path)
        assert r.returncode != 0 and r.stdout == ""
        lines = r.stderr.splitlines()
        assert len(lines) == 1 and text in lines[0] and "Traceback" not in r.stderr, (
            name,
            r.stderr,
        )


def test_a_report_of_another_form_is_a_one_line_error(
    seed_bundle: tuple[Path, str], tmp_path: Path
) -> None:
    """A hand-edited report.json: a diagnosis fact without its fields, or a section the renderers
    need taken out, is named in one line, never a traceback."""
    data = report(seed_bundle[0])
    cases = {
        "fact": ("jit", {"method": "X:Y"}, "diagnosis: Diagnosis.jit.frame: missing"),
        "section": ("issue", None, "report.json.issue: missing"),
    }
    for name, (key, value, text) in cases.items():
        edited = json.loads(json.dumps(data))
        if key == "jit":
            edited["diagnosis"]["jit"] = value
        else:
            del edited[key]
        bundle = tmp_path / name
        bundle.mkdir()
        (bundle / "report.json").write_text(json.dumps(edited))
        for fmt in ("md", "text"):
            r = spmi_report(str(bundle), "--format", fmt, cwd=tmp_path)
            assert r.returncode != 0 and r.stdout == "", (name, fmt, r.stdout)
            lines = r.stderr.splitlines()
            assert len(lines) == 1 and text in lines[0] and "Traceback" not in r.stderr, (
                name,
                fmt,
                r.stderr,
            )


# ------------------------------------------------------------------------------------------ paths
# in the reports spmi_dbg.tempfiles: spmi-<kind>-<host>-<pid>-*
TEMP_RUN_DIR = re.compile(r"(?:^|/)spmi-[a-z]+-[^/\s]+-\d+-[^/\s]+")


def strings(value: object) -> list[str]:
    """Every string in a JSON value (keys too)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def path_like(text: str) -> list[str]:
    """The words of a text that are file paths: absolute, or relative with a directory part and a
    file name with an extension (not `2/2`, `GNU/Linux`); URLs aside."""
    words = [w.rstrip(".:") for w in re.split(r"[\s`'\"(),;\[\]]+", text)]
    return [
        w
        for w in words
        if "/" in w
        and "://" not in w
        and re.fullmatch(r"[\w./@+~-]+", w)
        and ((w.startswith("/") and len(w) > 1) or re.search(r"/[^/]+\.\w+$", w))
    ]


@pytest.mark.unit
def test_every_path_names_the_bundle_or_the_inputs(seed_bundle: tuple[Path, str]) -> None:
    """report.json and report.md of a real bundle (found in a -p run, two JITs: the regression runs
    too) name no temporary directory of the run (gone once the bundle is in place); every path
    naming a bundle file exists, and so does every other path they name (the inputs, the binaries,
    their sources)."""
    bundle, _ = seed_bundle
    data = report(bundle)
    texts = [*strings(data), (bundle / "report.md").read_text()]
    assert not [t for t in texts if TEMP_RUN_DIR.search(t)], [
        t for t in texts if TEMP_RUN_DIR.search(t)
    ][:5]
    paths = {p for t in texts for p in path_like(t)}
    named_bundle = [
        p for p in paths if Path(p).name in BUNDLE_FILES or Path(p).parent.name == bundle.name
    ]
    # the regression runs' argv, the repro's path in the summary and phases
    assert named_bundle, paths
    for p in paths:
        # relative: to the run's directory
        where = Path(p) if p.startswith("/") else bundle.parent / p
        assert where.exists(), f"{p} (in report.json or report.md) does not exist"
    assert (bundle.parent / data["bundle"]).resolve() == bundle.resolve()
    for key in ("base_jit", "diff_jit"):
        argv = data["regression"][key]["argv"]
        assert Path(argv[-1]) == (bundle / "repro.mch").absolute(), argv
    assert (bundle / "diagnosis.json").is_file()
    assert not TEMP_RUN_DIR.search((bundle / "diagnosis.json").read_text())


@pytest.mark.unit
def test_regression_runs_are_labelled(seed_bundle: tuple[Path, str]) -> None:
    bundle = seed_bundle[0]
    md = (bundle / "report.md").read_text()
    runs = report(bundle)["regression"]["base_jit"]["runs"]
    assert len(runs) == 2  # --verify-runs 2: each JIT alone twice
    lines = [
        ln
        for ln in md.splitlines()
        if ln.startswith("- base JIT alone with its own settings (no JIT settings) (")
    ]
    assert len(lines) == 1 and lines[0].endswith(f": run 1: {runs[0]}; run 2: {runs[1]}"), lines


@pytest.mark.unit
def test_a_bug_about_the_reporting_is_said_as_such(seed_bundle: tuple[Path, str]) -> None:
    """#56506 is about how -p reported the crash (known_bugs.toml: about = "reporting"): 'also: -p
    hid the crash', never a second known bug of the crash."""
    bundle, stdout = seed_bundle
    data = report(bundle)
    about = {b["id"]: b["about"] for b in data["known_bugs"]}
    assert about == {"dotnet/runtime#91257": "crash", "dotnet/runtime#56506": "reporting"}
    lines = stdout.splitlines()
    assert [ln for ln in lines if ln.startswith("known bug: ")] == [
        "known bug: dotnet/runtime#91257 https://github.com/dotnet/runtime/issues/91257, fix "
        "https://github.com/dotnet/runtime/pull/91783"
    ]
    assert (
        "also: -p hid the crash (dotnet/runtime#56506 "
        "https://github.com/dotnet/runtime/issues/56506)" in lines
    )
    desc = data["issue"]["description"]
    assert (
        "Known upstream: dotnet/runtime#91257" in desc
        and "Known upstream: dotnet/runtime#56506" not in desc
    )
    assert "Also: -p hid the crash (dotnet/runtime#56506" in desc


@pytest.mark.unit
def test_the_panel_keeps_file_names(seed_bundle: tuple[Path, str]) -> None:
    """The terminal's panel, narrower than the faulting module's path: its directory part is
    shortened, the file name kept (never cut with an ellipsis)."""
    from types import SimpleNamespace
    from typing import cast

    from rich.console import Console

    from spmi_dbg.report.parsed import ReportJson
    from spmi_dbg.repro.display import print_summary
    from spmi_dbg.repro.result import ReproResult

    data = report(seed_bundle[0])
    fm = data["diagnosis"]["faulting_module"]["path"]
    assert len(fm) > 40
    for width in (60, 80, 100):
        console = Console(width=width, record=True, force_terminal=True, color_system=None)
        result = cast(
            ReproResult,
            SimpleNamespace(
                bundle=SimpleNamespace(report=ReportJson.read(data)),
                bundle_error=None,
                outcome=data["outcome"],
            ),
        )
        print_summary(result, console, rich_panel=True)
        text = console.export_text()
        assert "…" not in text, text
        line = next(ln for ln in text.splitlines() if Path(fm).name in ln)
        # the name and its directory
        assert f"/{Path(fm).parent.name}/{Path(fm).name}" in line, text
        assert max(len(ln) for ln in text.splitlines()) <= width


def _as_schema_4(data: object) -> object:
    """A report.json as schema 4 wrote it: the typed envelope of schema 5 writes every field of a
    part, null where it has none; schema 4 left such fields out."""
    if isinstance(data, dict):
        return {k: _as_schema_4(v) for k, v in data.items() if v is not None or k == "schema"}
    if isinstance(data, list):
        return [_as_schema_4(v) for v in data]
    return data


def test_a_report_of_the_previous_schema_is_still_read(
    seed_bundle: tuple[Path, str], tmp_path: Path
) -> None:
    """`spmi-dbg report` on a schema-4 report.json: the fields it lacks take their defaults, and
    report.md reads as the current schema's does."""
    data = report(seed_bundle[0])
    old = dict(_as_schema_4(data), schema=4)  # type: ignore[arg-type]
    for name, content in (("now", data), ("old", old)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "report.json").write_text(json.dumps(content))
    now_md = spmi_report(str(tmp_path / "now"), "--format", "md", cwd=tmp_path)
    old_md = spmi_report(str(tmp_path / "old"), "--format", "md", cwd=tmp_path)
    assert old_md.returncode == 0 and old_md.stderr == "", old_md.stderr
    assert old_md.stdout == now_md.stdout and "### Actual behavior" in old_md.stdout
