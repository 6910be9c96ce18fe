"""Triage, a crash storm's sweep (issue 27 item 2). Once most of what a partition replayed crashed
in one bucket (storm.storm_bucket), diagnosing every further crash under the debugger costs a
debugger run each (0.24 s on the real 3.1.23 superpmi and Checked JIT, against 8 ms for the same
replay without a debugger) and tells nothing new. From then on the partition's rest is replayed
natively:

- **A sample is still diagnosed.** The rest is cut into SAMPLES slots of equal count; in each, the
  first replay is under the debugger (the usual step: the crash it meets is identified and diagnosed
  like any other), so the sample is spread over the partition, and over the collection with the
  partitions.
- **The others are replayed without a debugger**, each window with `-c` of its numbers: a replay
  that ends (any exit status) accounts for its window, with superpmi's failure lines; a replay of a
  single method context killed by a signal is that method context's crash, "not diagnosed: storm"
  (its number from the replay's `-c`, its signal from its wait status: what superpmi did, nothing
  assumed of its bucket). A window of several killed by a signal accounts nothing and is replayed
  again one by one. Windows start at one method context and double after every clean replay (up to
  MAX_WINDOW), so the sparse stretches of a storm cost few replays.
- A native replay that hangs goes back to the debugger (the usual step, for that window).

The state lives in the partition's journal (`storm`), so a resumed or re-run task goes on where the
last one stopped. `--diagnose-all` never sweeps."""

from __future__ import annotations

from dataclasses import dataclass, field

from spmi_dbg import jsonfacts
from spmi_dbg.jsonfacts import JsonFact
from spmi_dbg.mch.mclist import MCList

SAMPLES = 4  # slots of a partition's rest, each with one replay under the debugger
MAX_WINDOW = 256  # method contexts in one native replay


@dataclass(frozen=True)
class Declared(JsonFact):
    """What the partition had seen when it declared the storm."""

    crashes: int = 0  # in the storm's bucket
    accounted: int = 0  # method contexts


@dataclass
class SweepState(JsonFact):
    bucket: str  # the storm's bucket
    since: int  # the first number of the sweep
    slots: list[int]  # the first number of each slot
    sampled: list[int] = field(default_factory=list)  # slots whose debugger replay ran
    window: int = 1  # the next native replay's size
    debugger_until: int | None = None  # replay under the debugger up to here (a native hang)
    not_diagnosed: dict[str, list[int]] = field(default_factory=dict)  # signal -> numbers
    native_replays: int = 0
    native_seconds: float = field(default=0.0, metadata=jsonfacts.digits(3))
    declared: Declared = field(default_factory=Declared)

    @classmethod
    def start(cls, bucket: str, rest: MCList, declared: Declared | None = None) -> SweepState:
        numbers = rest.count()
        slots: list[int] = []
        for k in range(SAMPLES):
            at = k * numbers // SAMPLES
            first = rest.nth(at) if at < numbers else None
            if first is not None and first not in slots:
                slots.append(first)
        return cls(bucket, rest.first, slots, declared=declared or Declared())

    def slot(self, number: int) -> int:
        """The index of the slot `number` is in (-1: before the sweep)."""
        k = -1
        for i, first in enumerate(self.slots):
            if number >= first:
                k = i
        return k

    def next_slot_start(self, number: int) -> int | None:
        """The first number of the slot after `number`'s, if any."""
        k = self.slot(number)
        return self.slots[k + 1] if k + 1 < len(self.slots) else None

    def under_debugger(self, number: int) -> bool:
        """The replay from `number` runs under the debugger: its slot's sample is due, or a native
        hang sent it back."""
        if self.debugger_until is not None and number <= self.debugger_until:
            return True
        k = self.slot(number)
        return k >= 0 and k not in self.sampled

    def sampled_at(self, number: int) -> None:
        k = self.slot(number)
        if k >= 0 and k not in self.sampled:
            self.sampled.append(k)

    def native_window(self, rest: MCList) -> MCList:
        """The next native replay's numbers: `window` of the rest, ending before the next slot
        whose sample is still due."""
        end = rest.nth(min(self.window, rest.count()) - 1)
        due = [f for k, f in enumerate(self.slots) if k not in self.sampled and f > rest.first]
        if due and end >= due[0]:
            end = due[0] - 1
        return rest.between(rest.first, end)

    def crashed(self, number: int, signal: str) -> None:
        self.not_diagnosed.setdefault(signal, []).append(number)
