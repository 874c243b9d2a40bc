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
    with each provider's reason. Device partitions whose largest result has
    fewer than `min-device-elements` elements move back to the CPU.
    Tensors crossing between the host and a device get one `kiln.transfer`
    per tensor and direction, shared by every consumer; each partition
    records the bytes it receives and sends (`kiln.bytes_in/out`).
  }];
  let options = [
    ListOption<"providers", "providers", "std::string",
               "Execution providers in priority order (default: cpu)">,
    Option<"assignment", "assignment", "std::string", "\"\"",
           "JSON file pinning node names or op types to a provider "
           "(keys nodes and op_types)">,
    Option<"minDeviceElements", "min-device-elements", "int64_t", "256",
           "Device partitions whose largest result has fewer elements run on "
           "the CPU instead (a transfer would cost more than the work)">
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
