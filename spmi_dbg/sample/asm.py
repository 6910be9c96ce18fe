"""IL text assembler for the sample JIT's subset. The syntax is documented in
spmi_dbg/sample/README.md:

    .callee System.Math:Max(2) -> long          # a callee: name, argument count, return type
    .method Sample.Loops:CountDown(1)           # Namespace.Class:Method(argument count) [->
      long|int|void] .locals 1
      ldarg.0
      stloc.0
    LOOP:
      ldloc.0
      ldc.i4.1
      sub
      dup
      stloc.0
      brtrue.s LOOP                             # short branches must fit -128..127 (else an error)
      ldloc.0
      ldarg.0
      call System.Math:Max
      ret
    .end

`assemble_text` / `assemble_file` return an `Assembly`: the methods (ready for
`builder.RecordBuilder`) and the file-level settings. Every error is one line, `FILE:LINE: message`.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

from spmi_dbg.errors import SpmiDbgError
from spmi_dbg.sample import il as IL
from spmi_dbg.sample.builder import (
    ARCH_VALUES,
    CALLEE_BASE,
    CALLEE_CLASS_BASE,
    CLR_EXCEPTION,
    TOKEN_BASE,
    Callee,
    Method,
)

# Callees of assembled files get handles in their own range, apart from the random generator's pool.
ASM_CALLEE_BASE = CALLEE_BASE + 0x1000_0000
ASM_CALLEE_CLASS_BASE = CALLEE_CLASS_BASE + 0x1000_0000

_NAME = r"[A-Za-z_<][\w.`<>|$@]*:[\w.`<>|$@]+"
_SIG_RE = re.compile(rf"^({_NAME})\s*\(\s*(\d+)\s*\)\s*(?:->\s*(\w+))?\s*(.*)$")
_LABEL_RE = re.compile(r"^([A-Za-z_][\w.$]*)\s*:(?!:)\s*(.*)$")
_IDENT_RE = re.compile(r"^[A-Za-z_][\w.$]*$")


class AsmError(SpmiDbgError):
    """Bad assembler input: `FILE:LINE: message`."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")
        self.path = path
        self.line = line
        self.detail = message


@dataclass
class Assembly:
    path: str
    methods: list[Method] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)  # source line of each method's .method
    arch: str | None = None
    config: list[tuple[str, int, int]] = field(default_factory=list)  # (name, value, default)


@dataclass
class _Pending:
    """A method being assembled."""

    name: str
    nargs: int
    ret_type: int
    line: int
    nlocals: int = 0
    max_stack: int | None = None
    minopts: bool = False
    corrupt: bool = False
    verify: bool = True
    # (line, mnemonic-or-None for raw bytes, operand text, raw bytes, offset)
    items: list[tuple[int, str | None, str, bytes, int]] = field(default_factory=list)
    labels: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (offset, line)
    size: int = 0


def _strip_comment(text: str) -> str:
    for marker in ("#", "//"):
        i = text.find(marker)
        if i >= 0:
            text = text[:i]
    return text.strip()


def _int(text: str, lo: int, hi: int, what: str, err: _Err) -> int:
    try:
        v = int(text, 0)
    except ValueError:
        raise err(f"{what}: expected an integer, found {text!r}") from None
    if not lo <= v <= hi:
        raise err(f"{what}: {v} is out of range: expected {lo}..{hi}")
    return v


class _Err:
    def __init__(self, path: str) -> None:
        self.path = path
        self.line = 0

    def __call__(self, message: str, line: int | None = None) -> AsmError:
        return AsmError(self.path, self.line if line is None else line, message)


def _ret_type(text: str | None, err: _Err) -> int:
    if text is None:
        return IL.TYPE_LONG
    t = IL.RET_TYPES.get(text)
    if t is None:
        raise err(f"unknown return type {text!r}: expected one of {', '.join(IL.RET_TYPES)}")
    return t


def _instr_size(op: IL.OpCode) -> int:
    return len(op.code) + IL.OPERAND_SIZE[op.operand]


