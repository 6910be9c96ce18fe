"""The faulting instruction, read from memory at the pc and disassembled with capstone (x64, arm64),
with the registers it reads and their values: available even when debug info is not."""

from __future__ import annotations

from dataclasses import dataclass, field

from spmi_dbg.analysis.view import Process
from spmi_dbg.jsonfacts import JsonFact


@dataclass(frozen=True)
class Instruction(JsonFact):
    address: int
    bytes_hex: str
    text: str  # "mov edx, dword ptr [rdi]"
    registers: dict[str, int] = field(default_factory=dict)  # registers read, with values
    null_base: str | None = None  # the memory operand's base register when it is (near) zero
    # the memory operand's address, from the registers (base + index*scale + disp)
    memory_address: int | None = None


def decode(process: Process, pc: int) -> Instruction | None:
    code = process.read_memory(pc, 16)
    if not code:
        return None
    # imported here (start-up): capstone costs every command ~70 ms, and the CLI imports analysis
    try:
        import capstone
    except ImportError:
        return None
    if process.arch == "aarch64":
        md = capstone.Cs(capstone.CS_ARCH_ARM64, capstone.CS_MODE_ARM)
    else:
        md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    md.detail = True
    insn = next(md.disasm(code, pc), None)
    if insn is None:
        return Instruction(pc, code[:4].hex(), "(not decodable)")
    regs = process.registers()
    used: dict[str, int] = {}
    base_reg: str | None = None
    address: int | None = None
    try:
        read, _ = insn.regs_access()
        for r in read:
            name = insn.reg_name(r)
            if name in regs:
                used[name] = regs[name]
        for op in insn.operands:
            if op.type == _mem_type(capstone, process.arch) and op.mem.base:
                base_reg = insn.reg_name(op.mem.base)
                address = _operand_address(insn, op, regs)
    except capstone.CsError:
        pass
    null_base = (
        base_reg
        if base_reg is not None and used.get(base_reg, regs.get(base_reg, 1)) < 0x1000
        else None
    )
    text = f"{insn.mnemonic} {insn.op_str}".strip()
    return Instruction(pc, bytes(insn.bytes).hex(), text, used, null_base, address)


def _operand_address(insn: object, op: object, regs: dict[str, int]) -> int | None:
    """base + index * scale + displacement, when the registers are known (x64 rip-relative: not a
    fault)."""
    mem = op.mem  # type: ignore[attr-defined]
    base = insn.reg_name(mem.base)  # type: ignore[attr-defined]
    if base not in regs:
        return None
    value = regs[base] + int(mem.disp)
    index = getattr(mem, "index", 0)
    if index:
        name = insn.reg_name(index)  # type: ignore[attr-defined]
        if name not in regs:
            return None
        value += regs[name] * int(getattr(mem, "scale", 1) or 1)
    return value & 0xFFFFFFFFFFFFFFFF


def _mem_type(capstone: object, arch: str) -> int:
    if arch == "aarch64":
        return int(capstone.arm64.ARM64_OP_MEM)  # type: ignore[attr-defined]
    return int(capstone.x86.X86_OP_MEM)  # type: ignore[attr-defined]
