// x64 code generation (System V). Frame: push rbp; mov rbp, rsp; sub rsp, N. The six register
// arguments are homed to [rbp-8..], IL locals (zeroed) and spill temps follow; stack arguments stay at
// [rbp+16..]. Values are computed in rax (second operand in rcx); calls go through `mov rax, <method
// handle>; call rax`.
#include <initializer_list>

#include "jit.h"

namespace {

enum regNumber : unsigned { REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI, REG_R8, REG_R9 };
const regNumber intArgRegs[] = {REG_RDI, REG_RSI, REG_RDX, REG_RCX, REG_R8, REG_R9};
constexpr unsigned MAX_REG_ARG = 6;

// Condition codes (the low nibble of jcc/setcc).
unsigned genJccCode(genTreeOps relop) {
    switch (relop) {
        case GT_EQ: return 0x4;
        case GT_NE: return 0x5;
        case GT_LT: return 0xC;
        case GT_GE: return 0xD;
        case GT_LE: return 0xE;
        default: return 0xF;  // GT_GT
    }
}

bool fitsInt32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }
bool fitsInt8(int64_t v) { return v >= -128 && v <= 127; }

class CodeGenXArch final : public CodeGen {
public:
    explicit CodeGenXArch(Compiler* comp) : CodeGen(comp) {}

private:
    int32_t m_frameSize = 0;

    void out(uint8_t b) { m_emitter.emitOut8(b); }
    void out(std::initializer_list<uint8_t> bytes) {
        for (uint8_t b : bytes) {
            m_emitter.emitOut8(b);
        }
    }
    void out32(uint32_t v) { m_emitter.emitOut32(v); }

    void emitRex(bool w, unsigned reg, unsigned rm) {
        uint8_t rex = uint8_t(0x40 | (w ? 8 : 0) | ((reg & 8) ? 4 : 0) | ((rm & 8) ? 1 : 0));
        if (rex != 0x40) {
            out(rex);
        }
    }
    // ModRM (+SIB) + displacement for [base + disp], base = rbp or rsp.
    void emitAddrMode(unsigned reg, regNumber base, int32_t disp) {
        uint8_t mod = fitsInt8(disp) ? 0x40 : 0x80;
        out(uint8_t(mod | (reg & 7) << 3 | base));
        if (base == REG_RSP) {
            out(0x24);
        }
        if (fitsInt8(disp)) {
            out(uint8_t(disp));
        } else {
            out32(uint32_t(disp));
        }
    }
    // op r64, [base + disp] / op [base + disp], r64
    void emitIns_R_AR(uint8_t opcode, unsigned reg, regNumber base, int32_t disp) {
        emitRex(true, reg, base);
        out(opcode);
        emitAddrMode(reg, base, disp);
    }
    // op r/m64(dst), r64(src): add 01, or 09, and 21, sub 29, xor 31, cmp 39, mov 89
    void emitIns_R_R(uint8_t opcode, unsigned dst, unsigned src) {
        emitRex(true, src, dst);
        out(opcode);
        out(uint8_t(0xC0 | (src & 7) << 3 | (dst & 7)));
    }
    // Group 1 with an immediate: /0 add, /1 or, /4 and, /5 sub, /6 xor, /7 cmp
    void emitIns_R_I(unsigned ext, int64_t imm, unsigned reg = REG_RAX) {
        out({0x48, uint8_t(fitsInt8(imm) ? 0x83 : 0x81), uint8_t(0xC0 | ext << 3 | reg)});
        if (fitsInt8(imm)) {
            out(uint8_t(imm));
        } else {
            out32(uint32_t(imm));
        }
    }
    void emitMovImm(unsigned reg, int64_t imm) {
        if (imm == 0) {
            emitRex(false, reg, reg);
            out(0x31);  // xor r32, r32
            out(uint8_t(0xC0 | (reg & 7) << 3 | (reg & 7)));
        } else if (uint64_t(imm) <= 0xFFFFFFFFu) {
            emitRex(false, 0, reg);
            out(uint8_t(0xB8 + (reg & 7)));  // mov r32, imm32
            out32(uint32_t(imm));
        } else if (fitsInt32(imm)) {
            emitRex(true, 0, reg);
            out(0xC7);  // mov r/m64, simm32
            out(uint8_t(0xC0 | (reg & 7)));
            out32(uint32_t(imm));
        } else {
            emitRex(true, 0, reg);
            out(uint8_t(0xB8 + (reg & 7)));  // mov r64, imm64
            m_emitter.emitOut64(uint64_t(imm));
        }
    }
    void emitPush(unsigned reg) {
        emitRex(false, 0, reg);
        out(uint8_t(0x50 + (reg & 7)));
    }
    void emitPop(unsigned reg) {
        emitRex(false, 0, reg);
        out(uint8_t(0x58 + (reg & 7)));
    }
    void emitRspAdjust(bool sub, int32_t amount) {
        if (amount != 0) {
            emitIns_R_I(sub ? 5 : 0, amount, REG_RSP);
        }
    }

