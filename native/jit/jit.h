// The sample JIT: internal declarations shared by the compiler driver, the importer and the code
// generators. Names follow dotnet/runtime's RyuJIT (Compiler, GenTree, BasicBlock, CodeGen, emitter,
// impImport, fgMorphTree, lva*, assertAbort) so that debugger tooling keyed on them works on both.
#ifndef SAMPLEJIT_JIT_H
#define SAMPLEJIT_JIT_H

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "corinfo.h"

#ifndef SAMPLEJIT_DIFF
#define SAMPLEJIT_DIFF 0
#endif
#ifndef SAMPLEJIT_ALT_SHAPE
#define SAMPLEJIT_ALT_SHAPE 0
#endif
#ifndef SAMPLEJIT_RELEASE
#define SAMPLEJIT_RELEASE 0
#endif

#define JIT_NOINLINE __attribute__((noinline))

// ---------------------------------------------------------------------------------------------------
// Error handling. Every JIT failure unwinds (a C++ exception of the JIT's own type) to
// CILJit::compileMethod, which turns it into a CorJitResult. Exceptions thrown by the host (missing
// data, recorded EE exceptions, doAssert) are not caught by the JIT: they pass through its frames, which
// only hold RAII state.
struct JitException {
    CorJitResult result;
};

[[noreturn]] void fatal(CorJitResult result);
[[noreturn]] void badCode(const char* why);
// JIT assert: reports through ICorJitInfo::doAssert, breaks into the debugger if the host says so, then
// fails the compile (CORJIT_INTERNALERROR).
[[noreturn]] void assertAbort(const char* why, const char* file, unsigned line);

#undef assert
#if SAMPLEJIT_RELEASE  // libsamplejit_release.so: asserts compiled out, as in a Release JIT
#define assert(p) ((void)sizeof((p) ? 1 : 0))
#else
#define assert(p) (void)((p) || (assertAbort(#p, __FILE__, __LINE__), 0))
#endif
#define BADCODE(msg) badCode(msg)

// ---------------------------------------------------------------------------------------------------
// Per-compile arena (pages from ICorJitHost::allocateMemory, released when the Compiler dies).
class ArenaAllocator {
public:
    explicit ArenaAllocator(ICorJitHost* host) : m_host(host) {}
    ~ArenaAllocator();
    ArenaAllocator(const ArenaAllocator&) = delete;
    ArenaAllocator& operator=(const ArenaAllocator&) = delete;
    void* allocateMemory(size_t size);

private:
    struct PageDesc {
        PageDesc* next;
    };
    static constexpr size_t DEFAULT_PAGE_SIZE = 64 * 1024;
    static constexpr size_t MAX_ARENA_SIZE = size_t(1) << 30;  // bounded memory: beyond this, OUTOFMEM
    ICorJitHost* m_host;
    PageDesc* m_pages = nullptr;
    char* m_cur = nullptr;
    char* m_end = nullptr;
    size_t m_total = 0;
};

// ---------------------------------------------------------------------------------------------------
// IR: expression trees in statements in basic blocks.
enum genTreeOps : uint8_t {
    GT_CNS_INT, GT_LCL_VAR, GT_STORE_LCL_VAR, GT_CALL, GT_RETURN, GT_JTRUE,            // leaves, roots
    GT_NEG, GT_NOT,                                                                     // unary
    GT_ADD, GT_SUB, GT_MUL, GT_DIV, GT_MOD, GT_AND, GT_OR, GT_XOR, GT_LSH, GT_RSH,      // binary
    GT_EQ, GT_NE, GT_LT, GT_LE, GT_GE, GT_GT,                                           // relops
    GT_COUNT
};

inline bool GenTreeIsRelop(genTreeOps oper) { return oper >= GT_EQ && oper <= GT_GT; }
inline bool GenTreeIsBinop(genTreeOps oper) { return oper >= GT_ADD && oper <= GT_GT; }
const char* GenTreeOpName(genTreeOps oper);

