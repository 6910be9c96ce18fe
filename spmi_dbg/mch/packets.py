"""Packet id -> name table (`enum mcPackets`, methodcontext.h).

Transcribed from docs/mch-format.md section 5.1 (2026 `main`, with notes on older meanings).
Ids >= 113 named `PacketCR_*` belong to the compile result; the rest to the method context.
Slots 6, 10, 149, 197 and 198 have been re-used over time; the note says so. 3.1's superpmi
recorded other packets than today's under 10, 66, 112, 148 and 149 (REUSED_SINCE_31):
`packet_label` names those by what the map shows, never by a guess.
"""

from __future__ import annotations

from typing import NamedTuple

# id: (name, note)
PACKETS: dict[int, tuple[str, str]] = {
    1: ("AreTypesEquivalent", "retired"),
    2: ("AsCorInfoType", ""),
    3: ("CanAccessClass", ""),
    4: ("CanAccessFamily", "retired"),
    5: ("CanCast", ""),
    6: ("PrintMethodName", "new slot, 2023+"),
    7: ("CanGetCookieForPInvokeCalliSig", ""),
    8: ("CanGetVarArgsHandle", ""),
    9: ("CanInline", ""),
    10: ("PrintFieldName", "was retired CanInlineTypeCheckWithObjectVTable"),
    11: ("CanSkipMethodVerification", "retired"),
    12: ("CanTailCall", ""),
    13: ("Retired4", ""),
    14: ("Retired3", ""),
    15: ("ConstructStringLiteral", ""),
    16: ("EmbedClassHandle", ""),
    17: ("EmbedFieldHandle", ""),
    18: ("EmbedGenericHandle", ""),
    19: ("EmbedMethodHandle", ""),
    20: ("EmbedModuleHandle", ""),
    21: ("EmptyStringLiteral", ""),
    22: ("ErrorList", ""),
    23: ("FindCallSiteSig", ""),
    24: ("Retired7", ""),
    25: ("FindSig", ""),
    26: ("GetAddressOfPInvokeFixup", ""),
    27: ("GetAddrOfCaptureThreadGlobal", ""),
    28: ("Retired1", ""),
    29: ("GetArgNext", ""),
    30: ("Retired2", ""),
    31: ("GetArrayInitializationData", ""),
    32: ("GetArrayRank", ""),
    33: ("GetMethodBlockCounts", "retired"),
    34: ("GetBoundaries", ""),
    35: ("GetBoxHelper", ""),
    36: ("GetBuiltinClass", ""),
    37: ("GetCallInfo", ""),
    38: ("GetCastingHelper", ""),
    39: ("GetChildType", ""),
    40: ("GetClassAlignmentRequirement", ""),
    41: ("GetClassAttribs", ""),
    42: ("GetClassDomainID", "retired"),
    43: ("GetClassGClayout", ""),
    44: ("GetClassModuleIdForStatics", ""),
    45: ("GetClassName", ""),
    46: ("GetClassNumInstanceFields", ""),
    47: ("GetClassSize", ""),
    48: ("GetCookieForPInvokeCalliSig", ""),
    49: ("GetDelegateCtor", ""),
    50: ("GetEEInfo", ""),
    51: ("GetEHinfo", ""),
    52: ("GetFieldAddress", "retired"),
    53: ("GetFieldClass", ""),
    54: ("GetFieldInClass", ""),
    55: ("GetFieldInfo", ""),
    56: ("GetFieldName", "older only"),
    57: ("GetFieldOffset", ""),
    58: ("GetFieldThreadLocalStoreID", ""),
    59: ("GetFieldType", ""),
    60: ("GetFunctionEntryPoint", ""),
    61: ("GetFunctionFixedEntryPoint", ""),
    62: ("GetGSCookie", ""),
    63: ("GetHelperFtn", "retired; moved to 233"),
    64: ("GetHelperName", "older only"),
    65: ("GetInlinedCallFrameVptr", "retired"),
    66: ("GetArrayIntrinsicID", ""),
    67: ("GetJitTimeLogFilename", "retired"),
    68: ("GetJustMyCodeHandle", ""),
    69: ("GetLocationOfThisType", ""),
    70: ("GetMethodAttribs", ""),
    71: ("GetMethodClass", ""),
    72: ("GetMethodDefFromMethod", ""),
    73: ("GetMethodHash", ""),
    74: ("GetMethodInfo", ""),
    75: ("GetMethodName", "older only"),
    76: ("GetMethodSig", ""),
    77: ("GetMethodSync", "retired"),
    78: ("GetMethodVTableOffset", ""),
    79: ("GetNewArrHelper", ""),
    80: ("GetNewHelper", ""),
    81: ("GetParentType", ""),
    82: ("GetPInvokeUnmanagedTarget", "retired"),
    83: ("GetProfilingHandle", ""),
    84: ("GetRelocTypeHint", ""),
    85: ("GetSecurityPrologHelper", "retired"),
    86: ("GetSharedCCtorHelper", ""),
    87: ("GetTailCallCopyArgsThunk", "retired"),
    88: ("GetThreadTLSIndex", ""),
    89: ("GetTokenTypeAsHandle", ""),
    90: ("GetTypeForBox", ""),
    91: ("GetTypeForPrimitiveValueClass", ""),
    92: ("GetUnBoxHelper", ""),
    93: ("Unused93", "unused"),
    94: ("GetUnmanagedCallConv", ""),
    95: ("GetVarArgsHandle", ""),
    96: ("GetVars", ""),
    97: ("InitClass", ""),
    98: ("InitConstraintsForVerification", "retired"),
    99: ("IsCompatibleDelegate", "retired 2026"),
    100: ("IsInstantiationOfVerifiedGeneric", "retired"),
    101: ("IsSDArray", ""),
    102: ("IsStructRequiringStackAllocRetBuf", "retired"),
    103: ("IsValidStringRef", ""),
    104: ("Retired6", ""),
    105: ("IsValueClass", ""),
    106: ("IsWriteBarrierHelperRequired", "retired"),
    107: ("MergeClasses", "retired 2026"),
    108: ("PInvokeMarshalingRequired", ""),
    109: ("ResolveToken", ""),
    110: ("SatisfiesClassConstraints", "retired 2026"),
    111: ("SatisfiesMethodConstraints", ""),
    112: ("DoesFieldBelongToClass", ""),
    113: ("PacketCR_AddressMap", "retired"),
    114: ("PacketCR_AllocGCInfo", ""),
    115: ("PacketCR_AllocMem", ""),
    116: ("PacketCR_CallLog", ""),
    117: ("PacketCR_ClassMustBeLoadedBeforeCodeIsRun", ""),
    118: ("PacketCR_CompileMethod", ""),
    119: ("PacketCR_MessageLog", ""),
    120: ("PacketCR_MethodMustBeLoadedBeforeCodeIsRun", ""),
    121: ("PacketCR_ProcessName", ""),
    122: ("PacketCR_RecordRelocation", ""),
    123: ("PacketCR_ReportFatalError", ""),
    124: ("PacketCR_ReportInliningDecision", ""),
    125: ("PacketCR_ReportTailCallDecision", ""),
    126: ("PacketCR_SetBoundaries", ""),
    127: ("PacketCR_SetEHcount", ""),
    128: ("PacketCR_SetEHinfo", ""),
    129: ("PacketCR_SetMethodAttribs", ""),
    130: ("PacketCR_SetVars", ""),
    131: ("AllocMethodBlockCounts", "retired"),
    132: ("PacketCR_AllocUnwindInfo", ""),
    133: ("PacketCR_ReserveUnwindInfo", ""),
    134: ("FilterException", "retired 2026"),
    135: ("HandleException", "retired"),
    136: ("Retired9", ""),
    137: ("IsFieldStatic", ""),
    138: ("PacketCR_AssertLog", ""),
    139: ("GetArgClass", ""),
    140: ("GetArgType", ""),
    141: ("Retired5", ""),
    142: ("CheckMethodModifier", ""),
    143: ("CompileMethod", "method-context side"),
    144: ("IsValidToken", "retired 2026"),
    145: ("FindNameOfToken", "retired 2026"),
    146: ("PacketCR_RecordCallSite", "retired"),
    147: ("GetLazyStringLiteralHelper", "retired 2026"),
    148: ("IsIntrinsicType", ""),
    149: ("PrintClassName", "older: AppendClassName"),
    150: ("GetReadyToRunHelper", ""),
    151: ("GetIntConfigValue", ""),
    152: ("GetStringConfigValue", ""),
    153: ("GetAddressOfPInvokeTarget", ""),
    154: ("GetJitFlags", ""),
    155: ("IsDelegateCreationAllowed", ""),
    156: ("GetSystemVAmd64PassStructInRegisterDescriptor", ""),
    157: ("GetReadyToRunDelegateCtorHelper", ""),
    158: ("TryResolveToken", "retired 2026"),
    159: ("GetHFAType", ""),
    160: ("ResolveVirtualMethod", ""),
    161: ("GetMethodNameFromMetadata", ""),
    162: ("GetDefaultEqualityComparerClass", ""),
    163: ("CompareTypesForCast", ""),
    164: ("CompareTypesForEquality", ""),
    165: ("GetUnboxedEntry", "retired 2026"),
    166: ("GetClassNameFromMetadata", ""),
    167: ("GetTypeInstantiationArgument", ""),
    168: ("GetTypeForPrimitiveNumericClass", ""),
    169: ("ConvertPInvokeCalliToCall", ""),
    170: ("GetHeapClassSize", ""),
    171: ("CanAllocateOnStack", ""),
    172: ("GetStaticFieldCurrentClass", ""),
    173: ("CanInlineTypeCheck", "retired 2026"),
    174: ("IsMoreSpecificType", ""),
    175: ("GetStringLiteral", ""),
    176: ("PacketCR_SetPatchpointInfo", ""),
    177: ("GetOSRInfo", ""),
    178: ("GetTailCallHelpers", ""),
    179: ("PacketCR_RecordCallSiteWithSignature", ""),
    180: ("PacketCR_RecordCallSiteWithoutSignature", ""),
    181: ("GetMethodModule", "retired 2026"),
    182: ("Retired10", ""),
    183: ("GetExpectedTargetArchitecture", ""),
    184: ("SigInstHandleMap", ""),
    185: ("PacketCR_CrSigInstHandleMap", ""),
    186: ("AllocPgoInstrumentationBySchema", ""),
    187: ("GetPgoInstrumentationResults", ""),
    188: ("GetDefaultComparerClass", ""),
    189: ("GetClassModule", "retired 2026"),
    190: ("GetModuleAssembly", "retired 2026"),
    191: ("GetAssemblyName", "retired 2026"),
    192: ("IsIntrinsic", ""),
    193: ("UpdateEntryPointForTailCall", ""),
    194: ("GetLoongArch64PassStructInRegisterFlags", "retired 2026"),
    195: ("GetExactClasses", ""),
    196: ("GetRuntimeTypePointer", ""),
    197: ("PrintObjectDescription", "early 2023: ObjectToString"),
    198: ("GetStaticFieldContent", "early 2023: GetReadonlyStaticFieldValue"),
    199: ("GetObjectType", ""),
    200: ("IsObjectImmutable", ""),
    201: ("ExpandRawHandleIntrinsic", ""),
    202: ("GetArrayOrStringLength", ""),
    203: ("IsEnum", ""),
    204: ("GetStringChar", ""),
    205: ("GetIsClassInitedFlagAddress", ""),
    206: ("GetStaticBaseAddress", ""),
    207: ("GetThreadLocalFieldInfo", ""),
    208: ("GetThreadLocalStaticBlocksInfo", ""),
    209: ("GetThreadLocalStaticInfo_NativeAOT", ""),
    210: ("GetRISCV64PassStructInRegisterFlags", "retired 2026"),
    211: ("GetObjectContent", ""),
    212: ("GetTypeLayout", ""),
    213: ("HaveSameMethodDefinition", ""),
    214: ("NotifyMethodInfoUsage", ""),
    215: ("IsExactType", ""),
    216: ("GetSwiftLowering", ""),
    217: ("IsNullableType", ""),
    218: ("GetClassStaticDynamicInfo", ""),
    219: ("GetClassThreadStaticDynamicInfo", ""),
    220: ("IsGenericType", ""),
    221: ("GetTypeForBoxOnStack", "retired"),
    222: ("GetTypeDefinition", ""),
    223: ("GetFpStructLowering", ""),
    224: ("GetSpecialCopyHelper", ""),
    225: ("GetClassAssemblyName", ""),
    226: ("GetSZArrayHelperEnumeratorClass", ""),
    227: ("GetMethodInstantiationArgument", ""),
    228: ("GetInstantiatedEntry", "retired"),
    229: ("NotifyInstructionSetUsage", ""),
    230: ("GetAsyncInfo", ""),
    231: ("GetAsyncResumptionStub", ""),
    232: ("GetCookieForInterpreterCalliSig", ""),
    233: ("GetHelperFtn", "new layout"),
    234: ("GetContinuationType", ""),
    235: ("GetWasmTypeSymbol", ""),
    236: ("GetWasmLowering", ""),
    237: ("GetAsyncOtherVariant", ""),
    238: ("GetAwaitReturnCall", ""),
    239: ("GetAddressAlignment", ""),
    240: ("GetWasmWellKnownGlobals", ""),
    241: ("CanValueClassInstancePointerEscape", ""),
    242: ("GetAwaitAwaiterInContinuationCall", ""),
    243: ("PacketCR_ReportCodeEntry_V1", "retired"),
    244: ("PacketCR_ReportCodeEntry", ""),
}

