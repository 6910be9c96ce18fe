// The importer: IL -> basic blocks of statements of GenTree expression trees.
//
// IL is validated as it is read (opcode subset, truncation, branch targets on instruction starts inside
// the method, stack underflow, consistent stack depths at joins, ret depth, local numbers): anything else
// is BADCODE. Blocks are imported in IL order; the evaluation stack is spilled to per-depth temps at block
// boundaries and before side effects (stores, calls), as the real importer's impSpillStackEnsure does.
#include "jit.h"

bool impIsBranch(OPCODE op) {
    return (op >= CEE_BR_S && op <= CEE_BNE_UN_S) || (op >= CEE_BR && op <= CEE_BRTRUE);
}

bool impDecodeInstr(const uint8_t* code, uint32_t codeSize, uint32_t offs, ILInstr* instr) {
    if (offs >= codeSize) {
        return false;
    }
    unsigned op = code[offs];
    uint32_t len = 1;
    if (op == 0xFE) {
        if (codeSize - offs < 2) {
            return false;
        }
        op = 0x100 | code[offs + 1];
        len = 2;
    }
    uint32_t operandSize;
    switch (op) {
        case CEE_NOP: case CEE_LDARG_0 ... CEE_STLOC_3: case CEE_LDC_I4_M1 ... CEE_LDC_I4_8: case CEE_DUP:
        case CEE_POP: case CEE_RET: case CEE_ADD ... CEE_DIV: case CEE_REM: case CEE_AND ... CEE_SHR:
        case CEE_NEG: case CEE_NOT: case CEE_CONV_I8: case CEE_CEQ: case CEE_CGT: case CEE_CLT:
            operandSize = 0;
            break;
        case CEE_LDARG_S: case CEE_LDLOC_S: case CEE_STLOC_S: case CEE_LDC_I4_S: case CEE_BR_S ... CEE_BNE_UN_S:
            operandSize = 1;
            break;
        case CEE_LDC_I4: case CEE_CALL: case CEE_BR ... CEE_BRTRUE:
            operandSize = 4;
            break;
        case CEE_LDC_I8:
            operandSize = 8;
            break;
        default:
            return false;  // not in the subset
    }
    if (codeSize - offs - len < operandSize) {
        return false;  // truncated
    }
    const uint8_t* p = code + offs + len;
    instr->opcode = static_cast<OPCODE>(op);
    instr->offs = offs;
    instr->size = len + operandSize;
    instr->operand = 0;
    if (operandSize == 1) {
        instr->operand = (op == CEE_LDC_I4_S || impIsBranch(instr->opcode)) ? (int64_t)(int8_t)p[0] : (int64_t)p[0];
    } else if (operandSize == 4) {
        uint32_t v;
        memcpy(&v, p, 4);
        instr->operand = (op == CEE_CALL) ? (int64_t)v : (int64_t)(int32_t)v;
    } else if (operandSize == 8) {
        memcpy(&instr->operand, p, 8);
    }
    if (impIsBranch(instr->opcode)) {
        instr->operand += (int64_t)offs + instr->size;  // absolute target
    }
    return true;
}