    // rbp-relative home of a local.
    int32_t lvaFrameOffset(unsigned lclNum) const {
        unsigned argCount = compiler->info.compArgsCount;
        if (lclNum < argCount && lclNum >= MAX_REG_ARG) {
            return 16 + 8 * int32_t(lclNum - MAX_REG_ARG);
        }
        unsigned regArgs = argCount < MAX_REG_ARG ? argCount : MAX_REG_ARG;
        unsigned slot = lclNum < argCount ? lclNum : regArgs + (lclNum - argCount);
        return -8 * int32_t(slot + 1);
    }
    void emitLoadLcl(unsigned reg, unsigned lclNum) { emitIns_R_AR(0x8B, reg, REG_RBP, lvaFrameOffset(lclNum)); }
    void emitStoreLcl(unsigned lclNum, unsigned reg) { emitIns_R_AR(0x89, reg, REG_RBP, lvaFrameOffset(lclNum)); }

    void genFnProlog() override {
        unsigned argCount = compiler->info.compArgsCount;
        unsigned regArgs = argCount < MAX_REG_ARG ? argCount : MAX_REG_ARG;
        unsigned slots = regArgs + compiler->info.compLocalsCount + compiler->lvaSpillTempCount;
        m_frameSize = int32_t((8 * slots + 15) & ~15u);
        emitPush(REG_RBP);
        emitIns_R_R(0x89, REG_RBP, REG_RSP);  // mov rbp, rsp
        emitRspAdjust(true, m_frameSize);
        for (unsigned i = 0; i < regArgs; i++) {
            emitStoreLcl(i, intArgRegs[i]);
        }
        unsigned locals = compiler->info.compLocalsCount;
        if (locals == 0) {
            return;
        }
        emitMovImm(REG_RAX, 0);
        if (locals <= 8) {
            for (unsigned i = 0; i < locals; i++) {
                emitStoreLcl(argCount + i, REG_RAX);
            }
        } else {  // lea rdi, [lowest local]; mov ecx, count; rep stosq
            emitIns_R_AR(0x8D, REG_RDI, REG_RBP, lvaFrameOffset(argCount + locals - 1));
            emitMovImm(REG_RCX, locals);
            out({0xF3, 0x48, 0xAB});
        }
    }

    void genFnEpilog() override {
        emitIns_R_R(0x89, REG_RSP, REG_RBP);  // mov rsp, rbp
        emitPop(REG_RBP);
        out(0xC3);
    }

    void genStoreLclVar(unsigned lclNum) override { emitStoreLcl(lclNum, REG_RAX); }
    void genPushReg0() override { emitPush(REG_RAX); }
    void genPopReg0() override { emitPop(REG_RAX); }
    void genMoveReg0ToReg1() override { emitIns_R_R(0x89, REG_RCX, REG_RAX); }
    void genLoadLeafToReg1(GenTree* leaf) override {
        if (leaf->gtOper == GT_CNS_INT) {
            emitMovImm(REG_RCX, leaf->gtIconVal);
        } else {
            emitLoadLcl(REG_RCX, leaf->gtLclNum);
        }
    }

    static int genGroup1Ext(genTreeOps oper) {
        switch (oper) {
            case GT_ADD: return 0;
            case GT_OR: return 1;
            case GT_AND: return 4;
            case GT_SUB: return 5;
            case GT_XOR: return 6;
            default: return GenTreeIsRelop(oper) ? 7 : -1;  // cmp
        }
    }

    void genSetCC(genTreeOps relop) {
        out({0x0F, uint8_t(0x90 | genJccCode(relop)), 0xC0, 0x0F, 0xB6, 0xC0});  // setcc al; movzx eax, al
    }

