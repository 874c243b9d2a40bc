//===- ImportFuzzer.cpp - the ONNX importer, through shape inference ------===//
//
// Bytes as a serialized ModelProto into compiler/Importer: protobuf
// decoding, initializers, the graph rules, every node's op checks and its
// shape inference rule. Any input must import or fail with diagnostics;
// a crash, a sanitizer report or a hang is a bug.
//
//===----------------------------------------------------------------------===//
#include "compiler/Importer.h"
#include "dialects/onnx/OnnxDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <cstdint>
#include <memory>

using namespace mlir;

// LLVM's BumpPtrAllocator, inlined into this instrumented code, poisons the
// unused part of a slab it starts; libMLIR.so is not instrumented and hands
// out later types from that slab without unpoisoning them. Every report of
// manual poisoning is then a false positive (use-after-poison in type
// uniquing), so ASan ignores it here.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  // A fresh context now and then: each keeps every type and attribute it
  // ever made.
  static std::unique_ptr<MLIRContext> Ctx;
  static unsigned Uses = 0;
  if (!Ctx || ++Uses % 512 == 0) {
    DialectRegistry Registry;
    Registry.insert<kiln::onnx::ONNXDialect, func::FuncDialect>();
    Ctx = std::make_unique<MLIRContext>(Registry);
    Ctx->loadAllAvailableDialects();
  }
  ScopedDiagnosticHandler Quiet(Ctx.get(),
                                [](Diagnostic &) { return success(); });
  // External data resolves against a folder that does not exist.
  (void)kiln::importOnnxBytes(
      *Ctx, StringRef(reinterpret_cast<const char *>(Data), Size), "fuzz.onnx",
      "/nonexistent-kiln-fuzz");
  return 0;
}
