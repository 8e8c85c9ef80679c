// RUN: tx8c-opt %s | tx8c-opt | filecheck %s
// RUN: tx8c-opt %s --print-op-generic | tx8c-opt | filecheck %s
// Printing, parsing and printing again gives the same text; the generic form parses too.

func.func @shape_ops(%a: tensor<2x3x4xf32>, %b: tensor<1x4xbf16>, %i: tensor<2x3xi8>) -> tensor<2x3x4xf32> {
  // CHECK:      %{{.*}} = tx8be.Reshape %a {shape = array<i64: 6, 4>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Transpose %a {perm = array<i64: 0, 2, 1>, layout_str = "NCHW"} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Transpose %a : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.BroadCast %b {shape = array<i64: 3, 1, 4>} : (tensor<1x4xbf16>) -> tensor<3x1x4xbf16>
  // CHECK-NEXT: %{{.*}} = tx8be.Tile %i {repeats = array<i64: 2, 3>} : (tensor<2x3xi8>) -> tensor<4x9xi8>
  %0 = tx8be.Reshape %a {shape = array<i64: 6, 4>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = tx8be.Transpose %a {perm = array<i64: 0, 2, 1>, layout_str = "NCHW"} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %2 = tx8be.Transpose %a : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %3 = tx8be.BroadCast %b {shape = array<i64: 3, 1, 4>} : (tensor<1x4xbf16>) -> tensor<3x1x4xbf16>
  %4 = tx8be.Tile %i {repeats = array<i64: 2, 3>} : (tensor<2x3xi8>) -> tensor<4x9xi8>
  func.return %a : tensor<2x3x4xf32>
}

func.func @relabel(%a: tensor<1x128x768xf32>) -> tensor<1x128x768xf32> {
  // CHECK:      %{{.*}} = tx8be.Relabel %a {shape = array<i64: 1, 12, 128, 64>, view = array<i64: 128, 12, 64>, perm = array<i64: 1, 0, 2>, layout_str = "Tensor"} : (tensor<1x128x768xf32>) -> tensor<1x12x128x64xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Relabel %a {shape = array<i64: 1, 1, 128, 768>} : (tensor<1x128x768xf32>) -> tensor<1x1x128x768xf32>
  %0 = tx8be.Relabel %a {shape = array<i64: 1, 12, 128, 64>, view = array<i64: 128, 12, 64>, perm = array<i64: 1, 0, 2>, layout_str = "Tensor"} : (tensor<1x128x768xf32>) -> tensor<1x12x128x64xf32>
  %1 = tx8be.Relabel %a {shape = array<i64: 1, 1, 128, 768>} : (tensor<1x128x768xf32>) -> tensor<1x1x128x768xf32>
  func.return %a : tensor<1x128x768xf32>
}

func.func @slice(%a: tensor<4x10x128xf16>) -> tensor<4x10x128xf16> {
  // CHECK:      %{{.*}} = tx8be.Slice %a {starts = array<i64: 1, 9223372036854775807>, ends = array<i64: -1, -9223372036854775808>, axes = array<i64: 0, -1>, steps = array<i64: 2, -3>} : (tensor<4x10x128xf16>) -> tensor<1x10x43xf16>
  // CHECK-NEXT: %{{.*}} = tx8be.Slice %a {starts = array<i64: 2>, ends = array<i64: 3>} : (tensor<4x10x128xf16>) -> tensor<1x10x128xf16>
  %0 = tx8be.Slice %a {starts = array<i64: 1, 9223372036854775807>, ends = array<i64: -1, -9223372036854775808>, axes = array<i64: 0, -1>, steps = array<i64: 2, -3>} : (tensor<4x10x128xf16>) -> tensor<1x10x43xf16>
  %1 = tx8be.Slice %a {starts = array<i64: 2>, ends = array<i64: 3>} : (tensor<4x10x128xf16>) -> tensor<1x10x128xf16>
  func.return %a : tensor<4x10x128xf16>
}

func.func @concat_split(%a: tensor<2x6xi32>, %b: tensor<2x1xi32>) -> tensor<2x7xi32> {
  // CHECK:      %{{.*}}, %{{.*}}, %{{.*}} = tx8be.Split %a {axis = 1 : i64, split = array<i64: 1, 2, 3>} : (tensor<2x6xi32>) -> (tensor<2x1xi32>, tensor<2x2xi32>, tensor<2x3xi32>)
  // CHECK-NEXT: %{{.*}} = tx8be.Split %a {split = array<i64: 2>} : (tensor<2x6xi32>) -> tensor<2x6xi32>
  // CHECK-NEXT: %{{.*}} = tx8be.Concatenate %{{.*}}, %b, %{{.*}} {axis = -1 : i64} : (tensor<2x1xi32>, tensor<2x1xi32>, tensor<2x2xi32>) -> tensor<2x4xi32>
  // CHECK-NEXT: %{{.*}} = tx8be.Concatenate %a {axis = 0 : i64} : (tensor<2x6xi32>) -> tensor<2x6xi32>
  %0, %1, %2 = tx8be.Split %a {axis = 1 : i64, split = array<i64: 1, 2, 3>} : (tensor<2x6xi32>) -> (tensor<2x1xi32>, tensor<2x2xi32>, tensor<2x3xi32>)
  %3 = tx8be.Split %a {split = array<i64: 2>} : (tensor<2x6xi32>) -> tensor<2x6xi32>
  %4 = tx8be.Concatenate %0, %b, %1 {axis = -1 : i64} : (tensor<2x1xi32>, tensor<2x1xi32>, tensor<2x2xi32>) -> tensor<2x4xi32>
  %5 = tx8be.Concatenate %a {axis = 0 : i64} : (tensor<2x6xi32>) -> tensor<2x6xi32>
  %6 = tx8be.Concatenate %a, %b {axis = 1 : i64} : (tensor<2x6xi32>, tensor<2x1xi32>) -> tensor<2x7xi32>
  func.return %6 : tensor<2x7xi32>
}

func.func @pad(%a: tensor<1x3x4xf32>, %c: tensor<2x2xi1>) -> tensor<1x3x4xf32> {
  // CHECK:      %{{.*}} = tx8be.Pad %a {pads = array<i64: 0, 1, 2, 0, 1, 3>, value = -1.500000e+00 : f64} : (tensor<1x3x4xf32>) -> tensor<1x5x9xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Pad %a {pads = array<i64: 0, 2, 3, 0, 0, 3>, mode = "reflect"} : (tensor<1x3x4xf32>) -> tensor<1x5x10xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Pad %c {pads = array<i64: 1, 0, 0, 4>, mode = "edge"} : (tensor<2x2xi1>) -> tensor<3x6xi1>
  // CHECK-NEXT: %{{.*}} = tx8be.Pad %a {pads = array<i64: 0, 4, 1, 0, 5, 2>, mode = "wrap"} : (tensor<1x3x4xf32>) -> tensor<1x12x7xf32>
  %0 = tx8be.Pad %a {pads = array<i64: 0, 1, 2, 0, 1, 3>, value = -1.5 : f64} : (tensor<1x3x4xf32>) -> tensor<1x5x9xf32>
  %1 = tx8be.Pad %a {pads = array<i64: 0, 2, 3, 0, 0, 3>, mode = "reflect"} : (tensor<1x3x4xf32>) -> tensor<1x5x10xf32>
  %2 = tx8be.Pad %c {pads = array<i64: 1, 0, 0, 4>, mode = "edge"} : (tensor<2x2xi1>) -> tensor<3x6xi1>
  %3 = tx8be.Pad %a {pads = array<i64: 0, 4, 1, 0, 5, 2>, mode = "wrap"} : (tensor<1x3x4xf32>) -> tensor<1x12x7xf32>
  func.return %a : tensor<1x3x4xf32>
}