// ------------------------------------------------------------------------------------ flow graph
void Compiler::fgFindBasicBlocks() {
    enum : uint8_t { F_INSTR = 1, F_TARGET = 2, F_BBSTART = 4 };
    const uint32_t size = info.compILCodeSize;
    uint8_t* flags = getAllocator<uint8_t>(size + 1);
    memset(flags, 0, size + 1);
    ILInstr ins;
    for (uint32_t offs = 0; offs < size; offs += ins.size) {
        if (!impDecodeInstr(info.compCode, size, offs, &ins)) {
            BADCODE("unknown opcode or truncated instruction");
        }
        flags[offs] |= F_INSTR;
        if (impIsBranch(ins.opcode)) {
            if (ins.operand < 0 || ins.operand >= (int64_t)size) {
                BADCODE("branch outside the method");
            }
            flags[ins.operand] |= F_TARGET | F_BBSTART;
        }
        if (impIsBranch(ins.opcode) || ins.opcode == CEE_RET) {
            flags[offs + ins.size] |= F_BBSTART;
        }
    }
    flags[0] |= F_BBSTART;

    BasicBlock* last = nullptr;
    BasicBlock** blockAtOffs = getAllocator<BasicBlock*>(size);
    for (uint32_t offs = 0; offs < size; offs++) {
        if ((flags[offs] & F_TARGET) != 0 && (flags[offs] & F_INSTR) == 0) {
            BADCODE("branch into the middle of an instruction");
        }
        blockAtOffs[offs] = nullptr;
        if ((flags[offs] & (F_INSTR | F_BBSTART)) == (F_INSTR | F_BBSTART)) {
            BasicBlock* block = getAllocator<BasicBlock>();
            memset(static_cast<void*>(block), 0, sizeof(BasicBlock));
            block->bbNum = ++fgBBcount;
            block->bbCodeOffs = offs;
            block->bbEntryDepth = -1;
            (last != nullptr ? last->bbNext : fgFirstBB) = block;
            if (last != nullptr) {
                last->bbCodeOffsEnd = offs;
            }
            last = block;
            blockAtOffs[offs] = block;
        }
    }
    last->bbCodeOffsEnd = size;

    // Block kinds from each block's last instruction.
    for (BasicBlock* block = fgFirstBB; block != nullptr; block = block->bbNext) {
        uint32_t lastOffs = block->bbCodeOffs;
        for (uint32_t offs = block->bbCodeOffs; offs < block->bbCodeOffsEnd; offs += ins.size) {
            impDecodeInstr(info.compCode, size, offs, &ins);
            lastOffs = offs;
        }
        impDecodeInstr(info.compCode, size, lastOffs, &ins);
        block->bbJumpOffs = lastOffs;
        if (ins.opcode == CEE_RET) {
            block->bbJumpKind = BBJ_RETURN;
        } else if (impIsBranch(ins.opcode)) {
            block->bbJumpKind = (ins.opcode == CEE_BR_S || ins.opcode == CEE_BR) ? BBJ_ALWAYS : BBJ_COND;
            block->bbJumpDest = blockAtOffs[ins.operand];
            block->bbJumpDest->bbRefs++;
            if (block->bbJumpKind == BBJ_COND && block->bbNext == nullptr) {
                BADCODE("control falls off the end of the method");
            }
        } else {
            block->bbJumpKind = BBJ_NONE;
            if (block->bbNext == nullptr) {
                BADCODE("control falls off the end of the method");
            }
        }
    }
}

// ------------------------------------------------------------------------------------ stack
void Compiler::impPushOnStack(GenTree* tree) { impStack.push_back(tree); }

GenTree* Compiler::impPopStack() {
    if (impStack.empty()) {
        BADCODE("evaluation stack underflow");
    }
    GenTree* tree = impStack.back();
    impStack.pop_back();
    if (impSpilledDepth > impStack.size()) {
        impSpilledDepth = (unsigned)impStack.size();
    }
    return tree;
}

void Compiler::impAppendTree(GenTree* tree) {
    Statement* stmt = getAllocator<Statement>();
    stmt->gtStmtExpr = tree;
    stmt->gtNext = nullptr;
    if (compCurBB->bbStmtLast != nullptr) {
        compCurBB->bbStmtLast->gtNext = stmt;
    } else {
        compCurBB->bbStmtList = stmt;
    }
    compCurBB->bbStmtLast = stmt;
}

// Spill every stack entry (bottom up) into the temp of its depth, so that it is evaluated now.
void Compiler::impSpillStack() {
    for (unsigned depth = impSpilledDepth; depth < impStack.size(); depth++) {
        unsigned tmpNum = lvaSpillTempBase() + depth;
        GenTree* tree = impStack[depth];
        if (tree->gtOper != GT_LCL_VAR || tree->gtLclNum != tmpNum) {
            impAppendTree(gtNewStoreLclNode(tmpNum, tree));
            impStack[depth] = gtNewLclvNode(tmpNum);
        }
        if (lvaSpillTempCount <= depth) {
            lvaSpillTempCount = depth + 1;
        }
    }
    impSpilledDepth = (unsigned)impStack.size();
}

void Compiler::impSetSuccessorDepth(BasicBlock* succ, unsigned depth) {
    if (succ->bbEntryDepth < 0) {
        succ->bbEntryDepth = (int)depth;
    } else if ((unsigned)succ->bbEntryDepth != depth) {
        BADCODE("inconsistent evaluation stack depth at a join");
    }
}

