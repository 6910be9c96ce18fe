// The method context maps this core reads (superpmi-shared/lwmlist.h, an X-macro list):
// LWM(map, key, value) and DENSELWM(map, value); the packet id is Packet_<map> (methodcontext.h).
#ifndef LWM
#define LWM(map, key, value)
#endif
#ifndef DENSELWM
#define DENSELWM(map, value)
#endif

LWM(CompileMethod, DWORD, Agnostic_CompileMethod)
LWM(GetClassName, DWORDLONG, DWORD)
LWM(GetExpectedTargetArchitecture, DWORD, DWORD)
LWM(GetIntConfigValue, Agnostic_ConfigIntInfo, DWORD)
LWM(GetJitFlags, DWORD, DD)
LWM(GetMethodAttribs, DWORDLONG, DWORD)
LWM(GetMethodClass, DWORDLONG, DWORDLONG)
LWM(GetMethodHash, DWORDLONG, DWORD)
LWM(GetMethodInfo, DWORDLONG, Agnostic_GetMethodInfo)
LWM(GetMethodSig, DLDL, Agnostic_CORINFO_SIG_INFO)
LWM(GetStringConfigValue, DWORD, DWORD)
LWM(PrintClassName, DWORDLONG, Agnostic_PrintResult)
LWM(PrintMethodName, DWORDLONG, Agnostic_PrintResult)
LWM(ResolveToken, Agnostic_CORINFO_RESOLVED_TOKENin, ResolveTokenValue)
DENSELWM(SigInstHandleMap, DWORDLONG)

#undef LWM
#undef DENSELWM
