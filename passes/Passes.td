//===- Passes.td - provider-independent kiln passes ---------*- tablegen -*-===//
#ifndef KILN_PASSES_PASSES_TD
#define KILN_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def ShapeInference : Pass<"kiln-shape-inference", "::mlir::func::FuncOp"> {
  let summary = "Infer static result shapes and element types of onnx ops";
  let description = [{
    Re-runs each op's shape inference rule in program order so that result
    types are as static as the inputs allow, then updates the function's
    result types. Dimensions that depend on unknown input dimensions stay
    dynamic (`?`). Inconsistent shapes are reported against the node.
  }];
}

def Partition : Pass<"kiln-partition", "::mlir::ModuleOp"> {
  let summary = "Assign ops to execution providers and group them into partitions";
  let description = [{
    Walks the graph in program order and assigns each onnx op to the first
    provider, in the user's priority order, whose capability query accepts
    it (like ONNX Runtime's GetCapability). Consecutive ops of one provider
    are wrapped into a `kiln.partition` region; values used after a
    partition become its results. An op no provider accepts is reported
    with each provider's reason.
  }];
  let options = [
    ListOption<"providers", "providers", "std::string",
               "Execution providers in priority order (default: cpu)">
  ];
  let dependentDialects = ["::kiln::KilnDialect"];
}

def PlanMemory : Pass<"kiln-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Plan all intermediate buffers into one arena and pass outputs by pointer";
  let description = [{
    Runs after bufferization on `@main`. Results become output arguments
    (written in place where the producing buffer allows, copied otherwise),
    and every static `memref.alloc` becomes a `memref.view` into one arena
    argument at an offset chosen at compile time: buffers whose live ranges
    (including all their aliases) do not overlap share bytes. The arena
    size, before and after reuse, is recorded on the module as
    `kiln.arena_size` and `kiln.arena_size_unshared`.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", "64", "Byte alignment of every buffer">
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect"];
}

#endif
