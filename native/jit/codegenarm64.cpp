// Arm64 code generation (AAPCS64). Frame: the fp/lr pair at the bottom of the frame (stp x29, x30,
// [sp, #-N]!; mov x29, sp), register arguments x0-x7 homed to [x29+16..], then IL locals (zeroed) and
// spill temps; stack arguments stay in the caller's frame. Values are computed in x0 (second operand in
// x1); the machine stack holds pending operands in 16-byte slots. 64-bit constants that need more than a
// movz/movk (or movn/movk) pair are loaded from a literal pool after the code (`ldr xN, <label>`); in
// "far" mode (code beyond the +-1 MiB literal/conditional branch range) they are built with movz+movk*3
// and conditional branches jump over an unconditional `b`.
#include "jit.h"

namespace {

constexpr unsigned REG_X0 = 0, REG_X1 = 1, REG_X2 = 2, REG_IP0 = 16, REG_IP1 = 17, REG_FP = 29, REG_LR = 30;
constexpr unsigned REG_SP = 31, REG_ZR = 31;
constexpr unsigned MAX_REG_ARG = 8;

enum insCond : unsigned { INS_COND_EQ = 0, INS_COND_NE = 1, INS_COND_GE = 10, INS_COND_LT = 11, INS_COND_GT = 12, INS_COND_LE = 13 };

insCond genCondCode(genTreeOps relop) {
    switch (relop) {
        case GT_EQ: return INS_COND_EQ;
        case GT_NE: return INS_COND_NE;
        case GT_LT: return INS_COND_LT;
        case GT_GE: return INS_COND_GE;
        case GT_LE: return INS_COND_LE;
        default: return INS_COND_GT;
    }
}

class CodeGenArm64 final : public CodeGen {
public:
    explicit CodeGenArm64(Compiler* comp) : CodeGen(comp) {}

private:
    uint32_t m_frameTotal = 0;  // fp/lr pair + slots

    void ins(uint32_t encoding) { m_emitter.emitOut32(encoding); }

    // Materialize a 64-bit constant.
    void emitMovImm(unsigned reg, uint64_t imm) {
        unsigned nonZero = 0, nonOnes = 0;
        for (int hw = 0; hw < 4; hw++) {
            uint16_t h = uint16_t(imm >> (16 * hw));
            nonZero += h != 0;
            nonOnes += h != 0xFFFF;
        }
        bool useMovn = nonZero > 2 && nonOnes <= 2;
        if (nonZero > 2 && !useMovn && !m_farMode) {
            m_emitter.emitAddFixup(emitter::FIX_A64_LIT19, nullptr, m_emitter.emitLiteralIndex(imm));
            ins(0x58000000 | reg);  // ldr xN, <literal>
            return;
        }
        // movz (or movn) for the first halfword that is not 0 (0xFFFF), movk for the other ones.
        uint32_t skip = useMovn ? 0xFFFF : 0;
        uint32_t firstHw = 0;
        while (firstHw < 4 && uint16_t(imm >> (16 * firstHw)) == skip) {
            firstHw++;
        }
        firstHw &= 3;  // 0 / -1: movz / movn of halfword 0
        uint32_t h = uint16_t(imm >> (16 * firstHw));
        ins((useMovn ? 0x92800000u : 0xD2800000u) | firstHw << 21 | (useMovn ? (~h & 0xFFFF) : h) << 5 | reg);
        for (uint32_t hw = firstHw + 1; hw < 4; hw++) {
            h = uint16_t(imm >> (16 * hw));
            if (h != skip) {
                ins(0xF2800000u | hw << 21 | h << 5 | reg);  // movk
            }
        }
    }

    // ldr/str xt, [xn, #offs] for any non-negative offset.
    void emitLdrStr(bool load, unsigned rt, unsigned rn, uint32_t offs) {
        if (offs % 8 == 0 && offs / 8 <= 4095) {
            ins((load ? 0xF9400000u : 0xF9000000u) | (offs / 8) << 10 | rn << 5 | rt);
        } else {
            emitMovImm(REG_IP1, offs);
            ins((load ? 0xF8606800u : 0xF8206800u) | REG_IP1 << 16 | rn << 5 | rt);  // [xn, x17]
        }
    }

