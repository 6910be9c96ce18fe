"""The analysis view (spmi_dbg.analysis.view) over lldb's SB API. Runs inside lldb's Python (or with
the lldb module imported by the driver)."""

from __future__ import annotations

import importlib
import os
import re
from typing import Any

import lldb

from spmi_dbg.analysis import procfs
from spmi_dbg.analysis.view import Module, SignalInfo, resolve_path, signal_name

# si_code values by the words lldb's Linux signal descriptions use for them (SEGV_MAPERR,
# SEGV_ACCERR, BUS_*).
_SI_CODES: dict[int, tuple[tuple[str, int], ...]] = {
    11: (("invalid address", 1), ("invalid permissions", 2)),
    7: (("illegal alignment", 1), ("illegal address", 2), ("hardware error", 3)),
}


class LldbValue:
    def __init__(self, value: Any) -> None:
        self._v = value

    @property
    def type_name(self) -> str:
        t = self._v.GetType()
        return str(t.GetCanonicalType().GetName()) if t.IsValid() else "?"

    @property
    def optimized_out(self) -> bool:
        if not self._v.IsValid() or self._v.GetError().Fail():
            return True
        return "optimized out" in (self._v.GetSummary() or "") or (
            self._v.GetValue() is None and self._v.GetNumChildren() == 0
        )

    def as_int(self) -> int | None:
        if self.optimized_out:
            return None
        err = lldb.SBError()
        v = self._v.GetValueAsUnsigned(err)
        return None if err.Fail() else int(v)

    def _struct(self) -> Any:
        v = self._v
        if v.GetType().GetCanonicalType().IsPointerType():
            v = v.Dereference()
        # The members, not the synthetic children the `spmi` category gives a LightWeightMap ([0],
        # [1], ...)
        return v.GetNonSyntheticValue()

    def field(self, name: str) -> LldbValue | None:
        child = self._struct().GetChildMemberWithName(name)
        return LldbValue(child) if child.IsValid() else None

    def element(self, index: int) -> LldbValue | None:
        t = self._v.GetType().GetCanonicalType()
        if t.IsArrayType():
            child = self._v.GetChildAtIndex(index, lldb.eNoDynamicValues, True)
        elif t.IsPointerType():
            child = self._v.GetValueForExpressionPath(f"[{index}]")
        else:
            return None
        return LldbValue(child) if child.IsValid() and not child.GetError().Fail() else None

    def enumerator(self) -> str | None:
        t = self._v.GetType().GetCanonicalType()
        if not t.IsValid() or t.GetTypeClass() != lldb.eTypeClassEnumeration or self.optimized_out:
            return None
        n = self._v.GetValueAsSigned()
        members = t.GetEnumMembers()
        for i in range(members.GetSize()):
            m = members.GetTypeEnumMemberAtIndex(i)
            if m.GetValueAsSigned() == n:
                return str(m.GetName())
        return None

    def fields(self) -> list[tuple[str, LldbValue]]:
        s = self._struct()
        t = s.GetType().GetCanonicalType()
        out = []
        for i in range(t.GetNumberOfFields()):
            name = t.GetFieldAtIndex(i).GetName()
            if name:
                child = s.GetChildMemberWithName(name)
                if child.IsValid():
                    out.append((name, LldbValue(child)))
        return out


class LldbFrame:
    def __init__(self, frame: Any) -> None:
        self._f = frame
        self._block_vars: dict[str, Any] | None = None

    @property
    def function(self) -> str | None:
        name = self._f.GetFunctionName()
        return str(name) if name else None

    @property
    def pc(self) -> int:
        return int(self._f.GetPC())

    @property
    def file(self) -> str | None:
        spec = self._f.GetLineEntry().GetFileSpec()
        return str(spec) if spec.IsValid() and spec.GetFilename() else None

    @property
    def line(self) -> int | None:
        line = self._f.GetLineEntry().GetLine()
        # LLDB_INVALID_LINE_NUMBER (UINT32_MAX): no line
        return int(line) if line and line != 0xFFFFFFFF else None

    @property
    def module(self) -> str | None:
        spec = self._f.GetModule().GetFileSpec()
        return resolve_path(str(spec)) if spec.IsValid() and spec.GetFilename() else None

    @property
    def inlined(self) -> bool:
        return bool(self._f.IsInlined())

    def global_variable(self, name: str) -> LldbValue | None:
        v = self._f.FindValue(name, lldb.eValueTypeVariableGlobal)
        if not v.IsValid():  # defined in another compilation unit of the frame's module
            module = self._f.GetModule()
            target = self._f.GetThread().GetProcess().GetTarget()
            found = module.FindGlobalVariables(target, name, 1) if module.IsValid() else None
            v = found.GetValueAtIndex(0) if found is not None and found.GetSize() else v
        return LldbValue(v) if v.IsValid() and not v.GetError().Fail() else None

    def variable(self, name: str) -> LldbValue | None:
        v = self._f.FindVariable(name)
        if v.IsValid():
            return LldbValue(v)
        # lldb 16 does not always make a frame for a function inlined into a caller frame (gdb
        # does); its variables are still in the lexical blocks around the pc. Collected once per
        # frame.
        if self._block_vars is None:
            self._block_vars = {}
            block = self._f.GetBlock()
            if self._f.IsInlined() or not block.GetContainingInlinedBlock().IsValid():
                # the pc is not inside a function lldb left without a frame: nothing hidden
                return None
            while block.IsValid():
                values = block.GetVariables(self._f, True, True, False, lldb.eNoDynamicValues)
                for i in range(values.GetSize()):
                    v = values.GetValueAtIndex(i)
                    self._block_vars.setdefault(str(v.GetName()), v)
                block = block.GetParent()
        found = self._block_vars.get(name)
        return LldbValue(found) if found is not None and found.IsValid() else None