unsigned Compiler::impCheckLclNum(unsigned num, unsigned limit, unsigned base) {
    if (num >= limit) {
        BADCODE("argument or local number out of range");
    }
    return base + num;
}

// ------------------------------------------------------------------------------------ special cases
// Shift by a small IL constant (ldc.i4.m1 .. ldc.i4.8 right before the shl): the amount is known here.
GenTree* Compiler::impShiftByConst(GenTree* op1, int shiftAmount) {
    assert(shiftAmount >= 0);  // BUG (jit-assert): ldc.i4.m1; shl is valid IL
    return gtNewOperNode(GT_LSH, op1, gtNewIconNode(shiftAmount));
}

#if SAMPLEJIT_DIFF
// Strength reduction (diff JIT only): x * 2^k -> x << k. The candidates are the multipliers the IL
// encodes right before the mul: a positive `ldc.i4.s` immediate, or the implicit one of ldc.i4.0.
GenTree* Compiler::impStrengthReduceMul(GenTree* op1, GenTree* op2) {
    int64_t multiplier = op2->gtIconVal;
    assert(multiplier != 0);  // BUG (diff-assert): x * 0 is valid IL
    if (multiplier < 2 || multiplier > 64 || (multiplier & (multiplier - 1)) != 0) {
        return nullptr;
    }
    int shift = 0;
    while ((int64_t(1) << shift) != multiplier) {
        shift++;
    }
    return gtNewOperNode(GT_LSH, op1, gtNewIconNode(shift));
}
#endif

// A run of three dups clones one value four times; the importer then re-lays out its spill temps,
// which invalidates the previous method's cached large frame layout: release it.
void Compiler::impFlushLargeFrameCache() {
    LargeFrameLayout* cached = s_lastLargeFrame;
    if (cached != nullptr && cached != lvaLargeFrame) {
        free(cached);  // BUG (poison-crash): already freed by ~Compiler of the method that allocated it
        s_lastLargeFrame = nullptr;
    }
}

// ------------------------------------------------------------------------------------ calls
void Compiler::impImportCall(uint32_t token) {
    CORINFO_RESOLVED_TOKEN resolvedToken = {};
    resolvedToken.tokenScope = info.compMethodInfo->scope;
    resolvedToken.token = token;
    resolvedToken.tokenType = CORINFO_TOKENKIND_Method;
    info.compCompHnd->resolveToken(&resolvedToken);
    CORINFO_SIG_INFO sig = {};
    info.compCompHnd->getMethodSig(resolvedToken.hMethod, &sig, nullptr);
    if (sig.numArgs > impStack.size()) {
        BADCODE("call: evaluation stack underflow");
    }
    unsigned base = (unsigned)(impStack.size() - sig.numArgs);
    GenTree* call = gtNewNode(GT_CALL);
    call->gtCallMethHnd = resolvedToken.hMethod;
    call->gtCallRetType = sig.retType;
    call->gtCallArgCount = sig.numArgs;
    call->gtCallArgs = getAllocator<GenTree*>(sig.numArgs + 1);
    for (unsigned i = 0; i < sig.numArgs; i++) {
        call->gtCallArgs[i] = impStack[base + i];
    }
    impStack.resize(base);
    if (impSpilledDepth > base) {
        impSpilledDepth = base;
    }
    impSpillStack();  // what is below the arguments is evaluated before the call
    if (sig.retType == CORINFO_TYPE_VOID) {
        impAppendTree(call);
        return;
    }
    unsigned tmpNum = lvaSpillTempBase() + base;
    impAppendTree(gtNewStoreLclNode(tmpNum, call));
    impPushOnStack(gtNewLclvNode(tmpNum));
    impSpilledDepth = base + 1;
    if (lvaSpillTempCount <= base) {
        lvaSpillTempCount = base + 1;
    }
}

// ------------------------------------------------------------------------------------ blocks
static genTreeOps impBranchRelop(OPCODE op) {
    switch (op) {
        case CEE_BEQ_S: return GT_EQ;
        case CEE_BGE_S: return GT_GE;
        case CEE_BGT_S: return GT_GT;
        case CEE_BLE_S: return GT_LE;
        case CEE_BLT_S: return GT_LT;
        default: return GT_NE;  // bne.un.s
    }
}

