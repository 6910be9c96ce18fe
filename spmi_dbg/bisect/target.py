"""Bisect and recheck, the repro a build replays: a repro bundle (its report.json: the repro's
command line `repro_argv`, its environment, and the failure it reproduces), or a bisect's own
target.json (written by `spmi-dbg bisect` for a command and `-c N`, so that recheck and
bisect-run.sh replay the same). Bad input: one line naming the file and what was expected."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from spmi_dbg.atomic import atomic_write_text
from spmi_dbg.bisect.verdict import Expected, Target
from spmi_dbg.errors import InputError
from spmi_dbg.repro.command import ReproCommand, from_argv
from spmi_dbg.repro.environment import EnvVar

TARGET_FILE = "target.json"
TARGET_SCHEMA = 1


def _env(items: list[dict[str, Any]]) -> tuple[EnvVar, ...]:
    return tuple(EnvVar(str(v["name"]), str(v["value"]), v.get("kind") or "named") for v in items)


def triage_bundles(directory: Path) -> list[tuple[str, Path]]:
    """A triage directory's repro bundles: (bucket, bundle) for each bucket that has one, found in
    the directory itself (triage.json names them as the triage's cwd saw them; the directory may
    have moved since)."""
    path = directory / "triage.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        buckets = [*data["buckets"], *data["failure_buckets"]]
        named = [(str(b["bucket"]), (b.get("repro") or {}).get("bundle")) for b in buckets]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as e:
        raise InputError(str(path), f"not a triage.json ({e})") from None
    out: list[tuple[str, Path]] = []
    for bucket, bundle in named:
        if not bundle:
            continue
        here = directory / Path(str(bundle)).name
        found = here if (here / "report.json").is_file() else Path(str(bundle))
        if (found / "report.json").is_file():
            out.append((bucket, found))
    if not out:
        raise InputError(str(path), "no bucket has a repro bundle")
    return out


def is_triage(path: Path) -> bool:
    try:
        return (path / "triage.json").is_file() and not (path / "report.json").is_file()
    except OSError:
        return False


def from_bundle(directory: Path, varies: int | None = None) -> Target:
    """A repro bundle's target: its repro.mch replayed with its repro command."""
    path = directory / "report.json"
    try:
        os.stat(directory)
        only_target = (directory / TARGET_FILE).is_file() and not path.is_file()
    except OSError as e:  # not there, too long, a loop, not searchable: one line
        raise InputError(str(directory), f"cannot open: {e.strerror}") from None
    if only_target:
        return read_target(directory / TARGET_FILE)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise InputError(str(path), f"not a repro bundle's report.json ({e})") from None
    if not isinstance(data, dict):
        raise InputError(str(path), "not a repro bundle's report.json (not a JSON object)")
    if data.get("outcome") not in ("verified", "not-verified") or not data.get("repro"):
        raise InputError(
            str(path),
            f"the bundle has no repro (its outcome is {data.get('outcome')!r}): nothing to replay",
        )
    expected = _expected(data, path)
    cmd = data.get("command") or {}
    argv = data.get("repro_argv")
    mch = directory / str(data["repro"]["file"])
    if argv:
        command = from_argv([*argv[:-1], str(mch)])
    else:  # a bundle of before repro_argv: the user's command on the bundle's collection
        command = from_argv(
            [str(cmd["program"]), *(cmd.get("options") or []), *cmd["jits"], str(mch)]
        )
    env = _env(cmd.get("repro_environment") or cmd.get("environment") or [])
    command = _with(command, env, cmd.get("emulator") or [])
    blamed = ((data.get("regression") or {}).get("blamed") or "").lower()
    if varies is None:
        varies = 1 if len(command.jits) > 1 and "diff" in blamed else 0
    if varies >= len(command.jits):
        raise InputError(str(path), "--which diff, but the repro runs one JIT")
    return Target(command, expected, varies)


def _with(command: ReproCommand, env: tuple[EnvVar, ...], emulator: list[str]) -> ReproCommand:
    return replace(command, env=env, emulator=tuple(emulator))


def _expected(data: dict[str, Any], path: Path) -> Expected:
    failure = ((data.get("target") or {}).get("failure")) or None
    if failure:
        return Expected(str(failure["kind"]), key=str(failure["key"]))
    exp = (data.get("verification") or {}).get("expected")
    if exp and exp.get("kind") in ("crash", "hang"):
        return Expected(exp["kind"], exp.get("signal"), exp.get("bucket"))
    raise InputError(
        str(path), "the bundle says no failure it reproduces (no verification.expected)"
    )


def write_target(path: Path, target: Target) -> None:
    cmd = target.command
    atomic_write_text(
        path,
        json.dumps(
            {
                "schema": TARGET_SCHEMA,
                "argv": cmd.argv(target.compile_list),
                "environment": [v.to_json() for v in cmd.env],
                "emulator": list(cmd.emulator),
                "expected": target.expected.to_json(),
                "varies": target.varies,
            },
            indent=2,
        )
        + "\n",
    )


def read_target(path: Path) -> Target:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("schema") != TARGET_SCHEMA:
            raise ValueError(f"schema {data.get('schema')!r}, expected {TARGET_SCHEMA}")
        command = from_argv(list(data["argv"]))
        command = _with(command, _env(data.get("environment") or []), data.get("emulator") or [])
        return Target(
            command,
            Expected.from_json(data["expected"]),
            int(data.get("varies") or 0),
            command.selection.spec() if command.selection is not None else None,
        )
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise InputError(str(path), f"not a bisect target ({e})") from None
