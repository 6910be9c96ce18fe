// The sample JIT's driver: exports (jitStartup, getJit), CILJit::compileMethod, the Compiler and its
// target-independent phases (morph, loop canonicalization, frame layout), the arena and JIT asserts.
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <memory>
#include <new>
#include <tuple>

#include "jit.h"

#if defined(__x86_64__)
#define DEBUG_BREAK() __asm__ volatile("int3")
#elif defined(__aarch64__)
#define DEBUG_BREAK() __asm__ volatile("brk #0xf000")
#else
#define DEBUG_BREAK() __builtin_trap()
#endif

static ICorJitHost* g_jitHost = nullptr;

FILE* jitstdout() {
    static FILE* out = [] {
        const char* name = g_jitHost != nullptr ? g_jitHost->getStringConfigValue("JitStdOutFile") : nullptr;
        FILE* f = name != nullptr ? fopen(name, "a") : nullptr;
        if (name != nullptr) {
            g_jitHost->freeStringConfigValue(name);
        }
        return f != nullptr ? f : stdout;
    }();
    return out;
}

// The Compiler of the compile running on this thread (assertAbort reports through it).
static thread_local Compiler* t_compiler = nullptr;
class JitTls {
public:
    explicit JitTls(Compiler* comp) : m_prev(t_compiler) { t_compiler = comp; }
    ~JitTls() { t_compiler = m_prev; }
    JitTls(const JitTls&) = delete;
    JitTls& operator=(const JitTls&) = delete;
    static Compiler* GetCompiler() { return t_compiler; }

private:
    Compiler* m_prev;
};

// ------------------------------------------------------------------------------------ error paths
void fatal(CorJitResult result) { throw JitException{result}; }

void badCode(const char* why) {
    Compiler* comp = JitTls::GetCompiler();
    if (comp != nullptr && comp->verbose) {
        fprintf(jitstdout(), "BADCODE: %s\n", why);
    }
    fatal(CORJIT_BADCODE);
}

#if !SAMPLEJIT_RELEASE  // a Release JIT has no asserts: no assert report in its binary
// The real JIT's assert message: "Assertion failed '<expr>' in '<method>' during '<phase>' (IL size <n>;
// hash 0x<h>; <tier>)", which superpmi's doAssert prints after "ISSUE: <ASSERT> #<mc> <file> (<line>) - ".
static void formatAssert(Compiler* comp, const char* why, char* msg, size_t size) {
    char method[512] = "<unknown method>";
    try {
        comp->info.compCompHnd->printMethodName(comp->info.compMethodInfo->ftn, method, sizeof(method));
    } catch (...) {  // a name the collection did not record must not hide the assert itself
    }
    uint32_t hash = comp->compMethodHash();
    // SPMI_REPLAY_ERA=3.1 (the replay core's era switch, native/replay/README.md): the 3.1 JIT's message,
    // "Assertion failed '<expr>' in '<method>' (IL size <n>)\n": no phase, no hash, no tier, and a newline
    // that superpmi prints as an empty line after the ISSUE line.
    const char* era = getenv("SPMI_REPLAY_ERA");
    if (era != nullptr && strcmp(era, "3.1") == 0) {
        snprintf(msg, size, "Assertion failed '%s' in '%s' (IL size %u)\n", why, method, comp->info.compILCodeSize);
        return;
    }
    snprintf(msg, size, "Assertion failed '%s' in '%s' during '%s' (IL size %u; hash 0x%08x; %s)", why, method,
             comp->compPhaseDisplayName(), comp->info.compILCodeSize, hash, comp->opts.MinOpts() ? "MinOpts" : "FullOpts");
}

void assertAbort(const char* why, const char* file, unsigned line) {
    Compiler* comp = JitTls::GetCompiler();
    char msg[1024];
    if (comp != nullptr) {
        formatAssert(comp, why, msg, sizeof(msg));
    }
    // The host logs the assert; in SuperPMI doAssert raises an exception (which unwinds through us), or
    // returns true when the JIT should break into an attached debugger itself.
    if (comp != nullptr && comp->info.compCompHnd->doAssert(file, (int)line, msg)) {
        DEBUG_BREAK();
    }
    fatal(CORJIT_INTERNALERROR);
}
#endif