class LldbThread:
    def __init__(self, thread: Any) -> None:
        self._t = thread

    @property
    def tid(self) -> int:
        return int(self._t.GetThreadID())

    def frames(self, limit: int | None = None) -> list[LldbFrame]:
        out: list[LldbFrame] = []
        i = 0
        # GetFrameAtIndex unwinds lazily; GetNumFrames would unwind all
        while limit is None or i < limit:
            f = self._t.GetFrameAtIndex(i)
            if not f.IsValid():
                break
            out.append(LldbFrame(f))
            i += 1
        return out


# (pid, the target's executable) -> whether /proc/PID is that program here (LldbProcess.pid)
_ours: dict[tuple[int, str | None], bool] = {}


class LldbProcess:
    def __init__(self, target: Any) -> None:
        self._target = target
        self._process = target.GetProcess()
        self._caught: tuple[int | None] | None = None

    @property
    def arch(self) -> str:
        triple = str(self._target.GetTriple() or "")
        return (
            "aarch64"
            if triple.startswith(("aarch64", "arm64"))
            else "x86_64"
            if "x86_64" in triple
            else triple
        )

    @property
    def pid(self) -> int | None:
        """The process's pid on this machine, for /proc: None for a core file, or when the pid is
        not this target's program here (a remote stub's: qemu's gdbstub calls its guest process
        1)."""
        pid = self._process.GetProcessID()
        if not pid:
            return None
        exe = self._target.GetExecutable()
        key = (int(pid), exe.fullpath if exe.IsValid() else None)
        if key not in _ours:  # asked at every stop: the answer for a live process stays
            try:
                here = os.path.realpath(f"/proc/{pid}/exe")
            except OSError:
                return None
            _ours[key] = key[1] is None or here == os.path.realpath(key[1] or "")
        return int(pid) if _ours[key] else None

    @property
    def debugger(self) -> str:
        m = re.search(r"version (\S+)", lldb.SBDebugger.GetVersionString())
        return f"lldb {m.group(1) if m else '?'}"

    def signal(self) -> SignalInfo | None:
        thread = self._process.GetSelectedThread()
        if not thread.IsValid() or thread.GetStopReason() != lldb.eStopReasonSignal:
            return None
        signo = int(thread.GetStopReasonDataAtIndex(0))
        # lldb's stop description already carries the fault address and names the si_code ("signal
        # SIGSEGV: invalid address (fault address: 0x14)"); reading it costs microseconds, building
        # siginfo_t through GetSiginfo ~10 ms at the first stop. GetSiginfo remains the fallback.
        desc = thread.GetStopDescription(256) or ""
        m = re.search(r"fault address: (0x[0-9a-fA-F]+)", desc)
        if m or signo not in (4, 7, 8, 11):
            named = next((c for phrase, c in _SI_CODES.get(signo, ()) if phrase in desc), None)
            return SignalInfo(
                signo,
                signal_name(signo),
                named,
                int(m.group(1), 16) if m else None,
                "SBThread stop description",
            )
        code: int | None = None
        addr: int | None = None
        source = "SBThread stop reason"
        siginfo = thread.GetSiginfo() if hasattr(thread, "GetSiginfo") else None
        if siginfo is not None and siginfo.IsValid() and not siginfo.GetError().Fail():
            code = siginfo.GetChildMemberWithName("si_code").GetValueAsSigned()
            if signo in (4, 7, 8, 11):
                fault = siginfo.GetChildMemberWithName("_sifields").GetChildMemberWithName(
                    "_sigfault"
                )
                addr = fault.GetChildMemberWithName("si_addr").GetValueAsUnsigned()
            source = "SBThread::GetSiginfo"
        else:
            m = re.search(r"fault address: (0x[0-9a-fA-F]+)", thread.GetStopDescription(256) or "")
            if m:
                addr = int(m.group(1), 16)
                source = "SBThread stop description"
        return SignalInfo(signo, signal_name(signo), code, addr, source)

    def selected_thread(self) -> LldbThread | None:
        t = self._process.GetSelectedThread()
        return LldbThread(t) if t.IsValid() else None

    def threads(self) -> list[LldbThread]:
        return [
            LldbThread(self._process.GetThreadAtIndex(i))
            for i in range(self._process.GetNumThreads())
        ]

    def modules(self) -> list[Module]:
        out = []
        for i in range(self._target.GetNumModules()):
            mod = self._target.GetModuleAtIndex(i)
            lo, hi = None, None
            for s in range(mod.GetNumSections()):
                sec = mod.GetSectionAtIndex(s)
                start = sec.GetLoadAddress(self._target)
                if start == lldb.LLDB_INVALID_ADDRESS:
                    continue
                lo = start if lo is None else min(lo, start)
                hi = start + sec.GetByteSize() if hi is None else max(hi, start + sec.GetByteSize())
            if lo is not None and hi is not None:
                # where the ELF header is
                header = mod.GetObjectFileHeaderAddress().GetLoadAddress(self._target)
                base = None if header == lldb.LLDB_INVALID_ADDRESS else int(header)
                out.append(Module(os.path.realpath(str(mod.GetFileSpec())), lo, hi, base))
        return out

    def read_memory(self, address: int, size: int) -> bytes | None:
        err = lldb.SBError()
        data = self._process.ReadMemory(address, size, err)
        if err.Success() and data:
            return bytes(data)
        # A core file has no file-backed text pages: the target reads them from the module's object
        # file.
        err = lldb.SBError()
        data = self._target.ReadMemory(lldb.SBAddress(address, self._target), size, err)
        return bytes(data) if err.Success() and data else None

    def registers(self) -> dict[str, int]:
        thread = self._process.GetSelectedThread()
        out: dict[str, int] = {}
        if not thread.IsValid():
            return out
        regsets = thread.GetFrameAtIndex(0).GetRegisters()
        for i in range(regsets.GetSize()):
            regset = regsets.GetValueAtIndex(i)
            if "general" not in (regset.GetName() or "").lower():
                continue
            for r in regset:
                err = lldb.SBError()
                v = r.GetValueAsUnsigned(err)
                if err.Success():
                    out[str(r.GetName())] = int(v)
        return out

    def stack_pointer(self) -> int | None:
        thread = self._process.GetSelectedThread()
        if not thread.IsValid():
            return None
        sp = thread.GetFrameAtIndex(0).GetSP()
        return int(sp) if sp != lldb.LLDB_INVALID_ADDRESS else None

    def argv(self) -> list[str] | None:
        live = procfs.cmdline_cached(self.pid)
        if live:
            return live
        info = self._process.GetProcessInfo() if self._process.IsValid() else None
        exe = self._target.GetExecutable()
        if exe.IsValid():
            launch = self._target.GetLaunchInfo()
            args = [launch.GetArgumentAtIndex(i) for i in range(launch.GetNumArguments())]
            return [os.path.realpath(str(exe)), *args]
        return [str(info.GetName())] if info is not None else None

    def caught_signals(self) -> int | None:
        if self._caught is None:
            self._caught = (procfs.caught_signals(self.pid),)
        return self._caught[0]

    def lookup_type_fields(self, type_name: str) -> list[tuple[str, str]] | None:
        t = self._target.FindFirstType(type_name)
        if not t.IsValid():
            return None
        return [
            (
                t.GetFieldAtIndex(i).GetName(),
                str(t.GetFieldAtIndex(i).GetType().GetCanonicalType().GetName()),
            )
            for i in range(t.GetNumberOfFields())
            if t.GetFieldAtIndex(i).GetName()
        ]

    def evaluate(self, expression: str) -> LldbValue | None:
        frame = self._process.GetSelectedThread().GetSelectedFrame()
        v = frame.GetValueForVariablePath(expression)
        if not v.IsValid() or v.GetError().Fail():
            v = frame.EvaluateExpression(expression)
        return LldbValue(v) if v.IsValid() and not v.GetError().Fail() else None


