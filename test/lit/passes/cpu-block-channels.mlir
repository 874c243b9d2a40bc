// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-cpu-block-channels))" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(kiln-cpu-block-channels{vector-bits=256}))" | FileCheck %s --check-prefix=AVX2

// Two 3x3 convs, a Relu between them and a residual Add + Relu after the
// second, then a bias-free 1x1 conv: one chain on [1, 2, h, w, 16] tensors
// (three convs, two reorders). The input enters it once
// (kiln.to_blocked), the padding is a blocked fill + insert_slice, the bias
// a per-channel [2, 16] operand, the convs read their NCHW weights through
// blocked indices; the result leaves it once (kiln.from_blocked).
// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x16x8x8xf32>) outs(%{{.*}} : tensor<1x1x8x8x16xf32>) attrs = {kiln.to_blocked}
// CHECK: linalg.fill {{.*}} -> tensor<1x1x10x10x16xf32>
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 1, 1, 0] [1, 1, 8, 8, 16]
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [2, 16] : tensor<32xf32> into tensor<2x16xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<1x1x10x10x16xf32>, tensor<32x16x3x3xf32>) outs(%{{.*}} : tensor<1x2x8x8x16xf32>) attrs = {kiln.blocked_conv = array<i64: 1, 9>}
// CHECK: arith.cmpf olt
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x2x10x10x16xf32>, tensor<32x32x3x3xf32>) outs(%{{.*}} : tensor<1x2x8x8x16xf32>) attrs = {kiln.blocked_conv = array<i64: 1, 9>}
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x2x8x8x16xf32>, tensor<1x2x8x8x16xf32>) outs(%{{.*}} : tensor<1x2x8x8x16xf32>)
// CHECK: arith.addf
// CHECK: linalg.fill {{.*}} -> tensor<1x2x8x8x16xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x2x8x8x16xf32>, tensor<32x32x1x1xf32>) outs(%{{.*}} : tensor<1x2x8x8x16xf32>) attrs = {kiln.blocked_conv = array<i64: 0, 8>}
// CHECK: %[[BACK:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<1x2x8x8x16xf32>) outs(%{{.*}} : tensor<1x32x8x8xf32>) attrs = {kiln.from_blocked}
// CHECK: return %[[BACK]]
// AVX2-LABEL: func.func @chain
// AVX2-NOT: kiln.blocked_conv
#bias = affine_map<(d0, d1, d2, d3) -> (d1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d2, d5 + d3, d6 + d4)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d2, d3, d4)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d5, d6)>
func.func @chain(%arg0: tensor<1x16x8x8xf32>) -> tensor<1x32x8x8xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %w1 = arith.constant dense<0.1> : tensor<32x16x3x3xf32>
  %b1 = arith.constant dense<0.5> : tensor<32xf32>
  %w2 = arith.constant dense<0.2> : tensor<32x32x3x3xf32>
  %b2 = arith.constant dense<0.25> : tensor<32xf32>
  %0 = tensor.empty() : tensor<1x16x10x10xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x16x10x10xf32>) -> tensor<1x16x10x10xf32>
  %p1 = tensor.insert_slice %arg0 into %1[0, 0, 1, 1] [1, 16, 8, 8] [1, 1, 1, 1] : tensor<1x16x8x8xf32> into tensor<1x16x10x10xf32>
  %2 = tensor.empty() : tensor<1x32x8x8xf32>
  %3 = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b1 : tensor<32xf32>) outs(%2 : tensor<1x32x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x32x8x8xf32>
  %4 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%p1, %w1 : tensor<1x16x10x10xf32>, tensor<32x16x3x3xf32>) outs(%3 : tensor<1x32x8x8xf32>) {
  ^bb0(%in: f32, %in_5: f32, %out: f32):
    %11 = arith.mulf %in, %in_5 : f32
    %12 = arith.addf %out, %11 : f32
    linalg.yield %12 : f32
  } -> tensor<1x32x8x8xf32>
  %5 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%4 : tensor<1x32x8x8xf32>) outs(%2 : tensor<1x32x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %11 = arith.cmpf olt, %in, %cst : f32
    %12 = arith.select %11, %cst, %in : f32
    linalg.yield %12 : f32
  } -> tensor<1x32x8x8xf32>
  %6 = tensor.empty() : tensor<1x32x10x10xf32>
  %7 = linalg.fill ins(%cst : f32) outs(%6 : tensor<1x32x10x10xf32>) -> tensor<1x32x10x10xf32>
  %p2 = tensor.insert_slice %5 into %7[0, 0, 1, 1] [1, 32, 8, 8] [1, 1, 1, 1] : tensor<1x32x8x8xf32> into tensor<1x32x10x10xf32>
  %8 = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b2 : tensor<32xf32>) outs(%2 : tensor<1x32x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x32x8x8xf32>
  %9 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%p2, %w2 : tensor<1x32x10x10xf32>, tensor<32x32x3x3xf32>) outs(%8 : tensor<1x32x8x8xf32>) {
  ^bb0(%in: f32, %in_5: f32, %out: f32):
    %11 = arith.mulf %in, %in_5 : f32
    %12 = arith.addf %out, %11 : f32
    linalg.yield %12 : f32
  } -> tensor<1x32x8x8xf32>
  %10 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%9, %5 : tensor<1x32x8x8xf32>, tensor<1x32x8x8xf32>) outs(%2 : tensor<1x32x8x8xf32>) {
  ^bb0(%in: f32, %in_5: f32, %out: f32):
    %11 = arith.addf %in, %in_5 : f32
    %12 = arith.cmpf olt, %11, %cst : f32
    %13 = arith.select %12, %cst, %11 : f32
    linalg.yield %13 : f32
  } -> tensor<1x32x8x8xf32>
  %w3 = arith.constant dense<0.3> : tensor<32x32x1x1xf32>
  %11 = linalg.fill ins(%cst : f32) outs(%2 : tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  %12 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%10, %w3 : tensor<1x32x8x8xf32>, tensor<32x32x1x1xf32>) outs(%11 : tensor<1x32x8x8xf32>) {
  ^bb0(%in: f32, %in_5: f32, %out: f32):
    %13 = arith.mulf %in, %in_5 : f32
    %14 = arith.addf %out, %13 : f32
    linalg.yield %14 : f32
  } -> tensor<1x32x8x8xf32>
  return %12 : tensor<1x32x8x8xf32>
}