// ------------------------------------------------------------------------------------ arena
void* ArenaAllocator::allocateMemory(size_t size) {
    if (size > MAX_ARENA_SIZE) {
        fatal(CORJIT_OUTOFMEM);
    }
    size = (size + 7) & ~size_t(7);
    if (size <= size_t(m_end - m_cur)) {
        void* p = m_cur;
        m_cur += size;
        return p;
    }
    bool dedicated = size > DEFAULT_PAGE_SIZE / 4;
    size_t pageSize = sizeof(PageDesc) + (dedicated ? size : DEFAULT_PAGE_SIZE);
    m_total += pageSize;
    if (m_total > MAX_ARENA_SIZE) {
        fatal(CORJIT_OUTOFMEM);
    }
    void* mem = (m_host != nullptr) ? m_host->allocateMemory(pageSize) : malloc(pageSize);
    if (mem == nullptr) {
        fatal(CORJIT_OUTOFMEM);
    }
    PageDesc* page = static_cast<PageDesc*>(mem);
    page->next = m_pages;
    m_pages = page;
    char* data = reinterpret_cast<char*>(page + 1);
    if (dedicated) {
        return data;
    }
    m_cur = data + size;
    m_end = data + DEFAULT_PAGE_SIZE;
    return data;
}

ArenaAllocator::~ArenaAllocator() {
    while (m_pages != nullptr) {
        PageDesc* next = m_pages->next;
        if (m_host != nullptr) {
            m_host->freeMemory(m_pages);
        } else {
            free(m_pages);
        }
        m_pages = next;
    }
}

// ------------------------------------------------------------------------------------ Compiler
LargeFrameLayout* Compiler::s_lastLargeFrame = nullptr;

#if !SAMPLEJIT_ALT_SHAPE
// Exported with default visibility only in name: the version script keeps it out of .dynsym; it is in the
// debug info and the symbol table, as the real JIT's table is.
const char* PhaseNames[] = {
#define CompPhaseNameMacro(enumName, stringName) stringName,
#include "compphases.h"
};
#endif

// Out of line, as the real JIT's Phase::PrePhase sets it: the store is made before the phase's code runs, never
// moved past it (the optimizer may not sink it into or beyond a loop of the phase).
JIT_NOINLINE void Compiler::compBeginPhase(Phases phase) {
    mostRecentlyActivePhase = phase;
}

// A stress mode is on when JitStress is set and the mode is named in JitStressModeNames (and, when
// JitStressModeNamesAllow is set, named there too): the sample JIT stresses only named modes.
bool Compiler::compStressCompile(const char* mode) const {
    if (compStressLevel == 0) {
        return false;
    }
    std::string word = " " + std::string(mode) + " ";
    if (compStressModeNames.find(word) == std::string::npos) {
        return false;
    }
    return !compStressAllowSet || compStressModeNamesAllow.find(word) != std::string::npos;
}

// FNV-1a of the IL: stands in for the JIT's method hash (asserts and JitDump print it).
uint32_t Compiler::compMethodHash() const {
    uint32_t hash = 2166136261u;
    for (uint32_t i = 0; i < info.compILCodeSize; i++) {
        hash = (hash ^ info.compCode[i]) * 16777619u;
    }
    return hash;
}