struct GenTree {
    genTreeOps gtOper;
    CorInfoType gtCallRetType;       // GT_CALL
    unsigned gtLclNum;               // GT_LCL_VAR, GT_STORE_LCL_VAR
    unsigned gtCallArgCount;         // GT_CALL
    GenTree* gtOp1;                  // operand / stored value / returned value / condition
    GenTree* gtOp2;
    int64_t gtIconVal;               // GT_CNS_INT
    GenTree** gtCallArgs;            // GT_CALL, in IL order
    CORINFO_METHOD_HANDLE gtCallMethHnd;

    bool OperIsLeaf() const { return gtOper == GT_CNS_INT || gtOper == GT_LCL_VAR; }
    bool IsIntegralConst(int64_t v) const { return gtOper == GT_CNS_INT && gtIconVal == v; }
};

struct Statement {
    GenTree* gtStmtExpr;
    Statement* gtNext;
};

enum BBjumpKinds : uint8_t { BBJ_NONE, BBJ_ALWAYS, BBJ_COND, BBJ_RETURN };
enum : unsigned { BBF_LOOP_HEAD = 1 };

struct BasicBlock {
    unsigned bbNum;
    unsigned bbFlags;
    uint32_t bbCodeOffs;     // IL range [bbCodeOffs, bbCodeOffsEnd)
    uint32_t bbCodeOffsEnd;
    uint32_t bbJumpOffs;     // IL offset of the block's last instruction
    BBjumpKinds bbJumpKind;
    BasicBlock* bbJumpDest;  // BBJ_ALWAYS / BBJ_COND
    BasicBlock* bbNext;
    Statement* bbStmtList;
    Statement* bbStmtLast;
    int bbEntryDepth;        // evaluation stack depth on entry (-1: not yet known)
    unsigned bbRefs;
    uint32_t bbEmitOffs;     // native offset of the block's code (codegen)

    // An unconditional jump and nothing else in the IL.
    bool isJumpOnly() const { return bbJumpKind == BBJ_ALWAYS && bbJumpOffs == bbCodeOffs; }
};

// Throw helper blocks (one per kind of exception the method's code may raise), created on demand.
enum SpecialCodeKind { SCK_DIV_BY_ZERO, SCK_ARITH_EXCPN };
struct AddCodeDsc {
    AddCodeDsc* acdNext;
    SpecialCodeKind acdKind;
    BasicBlock* acdDstBlk;   // the throw block
    unsigned acdRefCount;
};

// Frame layout for methods with many locals, allocated apart from the arena (see lvaAllocLargeFrame).
struct LargeFrameLayout {
    uint32_t lfLclCount;
    uint32_t lfFrameSize;
    int32_t lfLclOffs[248];
};
static_assert(sizeof(LargeFrameLayout) == 1000, "glibc tcache class 1008: see lvaAllocLargeFrame");

// ---------------------------------------------------------------------------------------------------
// The emitter: a code buffer with block labels, fixups and (Arm64) a literal pool.
class emitter {
public:
    enum FixupKind : uint8_t { FIX_REL32, FIX_A64_B26, FIX_A64_B19, FIX_A64_LIT19 };
    struct Fixup {
        uint32_t offs;        // the instruction (Arm64) or the rel32 field (x64)
        FixupKind kind;
        BasicBlock* target;   // branch target, or nullptr for a literal
        uint32_t litIndex;
    };

    std::vector<uint8_t> emitCode;
    std::vector<Fixup> emitFixups;
    std::vector<uint64_t> emitLiterals;

    uint32_t emitCurOffset() const { return (uint32_t)emitCode.size(); }
    void emitOut8(uint8_t b) { emitCode.push_back(b); }
    void emitOut32(uint32_t v);
    void emitOut64(uint64_t v);
    void emitPatch32(uint32_t offs, uint32_t v);
    uint32_t emitRead32(uint32_t offs) const;
    uint32_t emitLiteralIndex(uint64_t value);
    void emitAddFixup(FixupKind kind, BasicBlock* target, uint32_t litIndex = 0);
};