// -----

// One conv alone: two reorders for one conv; the chain is undone, the
// conv stays NCHW as it was.
// CHECK-LABEL: func.func @lone
// CHECK-NOT: kiln.to_blocked
// CHECK-NOT: kiln.blocked_conv
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x16x10x10xf32>, tensor<32x16x3x3xf32>) outs(%{{.*}} : tensor<1x32x8x8xf32>)
// CHECK-NOT: kiln.from_blocked
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d2, d5 + d3, d6 + d4)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d2, d3, d4)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d5, d6)>
func.func @lone(%arg0: tensor<1x16x8x8xf32>) -> tensor<1x32x8x8xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %w1 = arith.constant dense<0.1> : tensor<32x16x3x3xf32>
  %0 = tensor.empty() : tensor<1x16x10x10xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x16x10x10xf32>) -> tensor<1x16x10x10xf32>
  %p1 = tensor.insert_slice %arg0 into %1[0, 0, 1, 1] [1, 16, 8, 8] [1, 1, 1, 1] : tensor<1x16x8x8xf32> into tensor<1x16x10x10xf32>
  %2 = tensor.empty() : tensor<1x32x8x8xf32>
  %3 = linalg.fill ins(%cst : f32) outs(%2 : tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  %4 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%p1, %w1 : tensor<1x16x10x10xf32>, tensor<32x16x3x3xf32>) outs(%3 : tensor<1x32x8x8xf32>) {
  ^bb0(%in: f32, %in_5: f32, %out: f32):
    %11 = arith.mulf %in, %in_5 : f32
    %12 = arith.addf %out, %11 : f32
    linalg.yield %12 : f32
  } -> tensor<1x32x8x8xf32>
  return %4 : tensor<1x32x8x8xf32>
}

// -----