// A test JIT's own variable, read from the process environment (not a JIT setting: superpmi's JIT host never
// answers it): SPMI_SAMPLE_FAULT_METHOD=<Class:Method or Method> makes the compile of that method read through a
// null pointer, as the one-off JITs engineers build to chase a bug do. The JIT says so on stdout unless
// SPMI_SAMPLE_FAULT_QUIET is set too.
void Compiler::compFaultIfAsked() const {
    static const char* const wanted = getenv("SPMI_SAMPLE_FAULT_METHOD");
    if (wanted == nullptr || *wanted == '\0') {
        return;
    }
    if (strcmp(wanted, info.compFullName) != 0 && strcmp(wanted, info.compMethodName) != 0) {
        return;
    }
    if (getenv("SPMI_SAMPLE_FAULT_QUIET") == nullptr) {
        fprintf(stdout, "sample JIT: SPMI_SAMPLE_FAULT_METHOD=%s: faulting in %s\n", wanted, info.compFullName);
        fflush(stdout);
    }
    static int* volatile s_nowhere = nullptr;
    *s_nowhere = 1;
}

// JitDump names a method set: `*` (every method), or space-separated `Class:Method` / `Method` names.
bool Compiler::compDumpRequested() const {
    if (compDumpMethods.empty()) {
        return false;
    }
    for (const char* name : {"*", info.compFullName, info.compMethodName}) {
        if (name != nullptr && compDumpMethods.find(" " + std::string(name) + " ") != std::string::npos) {
            return true;
        }
    }
    return false;
}

const char* Compiler::compPhaseDisplayName() const {
#if SAMPLEJIT_ALT_SHAPE
    static const char* const names[] = {"Setup", "Profile", "Instrument",
#define CompPhaseNameMacro(enumName, stringName) stringName,
#include "compphases.h"
    };
    return names[mostRecentlyActivePhase];
#else
    return PhaseNames[mostRecentlyActivePhase];
#endif
}

Compiler::Compiler(ICorJitHost* host, ICorJitInfo* compHnd, CORINFO_METHOD_INFO* methodInfo)
    : compMethodSuperPMIIndex(-1), info(), opts(), verbose(false), mostRecentlyActivePhase(PHASE_PRE_IMPORT),
      impCurStmtOffs(0x80000000u), compArena(host), m_host(host) {
    info.compCompHnd = compHnd;
    info.compMethodInfo = methodInfo;
    info.compCode = methodInfo->ILCode;
    info.compILCodeSize = methodInfo->ILCodeSize;
    info.compArgsCount = methodInfo->args.numArgs;
    info.compLocalsCount = methodInfo->locals.numArgs;
    info.compRetType = methodInfo->args.retType;
}

Compiler::~Compiler() {
    // The large frame layout belongs to this compile.
    // BUG (poison): s_lastLargeFrame still points at it once it is freed.
    if (lvaLargeFrame != nullptr) {
        free(lvaLargeFrame);
    }
}

static const char* const s_opNames[GT_COUNT] = {
    "CNS_INT", "LCL_VAR", "STORE_LCL_VAR", "CALL", "RETURN", "JTRUE", "NEG", "NOT", "ADD", "SUB", "MUL",
    "DIV", "MOD", "AND", "OR", "XOR", "LSH", "RSH", "EQ", "NE", "LT", "LE", "GE", "GT"};

const char* GenTreeOpName(genTreeOps oper) { return oper < GT_COUNT ? s_opNames[oper] : "?"; }

GenTree* Compiler::gtNewNode(genTreeOps oper) {
    GenTree* node = getAllocator<GenTree>();
    memset(static_cast<void*>(node), 0, sizeof(GenTree));
    node->gtOper = oper;
    return node;
}

GenTree* Compiler::gtNewIconNode(int64_t value) {
    GenTree* node = gtNewNode(GT_CNS_INT);
    node->gtIconVal = value;
    return node;
}

GenTree* Compiler::gtNewLclvNode(unsigned lclNum) {
    GenTree* node = gtNewNode(GT_LCL_VAR);
    node->gtLclNum = lclNum;
    return node;
}

GenTree* Compiler::gtNewOperNode(genTreeOps oper, GenTree* op1, GenTree* op2) {
    GenTree* node = gtNewNode(oper);
    node->gtOp1 = op1;
    node->gtOp2 = op2;
    return node;
}