// ---------------------------------------------------------------------------------------------------
class Compiler;

// Target-independent driver; codegenxarch.cpp and codegenarm64.cpp implement the target parts.
class CodeGen {
public:
    explicit CodeGen(Compiler* comp) : compiler(comp) {}
    virtual ~CodeGen() = default;
    CodeGen(const CodeGen&) = delete;
    CodeGen& operator=(const CodeGen&) = delete;

    // Generates the whole method into GetEmitter(); returns false if it must be redone in "far" mode
    // (Arm64 branch or literal out of range).
    bool genGenerateCode(bool farMode);
    emitter* GetEmitter() { return &m_emitter; }
    // Bytes of instructions (nativeSizeOfCode) and of the whole hot code block (+ padding + pool).
    uint32_t genCodeSize() const { return m_codeSize; }
    uint32_t genHotCodeSize() const { return m_hotCodeSize; }
    void genCopyCode(uint8_t* dst) const;

protected:
    Compiler* compiler;
    emitter m_emitter;
    bool m_farMode = false;
    uint32_t m_codeSize = 0;
    uint32_t m_hotCodeSize = 0;

    void genCodeForBBlist();
    // Binary operands: op1 into the first temp register, op2 into the second.
    void genConsumeOperands(GenTree* tree);

    // Target parts.
    virtual void genFnProlog() = 0;
    virtual void genFnEpilog() = 0;
    virtual void genCodeForTreeNode(GenTree* tree) = 0;   // value into rax / x0
    virtual void genCall(GenTree* call) = 0;
    virtual void genStoreLclVar(unsigned lclNum) = 0;     // from rax / x0
    virtual void genPushReg0() = 0;
    virtual void genPopReg0() = 0;
    virtual void genMoveReg0ToReg1() = 0;
    virtual void genLoadLeafToReg1(GenTree* leaf) = 0;
    virtual void genJumpTrue(GenTree* relop, BasicBlock* target) = 0;
    virtual void genJump(BasicBlock* target) = 0;
    virtual bool genResolveFixups() = 0;   // false: out of range (redo in far mode)
};

CodeGen* getCodeGeneratorXArch(Compiler* comp);
// Where the JIT's own output goes: the file named by JitStdOutFile (opened once, appended to), else stdout.
FILE* jitstdout();
CodeGen* getCodeGeneratorArm64(Compiler* comp);

// ---------------------------------------------------------------------------------------------------
// The phases (compphases.h), as the real JIT declares them: `enum Phases` and the display names in
// `PhaseNames[]`, indexed by the enumerator. SAMPLEJIT_ALT_SHAPE (libsamplejit_alt.so) is a JIT shaped
// differently for the tool's tests: other phase numbers (enumerators before the real ones), other members
// around the ones the tool reads, and no PhaseNames table (as a JIT whose table is not in its symbols).
enum Phases {
#if SAMPLEJIT_ALT_SHAPE
    PHASE_ALT_SETUP,
    PHASE_ALT_PROFILE,
    PHASE_ALT_INSTRUMENT,
#endif
#define CompPhaseNameMacro(enumName, stringName) enumName,
#include "compphases.h"
    PHASE_NUMBER_OF
};
#if !SAMPLEJIT_ALT_SHAPE
extern const char* PhaseNames[];
#endif

class Compiler {
public:
    Compiler(ICorJitHost* host, ICorJitInfo* compHnd, CORINFO_METHOD_INFO* methodInfo);
    ~Compiler();
    Compiler(const Compiler&) = delete;
    Compiler& operator=(const Compiler&) = delete;

    CorJitResult compCompile(uint8_t** nativeEntry, uint32_t* nativeSizeOfCode);

#if SAMPLEJIT_ALT_SHAPE
    void* compAltState[5];  // other members before the ones the tool reads
    Phases compAltPreviousPhase;
#endif
    // The method context number under SuperPMI (-1 otherwise): the real JIT's field of this name.
    int compMethodSuperPMIIndex;

