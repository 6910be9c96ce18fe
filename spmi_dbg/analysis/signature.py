"""The crash signature and its bucket: the one place that says when two stops are "the same crash"
(DESIGN decisions in docs/architecture.md, "Decisions"). A diagnosis gets its signature when it is
made; a hang's (our own interrupt, not the replay's signal) is rebuilt here; a finding with no
diagnosis is bucketed by its kind and signal. Repro's verification, triage's buckets and the bundle
names all use these."""

from __future__ import annotations

import dataclasses
import hashlib
import re

from spmi_dbg.analysis.facts import Diagnosis

SIGNATURE_FRAMES = 4
HANG_FRAMES = 4


def normalise(text: str) -> str:
    """Addresses and numbers out of a text that goes into a signature."""
    text = re.sub(r"0x[0-9a-fA-F]+", "0x?", text)
    return re.sub(r"\d+", "N", text)


def _key(signature_text: str) -> str:
    return hashlib.sha1(signature_text.encode()).hexdigest()[:10]


def signature(d: Diagnosis) -> tuple[str, str]:
    """(signature, bucket) of a stop: signal + near-null flag + top folded frames + null map +
    assert text; addresses, paths, numbers out. Only concrete (not inlined) frames count: gdb and
    lldb do not show the same inline frames of callers (lldb 16 drops some), so this is what both
    debuggers agree on. The same code built with different inlining (-O0 vs -O2) therefore gets
    different buckets."""
    parts = []
    if d.signal is not None:
        parts.append(d.signal.name + (" near-null" if d.signal.near_null else ""))
    parts.append(" <- ".join(d.signature_frames[:SIGNATURE_FRAMES]) or "no frames")
    if d.null_map is not None:
        parts.append(f"null {d.null_map.owner_type}::{d.null_map.member}")
    if d.assertion is not None:
        parts.append("assert " + normalise(str(d.assertion.expr)))
    text = " | ".join(parts)
    return text, _key(text)


def hang_signature(d: Diagnosis) -> tuple[str, str]:
    """(signature, bucket) of a hang: "hang | <concrete frames>" (the SIGINT of the interrupt is
    ours)."""
    frames = d.signature_frames or d.folded
    text = "hang | " + (" <- ".join(frames[:HANG_FRAMES]) or "no frames")
    return text, _key(text)


def mark_hang(d: Diagnosis) -> Diagnosis:
    """The diagnosis as a hang's: the interrupt's SIGINT is ours, not the replay's, so its signature
    and bucket say hang instead (a new fact: the one given is left as it was)."""
    signature, bucket = hang_signature(d)
    return dataclasses.replace(d, hang=True, signature=signature, bucket=bucket)


def bucket_of(d: Diagnosis | None, *, hang: bool = False) -> str | None:
    """The bucket of a diagnosed stop (a hang's rebuilt from its frames); None without a
    diagnosis."""
    if d is None:
        return None
    if hang:
        return hang_signature(d)[1]
    return d.bucket or None


def in_bucket(bucket: str | None) -> str:
    """`in bucket X`, or what stands for a stop with no bucket (never "bucket None")."""
    return f"in bucket {bucket}" if bucket else "with no bucket (the stop was not diagnosed)"


def bucket_key(bucket: str | None, kind: str, signal: str | None) -> str:
    """A finding's key for grouping and naming: its bucket, else `<kind>-<signal>` (a replay that
    died with no stop to diagnose)."""
    return bucket or f"{kind}-{signal or 'unknown'}"