GenTree* Compiler::gtNewStoreLclNode(unsigned lclNum, GenTree* value) {
    GenTree* node = gtNewOperNode(GT_STORE_LCL_VAR, value);
    node->gtLclNum = lclNum;
    return node;
}

void Compiler::gtFormatNode(GenTree* tree, char* buf, size_t size) {
    switch (tree->gtOper) {
        case GT_CNS_INT:
            snprintf(buf, size, "[%p] CNS_INT %" PRId64, static_cast<void*>(tree), tree->gtIconVal);
            break;
        case GT_LCL_VAR:
        case GT_STORE_LCL_VAR:
            snprintf(buf, size, "[%p] %s V%02u", static_cast<void*>(tree), GenTreeOpName(tree->gtOper), tree->gtLclNum);
            break;
        case GT_CALL:
            snprintf(buf, size, "[%p] CALL %p (%u args)", static_cast<void*>(tree), tree->gtCallMethHnd, tree->gtCallArgCount);
            break;
        default:
            snprintf(buf, size, "[%p] %s", static_cast<void*>(tree), GenTreeOpName(tree->gtOper));
            break;
    }
}

AddCodeDsc* Compiler::fgFindExcptnTarget(SpecialCodeKind kind) {
    for (AddCodeDsc* add = fgAddCodeList; add != nullptr; add = add->acdNext) {
        if (add->acdKind == kind) {
            return add;
        }
    }
    return nullptr;
}

// Division by a small IL constant (ldc.i4.0 .. ldc.i4.8 right before the div): x / 1 is x; x / 0
// always throws, so the division is redirected to the method's DivideByZeroException throw block.
GenTree* Compiler::gtFoldDivByConst(GenTree* dividend, int64_t divisor) {
    if (divisor == 1) {
        return dividend;
    }
    if (divisor == 0) {
        // BUG (jit-null): throw helper blocks are only created on demand during codegen, so the list is
        // still empty here and `add` is null: this reads acdDstBlk through a null pointer.
        AddCodeDsc* add = fgFindExcptnTarget(SCK_DIV_BY_ZERO);
        BasicBlock* throwBlk = add->acdDstBlk;
        throwBlk->bbRefs++;
        add->acdRefCount++;
    }
    return gtNewOperNode(GT_DIV, dividend, gtNewIconNode(divisor));
}

// Remainder by a small IL constant (1..8), folded only under stress (JitStress=2 with STRESS_FOLD named): the
// stress-only assert of the sample JIT, for tools that narrow stress settings. Powers of two become a mask;
// the others keep their GT_MOD after the magic-number lookup.
GenTree* Compiler::gtFoldModByConst(GenTree* dividend, int64_t divisor) {
    // BUG (stress-assert): the table has no entry for 6, and `ldc.i4.6; rem` is valid IL.
    static const uint32_t magic[9] = {0, 1, 1, 0x55555556u, 1, 0x66666667u, 0, 0x92492493u, 1};
    assert(divisor > 0 && divisor <= 8 && magic[divisor] != 0);
    if ((divisor & (divisor - 1)) == 0) {
        return gtNewOperNode(GT_AND, dividend, gtNewIconNode(divisor - 1));
    }
    return gtNewOperNode(GT_MOD, dividend, gtNewIconNode(divisor));
}

// ------------------------------------------------------------------------------------ morph
// Post-order walk of every statement: commutative operators get their constant operand second (the
// code generators have immediate forms for it). Recursive, like the real fgMorphTree.
GenTree* Compiler::fgMorphTree(GenTree* tree) {
    char dumpText[352];  // JitDump: the node as it was before morphing
    if (verbose) {
        gtFormatNode(tree, dumpText, sizeof(dumpText));
    }
    if (tree->gtOper == GT_CALL) {
        for (unsigned i = 0; i < tree->gtCallArgCount; i++) {
            tree->gtCallArgs[i] = fgMorphTree(tree->gtCallArgs[i]);
        }
    } else {
        if (tree->gtOp1 != nullptr) {
            tree->gtOp1 = fgMorphTree(tree->gtOp1);
        }
        if (tree->gtOp2 != nullptr) {
            tree->gtOp2 = fgMorphTree(tree->gtOp2);
        }
    }
    switch (tree->gtOper) {
        case GT_ADD:
        case GT_MUL:
        case GT_AND:
        case GT_OR:
        case GT_XOR:
            if (tree->gtOp1->gtOper == GT_CNS_INT && tree->gtOp2->gtOper != GT_CNS_INT) {
                GenTree* tmp = tree->gtOp1;
                tree->gtOp1 = tree->gtOp2;
                tree->gtOp2 = tmp;
            }
            break;
        default:
            break;
    }
    if (verbose) {
        fprintf(jitstdout(), "fgMorphTree %s\n", dumpText);
    }
    return tree;
}