// A concat of two blocked convs' results whose whole is then padded for a
// 3x3 conv (inserted into a padded buffer): the parts inserted as blocks,
// the padding blocked, the 3x3 conv in the chain.
// CHECK-LABEL: func.func @concat_padded
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 0, 0, 0] [1, 1, 8, 8, 16] [1, 1, 1, 1, 1] : tensor<1x1x8x8x16xf32> into tensor<1x2x8x8x16xf32>
// CHECK: tensor.insert_slice %{{.*}}[0, 1, 0, 0, 0] [1, 1, 8, 8, 16] [1, 1, 1, 1, 1] : tensor<1x1x8x8x16xf32> into tensor<1x2x8x8x16xf32>
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 1, 1, 0] [1, 2, 8, 8, 16] [1, 1, 1, 1, 1] : tensor<1x2x8x8x16xf32> into tensor<1x2x10x10x16xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x2x10x10x16xf32>, tensor<32x32x3x3xf32>) outs(%{{.*}} : tensor<1x2x8x8x16xf32>) attrs = {kiln.blocked_conv = array<i64: 1, 9>}
// CHECK: kiln.from_blocked
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d2, d5 + d3, d6 + d4)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d2, d3, d4)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d5, d6)>
func.func @concat_padded(%arg0: tensor<1x16x8x8xf32>) -> tensor<1x32x8x8xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %w1 = arith.constant dense<0.1> : tensor<16x16x1x1xf32>
  %w2 = arith.constant dense<0.2> : tensor<16x16x1x1xf32>
  %w3 = arith.constant dense<0.3> : tensor<32x32x3x3xf32>
  %0 = tensor.empty() : tensor<1x16x8x8xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %a = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%arg0, %w1 : tensor<1x16x8x8xf32>, tensor<16x16x1x1xf32>) outs(%1 : tensor<1x16x8x8xf32>) {
  ^bb0(%in: f32, %in_5: f32, %out: f32):
    %11 = arith.mulf %in, %in_5 : f32
    %12 = arith.addf %out, %11 : f32
    linalg.yield %12 : f32
  } -> tensor<1x16x8x8xf32>
  %b = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%a, %w2 : tensor<1x16x8x8xf32>, tensor<16x16x1x1xf32>) outs(%1 : tensor<1x16x8x8xf32>) {
  ^bb0(%in: f32, %in_5: f32, %out: f32):
    %11 = arith.mulf %in, %in_5 : f32
    %12 = arith.addf %out, %11 : f32
    linalg.yield %12 : f32
  } -> tensor<1x16x8x8xf32>
  %2 = tensor.empty() : tensor<1x32x8x8xf32>
  %c1 = tensor.insert_slice %a into %2[0, 0, 0, 0] [1, 16, 8, 8] [1, 1, 1, 1] : tensor<1x16x8x8xf32> into tensor<1x32x8x8xf32>
  %c2 = tensor.insert_slice %b into %c1[0, 16, 0, 0] [1, 16, 8, 8] [1, 1, 1, 1] : tensor<1x16x8x8xf32> into tensor<1x32x8x8xf32>
  %3 = tensor.empty() : tensor<1x32x10x10xf32>
  %4 = linalg.fill ins(%cst : f32) outs(%3 : tensor<1x32x10x10xf32>) -> tensor<1x32x10x10xf32>
  %p = tensor.insert_slice %c2 into %4[0, 0, 1, 1] [1, 32, 8, 8] [1, 1, 1, 1] : tensor<1x32x8x8xf32> into tensor<1x32x10x10xf32>
  %5 = linalg.fill ins(%cst : f32) outs(%2 : tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  %6 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%p, %w3 : tensor<1x32x10x10xf32>, tensor<32x32x3x3xf32>) outs(%5 : tensor<1x32x8x8xf32>) {
  ^bb0(%in: f32, %in_5: f32, %out: f32):
    %11 = arith.mulf %in, %in_5 : f32
    %12 = arith.addf %out, %11 : f32
    linalg.yield %12 : f32
  } -> tensor<1x32x8x8xf32>
  return %6 : tensor<1x32x8x8xf32>
}

// -----