static genTreeOps impBinopOper(OPCODE op) {
    switch (op) {
        case CEE_ADD: return GT_ADD;
        case CEE_SUB: return GT_SUB;
        case CEE_MUL: return GT_MUL;
        case CEE_DIV: return GT_DIV;
        case CEE_REM: return GT_MOD;
        case CEE_AND: return GT_AND;
        case CEE_OR: return GT_OR;
        case CEE_XOR: return GT_XOR;
        case CEE_SHL: return GT_LSH;
        case CEE_SHR: return GT_RSH;
        case CEE_CEQ: return GT_EQ;
        case CEE_CGT: return GT_GT;
        default: return GT_LT;  // clt
    }
}

void Compiler::impImportBlock(BasicBlock* block) {
    compCurBB = block;
    if (block->bbEntryDepth < 0) {
        block->bbEntryDepth = 0;  // reached only by backward branches (or not at all): ECMA-335 assumes empty
    }
    impStack.clear();
    for (int depth = 0; depth < block->bbEntryDepth; depth++) {
        impPushOnStack(gtNewLclvNode(lvaSpillTempBase() + depth));
    }
    impSpilledDepth = (unsigned)block->bbEntryDepth;
    if (lvaSpillTempCount < impSpilledDepth) {
        lvaSpillTempCount = impSpilledDepth;
    }

    OPCODE prevOpcode = CEE_ILLEGAL;
    unsigned dupRun = 0;
    ILInstr ins;
    for (uint32_t offs = block->bbCodeOffs; offs < block->bbCodeOffsEnd; offs += ins.size) {
        impDecodeInstr(info.compCode, info.compILCodeSize, offs, &ins);
        impCurStmtOffs = offs;
        const OPCODE opcode = ins.opcode;
        dupRun = (opcode == CEE_DUP) ? dupRun + 1 : 0;
        switch (opcode) {
            case CEE_NOP:
                break;
            case CEE_LDARG_0 ... CEE_LDARG_3:
                impPushOnStack(gtNewLclvNode(impCheckLclNum(opcode - CEE_LDARG_0, info.compArgsCount, 0)));
                break;
            case CEE_LDARG_S:
                impPushOnStack(gtNewLclvNode(impCheckLclNum((unsigned)ins.operand, info.compArgsCount, 0)));
                break;
            case CEE_LDLOC_0 ... CEE_LDLOC_3:
            case CEE_LDLOC_S: {
                unsigned num = (opcode == CEE_LDLOC_S) ? (unsigned)ins.operand : unsigned(opcode - CEE_LDLOC_0);
                impPushOnStack(gtNewLclvNode(impCheckLclNum(num, info.compLocalsCount, info.compArgsCount)));
                break;
            }
            case CEE_STLOC_0 ... CEE_STLOC_3:
            case CEE_STLOC_S: {
                unsigned num = (opcode == CEE_STLOC_S) ? (unsigned)ins.operand : unsigned(opcode - CEE_STLOC_0);
                unsigned lclNum = impCheckLclNum(num, info.compLocalsCount, info.compArgsCount);
                GenTree* value = impPopStack();
                impSpillStack();  // entries below may read the local
                impAppendTree(gtNewStoreLclNode(lclNum, value));
                break;
            }
            case CEE_LDC_I4_M1 ... CEE_LDC_I4_8:
                impPushOnStack(gtNewIconNode((int)opcode - CEE_LDC_I4_0));
                break;
            case CEE_LDC_I4_S:
            case CEE_LDC_I4:
            case CEE_LDC_I8:
                impPushOnStack(gtNewIconNode(ins.operand));
                break;
            case CEE_DUP: {
                if (impStack.empty()) {
                    BADCODE("dup: evaluation stack underflow");
                }
                if (!impStack.back()->OperIsLeaf()) {
                    impSpillStack();
                }
                GenTree* top = impStack.back();
                impPushOnStack(top->gtOper == GT_CNS_INT ? gtNewIconNode(top->gtIconVal) : gtNewLclvNode(top->gtLclNum));
                if (dupRun == 3) {
                    impFlushLargeFrameCache();
                }
                break;
            }
            case CEE_POP: {
                GenTree* tree = impPopStack();
                if (!tree->OperIsLeaf()) {
                    impSpillStack();
                    impAppendTree(tree);
                }
                break;
            }
            case CEE_CALL:
                impImportCall((uint32_t)ins.operand);
                break;
            case CEE_RET: {
                GenTree* value = nullptr;
                if (info.compRetType != CORINFO_TYPE_VOID) {
                    value = impPopStack();
                }
                if (!impStack.empty()) {
                    BADCODE("ret: evaluation stack not empty");
                }
                impAppendTree(gtNewOperNode(GT_RETURN, value));
                break;
            }
            case CEE_BR_S:
            case CEE_BR:
                impSpillStack();
                impSetSuccessorDepth(block->bbJumpDest, (unsigned)impStack.size());
                break;
            case CEE_BRFALSE_S:
            case CEE_BRFALSE:
            case CEE_BRTRUE_S:
            case CEE_BRTRUE:
            case CEE_BEQ_S ... CEE_BNE_UN_S: {
                GenTree* cond;
                if (opcode >= CEE_BEQ_S && opcode <= CEE_BNE_UN_S) {
                    GenTree* op2 = impPopStack();
                    GenTree* op1 = impPopStack();
                    cond = gtNewOperNode(impBranchRelop(opcode), op1, op2);
                } else {
                    bool isTrue = opcode == CEE_BRTRUE_S || opcode == CEE_BRTRUE;
                    cond = gtNewOperNode(isTrue ? GT_NE : GT_EQ, impPopStack(), gtNewIconNode(0));
                }
                impSpillStack();
                impAppendTree(gtNewOperNode(GT_JTRUE, cond));
                impSetSuccessorDepth(block->bbJumpDest, (unsigned)impStack.size());
                impSetSuccessorDepth(block->bbNext, (unsigned)impStack.size());
                break;
            }
            case CEE_ADD ... CEE_DIV:
            case CEE_REM:
            case CEE_AND ... CEE_SHR:
            case CEE_CEQ:
            case CEE_CGT:
            case CEE_CLT: {
                GenTree* op2 = impPopStack();
                GenTree* op1 = impPopStack();
                GenTree* result = nullptr;
                if (opcode == CEE_DIV && prevOpcode >= CEE_LDC_I4_0 && prevOpcode <= CEE_LDC_I4_8) {
                    result = gtFoldDivByConst(op1, op2->gtIconVal);
                } else if (opcode == CEE_SHL && prevOpcode >= CEE_LDC_I4_M1 && prevOpcode <= CEE_LDC_I4_8) {
                    result = impShiftByConst(op1, (int)op2->gtIconVal);
                } else if (opcode == CEE_REM && prevOpcode > CEE_LDC_I4_0 && prevOpcode <= CEE_LDC_I4_8 &&
                           compStressLevel == 2 && compStressCompile("STRESS_FOLD")) {
                    result = gtFoldModByConst(op1, op2->gtIconVal);
                }
#if SAMPLEJIT_DIFF
                else if (opcode == CEE_MUL && !opts.MinOpts() &&
                         (prevOpcode == CEE_LDC_I4_0 || (prevOpcode == CEE_LDC_I4_S && op2->gtIconVal > 0))) {
                    result = impStrengthReduceMul(op1, op2);
                }
#endif
                impPushOnStack(result != nullptr ? result : gtNewOperNode(impBinopOper(opcode), op1, op2));
                break;
            }
            case CEE_NEG:
            case CEE_NOT:
                impPushOnStack(gtNewOperNode(opcode == CEE_NEG ? GT_NEG : GT_NOT, impPopStack()));
                break;
            case CEE_CONV_I8:
                impPushOnStack(impPopStack());  // every value is already an int64
                break;
            default:
                BADCODE("unexpected opcode");
        }
        prevOpcode = opcode;
    }
    if (block->bbJumpKind == BBJ_NONE) {
        impSpillStack();
        impSetSuccessorDepth(block->bbNext, (unsigned)impStack.size());
    }
}

void Compiler::impImport() {
    impStack.reserve(64);
    for (BasicBlock* block = fgFirstBB; block != nullptr; block = block->bbNext) {
        impImportBlock(block);
    }
    impStack.clear();
    impStack.shrink_to_fit();
}