void Compiler::fgMorph() {
    for (BasicBlock* block = fgFirstBB; block != nullptr; block = block->bbNext) {
        for (Statement* stmt = block->bbStmtList; stmt != nullptr; stmt = stmt->gtNext) {
            stmt->gtStmtExpr = fgMorphTree(stmt->gtStmtExpr);
        }
    }
}

// ------------------------------------------------------------------------------------ loops
// Every back edge defines a loop; its top is the first block of the loop with code. Jump-only blocks at
// the loop top are skipped (with a budget, in case they form a cycle).
void Compiler::optCanonicalizeLoops() {
    for (BasicBlock* bottom = fgFirstBB; bottom != nullptr; bottom = bottom->bbNext) {
        if (bottom->bbJumpKind != BBJ_ALWAYS && bottom->bbJumpKind != BBJ_COND) {
            continue;
        }
        BasicBlock* top = bottom->bbJumpDest;
        if (top->bbNum > bottom->bbNum) {
            continue;  // a forward edge
        }
        unsigned budget = fgBBcount;
        while (top->isJumpOnly() && budget != 0) {
            top->bbFlags |= BBF_LOOP_HEAD;
            if (top->bbJumpDest == top) {
                // BUG (hang): a block that only jumps to itself has no top with code; this should give up
                // (break), but retries the same block forever.
                continue;
            }
            top = top->bbJumpDest;
            budget--;
        }
        top->bbFlags |= BBF_LOOP_HEAD;
        optLoopCount++;
    }
}

// ------------------------------------------------------------------------------------ frame
// Methods with many locals get their frame layout in a separately allocated block; the last one is
// remembered in s_lastLargeFrame (see impFlushLargeFrameCache).
void Compiler::lvaAllocLargeFrame() {
    lvaLargeFrame = static_cast<LargeFrameLayout*>(malloc(sizeof(LargeFrameLayout)));
    if (lvaLargeFrame == nullptr) {
        fatal(CORJIT_OUTOFMEM);
    }
    memset(lvaLargeFrame, 0, sizeof(LargeFrameLayout));
    s_lastLargeFrame = lvaLargeFrame;
}

void Compiler::lvaAssignFrameOffsets() {
    if (info.compLocalsCount < 9) {
        return;
    }
    lvaAllocLargeFrame();
    unsigned count = lvaCount() < 248 ? lvaCount() : 248;
    for (unsigned lcl = 0; lcl < count; lcl++) {
        lvaLargeFrame->lfLclOffs[lcl] = -8 * (int32_t)(lcl + 1);
    }
    lvaLargeFrame->lfLclCount = count;
    lvaLargeFrame->lfFrameSize = 8 * lvaCount();
    if (verbose) {
        fprintf(jitstdout(), "Large frame: %u locals, %u bytes\n", lvaLargeFrame->lfLclCount, lvaLargeFrame->lfFrameSize);
    }
}