// 24 channels between two 1x1 convs (then a third on 32): blocked as 2
// blocks, the last padded with zeros. The first conv's weights and bias
// are padded to 32 output channels, the second's weights to 32 input
// channels; the Relu between them (finite on finite) runs on the padded
// blocks too.
// CHECK-LABEL: func.func @padded_channels
// CHECK-DAG: arith.constant dense<{{.*}}> : tensor<32x32x1x1xf32>
// CHECK-DAG: arith.constant dense<{{.*}}> : tensor<32x32x1x1xf32>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0] [24] [1] : tensor<24xf32> into tensor<32xf32>
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x8x8x16xf32>) attrs = {kiln.blocked_conv = array<i64: 0, 8>}
// CHECK: arith.cmpf olt
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x2x8x8x16xf32>, tensor<32x32x1x1xf32>) outs(%{{.*}} : tensor<1x2x8x8x16xf32>) attrs = {kiln.blocked_conv = array<i64: 0, 8>}
// CHECK: kiln.blocked_conv
// CHECK: kiln.from_blocked
#bias = affine_map<(d0, d1, d2, d3) -> (d1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d2, d5 + d3, d6 + d4)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d2, d3, d4)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d5, d6)>
func.func @padded_channels(%arg0: tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %w1 = arith.constant dense<0.1> : tensor<24x32x1x1xf32>
  %b1 = arith.constant dense<0.5> : tensor<24xf32>
  %w2 = arith.constant dense<0.2> : tensor<32x24x1x1xf32>
  %w3 = arith.constant dense<0.3> : tensor<32x32x1x1xf32>
  %0 = tensor.empty() : tensor<1x24x8x8xf32>
  %1 = linalg.generic {indexing_maps = [#bias, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b1 : tensor<24xf32>) outs(%0 : tensor<1x24x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x24x8x8xf32>
  %2 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%arg0, %w1 : tensor<1x32x8x8xf32>, tensor<24x32x1x1xf32>) outs(%1 : tensor<1x24x8x8xf32>) {
  ^bb0(%in: f32, %in_5: f32, %out: f32):
    %11 = arith.mulf %in, %in_5 : f32
    %12 = arith.addf %out, %11 : f32
    linalg.yield %12 : f32
  } -> tensor<1x24x8x8xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2 : tensor<1x24x8x8xf32>) outs(%0 : tensor<1x24x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %11 = arith.cmpf olt, %in, %cst : f32
    %12 = arith.select %11, %cst, %in : f32
    linalg.yield %12 : f32
  } -> tensor<1x24x8x8xf32>
  %4 = tensor.empty() : tensor<1x32x8x8xf32>
  %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  %6 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%3, %w2 : tensor<1x24x8x8xf32>, tensor<32x24x1x1xf32>) outs(%5 : tensor<1x32x8x8xf32>) {
  ^bb0(%in: f32, %in_5: f32, %out: f32):
    %11 = arith.mulf %in, %in_5 : f32
    %12 = arith.addf %out, %11 : f32
    linalg.yield %12 : f32
  } -> tensor<1x32x8x8xf32>
  %7 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%6, %w3 : tensor<1x32x8x8xf32>, tensor<32x32x1x1xf32>) outs(%5 : tensor<1x32x8x8xf32>) {
  ^bb0(%in: f32, %in_5: f32, %out: f32):
    %11 = arith.mulf %in, %in_5 : f32
    %12 = arith.addf %out, %11 : f32
    linalg.yield %12 : f32
  } -> tensor<1x32x8x8xf32>
  return %7 : tensor<1x32x8x8xf32>
}

// -----

