"""`Agnostic_CORINFO_SIG_INFO` and `Agnostic_CORINFO_METHOD_INFO`, both eras (docs/mch-format.md
5.4 and 11): 3.1's SIG_INFO is 76 bytes (no methodSignature), today's 84; METHOD_INFO holds two
of them after its fixed fields (with regionKind: 8 + 8 + 6 x 4 bytes; without it, 5 x 4)."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from spmi_dbg.mch.layouts import METHOD_INFO_HEAD_SIZE, MethodInfoHead, method_info_head

SIG_SIZES = (76, 84)  # 3.1, today


@dataclass(frozen=True)
class SigInfo:
    call_conv: int
    ret_type_class: int
    ret_type: int  # CorInfoType
    flags: int
    num_args: int
    class_inst_count: int
    meth_inst_count: int
    args: int  # CORINFO_ARG_LIST_HANDLE: the first argument's handle
    scope: int
    token: int


def decode_sig(raw: bytes, at: int, size: int) -> SigInfo:
    """The SIG_INFO of `size` bytes (76 or 84) at `at` of `raw`."""
    call_conv, ret_class, _sig_class, ret_type, flags, num_args = struct.unpack_from(
        "<IQQIII", raw, at
    )
    class_count, _ci, meth_count, _mi, args = struct.unpack_from("<IIIIQ", raw, at + 32)
    rest = at + 56 + 8  # past pSig_Index, cbSig
    if size == 84:
        rest += 8  # methodSignature
    scope, token = struct.unpack_from("<QI", raw, rest)
    return SigInfo(
        call_conv, ret_class, ret_type, flags, num_args, class_count, meth_count, args, scope, token
    )


@dataclass(frozen=True)
class MethodInfo(MethodInfoHead):
    """What the JIT was told about a method's body: the root's (CompileMethod) or a callee's
    (GetMethodInfo)."""

    args: SigInfo
    locals: SigInfo

    @property
    def init_locals(self) -> bool:
        return bool(self.options & 0x10)  # CORINFO_OPT_INIT_LOCALS


def method_info_sizes(sig: int) -> tuple[int, int]:
    """METHOD_INFO's size with and without regionKind, for a SIG_INFO of `sig` bytes."""
    return 16 + 24 + 2 * sig, 16 + 20 + 2 * sig


def decode_method_info(raw: bytes, size: int) -> MethodInfo | None:
    """The METHOD_INFO at the start of `raw`, whose size is `size` (one of method_info_sizes'
    answers); None for a size no era has."""
    for sig in SIG_SIZES:
        with_region, without = method_info_sizes(sig)
        if size in (with_region, without):
            break
    else:
        return None
    at = METHOD_INFO_HEAD_SIZE + (4 if size == with_region else 0)
    return MethodInfo(
        *method_info_head(raw),
        decode_sig(raw, at, sig),
        decode_sig(raw, at + sig, sig),
    )
