// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-cpu-unshare-slice-sources))' | FileCheck %s

// A concat of two channel halves whose producers (a copy-through generic
// and a matmul-like chain from a bias generic) write into one CSE-merged
// tensor.empty: each chain's root write gets an empty of its own, right
// before it. The read-only use keeps the original.
// CHECK-LABEL: func.func @concat_parts
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x4x2x2xf32>
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<1x4x2x2xf32>
// CHECK-NEXT: %[[A:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<1x4x2x2xf32>) outs(%[[E1]] : tensor<1x4x2x2xf32>)
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<1x4x2x2xf32>
// CHECK-NEXT: %[[B:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<4xf32>) outs(%[[E2]] : tensor<1x4x2x2xf32>)
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<1x4x2x2xf32>) outs(%[[B]] : tensor<1x4x2x2xf32>)
// CHECK: tensor.empty() : tensor<1x8x2x2xf32>
#id = affine_map<(n, c, h, w) -> (n, c, h, w)>
#ch = affine_map<(n, c, h, w) -> (c)>
func.func @concat_parts(%x: tensor<1x4x2x2xf32>, %bias: tensor<4xf32>)
    -> (tensor<1x8x2x2xf32>, tensor<1x4x2x2xf32>) {
  %e = tensor.empty() : tensor<1x4x2x2xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x4x2x2xf32>) outs(%e : tensor<1x4x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.mulf %in, %in : f32
    linalg.yield %r : f32
  } -> tensor<1x4x2x2xf32>
  %b0 = linalg.generic {indexing_maps = [#ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bias : tensor<4xf32>) outs(%e : tensor<1x4x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x4x2x2xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x4x2x2xf32>) outs(%b0 : tensor<1x4x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<1x4x2x2xf32>
  %c0 = tensor.empty() : tensor<1x8x2x2xf32>
  %c1 = tensor.insert_slice %a into %c0[0, 0, 0, 0] [1, 4, 2, 2] [1, 1, 1, 1] : tensor<1x4x2x2xf32> into tensor<1x8x2x2xf32>
  %c2 = tensor.insert_slice %b into %c1[0, 4, 0, 0] [1, 4, 2, 2] [1, 1, 1, 1] : tensor<1x4x2x2xf32> into tensor<1x8x2x2xf32>
  %copy = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x4x2x2xf32>) outs(%e : tensor<1x4x2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x4x2x2xf32>
  return %c2, %copy : tensor<1x8x2x2xf32>, tensor<1x4x2x2xf32>
}

// -----

// Not a concat: an insert into a padded fill (its slice is not contiguous
// either), and a concat along the last axis (rows of two parts
// interleave): left as they are.
// CHECK-LABEL: func.func @not_concat_parts
// CHECK-COUNT-1: tensor.empty() : tensor<2x2xf32>
// CHECK-NOT: tensor.empty() : tensor<2x2xf32>
#id2 = affine_map<(i, j) -> (i, j)>
func.func @not_concat_parts(%x: tensor<2x2xf32>) -> (tensor<4x4xf32>, tensor<2x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.mulf %in, %in : f32
    linalg.yield %r : f32
  } -> tensor<2x2xf32>
  %b = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %in : f32
    linalg.yield %r : f32
  } -> tensor<2x2xf32>
  %pe = tensor.empty() : tensor<4x4xf32>
  %pf = linalg.fill ins(%zero : f32) outs(%pe : tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = tensor.insert_slice %a into %pf[1, 1] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<4x4xf32>
  %c0 = tensor.empty() : tensor<2x4xf32>
  %c1 = tensor.insert_slice %a into %c0[0, 0] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x4xf32>
  %c2 = tensor.insert_slice %b into %c1[0, 2] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x4xf32>
  return %p, %c2 : tensor<4x4xf32>, tensor<2x4xf32>
}