# superpmi's debugger anchors (docs/superpmi-conventions.md section 2). lldb parses debug info and
# sets up its value machinery lazily; doing it for these before the crash makes the first diagnosis
# ~20 ms cheaper.
ANCHOR_FUNCTIONS = (
    "JitInstance::CompileMethod",
    "NearDiffer::compare",
    "CompileResult::repCompileMethod",
    "MethodContext::repCompileMethod",
    "main",
)
ANCHOR_TYPES = ("MethodContext", "CompileResult", "MethodContextReader")
_LLDB_FORMATTERS = (
    "lldb.formatters.cpp.gnu_libstdcpp",
    "lldb.formatters.cpp.libcxx",
    "lldb.formatters.synth",
    "lldb.formatters.metrics",
)


def warm_up(target: Any) -> None:
    """Before the program runs (or right after the extension loads): index the anchors, make one
    value of each anchor type from bytes, and import lldb's own formatter modules (it does so at the
    first value read)."""
    if not target.IsValid():
        return
    for name in ANCHOR_FUNCTIONS:
        target.FindFunctions(name)
    for name in ANCHOR_TYPES:
        t = target.FindFirstType(name)
        if t.IsValid():
            data = lldb.SBData.CreateDataFromUInt64Array(lldb.eByteOrderLittle, 8, [0])
            v = target.CreateValueFromData("spmi_warm", data, t.GetPointerType())
            v.GetValueAsUnsigned(0)
            v.GetError()
    for module in _LLDB_FORMATTERS:
        try:
            importlib.import_module(module)
        except ImportError:
            pass