    // add/sub xd, xn, #imm for any imm (sp-safe).
    void emitAddSubImm(bool sub, unsigned rd, unsigned rn, uint32_t imm) {
        uint32_t base = sub ? 0xD1000000u : 0x91000000u;
        if (imm <= 4095) {
            ins(base | imm << 10 | rn << 5 | rd);
        } else if ((imm & 0xFFF) == 0 && (imm >> 12) <= 4095) {
            ins(base | 1u << 22 | (imm >> 12) << 10 | rn << 5 | rd);
        } else {
            emitMovImm(REG_IP1, imm);
            ins((sub ? 0xCB206000u : 0x8B206000u) | REG_IP1 << 16 | rn << 5 | rd);  // (extended register, uxtx)
        }
    }

    uint32_t lvaFrameOffset(unsigned lclNum) const {
        unsigned argCount = compiler->info.compArgsCount;
        if (lclNum < argCount && lclNum >= MAX_REG_ARG) {
            return m_frameTotal + 8 * (lclNum - MAX_REG_ARG);
        }
        unsigned regArgs = argCount < MAX_REG_ARG ? argCount : MAX_REG_ARG;
        unsigned slot = lclNum < argCount ? lclNum : regArgs + (lclNum - argCount);
        return 16 + 8 * slot;
    }

    void genFnProlog() override {
        unsigned argCount = compiler->info.compArgsCount;
        unsigned regArgs = argCount < MAX_REG_ARG ? argCount : MAX_REG_ARG;
        unsigned slots = regArgs + compiler->info.compLocalsCount + compiler->lvaSpillTempCount;
        m_frameTotal = 16 + ((8 * slots + 15) & ~15u);
        if (m_frameTotal <= 504) {
            ins(0xA9800000u | ((-(m_frameTotal / 8)) & 0x7F) << 15 | REG_LR << 10 | REG_SP << 5 | REG_FP);
        } else {
            emitAddSubImm(true, REG_SP, REG_SP, m_frameTotal);
            ins(0xA9000000u | REG_LR << 10 | REG_SP << 5 | REG_FP);  // stp x29, x30, [sp]
        }
        ins(0x91000000u | REG_SP << 5 | REG_FP);  // mov x29, sp
        for (unsigned i = 0; i < regArgs; i++) {
            emitLdrStr(false, i, REG_FP, lvaFrameOffset(i));
        }
        for (unsigned i = 0; i < compiler->info.compLocalsCount; i++) {
            emitLdrStr(false, REG_ZR, REG_FP, lvaFrameOffset(argCount + i));
        }
    }

    void genFnEpilog() override {
        if (m_frameTotal <= 504) {
            ins(0xA8C00000u | ((m_frameTotal / 8) & 0x7F) << 15 | REG_LR << 10 | REG_SP << 5 | REG_FP);
        } else {
            ins(0xA9400000u | REG_LR << 10 | REG_SP << 5 | REG_FP);  // ldp x29, x30, [sp]
            emitAddSubImm(false, REG_SP, REG_SP, m_frameTotal);
        }
        ins(0xD65F03C0);  // ret
    }

    void genStoreLclVar(unsigned lclNum) override { emitLdrStr(false, REG_X0, REG_FP, lvaFrameOffset(lclNum)); }
    void genPushReg0() override { ins(0xF81F0FE0); }        // str x0, [sp, #-16]!
    void genPopReg0() override { ins(0xF84107E0); }         // ldr x0, [sp], #16
    void genMoveReg0ToReg1() override { ins(0xAA0003E1); }  // mov x1, x0
    void genLoadLeafToReg1(GenTree* leaf) override {
        if (leaf->gtOper == GT_CNS_INT) {
            emitMovImm(REG_X1, uint64_t(leaf->gtIconVal));
        } else {
            emitLdrStr(true, REG_X1, REG_FP, lvaFrameOffset(leaf->gtLclNum));
        }
    }

