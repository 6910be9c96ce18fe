"""Triage, crash storms said at once (issue 27 item 2): when most of the method contexts replayed so
far crash in one bucket, the setup is the likely story, and an engineer wants it in seconds, not
after the last crash is diagnosed. Read from the partitions' journals while the triage runs, the
line is said once, with the bucket's cause when its diagnosis established one
(spmi_dbg.analysis.causes), else its signature:

`systematic: 94% of the 300 method contexts replayed so far crash in one bucket (102c4441a0):
checked-jit-on-release-collection: the collection was recorded with a Release JIT: ...`"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from spmi_dbg.triage.journal import CrashEntry, Journal, SegmentRecord

MIN_CRASHES = 10  # in one bucket, before a storm can be called
SHARE = 0.5  # of the method contexts accounted for so far


@dataclass
class StormWatch:
    min_crashes: int = MIN_CRASHES
    share: float = SHARE
    said: str | None = None  # the line, once said

    def check(self, accounted: int, journals: list[Journal]) -> str | None:
        """The line to say now (once), or None."""
        if self.said is not None:
            return None
        first_record: dict[str, Path | None] = {}
        for j in journals:
            for c in j.crashes:
                bucket = bucket_of(c)
                if bucket and bucket not in first_record and 0 < c.segment <= len(j.segments):
                    first_record[bucket] = j.segments[c.segment - 1].record
        found = storm_bucket(
            [c for j in journals for c in j.crashes], accounted, self.min_crashes, self.share
        )
        if found is None:
            # a partition that met the rule on its own (its sweep then diagnoses only a sample,
            # so the crashes in the bucket no longer grow with what it replays): its numbers then
            declared = [j.storm for j in journals if j.storm and j.storm.declared.accounted]
            if not declared:
                return None
            first = declared[0]
            found, accounted = (first.bucket, first.declared.crashes), first.declared.accounted
        bucket, count = found
        why = _why(first_record.get(bucket))
        self.said = (
            f"systematic: {100 * count / accounted:.0f}% of the {accounted} method contexts "
            f"replayed so far crash in one bucket ({bucket}): {why}"
        )
        return self.said


def bucket_of(crash: CrashEntry) -> str:
    """A journal crash's bucket ("" when none was established)."""
    return (crash.expectation.bucket if crash.expectation else None) or ""


def storm_bucket(
    crashes: list[CrashEntry],
    accounted: int,
    min_crashes: int = MIN_CRASHES,
    share: float = SHARE,
) -> tuple[str, int] | None:
    """The bucket holding a storm among journal crashes, with its count: at least `min_crashes` of
    them and `share` of the `accounted` method contexts; else None. The same rule for the line
    said (StormWatch, over every partition) and for a partition's own sweep (triage/sweep.py)."""
    buckets = Counter(b for b in map(bucket_of, crashes) if b)
    if not buckets:
        return None
    bucket, count = buckets.most_common(1)[0]
    if count < min_crashes or count < share * accounted:
        return None
    return bucket, count


def _why(record: Path | None) -> str:
    """The bucket's cause from its first crash's record (its diagnosis), else its signature."""
    d = None
    if record is not None:
        try:
            outcome = SegmentRecord.from_json(
                json.loads(record.read_text(encoding="utf-8"))
            ).outcome
            d = outcome.diagnosis if outcome is not None else None
        except (OSError, ValueError):
            d = None
    if d is not None and d.causes:
        c = d.causes[0]
        return f"{c.kind}: {c.advice}"
    signature = d.signature if d is not None else None
    return f"no cause established ({signature})" if signature else "no cause established"