# Compile-result packets that are not named PacketCR_* in the table above are none; these are the
# ids whose maps live on `MethodContext::cr` (crlwmlist.h), the rest live on the MethodContext.
COMPILE_RESULT_IDS: frozenset[int] = frozenset(
    k for k, (n, _) in PACKETS.items() if n.startswith("PacketCR_")
)

# Well-known ids the product decodes.
CompileMethod = 143
CR_AllocGCInfo = 114
CR_AllocMem = 115
CR_CompileMethod = 118
CR_RecordRelocation = 122
GetClassName = 45
GetMethodClass = 71
GetMethodSig = 76
GetMethodName = 75
GetJitFlags = 154
GetIntConfigValue = 151
GetStringConfigValue = 152
GetExpectedTargetArchitecture = 183
GetMethodNameFromMetadata = 161
PrintClassName = 149
PrintMethodName = 6
ResolveToken = 109
# what the JIT was told about the method and the ones it looked at (spmi_dbg/method)
CanInline = 9
PrintFieldName = 10  # today's; 3.1 recorded CanInlineTypeCheckWithObjectVTable under 10
ConstructStringLiteral = 15
GetArgNext = 29
GetCallInfo = 37
GetEHinfo = 51
GetFieldName = 56
GetMethodAttribs = 70
GetMethodInfo = 74
GetArgClass = 139
GetArgType = 140
GetStringLiteral = 175
# the compile's tier facts (today's only: 3.1 numbers no packet past 174)
GetOSRInfo = 177
GetPgoInstrumentationResults = 187


