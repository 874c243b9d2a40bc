//===- ParallelTasks.cpp - calls of parallel loops' task functions --------===//
#include "compiler/ParallelTasks.h"
#include "passes/Passes.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace kiln {

void lowerParallelTaskCalls(llvm::Module &module) {
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  llvm::Type *voidTy = llvm::Type::getVoidTy(ctx);
  auto *taskType = llvm::FunctionType::get(voidTy, {ptr, i64, i64}, false);
  llvm::SmallVector<llvm::CallInst *> calls;
  for (llvm::Function &f : module)
    if (f.hasFnAttribute(kParallelTaskFnAttr))
      for (llvm::User *u : f.users())
        if (auto *call = llvm::dyn_cast<llvm::CallInst>(u);
            call && call->getCalledFunction() == &f)
          calls.push_back(call);
  if (calls.empty())
    return;
  llvm::FunctionCallee parallelFor = module.getOrInsertFunction(
      "kilnParallelFor",
      llvm::FunctionType::get(voidTy, {ptr, ptr, i64, i64}, false));
  for (llvm::CallInst *call : calls) {
    llvm::Function *f = call->getCalledFunction();
    llvm::SmallVector<llvm::Type *> captured(
        f->getFunctionType()->params().drop_front(2));
    auto *context = llvm::StructType::get(ctx, captured);
    std::string name = (f->getName() + "_task").str();
    llvm::Function *task = module.getFunction(name);
    if (!task) {
      task = llvm::Function::Create(
          taskType, llvm::GlobalValue::InternalLinkage, name, module);
      llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", task));
      llvm::SmallVector<llvm::Value *> args{task->getArg(1), task->getArg(2)};
      for (unsigned i = 0; i < captured.size(); ++i)
        args.push_back(b.CreateLoad(
            captured[i], b.CreateStructGEP(context, task->getArg(0), i)));
      b.CreateCall(f, args);
      b.CreateRetVoid();
    }
    // The captured values in the caller's frame, for the call's duration.
    llvm::Function *caller = call->getFunction();
    llvm::IRBuilder<> entry(&caller->getEntryBlock(),
                            caller->getEntryBlock().begin());
    llvm::Value *slot = entry.CreateAlloca(context);
    llvm::IRBuilder<> b(call);
    for (unsigned i = 0; i < captured.size(); ++i)
      b.CreateStore(call->getArgOperand(i + 2),
                    b.CreateStructGEP(context, slot, i));
    // (A negative grain, kParallelEvenGrain, passes as it is.)
    int64_t grain = 1;
    if (f->getFnAttribute(kParallelTaskFnAttr)
            .getValueAsString()
            .getAsInteger(10, grain) ||
        grain == 0)
      grain = 1;
    b.CreateCall(parallelFor,
                 {task, slot, call->getArgOperand(1), llvm::ConstantInt::get(i64, grain)});
    call->eraseFromParent();
  }
}

} // namespace kiln
