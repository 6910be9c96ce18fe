"""Issue 28 on the sample JITs (the CI twin of tests/real/test_bisect_real.py): `spmi-dbg bisect`
over a store the test makes (both layouts, over a git history it creates) and `spmi-dbg recheck`.
The failure is the diff JIT's own assert (`diff-assert`: only libsamplejit_diff.so asserts), so the
builds are the base JIT (good) then the diff JIT (bad); a JIT that does not load is skipped; the
real superpmi's own refusals are classified from its transcripts in
tests/real/test_bisect_data.py."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from spmi_dbg.bisect.search import search
from spmi_dbg.bisect.store import Build, Flavor, Store
from spmi_dbg.bisect.verdict import Expected, Verdict
from spmi_dbg.repro.expect import Expectation

from .support.builds import History, history
from .support.common import Collections, run_cli
from .support.natives import BASE, DIFF, REPLAY
from .support.pipeline import report, repro, repro_args, validate, validate_sarif

AT = 7


@pytest.fixture
def mch(cols: Collections) -> Path:
    return cols.get("bisect-diff-assert", 20, inject=[("diff-assert", AT)])


@pytest.fixture
def not_a_jit(tmp_path: Path) -> Path:
    p = tmp_path / "broken" / "libclrjit.so"
    p.parent.mkdir()
    p.write_text("not a JIT\n")
    return p


def _named(tmp_path: Path, jit: str, where: str) -> str:
    """`jit` as the store names its JITs (libclrjit.so): the command's JIT file is the store's (a
    copy: a link would be resolved to its target's name)."""
    copy = tmp_path / where / "libclrjit.so"
    copy.parent.mkdir(exist_ok=True)
    if not copy.exists():
        shutil.copyfile(jit, copy)
    return str(copy)


def _bisect(mch: Path, tmp_path: Path, *args: str) -> tuple[int, dict, str]:
    r = run_cli(
        "bisect",
        "--build",
        "Checked",
        "--out",
        "o",
        *args,
        "--",
        REPLAY,
        "-c",
        str(AT),
        _named(tmp_path, DIFF, "cmd"),
        str(mch),
        cwd=tmp_path,
    )
    assert r.returncode in (0, 1), r.stdout + r.stderr
    return r.returncode, json.loads((tmp_path / "o" / "bisect.json").read_text()), r.stdout


@pytest.mark.parametrize("layout", ["basejit", "rolling"])
def test_bisect_finds_the_first_bad_build_in_a_store(
    mch: Path, tmp_path: Path, layout: str
) -> None:
    b, d = Path(BASE), Path(DIFF)
    h = history(tmp_path, [b, b, None, b, d, d, d], layout=layout, unrelated=(4,))
    rc, data, out = _bisect(
        mch, tmp_path, "--store", str(h.store), "--repo", str(h.repo),
        "--good", h.hashes[0], "--bad", h.hashes[-1]
    )  # fmt: skip
    assert rc == 0, out
    assert data["exact"] and data["first_bad"]["build"] == h.hashes[4]
    assert data["last_good"]["build"] == h.hashes[3]
    assert data["first_bad"]["pr"] == h.pr(4) and data["first_bad"]["verdict"] == "bad"
    assert data["range"] == []
    # the commits between: the first bad one only (the docs commit after it is not in the range)
    assert [c["commit"] for c in data["range_commits"]] == [h.hashes[4]]
    skipped = {s["build"]: s["reason"] for s in data["skipped"]}
    assert skipped.get(h.hashes[2], "no-build") == "no-build"
    assert data["expected"]["kind"] == "assert"
    # every replay counted: the bad build's, which found the failure the command named none of
    assert data["discovery_replays"] == 1
    assert data["replays"] == sum(t["replays"] for t in data["tried"]) + 1
    md = (tmp_path / "o" / "bisect.md").read_text()
    assert f"dotnet/runtime#{h.pr(4)}" in md
    assert f"first bad build: {h.hashes[4]}" in out


def test_skipped_builds_are_searched_around_and_said_as_a_range(
    mch: Path, tmp_path: Path, not_a_jit: Path
) -> None:
    b, d = Path(BASE), Path(DIFF)
    h = history(tmp_path, [b, b, not_a_jit, d, d])
    rc, data, _ = _bisect(
        mch, tmp_path, "--store", str(h.store), "--repo", str(h.repo),
        "--good", h.hashes[0], "--bad", h.hashes[-1]
    )  # fmt: skip
    assert rc == 1 and not data["exact"]
    assert data["last_good"]["build"] == h.hashes[1] and data["first_bad"]["build"] == h.hashes[3]
    assert data["range"] == [h.hashes[2]]
    (skip,) = data["skipped"]
    assert skip["reason"] == "jit-does-not-load" and "LoadLibrary" in skip["evidence"]


def test_endpoints_the_wrong_way_round_stop_with_one_line(mch: Path, tmp_path: Path) -> None:
    b, d = Path(BASE), Path(DIFF)
    h = history(tmp_path, [d, d, b, b])
    order = tmp_path / "order.txt"
    order.write_text("".join(f"{x}\n" for x in h.hashes))
    rc, data, out = _bisect(mch, tmp_path, "--store", str(h.store), "--order", str(order))
    assert rc == 1 and data["first_bad"] is None
    # a command and -c N: the failure is the bad build's, and it has none
    assert data["stopped"] == f"the bad build {h.hashes[-1]} does not fail: exit status 0 (Success)"
    assert f"no answer: the bad build {h.hashes[-1]} does not fail" in out


def test_k_ary_search_with_workers_finds_the_same_build(mch: Path, tmp_path: Path) -> None:
    b, d = Path(BASE), Path(DIFF)
    jits = [*[b] * 9, *[d] * 7]
    lst = tmp_path / "jits.txt"
    names = []
    for i, j in enumerate(jits):
        link = tmp_path / f"b{i:02}" / "libclrjit.so"
        link.parent.mkdir()
        link.symlink_to(j)
        names.append(str(link))
    lst.write_text("".join(f"{n}\n" for n in names))
    rc, data, _ = _bisect(mch, tmp_path, "--jits", str(lst), "--workers", "3", "--runs", "1")
    assert rc == 0 and data["first_bad"]["build"] == names[9]
    assert data["last_good"]["build"] == names[8]


def test_asm_diffs_which_jit_varies(mch: Path, tmp_path: Path) -> None:
    """-a: the builds replace the diff JIT (--which diff) and the diff JIT's assert is found; with
    --which base the diff JIT stays and every build fails: the good endpoint is not good."""
    b, d = Path(BASE), Path(DIFF)
    h = history(tmp_path, [b, b, d, d])
    common = ["--store", str(h.store), "--repo", str(h.repo), "--good", h.hashes[0]]
    for which, rc_want in (("diff", 0), ("base", 1)):
        out = tmp_path / which
        r = run_cli(
            "bisect", "--build", "Checked", "--out", str(out), *common, "--bad", h.hashes[-1],
            "--which", which, "--", REPLAY, "-a", "-c", str(AT),
            _named(tmp_path, BASE, "cmd-base"), _named(tmp_path, DIFF, "cmd-diff"), str(mch),
            cwd=tmp_path
        )  # fmt: skip
        assert r.returncode == rc_want, r.stdout + r.stderr
        data = json.loads((out / "bisect.json").read_text())
        assert data["varies"] == which
        if which == "diff":
            assert data["first_bad"]["build"] == h.hashes[2]
        else:
            assert data["stopped"].startswith(f"the good build {h.hashes[0]} is bad")


def test_recheck_says_fixed_still_failing_and_cannot_tell(
    mch: Path, tmp_path: Path, not_a_jit: Path
) -> None:
    r = repro(
        *repro_args(
            REPLAY, DIFF, str(mch), out="b", verify_runs=1, options=("--failure", "assert")
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    bundle = str(tmp_path / "b")
    fixed = run_cli("recheck", bundle, "--jit", BASE, "--out", "r1", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert f"{bundle}: fixed: replayed clean" in fixed.stdout
    data = json.loads((tmp_path / "r1" / "recheck.json").read_text())
    assert data["all_fixed"] and data["repros"][0]["status"] == "fixed"
    sarif = validate_sarif(tmp_path / "r1" / "recheck.sarif")
    original = validate_sarif(tmp_path / "b" / "report.sarif")["runs"][0]["results"][0]
    (passed,) = sarif["runs"][0]["results"]
    # a fix is a pass, not an issue; the alert it answers is the original's (its fingerprint)
    assert (passed["kind"], passed["level"]) == ("pass", "none")
    assert passed["partialFingerprints"] == original["partialFingerprints"]
    assert passed["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(
        "/b/repro.mch"
    )
    still = run_cli("recheck", bundle, "--jit", DIFF, "--out", "r2", cwd=tmp_path)
    assert still.returncode == 1 and f"{bundle}: still failing: superpmi said: " in still.stdout
    (failing,) = validate_sarif(tmp_path / "r2" / "recheck.sarif")["runs"][0]["results"]
    assert (failing["kind"], failing["level"]) == ("fail", original["level"])
    assert failing["ruleId"] == original["ruleId"]
    for jit, want in ((BASE, 0), (DIFF, 1), (str(not_a_jit), 125)):
        g = run_cli("recheck", "--git-bisect", bundle, "--jit", jit, cwd=tmp_path)
        assert g.returncode == want, (jit, g.stdout, g.stderr)


def test_bisect_run_script_drives_git_bisect(mch: Path, tmp_path: Path) -> None:
    """bisect-run.sh under `git bisect run`: each step "builds" (here: links the commit's JIT) and
    replays the target; git names the first bad commit."""
    b, d = Path(BASE), Path(DIFF)
    h = history(tmp_path, [b, b, b, d, d])
    rc, _, _ = _bisect(
        mch, tmp_path, "--store", str(h.store), "--repo", str(h.repo),
        "--good", h.hashes[0], "--bad", h.hashes[-1]
    )  # fmt: skip
    assert rc == 0
    jit = tmp_path / "built" / "libclrjit.so"
    jit.parent.mkdir()
    build = tmp_path / "build.sh"
    build.write_text(
        f'#!/bin/sh\nln -sf "$(ls {h.store}/$(git rev-parse HEAD).*/libclrjit.so)" {jit}\n'
    )
    build.chmod(0o755)
    env = {"SPMI_BISECT_BUILD": str(build), "SPMI_BISECT_JIT": str(jit)}
    script = tmp_path / "o" / "bisect-run.sh"
    git = ["git", "-C", str(h.repo)]
    subprocess.run([*git, "bisect", "start", h.hashes[-1], h.hashes[0]], check=True)
    r = subprocess.run(
        [*git, "bisect", "run", str(script)],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, **env, "PATH": _path()},
        timeout=600,
    )
    assert f"{h.hashes[3]} is the first bad commit" in r.stdout, r.stdout + r.stderr


def _path() -> str:
    """PATH without the venv (bisect-run.sh runs the spmi-dbg that wrote it, by its full path:
    issue 38 item 4)."""
    import os

    venv = str(Path(sys.executable).parent)
    return os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p != venv)


@pytest.mark.unit
def test_store_layouts_and_hash_prefixes(tmp_path: Path) -> None:
    jit = tmp_path / "libclrjit.so"
    jit.write_bytes(b"\x7fELF")
    full = "31234a86" + "0" * 32
    (tmp_path / "s" / f"{full}.linux.arm64.Checked").mkdir(parents=True)
    (tmp_path / "s" / f"{full}.linux.arm64.Checked" / "libclrjit.so").symlink_to(jit)
    (tmp_path / "s" / "abcdef12" / "Linux" / "arm64" / "Checked").mkdir(parents=True)
    (tmp_path / "s" / "abcdef12" / "Linux" / "arm64" / "Checked" / "libclrjit.so").symlink_to(jit)
    store = Store(tmp_path / "s", "libclrjit.so", Flavor("linux", "arm64", "Checked"))
    assert store.find("31234a8").jit is not None  # a prefix of 7
    assert store.find("31234a").jit is None  # too short to be sure
    assert store.find("abcdef12" + "9" * 32).jit is not None  # the store's short name
    assert store.find("abcdef12").layout == "rolling"
    assert store.find(full.upper()).jit is not None  # a hash is a hash in either case
    other = Store(tmp_path / "s", "libclrjit.so", Flavor("linux", "x64", "Checked"))
    assert other.find(full).jit is None
    # two builds a short hash could be: neither is guessed
    twin = "31234a87" + "0" * 32
    (tmp_path / "s" / f"{twin}.linux.arm64.Checked").mkdir()
    (tmp_path / "s" / f"{twin}.linux.arm64.Checked" / "libclrjit.so").symlink_to(jit)
    store = Store(tmp_path / "s", "libclrjit.so", Flavor("linux", "arm64", "Checked"))
    assert store.find("31234a8").jit is None and store.find(twin).jit is not None


@pytest.mark.unit
def test_expected_json_is_the_old_form_both_ways() -> None:
    """target.json's and bisect.json's `expected`, as the hand-written form wrote it: a crash by
    its signal and bucket, a failure line by its key; read back by jsonfacts."""
    forms = [
        (Expected("crash", "SIGSEGV", "0efd428583"), '{"kind": "crash", "signal": "SIGSEGV", '
         '"bucket": "0efd428583"}'),
        (Expected("hang", None, "72b5373fc7"), '{"kind": "hang", "signal": null, '
         '"bucket": "72b5373fc7"}'),
        (Expected("assert", key="assert: x (a.cpp:1)"), '{"kind": "assert", '
         '"key": "assert: x (a.cpp:1)"}'),
        (Expected(), '{"kind": null, "key": null}'),
    ]  # fmt: skip
    for expected, text in forms:
        assert json.dumps(expected.to_json()) == text
        assert Expected.from_json(json.loads(text)) == expected
    crash = Expected("crash", "SIGSEGV", "0efd428583").crash
    assert crash == Expectation("crash", "SIGSEGV", "0efd428583")
    assert Expected("assert", key="k").crash is None and Expected().crash is None
    assert Expected("hang").describe() == "a hang" and Expected("error", key="k").describe() == "k"
    with pytest.raises(ValueError, match="a failure of kind 'assert' without its key"):
        Expected.from_json({"kind": "assert"})


@pytest.mark.unit
def test_a_search_never_guesses_across_skips() -> None:
    verdicts = ["good", "skip", "skip", "bad", "bad"]
    builds = [Build(str(i), Path("/x")) for i in range(5)]
    out = search(builds, lambda b: Verdict(verdicts[int(b.name)], b.name), workers=1)  # type: ignore[arg-type]
    assert (out.last_good, out.first_bad, out.exact) == (0, 3, False)
    assert [b.name for b in out.between] == ["1", "2"]


def _bundle_and_store(mch: Path, tmp_path: Path) -> History:
    """The diff JIT's assert as a repro bundle `b` (its JIT named libclrjit_cmd.so), and a store of
    four builds, the third the first bad one."""
    r = repro(
        *repro_args(
            REPLAY,
            _named(tmp_path, DIFF, "cmd"),
            str(mch),
            out="b",
            verify_runs=1,
            options=("--failure", "assert"),
        ),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return history(tmp_path, [Path(BASE), Path(BASE), Path(DIFF), Path(DIFF)])


def test_a_bundle_s_report_gains_the_bisection_in_its_regression_section(
    mch: Path, tmp_path: Path
) -> None:
    h = _bundle_and_store(mch, tmp_path)
    b, d = Path(BASE), Path(DIFF)
    out = run_cli(
        "bisect", str(tmp_path / "b"), "--build", "Checked", "--out", "o", "--store",
        str(h.store), "--repo", str(h.repo), "--good", h.hashes[0], "--bad", h.hashes[-1],
        cwd=tmp_path
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    rep = report(tmp_path / "b")
    validate(rep)
    assert rep["bisect"]["exact"] and rep["bisect"]["first_bad"]["build"] == h.hashes[2]
    md = (tmp_path / "b" / "report.md").read_text()
    section = md[md.index("### Regression?") :]
    where = f"`{h.store}`, {h.hashes[0][:12]}..{h.hashes[-1][:12]}"
    assert section.startswith(
        f"### Regression?\n\nBy bisection (`spmi-dbg bisect`, 4 of 4 builds tried from {where}): "
        f"first bad build: {h.hashes[2]} `JIT change 2 (#{h.pr(2)})`"
    )
    assert f"- `{h.hashes[2][:12]}` JIT change 2 (#{h.pr(2)}) (dotnet/runtime#{h.pr(2)})" in section
    # Issue 38 item 4: a second bisect of the bundle on another store, whose answer is a range (a
    # build missing): kept beside the first, which the report still leads with (exact)
    other = history(tmp_path / "second", [b, None, d], jit_file="libclrjit_other.so")
    again = run_cli(
        "bisect", str(tmp_path / "b"), "--build", "Checked", "--out", "o2", "--store",
        str(other.store), "--repo", str(other.repo), "--good", other.hashes[0], "--bad",
        other.hashes[-1], "--jit-name", "libclrjit_other.so", cwd=tmp_path
    )  # fmt: skip
    assert again.returncode == 1, again.stdout + again.stderr
    rep = report(tmp_path / "b")
    validate(rep)
    assert len(rep["bisects"]) == 2 and rep["bisect"]["first_bad"]["build"] == h.hashes[2]
    assert [a["exact"] for a in rep["bisects"]] == [True, False]
    md = (tmp_path / "b" / "report.md").read_text()
    assert f"Other bisections of this bundle:\n\n- `{other.store}`, " in md
    # the same search again replaces its own answer, nothing else
    run_cli(
        "bisect", str(tmp_path / "b"), "--build", "Checked", "--out", "o3", "--store",
        str(h.store), "--repo", str(h.repo), "--good", h.hashes[0], "--bad", h.hashes[-1],
        cwd=tmp_path
    )  # fmt: skip
    assert len(report(tmp_path / "b")["bisects"]) == 2


def test_a_store_whose_jit_has_another_name(mch: Path, tmp_path: Path) -> None:
    """The bundle's JIT was cmd's `libclrjit_cmd.so`; the store's builds are `libclrjit.so`: a
    build's only .so is its JIT; --jit-name names it where a build has several; a name no build has
    stops the search in one line that says so."""
    h = _bundle_and_store(mch, tmp_path)
    common = ["--build", "Checked", "--store", str(h.store), "--repo", str(h.repo)]
    common += ["--good", h.hashes[0], "--bad", h.hashes[-1]]
    only = run_cli("bisect", str(tmp_path / "b"), "--out", "o1", *common, cwd=tmp_path)
    assert only.returncode == 0, only.stdout + only.stderr
    data = json.loads((tmp_path / "o1" / "bisect.json").read_text())
    assert data["first_bad"]["build"] == h.hashes[2]
    named = run_cli(
        "bisect", str(tmp_path / "b"), "--out", "o2", *common, "--jit-name", "libclrjit.so",
        cwd=tmp_path
    )  # fmt: skip
    assert named.returncode == 0, named.stdout + named.stderr
    wrong = run_cli(
        "bisect", str(tmp_path / "b"), "--out", "o3", *common, "--jit-name", "libnothere.so",
        cwd=tmp_path
    )  # fmt: skip
    assert wrong.returncode == 1
    stopped = json.loads((tmp_path / "o3" / "bisect.json").read_text())["stopped"]
    assert "none of the 4 builds has a JIT named libnothere.so" in stopped, stopped
    assert "0 replays" in wrong.stdout
    # recheck on the store, the same way
    fixed = run_cli(
        "recheck", str(tmp_path / "b"), "--store", str(h.store), "--build", h.hashes[0],
        "--out", "r", cwd=tmp_path
    )  # fmt: skip
    assert fixed.returncode == 0 and ": fixed: " in fixed.stdout, fixed.stdout + fixed.stderr
    none = run_cli(
        "recheck", str(tmp_path / "b"), "--store", str(h.store), "--build", h.hashes[0],
        "--jit-name", "libnothere.so", cwd=tmp_path
    )  # fmt: skip
    (line,) = [x for x in none.stderr.splitlines() if x.startswith("spmi-dbg recheck: error:")]
    assert "with a JIT named libnothere.so" in line and none.returncode != 0


def test_probes_run_on_the_dask_cluster_triage_uses(mch: Path, tmp_path: Path) -> None:
    """--scheduler: the builds are probed as the cluster's tasks (k-ary with --workers), and the
    answer is the same as here."""
    from .support.cluster import cluster

    b, d = Path(BASE), Path(DIFF)
    h = history(tmp_path, [b, b, b, b, d, d, d, d])
    with cluster(tmp_path) as c:
        rc, data, _ = _bisect(
            mch, tmp_path, "--store", str(h.store), "--repo", str(h.repo),
            "--good", h.hashes[0], "--bad", h.hashes[-1], "--scheduler", c.address,
            "--workers", "2"
        )  # fmt: skip
        workers = {w.proc.pid for w in c.workers}
        # the workers' own working directory gets nothing: the probes' files are under --out
        assert list(c.cwd.iterdir()) == []
    assert rc == 0 and data["first_bad"]["build"] == h.hashes[4]
    by = {int(t["by"].rsplit("pid ", 1)[1].rstrip(")")) for t in data["tried"]}
    assert by and by <= workers, (by, workers)
    assert data["last_good"]["build"] == h.hashes[3]


def test_a_build_that_differs_between_runs_is_flaky(mch: Path, tmp_path: Path) -> None:
    """--runs 2: a replay that crashes once and runs clean once is neither good nor bad (a program
    standing in for superpmi that alternates, so the rule is seen without a real race)."""
    from spmi_dbg.bisect.verdict import Target, probe
    from spmi_dbg.repro.command import ReproCommand

    count = tmp_path / "count"
    program = tmp_path / "alternating-superpmi"
    program.write_text(
        "#!/bin/sh\n"
        f"n=$(cat {count} 2>/dev/null || echo 0); echo $((n + 1)) > {count}\n"
        "[ $((n % 2)) -eq 0 ] && exit 0\n"
        "kill -SEGV $$\n"
    )
    program.chmod(0o755)
    command = ReproCommand(str(program), (BASE,), str(mch), (), 20)
    target = Target(command, Expected("crash", "SIGSEGV"))
    v = probe(target, jit=Path(DIFF), runs=2, timeout=30, workdir=tmp_path / "w", debugger=None)
    assert (v.kind, v.reason, v.replays) == ("skip", "flaky", 2)
    assert v.evidence == (
        "not the same on every run: replayed clean (exit status 0); killed by SIGSEGV"
    )


def test_a_triage_directory_is_bisected_bucket_by_bucket(mch: Path, tmp_path: Path) -> None:
    """Issue 38 item 4: `bisect TRIAGE_DIR`: each bucket's bundle bisected into
    OUT/bucket-<bucket>/, one table of the answers, each bundle's report annotated; the triage
    directory found where it is now (moved since the triage)."""
    t = run_cli(
        "triage", "--failure", "assert", "--verify-runs", "1", "--out", "t", "--", REPLAY,
        _named(tmp_path, DIFF, "cmd"), str(mch), cwd=tmp_path
    )  # fmt: skip
    assert t.returncode == 0, t.stdout + t.stderr
    (tmp_path / "t").rename(tmp_path / "moved triage")
    b, d = Path(BASE), Path(DIFF)
    h = history(tmp_path, [b, b, d, d])
    r = run_cli(
        "bisect", str(tmp_path / "moved triage"), "--build", "Checked", "--out", "o",
        "--store", str(h.store), "--repo", str(h.repo), "--good", h.hashes[0],
        "--bad", h.hashes[-1], cwd=tmp_path
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    data = json.loads((tmp_path / "moved triage" / "triage.json").read_text())
    (bucket,) = [b["bucket"] for b in data["failure_buckets"] if b["repro"]]
    one = json.loads((tmp_path / "o" / f"bucket-{bucket}" / "bisect.json").read_text())
    assert one["exact"] and one["first_bad"]["build"] == h.hashes[2]
    table = (tmp_path / "o" / "bisect.md").read_text()
    assert f"| `{bucket}` | first bad build: {h.hashes[2]}" in table and "| yes |" in table
    rep = report(tmp_path / "moved triage" / f"bucket-{bucket}")
    assert rep["bisect"]["first_bad"]["build"] == h.hashes[2]