    struct Info {
#if SAMPLEJIT_ALT_SHAPE
        uint64_t compAltFlags[3];
        const char* compMethodName;
        unsigned compAltCount;
        const char* compFullName;
        const char* compClassName;
#endif
        ICorJitInfo* compCompHnd;
        CORINFO_METHOD_INFO* compMethodInfo;
        const uint8_t* compCode;
        uint32_t compILCodeSize;
        unsigned compArgsCount;
        unsigned compLocalsCount;
        CorInfoType compRetType;
        uint32_t compTargetArch;
#if !SAMPLEJIT_ALT_SHAPE
        // The method being compiled, as the real JIT names these members: "Class:Method", "Method", "Class".
        const char* compFullName;
        const char* compMethodName;
        const char* compClassName;
#endif
    } info;

    struct Options {
        bool compMinOpts;
        bool compDisasmSummary;
        bool MinOpts() const { return compMinOpts; }
    } opts;
    bool verbose = false;
    // JIT stress (the real JIT's settings): JitStress is the level; JitStressModeNames names the modes to stress
    // (space-separated, STRESS_*), JitStressModeNamesAllow restricts them. compStressCompile says whether a mode
    // is on for this compile.
    int compStressLevel = 0;
    std::string compStressModeNames;
    std::string compStressModeNamesAllow;
    bool compStressAllowSet = false;
    bool compStressCompile(const char* mode) const;
    std::string compDumpMethods;  // JitDump's method set, space-padded (empty: no dump)
    bool compDumpRequested() const;
    void compFaultIfAsked() const;
    uint32_t compMethodHash() const;
    JIT_NOINLINE GenTree* gtFoldModByConst(GenTree* dividend, int64_t divisor);
    Phases mostRecentlyActivePhase;  // the phase running now (the real JIT's member of this name)
    // The IL offset of the statement being imported (3.1's member of this name: an IL_OFFSETX,
    // BAD_IL_OFFSET 0x80000000 before the first).
    uint32_t impCurStmtOffs;
    JIT_NOINLINE void compBeginPhase(Phases phase);
    const char* compPhaseDisplayName() const;

    ArenaAllocator compArena;
    template <class T>
    T* getAllocator(size_t count = 1) {
        if (count > (size_t(1) << 32)) {
            fatal(CORJIT_OUTOFMEM);
        }
        return static_cast<T*>(compArena.allocateMemory(sizeof(T) * count));
    }

    // Locals: arguments [0, argCount), IL locals, then the importer's stack spill temps.
    unsigned lvaCount() const { return info.compArgsCount + info.compLocalsCount + lvaSpillTempCount; }
    unsigned lvaSpillTempBase() const { return info.compArgsCount + info.compLocalsCount; }
    unsigned lvaSpillTempCount = 0;
    LargeFrameLayout* lvaLargeFrame = nullptr;
    static LargeFrameLayout* s_lastLargeFrame;

    // Flow graph.
    BasicBlock* fgFirstBB = nullptr;
    unsigned fgBBcount = 0;
    AddCodeDsc* fgAddCodeList = nullptr;
    unsigned optLoopCount = 0;

    // Tree construction.
    GenTree* gtNewNode(genTreeOps oper);
    GenTree* gtNewIconNode(int64_t value);
    GenTree* gtNewLclvNode(unsigned lclNum);
    GenTree* gtNewOperNode(genTreeOps oper, GenTree* op1, GenTree* op2 = nullptr);
    GenTree* gtNewStoreLclNode(unsigned lclNum, GenTree* value);
    GenTree* gtFoldExpr(GenTree* tree);
    void gtFormatNode(GenTree* tree, char* buf, size_t size);
    JIT_NOINLINE GenTree* gtFoldDivByConst(GenTree* dividend, int64_t divisor);
    JIT_NOINLINE AddCodeDsc* fgFindExcptnTarget(SpecialCodeKind kind);

