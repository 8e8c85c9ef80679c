// RUN: tx8c-opt %s | tx8c-opt | filecheck %s
// RUN: tx8c-opt %s --print-op-generic | tx8c-opt | filecheck %s
// Printing, parsing and printing again gives the same text; the generic form parses too.

func.func @batchnorm(%x: tensor<2x8x4x4xf32>, %xh: tensor<1x4x4x8xbf16>, %p: tensor<8xf32>) -> tensor<1x4x4x8xbf16> {
  // CHECK:      %{{.*}} = tx8be.BatchNorm_Inference %x, %p, %p, %p, %p : (tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x4x4xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.BatchNorm_Inference %xh, %p, %p, %p, %p {epsilon = 1.000000e-03 : f64, axis = 3 : i64} : (tensor<1x4x4x8xbf16>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x4x8xbf16>
  %0 = tx8be.BatchNorm_Inference %x, %p, %p, %p, %p : (tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x4x4xf32>
  %1 = tx8be.BatchNorm_Inference %xh, %p, %p, %p, %p {epsilon = 1.000000e-03 : f64, axis = 3 : i64} : (tensor<1x4x4x8xbf16>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x4x8xbf16>
  func.return %1 : tensor<1x4x4x8xbf16>
}

func.func @norms(%x: tensor<2x3x4xf16>, %s: tensor<3x4xf16>, %b: tensor<3x4xf16>, %r: tensor<4xf16>) -> tensor<2x3x4xf16> {
  // CHECK:      %{{.*}} = tx8be.LayerNorm %x, %s, %b {axis = -2 : i64, epsilon = 1.000000e-03 : f64} : (tensor<2x3x4xf16>, tensor<3x4xf16>, tensor<3x4xf16>) -> tensor<2x3x4xf16>
  // CHECK-NEXT: %{{.*}} = tx8be.LayerNorm %x : (tensor<2x3x4xf16>) -> tensor<2x3x4xf16>
  // CHECK-NEXT: %{{.*}} = tx8be.RMSNorm %x, %s {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : (tensor<2x3x4xf16>, tensor<3x4xf16>) -> tensor<2x3x4xf16>
  // CHECK-NEXT: %{{.*}} = tx8be.RMSNorm %x, %r : (tensor<2x3x4xf16>, tensor<4xf16>) -> tensor<2x3x4xf16>
  // CHECK-NEXT: %{{.*}} = tx8be.Softmax %x {axis = 0 : i64} : (tensor<2x3x4xf16>) -> tensor<2x3x4xf16>
  // CHECK-NEXT: %{{.*}} = tx8be.Softmax %x : (tensor<2x3x4xf16>) -> tensor<2x3x4xf16>
  %0 = tx8be.LayerNorm %x, %s, %b {axis = -2 : i64, epsilon = 1.000000e-03 : f64} : (tensor<2x3x4xf16>, tensor<3x4xf16>, tensor<3x4xf16>) -> tensor<2x3x4xf16>
  %1 = tx8be.LayerNorm %x : (tensor<2x3x4xf16>) -> tensor<2x3x4xf16>
  %2 = tx8be.RMSNorm %x, %s {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : (tensor<2x3x4xf16>, tensor<3x4xf16>) -> tensor<2x3x4xf16>
  %3 = tx8be.RMSNorm %x, %r : (tensor<2x3x4xf16>, tensor<4xf16>) -> tensor<2x3x4xf16>
  %4 = tx8be.Softmax %x {axis = 0 : i64} : (tensor<2x3x4xf16>) -> tensor<2x3x4xf16>
  %5 = tx8be.Softmax %x : (tensor<2x3x4xf16>) -> tensor<2x3x4xf16>
  func.return %5 : tensor<2x3x4xf16>
}