// A squeeze-and-excitation block on 24 channels (blocked as 2, the last
// padded): a 1x1 conv, a global sum of its output (an average pool's
// first step), that sum as a per-image channel scale of the conv's
// output, then two 1x1 convs. The sum runs on the blocked value into [1, 2,
// 16] (kiln.blocked_global_pool), read back as [1, 24] (the padded
// channels dropped); the scale enters the blocked Mul as [1, 2, 16]
// (padded with zeros): one chain, nothing leaves it until its end.
// CHECK-LABEL: func.func @squeeze_excite
// CHECK: kiln.blocked_conv
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%{{.*}} : tensor<1x2x8x8x16xf32>) outs(%{{.*}} : tensor<1x2x16xf32>) attrs = {kiln.blocked_global_pool}
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[SUM]] {{\[\[}}0], [1, 2]] : tensor<1x2x16xf32> into tensor<1x32xf32>
// CHECK: tensor.extract_slice %[[FLAT]][0, 0] [1, 24] [1, 1] : tensor<1x32xf32> to tensor<1x24xf32>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [1, 24] [1, 1] : tensor<1x24xf32> into tensor<1x32xf32>
// CHECK: %[[SCALE:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [1, 2, 16] : tensor<1x32xf32> into tensor<1x2x16xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[SCALE]] : tensor<1x2x8x8x16xf32>, tensor<1x2x16xf32>) outs(%{{.*}} : tensor<1x2x8x8x16xf32>)
// CHECK-SAME: kiln.blocked_elementwise
// CHECK: arith.mulf
// CHECK: kiln.blocked_conv
// CHECK-NOT: kiln.from_blocked
// CHECK: kiln.blocked_conv
// CHECK: kiln.from_blocked
// CHECK-NOT: kiln.from_blocked
#bias = affine_map<(d0, d1, d2, d3) -> (d1)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#nc = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#se = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d2, d5 + d3, d6 + d4)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d2, d3, d4)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d5, d6)>
func.func @squeeze_excite(%arg0: tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %w1 = arith.constant dense<0.1> : tensor<24x32x1x1xf32>
  %w2 = arith.constant dense<0.2> : tensor<32x24x1x1xf32>
  %w3 = arith.constant dense<0.3> : tensor<32x32x1x1xf32>
  %0 = tensor.empty() : tensor<1x24x8x8xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x24x8x8xf32>) -> tensor<1x24x8x8xf32>
  %2 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%arg0, %w1 : tensor<1x32x8x8xf32>, tensor<24x32x1x1xf32>) outs(%1 : tensor<1x24x8x8xf32>) {
  ^bb0(%in: f32, %in_5: f32, %out: f32):
    %11 = arith.mulf %in, %in_5 : f32
    %12 = arith.addf %out, %11 : f32
    linalg.yield %12 : f32
  } -> tensor<1x24x8x8xf32>
  %s0 = tensor.empty() : tensor<1x24xf32>
  %s1 = linalg.fill ins(%cst : f32) outs(%s0 : tensor<1x24xf32>) -> tensor<1x24xf32>
  %s2 = linalg.generic {indexing_maps = [#id, #nc], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%2 : tensor<1x24x8x8xf32>) outs(%s1 : tensor<1x24xf32>) {
  ^bb0(%in: f32, %out: f32):
    %11 = arith.addf %out, %in : f32
    linalg.yield %11 : f32
  } -> tensor<1x24xf32>
  %s3 = tensor.expand_shape %s2 [[0], [1, 2, 3]] output_shape [1, 24, 1, 1] : tensor<1x24xf32> into tensor<1x24x1x1xf32>
  %3 = linalg.generic {indexing_maps = [#id, #se, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2, %s3 : tensor<1x24x8x8xf32>, tensor<1x24x1x1xf32>) outs(%0 : tensor<1x24x8x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %11 = arith.mulf %in, %in_1 : f32
    linalg.yield %11 : f32
  } -> tensor<1x24x8x8xf32>
  %4 = tensor.empty() : tensor<1x32x8x8xf32>
  %5 = linalg.fill ins(%cst : f32) outs(%4 : tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  %6 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%3, %w2 : tensor<1x24x8x8xf32>, tensor<32x24x1x1xf32>) outs(%5 : tensor<1x32x8x8xf32>) {
  ^bb0(%in: f32, %in_5: f32, %out: f32):
    %11 = arith.mulf %in, %in_5 : f32
    %12 = arith.addf %out, %11 : f32
    linalg.yield %12 : f32
  } -> tensor<1x32x8x8xf32>
  %7 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%6, %w3 : tensor<1x32x8x8xf32>, tensor<32x32x1x1xf32>) outs(%5 : tensor<1x32x8x8xf32>) {
  ^bb0(%in: f32, %in_5: f32, %out: f32):
    %11 = arith.mulf %in, %in_5 : f32
    %12 = arith.addf %out, %11 : f32
    linalg.yield %12 : f32
  } -> tensor<1x32x8x8xf32>
  return %7 : tensor<1x32x8x8xf32>
}

// -----

