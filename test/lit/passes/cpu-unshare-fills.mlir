// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-cpu-unshare-fills))' | FileCheck %s

// Two bias-free convs (here matmuls) and a padded input share one zero fill
// after CSE: each writer gets its own fill right before it; the read keeps
// the original.
// CHECK-LABEL: func.func @shared
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<4x4xf32>
// CHECK: %[[F0:.*]] = linalg.fill ins(%{{.*}}) outs(%[[E0]] : tensor<4x4xf32>)
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<4x4xf32>
// CHECK-NEXT: %[[F1:.*]] = linalg.fill ins(%{{.*}}) outs(%[[E1]] : tensor<4x4xf32>)
// CHECK-NEXT: %[[M1:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[F1]] : tensor<4x4xf32>)
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<4x4xf32>
// CHECK-NEXT: %[[F2:.*]] = linalg.fill ins(%{{.*}}) outs(%[[E2]] : tensor<4x4xf32>)
// CHECK-NEXT: linalg.matmul ins(%[[M1]], %[[F0]] : tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[F2]] : tensor<4x4xf32>)
// CHECK: %[[E3:.*]] = tensor.empty() : tensor<4x4xf32>
// CHECK-NEXT: %[[F3:.*]] = linalg.fill ins(%{{.*}}) outs(%[[E3]] : tensor<4x4xf32>)
// CHECK-NEXT: tensor.insert_slice %{{.*}} into %[[F3]][1, 1] [2, 2] [1, 1]
func.func @shared(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %s: tensor<2x2xf32>)
    -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m1 = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m2 = linalg.matmul ins(%m1, %f : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = tensor.insert_slice %s into %f[1, 1] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<4x4xf32>
  %r = arith.addf %m2, %p : tensor<4x4xf32>
  return %r, %m1 : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// One writer: left as it is.
// CHECK-LABEL: func.func @single
// CHECK-COUNT-1: linalg.fill
// CHECK-NOT: linalg.fill
func.func @single(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %m : tensor<4x4xf32>
}

// -----

// Two writers, no reader: two fills, the original gone.
// CHECK-LABEL: func.func @writers_only
// CHECK-COUNT-2: linalg.fill
// CHECK-NOT: linalg.fill
func.func @writers_only(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m1 = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m2 = linalg.matmul ins(%b, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %m1, %m2 : tensor<4x4xf32>, tensor<4x4xf32>
}