// ------------------------------------------------------------------------------------ compile
const char* Compiler::eeGetMethodName(char* buf, size_t size) {
    struct Param {
        Compiler* comp;
        char* buf;
        size_t size;
    } param = {this, buf, size};
    buf[0] = '\0';
    bool ok = info.compCompHnd->runWithErrorTrap(
        [](void* arg) {
            Param* p = static_cast<Param*>(arg);
            p->comp->info.compCompHnd->printMethodName(p->comp->info.compMethodInfo->ftn, p->buf, p->size);
        },
        &param);
    if (!ok) {
        snprintf(buf, size, "<unknown method>");
    }
    return buf;
}

// info.compFullName ("Class:Method"), compMethodName and compClassName, as the JIT knows them while it compiles.
// A name the collection did not record leaves them "<unknown method>": naming is never why a compile fails.
void Compiler::compSetMethodNames() {
    char name[512] = "<unknown method>";
    try {
        info.compCompHnd->printMethodName(info.compMethodInfo->ftn, name, sizeof(name));
    } catch (...) {
        snprintf(name, sizeof(name), "<unknown method>");
    }
    size_t len = strlen(name);
    char* full = getAllocator<char>(len + 1);
    memcpy(full, name, len + 1);
    const char* colon = strrchr(full, ':');
    char* cls = getAllocator<char>(colon != nullptr ? size_t(colon - full) + 1 : 1);
    if (colon != nullptr) {
        memcpy(cls, full, size_t(colon - full));
    }
    cls[colon != nullptr ? colon - full : 0] = '\0';
    info.compFullName = full;
    info.compMethodName = colon != nullptr ? colon + 1 : full;
    info.compClassName = cls;
}

static constexpr uint32_t MAX_IL_CODE_SIZE = 1u << 20;
static constexpr unsigned MAX_LCL_COUNT = 0xFFFF;

CorJitResult Compiler::compCompile(uint8_t** nativeEntry, uint32_t* nativeSizeOfCode) {
    if (m_host != nullptr) {
        compMethodSuperPMIIndex = m_host->getIntConfigValue("SuperPMIMethodContextNumber", -1);
        opts.compDisasmSummary = m_host->getIntConfigValue("JitDisasmSummary", 0) != 0;
        opts.compMinOpts = m_host->getIntConfigValue("JitMinOpts", 0) != 0;
#if !SAMPLEJIT_RELEASE  // the real JIT's JitDump and stress settings are DEBUG-only
        const char* dump = m_host->getStringConfigValue("JitDump");  // a method set, as in the real JIT
        if (dump != nullptr) {
            compDumpMethods = " " + std::string(dump) + " ";
            m_host->freeStringConfigValue(dump);
        }
        compStressLevel = m_host->getIntConfigValue("JitStress", 0);
        for (auto [name, dest, set] : {std::tuple{"JitStressModeNames", &compStressModeNames, (bool*)nullptr},
                                       std::tuple{"JitStressModeNamesAllow", &compStressModeNamesAllow,
                                                  &compStressAllowSet}}) {
            const char* value = m_host->getStringConfigValue(name);
            if (value != nullptr) {
                *dest = " " + std::string(value) + " ";
                if (set != nullptr) {
                    *set = true;
                }
                m_host->freeStringConfigValue(value);
            }
        }
#endif
    }
    CORJIT_FLAGS jitFlags = {};
    info.compCompHnd->getJitFlags(&jitFlags, sizeof(jitFlags));
    if ((jitFlags.corJitFlags & CORJIT_FLAG_MIN_OPT) != 0) {
        opts.compMinOpts = true;
    }
    info.compTargetArch = info.compCompHnd->getExpectedTargetArchitecture();
    if (info.compTargetArch != IMAGE_FILE_MACHINE_AMD64 && info.compTargetArch != IMAGE_FILE_MACHINE_ARM64) {
        return CORJIT_SKIPPED;  // like an altjit asked for another target
    }
    if (info.compCode == nullptr || info.compILCodeSize == 0 || info.compILCodeSize > MAX_IL_CODE_SIZE) {
        BADCODE("IL code size");
    }
    if (info.compArgsCount > MAX_LCL_COUNT || info.compLocalsCount > MAX_LCL_COUNT) {
        BADCODE("too many arguments or locals");
    }

    compSetMethodNames();
    compFaultIfAsked();
    verbose = compDumpRequested();
    if (verbose) {  // the real JIT's first JitDump line
        fprintf(jitstdout(), "****** START compiling %s (MethodHash=%08x)\n", info.compFullName, compMethodHash());
    }
    compBeginPhase(PHASE_PRE_IMPORT);
    fgFindBasicBlocks();
    compBeginPhase(PHASE_IMPORTATION);
    impImport();
    compBeginPhase(PHASE_MORPH_GLOBAL);
    fgMorph();
    compBeginPhase(PHASE_FIND_LOOPS);
    optCanonicalizeLoops();
    compBeginPhase(PHASE_GENERATE_CODE);
    lvaAssignFrameOffsets();
    if (verbose) {
        fprintf(jitstdout(), "%u blocks, %u loops, %u spill temps\n", fgBBcount, optLoopCount, lvaSpillTempCount);
    }

    std::unique_ptr<CodeGen> codeGen(info.compTargetArch == IMAGE_FILE_MACHINE_ARM64 ? getCodeGeneratorArm64(this)
                                                                                     : getCodeGeneratorXArch(this));
    if (!codeGen->genGenerateCode(/* farMode */ false) && !codeGen->genGenerateCode(/* farMode */ true)) {
        fatal(CORJIT_IMPLLIMITATION);
    }

    compBeginPhase(PHASE_EMIT_CODE);
    AllocMemArgs args = {};
    args.hotCodeSize = codeGen->genHotCodeSize();
    info.compCompHnd->allocMem(&args);
    void* dst = args.hotCodeBlockRW != nullptr ? args.hotCodeBlockRW : args.hotCodeBlock;
    if (dst == nullptr) {
        fatal(CORJIT_OUTOFMEM);
    }
    codeGen->genCopyCode(static_cast<uint8_t*>(dst));
    *nativeEntry = static_cast<uint8_t*>(args.hotCodeBlock);
    *nativeSizeOfCode = codeGen->genCodeSize();

    if (opts.compDisasmSummary) {
        char name[256];
        fprintf(jitstdout(), "JIT compiled %s [%s, IL size=%u, code size=%u]\n", eeGetMethodName(name, sizeof(name)),
               opts.MinOpts() ? "MinOpts" : "FullOpts", info.compILCodeSize, *nativeSizeOfCode);
        fflush(jitstdout());
    }
    return CORJIT_OK;
}