def packet_name(packet_id: int) -> str:
    """SuperPMI's name for a packet id; unknown ids read `Packet<id>` (never an error)."""
    entry = PACKETS.get(packet_id)
    return entry[0] if entry else f"Packet{packet_id}"


class EraPacket(NamedTuple):
    name: str
    item_size: int  # bytes of one item (key + value) of its map, as that era writes it


# The ids under which 3.1's superpmi recorded another packet than today's: (3.1's, today's).
# 3.1: `enum mcPackets` in v3.1.23's src/ToolBox/superpmi/superpmi-shared/methodcontext.h, the key
# and value types in its lwmlist.h; today: the same files in dotnet/runtime's
# src/coreclr/tools/superpmi/superpmi-shared/. Item sizes from those types (DWORDLONG 8, DWORD 4,
# DD 8, Agnostic_PrintResult 12, DLDL 16, 3.1's Agnostic_AppendClassName 20); 66, 148 and 149 as
# 3.1's api.mch holds them (16, 12, 24). Today's size does not name today's packet: an era between
# may have had it too (2022's AppendClassName, Agnostic_AppendClassNameIn 12 + Out 8, is
# PrintClassName's 20). docs/mch-format.md 11.
REUSED_SINCE_31: dict[int, tuple[EraPacket, EraPacket]] = {
    10: (
        EraPacket("CanInlineTypeCheckWithObjectVTable", 8 + 4),
        EraPacket("PrintFieldName", 8 + 12),
    ),
    66: (EraPacket("GetIntrinsicID", 8 + 8), EraPacket("GetArrayIntrinsicID", 8 + 4)),
    112: (
        EraPacket("ShouldEnforceCallvirtRestriction", 8 + 4),
        EraPacket("DoesFieldBelongToClass", 16 + 4),
    ),
    148: (EraPacket("IsInSIMDModule", 8 + 4), EraPacket("IsIntrinsicType", 8 + 4)),  # alike
    149: (EraPacket("AppendClassName", 20 + 4), EraPacket("PrintClassName", 8 + 12)),
}


def packet_label(packet_id: int, item_size: int | None = None) -> str:
    """The packet's name where its id has one meaning, or 3.1's where its map's item size is 3.1's
    and not today's; else both ("IsIntrinsicType or 3.1's IsInSIMDModule"): never a guess."""
    eras = REUSED_SINCE_31.get(packet_id)
    if eras is None:
        return packet_name(packet_id)
    old, new = eras
    if item_size is not None and item_size == old.item_size != new.item_size:
        return f"{old.name} (3.1's item size)"
    return f"{new.name} or 3.1's {old.name}"


def short_name(packet_id: int) -> str:
    """Map name as it appears in code (`CompileResult::CompileMethod`): without the `PacketCR_`
    prefix."""
    name = packet_name(packet_id)
    return name.removeprefix("PacketCR_")


def is_compile_result(packet_id: int) -> bool:
    return packet_id in COMPILE_RESULT_IDS