    void genCodeForTreeNode(GenTree* tree) override {
        genTreeOps oper = tree->gtOper;
        switch (oper) {
            case GT_CNS_INT:
                emitMovImm(REG_X0, uint64_t(tree->gtIconVal));
                return;
            case GT_LCL_VAR:
                emitLdrStr(true, REG_X0, REG_FP, lvaFrameOffset(tree->gtLclNum));
                return;
            case GT_CALL:
                genCall(tree);
                return;
            case GT_NEG:
                genCodeForTreeNode(tree->gtOp1);
                ins(0xCB0003E0);  // neg x0, x0
                return;
            case GT_NOT:
                genCodeForTreeNode(tree->gtOp1);
                ins(0xAA2003E0);  // mvn x0, x0
                return;
            default:
                break;
        }
        assert(GenTreeIsBinop(oper));
        GenTree* op2 = tree->gtOp2;
        if (op2->gtOper == GT_CNS_INT) {
            int64_t imm = op2->gtIconVal;
            if ((oper == GT_ADD || oper == GT_SUB || GenTreeIsRelop(oper)) && imm >= 0 && imm <= 4095) {
                genCodeForTreeNode(tree->gtOp1);
                if (GenTreeIsRelop(oper)) {
                    ins(0xF100001Fu | uint32_t(imm) << 10);  // cmp x0, #imm
                    ins(0x9A9F07E0u | (genCondCode(oper) ^ 1) << 12);  // cset x0, cond
                } else {
                    ins((oper == GT_ADD ? 0x91000000u : 0xD1000000u) | uint32_t(imm) << 10);  // add/sub x0, x0, #imm
                }
                return;
            }
            if (oper == GT_LSH || oper == GT_RSH) {
                genCodeForTreeNode(tree->gtOp1);
                uint32_t k = uint32_t(imm & 63);
                if (k == 0) {
                    return;
                }
                if (oper == GT_LSH) {
                    ins(0xD3400000u | ((64 - k) & 63) << 16 | (63 - k) << 10);  // lsl x0, x0, #k
                } else {
                    ins(0x9340FC00u | k << 16);  // asr x0, x0, #k
                }
                return;
            }
        }
        genConsumeOperands(tree);  // x0 = op1, x1 = op2
        switch (oper) {
            case GT_ADD: ins(0x8B010000); break;
            case GT_SUB: ins(0xCB010000); break;
            case GT_AND: ins(0x8A010000); break;
            case GT_OR: ins(0xAA010000); break;
            case GT_XOR: ins(0xCA010000); break;
            case GT_MUL: ins(0x9B017C00); break;  // mul x0, x0, x1
            case GT_DIV: ins(0x9AC10C00); break;  // sdiv x0, x0, x1
            case GT_MOD:
                ins(0x9AC10C02);  // sdiv x2, x0, x1
                ins(0x9B018040);  // msub x0, x2, x1, x0
                break;
            case GT_LSH: ins(0x9AC12000); break;  // lsl x0, x0, x1
            case GT_RSH: ins(0x9AC12800); break;  // asr x0, x0, x1
            default:
                ins(0xEB01001F);  // cmp x0, x1
                ins(0x9A9F07E0u | (genCondCode(oper) ^ 1) << 12);  // cset x0, cond
                break;
        }
    }

    void genCall(GenTree* call) override {
        unsigned argCount = call->gtCallArgCount;
        unsigned stackArgs = argCount > MAX_REG_ARG ? argCount - MAX_REG_ARG : 0;
        uint32_t outArgSize = (8 * stackArgs + 15) & ~15u;
        if (outArgSize != 0) {
            emitAddSubImm(true, REG_SP, REG_SP, outArgSize);
        }
        for (unsigned i = MAX_REG_ARG; i < argCount; i++) {
            genCodeForTreeNode(call->gtCallArgs[i]);
            emitLdrStr(false, REG_X0, REG_SP, 8 * (i - MAX_REG_ARG));
        }
        unsigned regArgs = argCount - stackArgs;
        for (unsigned i = 0; i < regArgs; i++) {
            genCodeForTreeNode(call->gtCallArgs[i]);
            genPushReg0();
        }
        for (unsigned i = regArgs; i-- > 0;) {
            ins(0xF84107E0u | i);  // ldr xi, [sp], #16
        }
        emitMovImm(REG_IP0, uint64_t(reinterpret_cast<uintptr_t>(call->gtCallMethHnd)));
        ins(0xD63F0000u | REG_IP0 << 5);  // blr x16
        if (outArgSize != 0) {
            emitAddSubImm(false, REG_SP, REG_SP, outArgSize);
        }
        if (call->gtCallRetType == CORINFO_TYPE_INT) {
            ins(0x93407C00);  // sxtw x0, w0
        }
    }

