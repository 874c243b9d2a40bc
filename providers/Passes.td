//===- Passes.td - provider passes --------------------------*- tablegen -*-===//
#ifndef KILN_PROVIDERS_PASSES_TD
#define KILN_PROVIDERS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LowerPartitions : Pass<"kiln-lower-partitions", "::mlir::ModuleOp"> {
  let summary = "Lower every kiln.partition with its provider";
  let description = [{
    Hands each `kiln.partition` to the provider named on it, which rewrites
    the onnx ops inside into its codegen dialects (linalg/tensor for the
    CPU). Partitions of providers that compile into the host function are
    then inlined; the module keeps the list of partitions in
    `kiln.partitions` for the model descriptor and profiling.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def CudaOffload : Pass<"kiln-cuda-offload", "::mlir::ModuleOp"> {
  let summary = "Place the buffers of CUDA partitions on the device and make their kernels";
  let description = [{
    Runs after bufferization. Structured ops tagged `kiln.device = "cuda"`
    run on the device: buffers only they touch become `gpu.alloc`s, other
    buffers get a device twin, and `gpu.memcpy` is inserted only where the
    side about to use a buffer holds a stale copy (one transfer per tensor
    per direction). The device ops become `scf.parallel` nests with the
    parallel dimensions outermost and the innermost one tiled by up to 256
    threads, ready for gpu-map-parallel-loops and
    convert-parallel-loops-to-gpu.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif
