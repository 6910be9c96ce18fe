// The sample JIT's phases, in order, with the real JIT's enumerator names and display names
// (src/coreclr/jit/compphases.h names them; this is the subset the sample JIT runs). The includer defines
// CompPhaseNameMacro(enumName, stringName); this file undefines it.
CompPhaseNameMacro(PHASE_PRE_IMPORT,    "Pre-import")
CompPhaseNameMacro(PHASE_IMPORTATION,   "Importation")
CompPhaseNameMacro(PHASE_MORPH_GLOBAL,  "Morph - Global")
CompPhaseNameMacro(PHASE_FIND_LOOPS,    "Find loops")
CompPhaseNameMacro(PHASE_GENERATE_CODE, "Generate code")
CompPhaseNameMacro(PHASE_EMIT_CODE,     "Emit code")
#undef CompPhaseNameMacro
