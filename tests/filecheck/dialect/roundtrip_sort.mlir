// RUN: tx8c-opt %s | tx8c-opt | filecheck %s
// RUN: tx8c-opt %s --print-op-generic | tx8c-opt | filecheck %s
// Printing, parsing and printing again gives the same text; the generic form parses too.

func.func @topk(%x: tensor<2x8xf32>, %i: tensor<5x3xi32>) -> tensor<2x3xf32> {
  // CHECK:      %{{.*}}, %{{.*}} = tx8be.TopK %x {k = 3 : i64} : (tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  // CHECK-NEXT: %{{.*}}, %{{.*}} = tx8be.TopK %i {k = 2 : i64, axis = 0 : i64, largest = false, sorted = false} : (tensor<5x3xi32>) -> (tensor<2x3xi32>, tensor<2x3xi64>)
  %0, %1 = tx8be.TopK %x {k = 3 : i64} : (tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  %2, %3 = tx8be.TopK %i {k = 2 : i64, axis = 0 : i64, largest = false, sorted = false} : (tensor<5x3xi32>) -> (tensor<2x3xi32>, tensor<2x3xi64>)
  func.return %0 : tensor<2x3xf32>
}
