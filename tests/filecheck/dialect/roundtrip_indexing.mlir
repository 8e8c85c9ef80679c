// RUN: tx8c-opt %s | tx8c-opt | filecheck %s
// RUN: tx8c-opt %s --print-op-generic | tx8c-opt | filecheck %s
// Printing, parsing and printing again gives the same text; the generic form parses too.

func.func @gather(%d: tensor<4x6x8xf32>, %i: tensor<2x3xi64>, %s: tensor<i32>, %t: tensor<5x3xbf16>) -> tensor<4x2x3x8xf32> {
  // CHECK:      %{{.*}} = tx8be.Gather %d, %i {axis = 1 : i64} : (tensor<4x6x8xf32>, tensor<2x3xi64>) -> tensor<4x2x3x8xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Gather %d, %s {axis = -1 : i64} : (tensor<4x6x8xf32>, tensor<i32>) -> tensor<4x6xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Gather %d, %i : (tensor<4x6x8xf32>, tensor<2x3xi64>) -> tensor<2x3x6x8xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Gather %t, %i {layout_str = "Tensor"} : (tensor<5x3xbf16>, tensor<2x3xi64>) -> tensor<2x3x3xbf16>
  %0 = tx8be.Gather %d, %i {axis = 1 : i64} : (tensor<4x6x8xf32>, tensor<2x3xi64>) -> tensor<4x2x3x8xf32>
  %1 = tx8be.Gather %d, %s {axis = -1 : i64} : (tensor<4x6x8xf32>, tensor<i32>) -> tensor<4x6xf32>
  %2 = tx8be.Gather %d, %i : (tensor<4x6x8xf32>, tensor<2x3xi64>) -> tensor<2x3x6x8xf32>
  %3 = tx8be.Gather %t, %i {layout_str = "Tensor"} : (tensor<5x3xbf16>, tensor<2x3xi64>) -> tensor<2x3x3xbf16>
  func.return %0 : tensor<4x2x3x8xf32>
}

func.func @gather_elements(%d: tensor<3x4xi8>, %i: tensor<3x2xi32>, %j: tensor<2x4xi64>) -> tensor<3x2xi8> {
  // CHECK:      %{{.*}} = tx8be.GatherElements %d, %i {axis = 1 : i64} : (tensor<3x4xi8>, tensor<3x2xi32>) -> tensor<3x2xi8>
  // CHECK-NEXT: %{{.*}} = tx8be.GatherElements %d, %j : (tensor<3x4xi8>, tensor<2x4xi64>) -> tensor<2x4xi8>
  %0 = tx8be.GatherElements %d, %i {axis = 1 : i64} : (tensor<3x4xi8>, tensor<3x2xi32>) -> tensor<3x2xi8>
  %1 = tx8be.GatherElements %d, %j : (tensor<3x4xi8>, tensor<2x4xi64>) -> tensor<2x4xi8>
  func.return %0 : tensor<3x2xi8>
}

func.func @scatter_nd(%d: tensor<4x5x6xf16>, %i: tensor<2x3x2xi64>, %u: tensor<2x3x6xf16>, %b: tensor<4x5x6xi1>, %k: tensor<3xi32>, %v: tensor<i1>) -> tensor<4x5x6xf16> {
  // CHECK:      %{{.*}} = tx8be.ScatterND %d, %i, %u : (tensor<4x5x6xf16>, tensor<2x3x2xi64>, tensor<2x3x6xf16>) -> tensor<4x5x6xf16>
  // CHECK-NEXT: %{{.*}} = tx8be.ScatterND %d, %i, %u {reduction = "add"} : (tensor<4x5x6xf16>, tensor<2x3x2xi64>, tensor<2x3x6xf16>) -> tensor<4x5x6xf16>
  // CHECK-NEXT: %{{.*}} = tx8be.ScatterND %d, %i, %u {reduction = "mul"} : (tensor<4x5x6xf16>, tensor<2x3x2xi64>, tensor<2x3x6xf16>) -> tensor<4x5x6xf16>
  // CHECK-NEXT: %{{.*}} = tx8be.ScatterND %d, %i, %u {reduction = "max"} : (tensor<4x5x6xf16>, tensor<2x3x2xi64>, tensor<2x3x6xf16>) -> tensor<4x5x6xf16>
  // CHECK-NEXT: %{{.*}} = tx8be.ScatterND %d, %i, %u {reduction = "min"} : (tensor<4x5x6xf16>, tensor<2x3x2xi64>, tensor<2x3x6xf16>) -> tensor<4x5x6xf16>
  // CHECK-NEXT: %{{.*}} = tx8be.ScatterND %b, %k, %v : (tensor<4x5x6xi1>, tensor<3xi32>, tensor<i1>) -> tensor<4x5x6xi1>
  %0 = tx8be.ScatterND %d, %i, %u : (tensor<4x5x6xf16>, tensor<2x3x2xi64>, tensor<2x3x6xf16>) -> tensor<4x5x6xf16>
  %1 = tx8be.ScatterND %d, %i, %u {reduction = "add"} : (tensor<4x5x6xf16>, tensor<2x3x2xi64>, tensor<2x3x6xf16>) -> tensor<4x5x6xf16>
  %2 = tx8be.ScatterND %d, %i, %u {reduction = "mul"} : (tensor<4x5x6xf16>, tensor<2x3x2xi64>, tensor<2x3x6xf16>) -> tensor<4x5x6xf16>
  %3 = tx8be.ScatterND %d, %i, %u {reduction = "max"} : (tensor<4x5x6xf16>, tensor<2x3x2xi64>, tensor<2x3x6xf16>) -> tensor<4x5x6xf16>
  %4 = tx8be.ScatterND %d, %i, %u {reduction = "min"} : (tensor<4x5x6xf16>, tensor<2x3x2xi64>, tensor<2x3x6xf16>) -> tensor<4x5x6xf16>
  %5 = tx8be.ScatterND %b, %k, %v : (tensor<4x5x6xi1>, tensor<3xi32>, tensor<i1>) -> tensor<4x5x6xi1>
  func.return %0 : tensor<4x5x6xf16>
}