class _Assembler:
    def __init__(self, path: str) -> None:
        self.err = _Err(path)
        self.out = Assembly(path)
        self.callees: dict[str, Callee] = {}
        # methods of this file: name -> (nargs, ret_type)
        self.headers: dict[str, tuple[int, int]] = {}
        self.classes: dict[str, int] = {}

    # -------------------------------------------------------------------- callees
    def _declare(self, name: str, nargs: int, ret_type: int, flags: str) -> Callee:
        err = self.err
        words = flags.split()
        missing = False
        code = 0
        i = 0
        while i < len(words):
            w = words[i]
            if w == "missing":
                missing = True
            elif w == "throws":
                code = CLR_EXCEPTION
                if i + 1 < len(words) and re.match(r"^(0x[0-9A-Fa-f]+|\d+)$", words[i + 1]):
                    code = _int(words[i + 1], 1, 0xFFFFFFFF, "exception code", err)
                    i += 1
            else:
                raise err(
                    f"unexpected {w!r} after the callee signature: "
                    "expected 'missing' or 'throws [CODE]'"
                )
            i += 1
        old = self.callees.get(name)
        if old is not None:
            if (old.nargs, old.ret_type) != (nargs, ret_type):
                raise err(
                    f"callee {name} redeclared as ({nargs}) -> {IL.RET_TYPE_NAMES[ret_type]}: "
                    f"earlier ({old.nargs}) -> {IL.RET_TYPE_NAMES[old.ret_type]}"
                )
            if flags and (old.recorded == missing or old.exception_code != code):
                raise err(f"callee {name} redeclared with different flags")
            return old
        idx = len(self.callees)
        cls = name.rpartition(":")[0]
        cidx = self.classes.setdefault(cls, len(self.classes))
        c = Callee(
            name,
            nargs,
            ret_type,
            TOKEN_BASE + idx,
            ASM_CALLEE_BASE + idx * 0x20,
            ASM_CALLEE_CLASS_BASE + cidx * 0x40,
            exception_code=code,
            recorded=not missing,
        )
        self.callees[name] = c
        return c

    def _call_operand(self, text: str) -> Callee:
        err = self.err
        m = _SIG_RE.match(text)
        if m:
            name, nargs, rt, rest = m.group(1), int(m.group(2)), m.group(3), m.group(4).strip()
            return self._declare(name, nargs, _ret_type(rt, err), rest)
        if re.match(rf"^{_NAME}$", text):
            c = self.callees.get(text)
            if c is not None:
                return c
            hdr = self.headers.get(text)
            if hdr is not None:
                return self._declare(text, hdr[0], hdr[1], "")
            raise err(
                f"call to undeclared {text}: declare it with `.callee {text}(N) -> long` "
                f"or write `call {text}(N)`"
            )
        raise err(
            f"call operand {text!r}: expected Namespace.Class:Method or Namespace.Class:Method(N) "
            "[-> type]"
        )

    # -------------------------------------------------------------------- methods
    def _instruction(self, m: _Pending, mnemonic: str, operand: str) -> None:
        err = self.err
        op = IL.BY_NAME.get(mnemonic)
        if op is None:
            raise err(
                f"unknown opcode {mnemonic!r}: not in the sample JIT's IL subset "
                "(see spmi_dbg/sample/README.md)"
            )
        if op.operand == IL.NONE and operand:
            raise err(f"{mnemonic} takes no operand, found {operand!r}")
        if op.operand != IL.NONE and not operand:
            raise err(f"{mnemonic} needs an operand")
        m.items.append((err.line, mnemonic, operand, b"", m.size))
        m.size += _instr_size(op)

    def _encode(
        self, m: _Pending, line: int, mnemonic: str, operand: str, offset: int
    ) -> tuple[bytes, Callee | None]:
        err = self.err
        err.line = line
        op = IL.BY_NAME[mnemonic]
        end = offset + _instr_size(op)
        kind = op.operand
        callee: Callee | None = None
        if kind == IL.NONE:
            data = b""
        elif kind == IL.U8:
            data = bytes([_int(operand, 0, 255, f"{mnemonic} index", err)])
        elif kind == IL.I8:
            data = struct.pack("<b", _int(operand, -128, 127, f"{mnemonic} constant", err))
        elif kind == IL.I32:
            v = _int(operand, -(1 << 31), (1 << 32) - 1, f"{mnemonic} constant", err)
            data = struct.pack("<I", v & 0xFFFFFFFF)
        elif kind == IL.I64:
            v = _int(operand, -(1 << 63), (1 << 64) - 1, f"{mnemonic} constant", err)
            data = struct.pack("<Q", v & 0xFFFFFFFFFFFFFFFF)
        elif kind == IL.TOKEN:
            callee = self._call_operand(operand)
            data = struct.pack("<I", callee.token)
        else:
            if _IDENT_RE.match(operand):
                lab = m.labels.get(operand)
                if lab is None:
                    raise err(f"{mnemonic} to undefined label {operand!r}")
                disp = lab[0] - end
                what = f"{mnemonic} to {operand}"
            else:
                disp = _int(operand, -(1 << 31), (1 << 31) - 1, f"{mnemonic} displacement", err)
                what = f"{mnemonic} {operand}"
            if kind == IL.BR8:
                if not -128 <= disp <= 127:
                    long_form = IL.LONG_FORM.get(mnemonic)
                    hint = (
                        f": use {long_form}"
                        if long_form
                        else f": use {IL.COMPARE_FORM[mnemonic][0]} and brtrue/brfalse"
                    )
                    raise err(
                        f"{what}: displacement {disp} does not fit a short branch (-128..127){hint}"
                    )
                data = struct.pack("<b", disp)
            else:
                data = struct.pack("<i", disp)
        return op.code + data, callee

    def _finish(self, m: _Pending) -> None:
        err = self.err
        code = bytearray()
        used: dict[str, Callee] = {}
        lines: list[tuple[int, int]] = []  # (offset, line)
        for line, mnemonic, operand, raw, offset in m.items:
            lines.append((offset, line))
            if mnemonic is None:
                code += raw
                continue
            data, callee = self._encode(m, line, mnemonic, operand, offset)
            code += data
            if callee is not None:
                used.setdefault(callee.name, callee)
        il = bytes(code)
        if not il:
            raise err(f"method {m.name} has no instructions", m.line)
        effects = {c.token: c.effect for c in used.values()}
        max_stack = m.max_stack
        if m.verify:
            try:
                depth = IL.check_stack(
                    il,
                    nargs=m.nargs,
                    nlocals=m.nlocals,
                    returns_value=m.ret_type != IL.TYPE_VOID,
                    call_effect=lambda t: effects[t],
                )
            except IL.ILError as e:
                where = m.line
                if e.offset is not None:
                    where = next((ln for off, ln in reversed(lines) if off <= e.offset), m.line)
                raise err(
                    f"{m.name}: {e} (add .noverify to keep deliberately bad IL)", where
                ) from None
            if max_stack is None:
                max_stack = depth
        self.out.methods.append(
            Method(
                m.name,
                m.nargs,
                m.nlocals,
                il,
                max_stack if max_stack is not None else 8,
                tuple(used.values()),
                m.ret_type,
                m.minopts,
                m.corrupt,
            )
        )
        self.out.lines.append(m.line)

    # -------------------------------------------------------------------- driver
    def run(self, text: str) -> Assembly:
        err = self.err
        lines = text.splitlines()
        # Pass 1: method headers, so calls may name methods defined later in the file.
        for raw in lines:
            s = _strip_comment(raw)
            if s.startswith(".method"):
                sm = _SIG_RE.match(s[len(".method") :].strip())
                if sm:
                    self.headers.setdefault(
                        sm.group(1), (int(sm.group(2)), IL.RET_TYPES.get(sm.group(3) or "long", 0))
                    )
        cur: _Pending | None = None
        for n, raw in enumerate(lines, 1):
            err.line = n
            s = _strip_comment(raw)
            if not s:
                continue
            if s.startswith("."):
                word, _, rest = s.partition(" ")
                rest = rest.strip()
                cur = self._directive(cur, word, rest)
                continue
            if cur is None:
                raise err(
                    f"{s.split()[0]!r} outside a method: "
                    "expected .method, .callee, .arch or .config"
                )
            lm = _LABEL_RE.match(s)
            if lm and lm.group(1) not in IL.BY_NAME:
                label, s = lm.group(1), lm.group(2).strip()
                if label in cur.labels:
                    raise err(f"label {label} is already defined at line {cur.labels[label][1]}")
                cur.labels[label] = (cur.size, n)
                if not s:
                    continue
            mnemonic, _, operand = s.partition(" ")
            self._instruction(cur, mnemonic, operand.strip())
        if cur is not None:
            raise err(f"method {cur.name} has no .end", cur.line)
        if not self.out.methods:
            raise err("no methods: expected at least one .method ... .end", max(1, len(lines)))
        return self.out

    def _directive(self, cur: _Pending | None, word: str, rest: str) -> _Pending | None:
        """Apply a directive line; returns the method being assembled after it."""
        err = self.err
        if word in (".method", ".callee", ".arch", ".config"):
            return self._file_directive(cur, word, rest)
        if cur is None:
            raise err(f"{word} outside a method: expected .method first")
        if word == ".end":
            if rest:
                raise err(f".end takes nothing, found {rest!r}")
            self._finish(cur)
            return None
        if word == ".locals":
            cur.nlocals = _int(rest, 0, 255, ".locals", err)
        elif word == ".maxstack":
            cur.max_stack = _int(rest, 0, 0xFFFFFFFF, ".maxstack", err)
        elif word in (".minopts", ".corrupt", ".noverify"):
            if rest:
                raise err(f"{word} takes nothing, found {rest!r}")
            if word == ".minopts":
                cur.minopts = True
            elif word == ".corrupt":
                cur.corrupt = True
            else:
                cur.verify = False
        elif word == ".repeat":
            self._repeat(cur, rest)
        elif word == ".bytes":
            self._bytes(cur, rest)
        else:
            raise err(
                f"unknown directive {word}: expected .method, .end, .callee, .locals, .maxstack, "
                ".minopts, .corrupt, .noverify, .repeat, .bytes, .arch or .config"
            )
        return cur

    def _file_directive(self, cur: _Pending | None, word: str, rest: str) -> _Pending | None:
        """.method (returns the method it starts), .callee, .arch or .config."""
        err = self.err
        if word == ".method":
            if cur is not None:
                raise err(f".method inside {cur.name}: expected .end first")
            m = _SIG_RE.match(rest)
            if not m or m.group(4).strip():
                raise err(
                    f".method {rest!r}: expected Namespace.Class:Method(ARGS) [-> long|int|void]"
                )
            nargs = _int(m.group(2), 0, 255, "argument count", err)
            return _Pending(m.group(1), nargs, _ret_type(m.group(3), err), err.line)
        if word == ".callee":
            m = _SIG_RE.match(rest)
            if not m:
                raise err(
                    f".callee {rest!r}: expected Namespace.Class:Method(ARGS) -> long|int|void "
                    "[missing] [throws [CODE]]"
                )
            self._declare(
                m.group(1),
                _int(m.group(2), 0, 255, "argument count", err),
                _ret_type(m.group(3), err),
                m.group(4).strip(),
            )
        elif word == ".arch":
            if rest not in ARCH_VALUES:
                raise err(f".arch {rest!r}: expected one of {', '.join(ARCH_VALUES)}")
            self.out.arch = rest
        else:
            cm = re.match(r"^(\w+)\s*=\s*(-?\w+)(?:\s+default\s+(-?\w+))?$", rest)
            if not cm:
                raise err(f".config {rest!r}: expected NAME=VALUE [default N]")
            value = _int(cm.group(2), -(1 << 31), (1 << 32) - 1, "config value", err)
            default = _int(cm.group(3) or "0", -(1 << 31), (1 << 32) - 1, "config default", err)
            self.out.config.append((cm.group(1), value, default))
        return cur

    def _repeat(self, cur: _Pending, rest: str) -> None:
        """.repeat COUNT INSTRUCTION: the instruction COUNT times (not a branch)."""
        err = self.err
        parts = rest.split(None, 1)
        if len(parts) < 2:
            raise err(".repeat: expected COUNT INSTRUCTION")
        count = _int(parts[0], 1, 1 << 20, ".repeat count", err)
        mnemonic, _, operand = parts[1].partition(" ")
        op = IL.BY_NAME.get(mnemonic)
        if op is not None and op.operand in (IL.BR8, IL.BR32):
            raise err(".repeat of a branch: write the branches out")
        for _ in range(count):
            self._instruction(cur, mnemonic, operand.strip())

    def _bytes(self, cur: _Pending, rest: str) -> None:
        """.bytes HEX...: raw bytes, as they are."""
        err = self.err
        try:
            raw = bytes.fromhex(rest.replace("0x", "").replace(",", " "))
        except ValueError:
            raise err(f".bytes {rest!r}: expected hex bytes, e.g. `.bytes FE 01`") from None
        if not raw:
            raise err(".bytes: expected at least one byte")
        cur.items.append((err.line, None, "", raw, cur.size))
        cur.size += len(raw)


def assemble_text(text: str, path: str = "<text>") -> Assembly:
    return _Assembler(path).run(text)


def assemble_file(path: str | Path) -> Assembly:
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise AsmError(str(p), 0, f"cannot read: {e.strerror}") from None
    except UnicodeDecodeError:
        raise AsmError(str(p), 0, "not a text file: expected IL assembly (UTF-8)") from None
    return assemble_text(text, str(p))
