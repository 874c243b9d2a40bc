// RUN: kiln-opt %s -canonicalize | FileCheck %s

// A check that always holds goes; others stay. (One left between a kernel
// and its epilogue kept kiln-cpu-vectorize-contractions from fusing them.)
// CHECK-LABEL: func.func @checks
// CHECK-SAME: (%[[OK:.*]]: i1, %[[T:.*]]: tensor<i1>)
func.func @checks(%ok: i1, %t: tensor<i1>) {
  %true = arith.constant true
  %false = arith.constant false
  %all = arith.constant dense<true> : tensor<i1>
  // CHECK-NOT: "always"
  kiln.check %true, "always" fatal : i1
  kiln.check %all, "always, as a tensor" : tensor<i1>
  // CHECK: kiln.check %[[OK]], "run time" fatal : i1
  kiln.check %ok, "run time" fatal : i1
  // CHECK: kiln.check %{{.*}}, "never" : i1
  kiln.check %false, "never" : i1
  // CHECK: kiln.check %[[T]], "run time, as a tensor" : tensor<i1>
  kiln.check %t, "run time, as a tensor" : tensor<i1>
  return
}