// ------------------------------------------------------------------------------------ CILJit
class CILJit : public ICorJitCompiler {
public:
    CorJitResult compileMethod(ICorJitInfo* comp, CORINFO_METHOD_INFO* methodInfo, unsigned flags,
                               uint8_t** nativeEntry, uint32_t* nativeSizeOfCode) override;
    void ProcessShutdownWork() override {}
};

CorJitResult CILJit::compileMethod(ICorJitInfo* comp, CORINFO_METHOD_INFO* methodInfo, unsigned flags,
                                   uint8_t** nativeEntry, uint32_t* nativeSizeOfCode) {
    (void)flags;
    if (comp == nullptr || methodInfo == nullptr || nativeEntry == nullptr || nativeSizeOfCode == nullptr) {
        return CORJIT_INTERNALERROR;
    }
    *nativeEntry = nullptr;
    *nativeSizeOfCode = 0;
    // Only the JIT's own errors are caught here; host exceptions propagate to the host.
    try {
        Compiler compiler(g_jitHost, comp, methodInfo);
        JitTls tls(&compiler);
        return compiler.compCompile(nativeEntry, nativeSizeOfCode);
    } catch (const JitException& e) {
        return e.result;
    } catch (const std::bad_alloc&) {
        return CORJIT_OUTOFMEM;
    }
}

JIT_EXPORT void jitStartup(ICorJitHost* host) { g_jitHost = host; }

JIT_EXPORT ICorJitCompiler* getJit() {
    static CILJit s_ilJitter;
    return &s_ilJitter;
}