    void genCodeForTreeNode(GenTree* tree) override {
        genTreeOps oper = tree->gtOper;
        switch (oper) {
            case GT_CNS_INT:
                emitMovImm(REG_RAX, tree->gtIconVal);
                return;
            case GT_LCL_VAR:
                emitLoadLcl(REG_RAX, tree->gtLclNum);
                return;
            case GT_CALL:
                genCall(tree);
                return;
            case GT_NEG:
            case GT_NOT:
                genCodeForTreeNode(tree->gtOp1);
                out({0x48, 0xF7, uint8_t(oper == GT_NEG ? 0xD8 : 0xD0)});  // neg / not rax
                return;
            default:
                break;
        }
        assert(GenTreeIsBinop(oper));
        GenTree* op2 = tree->gtOp2;
        if (op2->gtOper == GT_CNS_INT && fitsInt32(op2->gtIconVal)) {
            int64_t imm = op2->gtIconVal;
            if (genGroup1Ext(oper) >= 0) {
                genCodeForTreeNode(tree->gtOp1);
                emitIns_R_I(unsigned(genGroup1Ext(oper)), imm);
                if (GenTreeIsRelop(oper)) {
                    genSetCC(oper);
                }
                return;
            }
            if (oper == GT_LSH || oper == GT_RSH) {
                genCodeForTreeNode(tree->gtOp1);
                if ((imm & 63) == 0) {
                    return;
                }
                out({0x48, 0xC1, uint8_t(oper == GT_LSH ? 0xE0 : 0xF8), uint8_t(imm & 63)});  // shl/sar rax, imm8
                return;
            }
            if (oper == GT_MUL) {
                genCodeForTreeNode(tree->gtOp1);
                out({0x48, uint8_t(fitsInt8(imm) ? 0x6B : 0x69), 0xC0});  // imul rax, rax, imm
                if (fitsInt8(imm)) {
                    out(uint8_t(imm));
                } else {
                    out32(uint32_t(imm));
                }
                return;
            }
        }
        genConsumeOperands(tree);  // rax = op1, rcx = op2
        switch (oper) {
            case GT_ADD: emitIns_R_R(0x01, REG_RAX, REG_RCX); break;
            case GT_SUB: emitIns_R_R(0x29, REG_RAX, REG_RCX); break;
            case GT_AND: emitIns_R_R(0x21, REG_RAX, REG_RCX); break;
            case GT_OR: emitIns_R_R(0x09, REG_RAX, REG_RCX); break;
            case GT_XOR: emitIns_R_R(0x31, REG_RAX, REG_RCX); break;
            case GT_MUL:
                out({0x48, 0x0F, 0xAF, 0xC1});  // imul rax, rcx
                break;
            case GT_DIV:
            case GT_MOD:
                out({0x48, 0x99, 0x48, 0xF7, 0xF9});  // cqo; idiv rcx
                if (oper == GT_MOD) {
                    emitIns_R_R(0x89, REG_RAX, REG_RDX);
                }
                break;
            case GT_LSH:
            case GT_RSH:
                out({0x48, 0xD3, uint8_t(oper == GT_LSH ? 0xE0 : 0xF8)});  // shl/sar rax, cl
                break;
            default:  // relops
                emitIns_R_R(0x39, REG_RAX, REG_RCX);
                genSetCC(oper);
                break;
        }
    }

    void genCall(GenTree* call) override {
        unsigned argCount = call->gtCallArgCount;
        unsigned stackArgs = argCount > MAX_REG_ARG ? argCount - MAX_REG_ARG : 0;
        int32_t outArgSize = int32_t((8 * stackArgs + 15) & ~15u);
        emitRspAdjust(true, outArgSize);
        for (unsigned i = MAX_REG_ARG; i < argCount; i++) {
            genCodeForTreeNode(call->gtCallArgs[i]);
            emitIns_R_AR(0x89, REG_RAX, REG_RSP, int32_t(8 * (i - MAX_REG_ARG)));
        }
        unsigned regArgs = argCount - stackArgs;
        for (unsigned i = 0; i < regArgs; i++) {
            genCodeForTreeNode(call->gtCallArgs[i]);
            emitPush(REG_RAX);
        }
        for (unsigned i = regArgs; i-- > 0;) {
            emitPop(intArgRegs[i]);
        }
        emitMovImm(REG_RAX, int64_t(reinterpret_cast<uintptr_t>(call->gtCallMethHnd)));
        out({0xFF, 0xD0});  // call rax
        emitRspAdjust(false, outArgSize);
        if (call->gtCallRetType == CORINFO_TYPE_INT) {
            out({0x48, 0x63, 0xC0});  // movsxd rax, eax
        }
    }

    void genJumpTrue(GenTree* cond, BasicBlock* target) override {
        genTreeOps relop = GT_NE;
        if (!GenTreeIsRelop(cond->gtOper)) {
            genCodeForTreeNode(cond);
            emitIns_R_R(0x85, REG_RAX, REG_RAX);  // test rax, rax
        } else {
            relop = cond->gtOper;
            GenTree* op2 = cond->gtOp2;
            if (op2->IsIntegralConst(0)) {
                genCodeForTreeNode(cond->gtOp1);
                emitIns_R_R(0x85, REG_RAX, REG_RAX);
            } else if (op2->gtOper == GT_CNS_INT && fitsInt32(op2->gtIconVal)) {
                genCodeForTreeNode(cond->gtOp1);
                emitIns_R_I(7, op2->gtIconVal);
            } else {
                genConsumeOperands(cond);
                emitIns_R_R(0x39, REG_RAX, REG_RCX);
            }
        }
        out({0x0F, uint8_t(0x80 | genJccCode(relop))});
        m_emitter.emitAddFixup(emitter::FIX_REL32, target);
        out32(0);
    }

    void genJump(BasicBlock* target) override {
        out(0xE9);
        m_emitter.emitAddFixup(emitter::FIX_REL32, target);
        out32(0);
    }

    bool genResolveFixups() override {
        for (const emitter::Fixup& fix : m_emitter.emitFixups) {
            int64_t delta = int64_t(fix.target->bbEmitOffs) - int64_t(fix.offs + 4);
            m_emitter.emitPatch32(fix.offs, uint32_t(int32_t(delta)));
        }
        m_codeSize = m_hotCodeSize = m_emitter.emitCurOffset();
        return true;
    }
};

}  // namespace

CodeGen* getCodeGeneratorXArch(Compiler* comp) { return new CodeGenXArch(comp); }
