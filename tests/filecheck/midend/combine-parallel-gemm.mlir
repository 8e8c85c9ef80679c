// RUN: tx8c-opt %s -p combine-parallel-gemm | filecheck %s
// RUN: tx8c-opt %s -p 'combine-parallel-gemm{min-num-branches=4}' | filecheck %s --check-prefix=FOUR
// Three projections of one input (the importer's MatMul + Add(bias) form) become one
// Gemm with the weights concatenated along N, the bias Adds its bias, and a Split.

// CHECK-LABEL: func.func @qkv
func.func @qkv(%x: tensor<1x4x8xf32>) -> (tensor<1x4x2xf32>, tensor<1x4x3xf32>, tensor<1x4x1xf32>) {
  %wq = tx8be.Constant {value = dense<1.0> : tensor<8x2xf32>} : () -> tensor<8x2xf32>
  %bq = tx8be.Constant {value = dense<0.5> : tensor<2xf32>} : () -> tensor<2xf32>
  %wk = tx8be.Constant {value = dense<2.0> : tensor<8x3xf32>} : () -> tensor<8x3xf32>
  %bk = tx8be.Constant {value = dense<-0.5> : tensor<3xf32>} : () -> tensor<3xf32>
  %wv = tx8be.Constant {value = dense<3.0> : tensor<8x1xf32>} : () -> tensor<8x1xf32>
  %bv = tx8be.Constant {value = dense<1.5> : tensor<1xf32>} : () -> tensor<1xf32>
  %q0 = tx8be.Gemm %x, %wq : (tensor<1x4x8xf32>, tensor<8x2xf32>) -> tensor<1x4x2xf32>
  %q = tx8be.Add %bq, %q0 : (tensor<2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
  %k0 = tx8be.Gemm %x, %wk : (tensor<1x4x8xf32>, tensor<8x3xf32>) -> tensor<1x4x3xf32>
  %k = tx8be.Add %bk, %k0 : (tensor<3xf32>, tensor<1x4x3xf32>) -> tensor<1x4x3xf32>
  %v0 = tx8be.Gemm %x, %wv : (tensor<1x4x8xf32>, tensor<8x1xf32>) -> tensor<1x4x1xf32>
  %v = tx8be.Add %bv, %v0 : (tensor<1xf32>, tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  func.return %q, %k, %v : tensor<1x4x2xf32>, tensor<1x4x3xf32>, tensor<1x4x1xf32>
}
// CHECK-NEXT:  %[[W:.*]] = tx8be.Constant {value = dense<{{.*}}> : tensor<8x6xf32>}
// CHECK-NEXT:  %[[B:.*]] = tx8be.Constant {value = dense<[5.000000e-01, 5.000000e-01, -5.000000e-01, -5.000000e-01, -5.000000e-01, 1.500000e+00]> : tensor<6xf32>}
// CHECK-NEXT:  %[[G:.*]] = tx8be.Gemm %x, %[[W]], %[[B]] : (tensor<1x4x8xf32>, tensor<8x6xf32>, tensor<6xf32>) -> tensor<1x4x6xf32>
// CHECK-NEXT:  %[[Q:.*]], %[[K:.*]], %[[V:.*]] = tx8be.Split %[[G]] {axis = 2 : i64, split = array<i64: 2, 3, 1>} : (tensor<1x4x6xf32>) -> (tensor<1x4x2xf32>, tensor<1x4x3xf32>, tensor<1x4x1xf32>)
// CHECK-NEXT:  func.return %[[Q]], %[[K]], %[[V]]
// FOUR-LABEL: func.func @qkv
// FOUR-COUNT-3: tx8be.Gemm
// FOUR-NOT: tx8be.Split

// Gemms that differ in alpha or trans_b do not combine.
// CHECK-LABEL: func.func @mismatched
func.func @mismatched(%x: tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>) {
  %w = tx8be.Constant {value = dense<1.0> : tensor<8x2xf32>} : () -> tensor<8x2xf32>
  %wt = tx8be.Constant {value = dense<1.0> : tensor<2x8xf32>} : () -> tensor<2x8xf32>
  %0 = tx8be.Gemm %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %1 = tx8be.Gemm %x, %w {alpha = 2.0 : f64} : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %2 = tx8be.Gemm %x, %wt {trans_b = true} : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<4x2xf32>
  func.return %0, %1, %2 : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>
}
// CHECK-COUNT-3: tx8be.Gemm
// CHECK-NOT: tx8be.Split