// Two 1x1 convs, then a global sum of the second's clipped output (a
// Clip fused into its pool): the sum, clip and all, runs on the blocked
// value (kiln.blocked_global_pool); nothing leaves the chain in NCHW. A
// sum that also reads the element's position is no global pool: the
// chain would leave blocks before it, and is not kept.
// CHECK-LABEL: func.func @global_pool_of_clip
// CHECK-COUNT-2: kiln.blocked_conv
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x2x4x4x16xf32>) outs(%{{.*}} : tensor<1x2x16xf32>) attrs = {kiln.blocked_global_pool}
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: arith.addf
// CHECK-NOT: kiln.from_blocked
// CHECK-LABEL: func.func @global_pool_of_index
// CHECK-NOT: kiln.blocked_global_pool
// CHECK: linalg.index 2
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d2, d5 + d3, d6 + d4)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d2, d3, d4)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d5, d6)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#nc = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
func.func @global_pool_of_clip(%arg0: tensor<1x32x4x4xf32>) -> tensor<1x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %six = arith.constant 6.000000e+00 : f32
  %w1 = arith.constant dense<0.1> : tensor<32x32x1x1xf32>
  %w2 = arith.constant dense<0.2> : tensor<32x32x1x1xf32>
  %0 = tensor.empty() : tensor<1x32x4x4xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  %2 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%arg0, %w1 : tensor<1x32x4x4xf32>, tensor<32x32x1x1xf32>) outs(%1 : tensor<1x32x4x4xf32>) {
  ^bb0(%in: f32, %in_5: f32, %out: f32):
    %11 = arith.mulf %in, %in_5 : f32
    %12 = arith.addf %out, %11 : f32
    linalg.yield %12 : f32
  } -> tensor<1x32x4x4xf32>
  %3 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%2, %w2 : tensor<1x32x4x4xf32>, tensor<32x32x1x1xf32>) outs(%1 : tensor<1x32x4x4xf32>) {
  ^bb0(%in: f32, %in_5: f32, %out: f32):
    %11 = arith.mulf %in, %in_5 : f32
    %12 = arith.addf %out, %11 : f32
    linalg.yield %12 : f32
  } -> tensor<1x32x4x4xf32>
  %s0 = tensor.empty() : tensor<1x32xf32>
  %s1 = linalg.fill ins(%cst : f32) outs(%s0 : tensor<1x32xf32>) -> tensor<1x32xf32>
  %s2 = linalg.generic {indexing_maps = [#id, #nc], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%3 : tensor<1x32x4x4xf32>) outs(%s1 : tensor<1x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %11 = arith.maximumf %in, %cst : f32
    %12 = arith.minimumf %11, %six : f32
    %13 = arith.addf %out, %12 : f32
    linalg.yield %13 : f32
  } -> tensor<1x32xf32>
  return %s2 : tensor<1x32xf32>
}

func.func @global_pool_of_index(%arg0: tensor<1x32x4x4xf32>) -> tensor<1x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %w1 = arith.constant dense<0.1> : tensor<32x32x1x1xf32>
  %w2 = arith.constant dense<0.2> : tensor<32x32x1x1xf32>
  %0 = tensor.empty() : tensor<1x32x4x4xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<1x32x4x4xf32>) -> tensor<1x32x4x4xf32>
  %2 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%arg0, %w1 : tensor<1x32x4x4xf32>, tensor<32x32x1x1xf32>) outs(%1 : tensor<1x32x4x4xf32>) {
  ^bb0(%in: f32, %in_5: f32, %out: f32):
    %11 = arith.mulf %in, %in_5 : f32
    %12 = arith.addf %out, %11 : f32
    linalg.yield %12 : f32
  } -> tensor<1x32x4x4xf32>
  %3 = linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction", "parallel", "parallel"]} ins(%2, %w2 : tensor<1x32x4x4xf32>, tensor<32x32x1x1xf32>) outs(%1 : tensor<1x32x4x4xf32>) {
  ^bb0(%in: f32, %in_5: f32, %out: f32):
    %11 = arith.mulf %in, %in_5 : f32
    %12 = arith.addf %out, %11 : f32
    linalg.yield %12 : f32
  } -> tensor<1x32x4x4xf32>
  %s0 = tensor.empty() : tensor<1x32xf32>
  %s1 = linalg.fill ins(%cst : f32) outs(%s0 : tensor<1x32xf32>) -> tensor<1x32xf32>
  %s2 = linalg.generic {indexing_maps = [#id, #nc], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%3 : tensor<1x32x4x4xf32>) outs(%s1 : tensor<1x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 2 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %11 = arith.mulf %in, %f : f32
    %13 = arith.addf %out, %11 : f32
    linalg.yield %13 : f32
  } -> tensor<1x32xf32>
  return %s2 : tensor<1x32xf32>
}
