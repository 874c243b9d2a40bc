// RUN: kiln-opt %s --kiln-partition="providers=cuda,cpu min-device-elements=0" --kiln-lower-partitions \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   --kiln-cuda-offload | kiln-opt --gpu-map-parallel-loops --convert-parallel-loops-to-gpu \
// RUN:   | FileCheck %s

// Every device loop nest becomes a kernel: a dim shorter than a block (16)
// is one exact block, a longer ragged one (300) 256-thread blocks with a
// guarded last one. A nest left as a host loop would write device memory
// from the CPU (found on an H200: gpt_tiny's 1x16 fills crashed).
// CHECK-LABEL: func.func @short_and_ragged
// CHECK-NOT: scf.parallel
// CHECK: gpu.launch
// CHECK-NOT: scf.parallel
// CHECK: gpu.launch
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @short_and_ragged(%x: tensor<1x16xf32>, %y: tensor<300xf32>) -> (tensor<1x16xf32>, tensor<300xf32>) {
  %0 = onnx.Relu(%x) : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %1 = onnx.Tanh(%y) : (tensor<300xf32>) -> tensor<300xf32>
  return %0, %1 : tensor<1x16xf32>, tensor<300xf32>
}