    // Conditional branch on `cond` (b.cond / cbz / cbnz: +-1 MiB; in far mode, inverted over a `b`).
    void genCondBranch(uint32_t encoding, BasicBlock* target) {
        if (m_farMode) {
            uint32_t inverted = (encoding & 0xFF000000u) == 0x54000000u ? encoding ^ 1 : encoding ^ (1u << 24);
            ins(inverted | 2u << 5);  // skip the next instruction
            genJump(target);
            return;
        }
        m_emitter.emitAddFixup(emitter::FIX_A64_B19, target);
        ins(encoding);
    }

    void genJumpTrue(GenTree* cond, BasicBlock* target) override {
        if (!GenTreeIsRelop(cond->gtOper)) {
            genCodeForTreeNode(cond);
            genCondBranch(0xB5000000, target);  // cbnz x0
            return;
        }
        genTreeOps relop = cond->gtOper;
        GenTree* op2 = cond->gtOp2;
        if (op2->IsIntegralConst(0) && (relop == GT_EQ || relop == GT_NE)) {
            genCodeForTreeNode(cond->gtOp1);
            genCondBranch(relop == GT_EQ ? 0xB4000000 : 0xB5000000, target);  // cbz / cbnz x0
            return;
        }
        if (op2->gtOper == GT_CNS_INT && op2->gtIconVal >= 0 && op2->gtIconVal <= 4095) {
            genCodeForTreeNode(cond->gtOp1);
            ins(0xF100001Fu | uint32_t(op2->gtIconVal) << 10);  // cmp x0, #imm
        } else {
            genConsumeOperands(cond);
            ins(0xEB01001F);  // cmp x0, x1
        }
        genCondBranch(0x54000000u | genCondCode(relop), target);
    }

    void genJump(BasicBlock* target) override {
        m_emitter.emitAddFixup(emitter::FIX_A64_B26, target);
        ins(0x14000000);
    }

    bool genResolveFixups() override {
        m_codeSize = m_emitter.emitCurOffset();
        uint32_t poolOffs = m_codeSize;
        if (!m_emitter.emitLiterals.empty()) {
            poolOffs = (m_codeSize + 7) & ~7u;
            while (m_emitter.emitCurOffset() < poolOffs) {
                m_emitter.emitOut8(0);
            }
            for (uint64_t lit : m_emitter.emitLiterals) {
                m_emitter.emitOut64(lit);
            }
        }
        m_hotCodeSize = m_emitter.emitCurOffset();
        for (const emitter::Fixup& fix : m_emitter.emitFixups) {
            int64_t dest = fix.target != nullptr ? fix.target->bbEmitOffs : poolOffs + 8 * fix.litIndex;
            int64_t delta = (dest - int64_t(fix.offs)) / 4;
            uint32_t encoding = m_emitter.emitRead32(fix.offs);
            if (fix.kind == emitter::FIX_A64_B26) {
                if (delta < -(1 << 25) || delta >= (1 << 25)) {
                    return false;
                }
                encoding |= uint32_t(delta) & 0x3FFFFFF;
            } else {
                if (delta < -(1 << 18) || delta >= (1 << 18)) {
                    return false;
                }
                encoding |= (uint32_t(delta) & 0x7FFFF) << 5;
            }
            m_emitter.emitPatch32(fix.offs, encoding);
        }
        return true;
    }
};

}  // namespace

CodeGen* getCodeGeneratorArm64(Compiler* comp) { return new CodeGenArm64(comp); }
