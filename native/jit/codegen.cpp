// Target-independent code generation: the emitter's buffer and the block/statement driver. The
// generated code is a stack machine over two temp registers (x64: rax/rcx, Arm64: x0/x1): every tree
// leaves its value in the first; a non-leaf second operand is kept on the machine stack meanwhile.
#include "jit.h"

void emitter::emitOut32(uint32_t v) {
    for (int i = 0; i < 4; i++) {
        emitCode.push_back(uint8_t(v >> (8 * i)));
    }
}

void emitter::emitOut64(uint64_t v) {
    emitOut32(uint32_t(v));
    emitOut32(uint32_t(v >> 32));
}

void emitter::emitPatch32(uint32_t offs, uint32_t v) {
    for (int i = 0; i < 4; i++) {
        emitCode[offs + i] = uint8_t(v >> (8 * i));
    }
}

uint32_t emitter::emitRead32(uint32_t offs) const {
    return uint32_t(emitCode[offs]) | uint32_t(emitCode[offs + 1]) << 8 | uint32_t(emitCode[offs + 2]) << 16 |
           uint32_t(emitCode[offs + 3]) << 24;
}

uint32_t emitter::emitLiteralIndex(uint64_t value) {
    emitLiterals.push_back(value);
    return (uint32_t)(emitLiterals.size() - 1);
}

void emitter::emitAddFixup(FixupKind kind, BasicBlock* target, uint32_t litIndex) {
    emitFixups.push_back(Fixup{emitCurOffset(), kind, target, litIndex});
}

bool CodeGen::genGenerateCode(bool farMode) {
    m_farMode = farMode;
    m_emitter.emitCode.clear();
    m_emitter.emitFixups.clear();
    m_emitter.emitLiterals.clear();
    genFnProlog();
    genCodeForBBlist();
    return genResolveFixups();
}

void CodeGen::genCopyCode(uint8_t* dst) const { memcpy(dst, m_emitter.emitCode.data(), m_hotCodeSize); }

void CodeGen::genCodeForBBlist() {
    for (BasicBlock* block = compiler->fgFirstBB; block != nullptr; block = block->bbNext) {
        block->bbEmitOffs = m_emitter.emitCurOffset();
        for (Statement* stmt = block->bbStmtList; stmt != nullptr; stmt = stmt->gtNext) {
            GenTree* tree = stmt->gtStmtExpr;
            switch (tree->gtOper) {
                case GT_STORE_LCL_VAR:
                    genCodeForTreeNode(tree->gtOp1);
                    genStoreLclVar(tree->gtLclNum);
                    break;
                case GT_RETURN:
                    if (tree->gtOp1 != nullptr) {
                        genCodeForTreeNode(tree->gtOp1);
                    }
                    genFnEpilog();
                    break;
                case GT_JTRUE:
                    genJumpTrue(tree->gtOp1, block->bbJumpDest);
                    break;
                default:
                    genCodeForTreeNode(tree);  // evaluated for its side effects
                    break;
            }
        }
        if (block->bbJumpKind == BBJ_ALWAYS && block->bbJumpDest != block->bbNext) {
            genJump(block->bbJumpDest);
        }
    }
}

void CodeGen::genConsumeOperands(GenTree* tree) {
    GenTree* op2 = tree->gtOp2;
    genCodeForTreeNode(tree->gtOp1);
    if (op2->OperIsLeaf()) {
        genLoadLeafToReg1(op2);
        return;
    }
    genPushReg0();
    genCodeForTreeNode(op2);
    genMoveReg0ToReg1();
    genPopReg0();
}
