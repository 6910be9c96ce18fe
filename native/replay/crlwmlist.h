// The compile result maps this core reads and writes (superpmi-shared/crlwmlist.h, an X-macro list):
// the packet id is PacketCR_<map>.
#ifndef LWM
#define LWM(map, key, value)
#endif
#ifndef DENSELWM
#define DENSELWM(map, value)
#endif

LWM(AllocGCInfo, DWORD, Agnostic_AllocGCInfo)
LWM(AllocMem, DWORD, Agnostic_AllocMemDetails)
LWM(CompileMethod, DWORD, Agnostic_CompileMethodResults)
DENSELWM(RecordRelocation, Agnostic_RecordRelocation)

#undef LWM
#undef DENSELWM
