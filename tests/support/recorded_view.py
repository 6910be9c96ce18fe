"""A recorded (in-memory) implementation of spmi_dbg.analysis.view, for unit tests of the
analysis."""

from __future__ import annotations

from dataclasses import dataclass, field

from spmi_dbg.analysis.view import Module, SignalInfo


@dataclass
class RValue:
    type_name: str
    value: int | None = None
    members: dict[str, RValue] = field(default_factory=dict)
    optimized_out: bool = False
    elements: list[RValue] = field(default_factory=list)
    enumerators: dict[int, str] = field(default_factory=dict)  # an enum type's: value -> name

    def as_int(self) -> int | None:
        return None if self.optimized_out else self.value

    def field(self, name: str) -> RValue | None:
        return self.members.get(name)

    def fields(self) -> list[tuple[str, RValue]]:
        return list(self.members.items())

    def element(self, index: int) -> RValue | None:
        return self.elements[index] if 0 <= index < len(self.elements) else None

    def enumerator(self) -> str | None:
        return (
            None if self.optimized_out or self.value is None else self.enumerators.get(self.value)
        )


@dataclass
class RFrame:
    function: str | None
    pc: int = 0x401000
    file: str | None = None
    line: int | None = None
    module: str | None = "/opt/spmi/superpmi"
    inlined: bool = False
    variables: dict[str, RValue] = field(default_factory=dict)
    globals: dict[str, RValue] = field(default_factory=dict)  # as the frame's module sees them

    def variable(self, name: str) -> RValue | None:
        return self.variables.get(name)

    def global_variable(self, name: str) -> RValue | None:
        return self.globals.get(name)


@dataclass
class RThread:
    tid: int
    stack: list[RFrame]

    def frames(self, limit: int | None = None) -> list[RFrame]:
        return self.stack[:limit]


@dataclass
class RProcess:
    stack: list[RFrame]
    sig: SignalInfo | None
    arch: str = "x86_64"
    pid: int | None = 1234
    debugger: str = "recorded"
    memory: dict[int, bytes] = field(default_factory=dict)
    regs: dict[str, int] = field(default_factory=dict)
    command: list[str] | None = None
    sigcgt: int | None = None
    types: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    mods: list[Module] = field(default_factory=list)

    def signal(self) -> SignalInfo | None:
        return self.sig

    def selected_thread(self) -> RThread:
        return RThread(1, self.stack)

    def threads(self) -> list[RThread]:
        return [self.selected_thread()]

    def modules(self) -> list[Module]:
        return self.mods

    def read_memory(self, address: int, size: int) -> bytes | None:
        for base, data in self.memory.items():
            if base <= address < base + len(data):
                return data[address - base : address - base + size]
        return None

    def registers(self) -> dict[str, int]:
        return self.regs

    def stack_pointer(self) -> int | None:
        return self.regs.get("rsp", self.regs.get("sp"))

    def argv(self) -> list[str] | None:
        return self.command

    def caught_signals(self) -> int | None:
        return self.sigcgt

    def lookup_type_fields(self, type_name: str) -> list[tuple[str, str]] | None:
        return self.types.get(type_name)

    def evaluate(self, expression: str) -> RValue | None:
        for f in self.stack:
            v = f.variable(expression)
            if v is not None:
                return v
        return None
