"""Reports: report.json against its shipped schema, report.md in dotnet/runtime's bug template rendered from
report.json alone (`spmi-dbg report` gives the same), `--gh-issue`, `--redact` (no home directory, user name
or host name left in any file of the bundle), and bad bundles as one-line errors. Real gdb, real processes."""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from .support.common import Collections, mc_bytes, seed_collection
from .support.natives import BASE, DIFF, REPLAY, SEED_OPTIONS
from .support.pipeline import report, validate


def spmi_report(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "spmi_dbg", "report", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=60)


def test_report_json_follows_its_schema(seed_bundle: tuple[Path, str]) -> None:
    bundle, _ = seed_bundle
    data = report(bundle)
    validate(data)
    assert data["schema"] == 4
    broken = json.loads(json.dumps(data))
    broken["issue"]["reproduction"]["steps"] = []
    with pytest.raises(jsonschema.ValidationError):  # the schema is not vacuous
        validate(broken)


def test_known_bugs_the_pipeline_adds(seed_bundle: tuple[Path, str]) -> None:
    data = report(seed_bundle[0])
    ids = [b["id"] for b in data["known_bugs"]]
    assert ids == ["dotnet/runtime#91257", "dotnet/runtime#56506"]  # the crash was in a -p worker
    assert "dotnet/runtime#56506" not in [b["id"] for b in data["diagnosis"]["known_bugs"]]  # not in the debugger


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
    r = subprocess.run([sys.executable, "-m", "spmi_dbg", "repro", "--redact", "--workers", "2", "--verify-runs", "1",
                        "--out", "b", "--", REPLAY, *SEED_OPTIONS, BASE, DIFF, str(mch)], capture_output=True,
                       text=True, cwd=work, env=env, timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr
    bundle = work / "b"
    texts = [p for p in bundle.iterdir() if p.name not in ("repro.mch", "repro.mch.mct")]
    assert {p.name for p in texts} >= {"report.md", "report.json", "diagnosis.json", "debugger.log", "repro.sh",
                                        "replay.stdout", "replay.stderr"}
    for p in bundle.iterdir():
        content = p.read_bytes().decode(errors="replace")
        for secret in (str(home), "jdoe", host):
            assert secret not in content, (p.name, secret)
    data = report(bundle)
    assert data["command"]["input"] == "$HOME/$HOSTNAME/runs/seed.mch"  # still readable
    assert (bundle / "repro.mch").read_bytes() == mc_bytes(mch, 300)  # the record is never rewritten
    # repro.sh still runs: the home directory is "$HOME" in it.
    run = subprocess.run([str(bundle / "repro.sh")], capture_output=True, cwd="/", env=env, timeout=60)
    assert run.returncode == -signal.SIGSEGV
    out = spmi_report(str(bundle), "--redact", "--gh-issue", cwd=work, env=env)
    body = Path(shlex.split(out.stdout)[-1])
    assert body.name == "report.redacted.md" and "jdoe" not in body.read_text()


def test_bad_bundles_are_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "report.json").write_text('{"schema": 4,\n "title": ')
    old = tmp_path / "old"
    old.mkdir()
    (old / "report.json").write_text('{"schema": 1}')
    cases = {"empty": "not a bundle: no report.json", "missing": "missing: not found",
             "bad": "report.json: line 2 column 11 (offset 24): not valid JSON", "old": "schema 1, expected 4"}
    for name, text in cases.items():
        r = spmi_report(str(tmp_path / name), cwd=tmp_path)
        assert r.returncode != 0 and r.stdout == ""
        lines = r.stderr.splitlines()
        assert len(lines) == 1 and text in lines[0] and "Traceback" not in r.stderr, (name, r.stderr)