    // Phases.
    void fgFindBasicBlocks();
    void impImport();
    void fgMorph();
    JIT_NOINLINE GenTree* fgMorphTree(GenTree* tree);
    JIT_NOINLINE void optCanonicalizeLoops();
    void lvaAssignFrameOffsets();
    void lvaAllocLargeFrame();

    const char* eeGetMethodName(char* buf, size_t size);
    void compSetMethodNames();

private:
    ICorJitHost* m_host;

    // Importer state.
    std::vector<GenTree*> impStack;
    unsigned impSpilledDepth = 0;   // entries below this depth are already their spill temps
    BasicBlock* compCurBB = nullptr;

    void impImportBlock(BasicBlock* block);
    void impPushOnStack(GenTree* tree);
    GenTree* impPopStack();
    void impSpillStack();
    void impAppendTree(GenTree* tree);
    void impSetSuccessorDepth(BasicBlock* succ, unsigned depth);
    void impImportCall(uint32_t token);
    JIT_NOINLINE GenTree* impShiftByConst(GenTree* op1, int amount);
#if SAMPLEJIT_DIFF
    JIT_NOINLINE GenTree* impStrengthReduceMul(GenTree* op1, GenTree* op2);
#endif
    JIT_NOINLINE void impFlushLargeFrameCache();
    unsigned impCheckLclNum(unsigned num, unsigned limit, unsigned base);
};

// IL opcodes of the subset (two-byte FE xx opcodes are 0x100 | xx).
enum OPCODE : uint16_t {
    CEE_NOP = 0x00, CEE_LDARG_0 = 0x02, CEE_LDARG_3 = 0x05, CEE_LDLOC_0 = 0x06, CEE_LDLOC_3 = 0x09,
    CEE_STLOC_0 = 0x0A, CEE_STLOC_3 = 0x0D, CEE_LDARG_S = 0x0E, CEE_LDLOC_S = 0x11, CEE_STLOC_S = 0x13,
    CEE_LDC_I4_M1 = 0x15, CEE_LDC_I4_0 = 0x16, CEE_LDC_I4_8 = 0x1E, CEE_LDC_I4_S = 0x1F, CEE_LDC_I4 = 0x20,
    CEE_LDC_I8 = 0x21, CEE_DUP = 0x25, CEE_POP = 0x26, CEE_CALL = 0x28, CEE_RET = 0x2A,
    CEE_BR_S = 0x2B, CEE_BRFALSE_S = 0x2C, CEE_BRTRUE_S = 0x2D, CEE_BEQ_S = 0x2E, CEE_BGE_S = 0x2F,
    CEE_BGT_S = 0x30, CEE_BLE_S = 0x31, CEE_BLT_S = 0x32, CEE_BNE_UN_S = 0x33,
    CEE_BR = 0x38, CEE_BRFALSE = 0x39, CEE_BRTRUE = 0x3A,
    CEE_ADD = 0x58, CEE_SUB = 0x59, CEE_MUL = 0x5A, CEE_DIV = 0x5B, CEE_REM = 0x5D, CEE_AND = 0x5F,
    CEE_OR = 0x60, CEE_XOR = 0x61, CEE_SHL = 0x62, CEE_SHR = 0x63, CEE_NEG = 0x65, CEE_NOT = 0x66,
    CEE_CONV_I8 = 0x6A, CEE_CEQ = 0x101, CEE_CGT = 0x102, CEE_CLT = 0x104,
    CEE_ILLEGAL = 0xFFFF
};

// One decoded IL instruction.
struct ILInstr {
    OPCODE opcode;
    uint32_t offs;
    uint32_t size;
    int64_t operand;   // constant, local number, token, or branch target (absolute IL offset)
};
// Decodes the instruction at `offs`; false if the opcode is outside the subset or truncated.
bool impDecodeInstr(const uint8_t* code, uint32_t codeSize, uint32_t offs, ILInstr* instr);
bool impIsBranch(OPCODE op);

#endif  // SAMPLEJIT_JIT_H
