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
from typing import Any

from spmi_dbg.triage.journal import Journal

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
        buckets: Counter[str] = Counter()
        first_record: dict[str, str] = {}
        for j in journals:
            for c in j.crashes:
                bucket = str((c.get("expectation") or {}).get("bucket") or "")
                if not bucket:
                    continue
                buckets[bucket] += 1
                seg = int(c.get("segment") or 0)
                if bucket not in first_record and 0 < seg <= len(j.segments):
                    first_record[bucket] = str(j.segments[seg - 1].get("record") or "")
        if not buckets:
            return None
        bucket, count = buckets.most_common(1)[0]
        if count < self.min_crashes or count < self.share * accounted:
            return None
        why = _why(first_record.get(bucket))
        self.said = (
            f"systematic: {100 * count / accounted:.0f}% of the {accounted} method contexts "
            f"replayed so far crash in one bucket ({bucket}): {why}"
        )
        return self.said


def _why(record: str | None) -> str:
    """The bucket's cause from its first crash's record (its diagnosis), else its signature."""
    d: dict[str, Any] = {}
    if record:
        try:
            data = json.loads(Path(record).read_text(encoding="utf-8"))
            d = ((data.get("outcome") or {}).get("diagnosis")) or {}
        except (OSError, ValueError, AttributeError):
            d = {}
    causes = d.get("causes") or []
    if causes:
        c = causes[0]
        return f"{c['kind']}: {c['advice']}"
    signature = d.get("signature")
    return f"no cause established ({signature})" if signature else "no cause established"
