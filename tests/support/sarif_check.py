"""What a CI does with our SARIF (issue 38 item 1): the OASIS schema, the fields GitHub code
scanning documents as required (docs.github.com, "SARIF support for code scanning"), and
sarif-tools' converters (`sarif summary`, `sarif ls`, `sarif codeclimate`), run on every SARIF
file the tests wrote (tests/conftest.py, at the end of the session) and by the SARIF tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema

SCHEMA = Path(__file__).resolve().parents[1] / "schemas" / "sarif-schema-2.1.0.json"
LEVELS = ("none", "note", "warning", "error")
# sarif-tools reads no `kind`: a CI that converts our SARIF keeps the failures with this filter
# (the README's; check-line-number off: a result without a source line is filtered as any other)
FAILURES_FILTER = (
    "description: failures\nconfiguration:\n  check-line-number: false\ninclude:\n  - kind: fail\n"
)


def github_problems(data: dict[str, Any]) -> list[str]:
    """What code scanning would refuse or not show (empty: nothing)."""
    out = []
    if data.get("version") != "2.1.0" or not data.get("runs"):
        out.append("version 2.1.0 and runs are required")
    for r, run in enumerate(data.get("runs") or []):
        driver = (run.get("tool") or {}).get("driver") or {}
        if not driver.get("name"):
            out.append(f"run {r}: tool.driver.name is required")
        rules = {x.get("id"): x for x in driver.get("rules") or []}
        for rule_id, rule in rules.items():
            if not rule_id or not (rule.get("shortDescription") or {}).get("text"):
                out.append(f"run {r}: rule {rule_id!r}: id and shortDescription.text")
        if "results" not in run:
            out.append(f"run {r}: results is required (empty when nothing was found)")
        for i, res in enumerate(run.get("results") or []):
            out += [f"run {r} result {i}: {p}" for p in _result_problems(res, rules)]
    return out


def _result_problems(res: dict[str, Any], rules: dict[str, Any]) -> list[str]:
    out = []
    if res.get("ruleId") not in rules:
        out.append(f"ruleId {res.get('ruleId')!r} names no rule")
    if not (res.get("message") or {}).get("text"):
        out.append("message.text is required")
    if not res.get("partialFingerprints"):
        out.append("partialFingerprints: none (every run would open a new alert)")
    kind, level = res.get("kind", "fail"), res.get("level")
    if level not in LEVELS:
        out.append(f"level {level!r}")
    if kind != "fail" and level != "none":
        out.append(f"kind {kind!r} with level {level!r} (SARIF 3.27.10: none)")
    locations = res.get("locations") or []
    if not locations or not 1 <= len(locations) <= 10:
        out.append("locations: 1 to 10 (code scanning shows no result without one)")
    for loc in locations:
        physical = loc.get("physicalLocation") or {}
        uri = (physical.get("artifactLocation") or {}).get("uri")
        if not uri:
            out.append("a location without physicalLocation.artifactLocation.uri")
        region = physical.get("region")
        if region is not None and not isinstance(region.get("startLine"), int):
            out.append("a region without startLine")
    return out


def check_file(path: Path) -> dict[str, Any]:
    """One SARIF file against the schema and code scanning's requirements; its data."""
    data: dict[str, Any] = json.loads(path.read_text())
    schema = json.loads(SCHEMA.read_text())
    jsonschema.validate(data, schema, cls=jsonschema.Draft7Validator)
    problems = github_problems(data)
    assert not problems, f"{path}: " + "; ".join(problems)
    return data


def sarif_tools(*args: str) -> subprocess.CompletedProcess[str]:
    """sarif-tools' own command line (`sarif ...`), as a CI runs it."""
    tool = Path(sys.executable).with_name("sarif")
    r = subprocess.run([str(tool), *args], capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0 and "Traceback" not in r.stderr, (args, r.stdout, r.stderr)
    return r


def converted(paths: list[Path], work: Path) -> list[dict[str, Any]]:
    """`sarif summary`, `sarif ls` and `sarif codeclimate` (with the failures filter) on `paths`;
    the Code Climate issues, each checked to be one of the files' failing results."""
    work.mkdir(parents=True, exist_ok=True)
    names = [str(p) for p in paths]
    sarif_tools("summary", *names)
    listed = sarif_tools("ls", *names).stdout
    assert all(p.name in listed for p in paths), listed
    (work / "failures.yaml").write_text(FAILURES_FILTER)
    out = work / "codeclimate.json"
    sarif_tools(
        "codeclimate", "--filter", str(work / "failures.yaml"), "--output", str(out), *names
    )
    issues: list[dict[str, Any]] = json.loads(out.read_text())
    failing = [
        res
        for p in paths
        for run in json.loads(p.read_text())["runs"]
        for res in run["results"]
        if res.get("kind", "fail") == "fail"
    ]
    assert len(issues) == len(failing), (len(issues), len(failing))
    assert sorted(i["check_name"] for i in issues) == sorted(r["ruleId"] for r in failing)
    return issues
