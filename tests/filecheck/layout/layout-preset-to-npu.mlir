// RUN: tx8c-opt %s --split-input-file -p 'layout-transmit,layout-preset-to-npu{strategy=greedy}' | filecheck %s --check-prefixes=CHECK,GREEDY
// RUN: tx8c-opt %s --split-input-file -p layout-transmit,layout-preset-to-npu | filecheck %s --check-prefixes=CHECK,OPTIMAL
// RUN: tx8c-opt %s --split-input-file -p layout-transmit,layout-preset-to-npu | tx8c-opt --split-input-file -p layout-preset-to-npu | filecheck %s --check-prefix=AGAIN
//
// layout-preset-to-npu (seed 002): ops that need the preset (Conv, BatchNorm, Concatenate,
// Pad, bilinear Resize) get NHWC features and HWOI weights through Transposes; ops that
// turn CNN data into Tensor-class data (Reshape, Gemm) and graph outputs get the original
// arrangement back; element-wise ops run on whichever arrangement is cheaper. Transposes
// of constants are folded (compile time), Transposes that meet their inverse cancel.
// Tensors of 1x4x6x6xf32 are 576 bytes. A second run changes nothing.
// AGAIN-COUNT-8: transposes = 0 : i64, transpose_bytes = 0 : i64, reshapes = 0 : i64, const_transposes = 0 : i64, transposes_erased = 0 : i64

// Seed 002's example: input1/input2/input3 -> conv2d -> reshape1, reshape2 -> add. The
// Conv gets a Transpose in front; reshape1 gets NCHW back ("正确做法"); reshape2 and the
// Add see what they saw. Both strategies agree.
// CHECK:      "layout-preset-to-npu" = {strategy = "{{greedy|optimal}}", transposes = 2 : i64, transpose_bytes = 1728 : i64, reshapes = 0 : i64, const_transposes = 0 : i64, transposes_erased = 0 : i64, preset_ops = 1 : i64, unpresettable = 0 : i64}
// CHECK-LABEL: func.func @seed002(
// CHECK-NEXT:    %[[IN:.*]] = tx8be.Transpose %input1 {perm = array<i64: 0, 2, 3, 1>, layout_str = "NHWC"} : (tensor<1x4x6x6xf32>) -> tensor<1x6x6x4xf32>
// CHECK-NEXT:    %conv = tx8be.Conv %[[IN]], %input2 {pads = array<i64: 1, 1, 1, 1>, weight_format = "HWOI", data_format = "NHWC", layout_str = "NHWC-HWOI-NHWC"} : (tensor<1x6x6x4xf32>, tensor<3x3x8x4xf32>) -> tensor<1x6x6x8xf32>
// CHECK-NEXT:    %[[BACK:.*]] = tx8be.Transpose %conv {perm = array<i64: 0, 3, 1, 2>, layout_str = "NCHW"} : (tensor<1x6x6x8xf32>) -> tensor<1x8x6x6xf32>
// CHECK-NEXT:    %reshape1 = tx8be.Reshape %[[BACK]] {shape = array<i64: 1, 288>, layout_str = "Tensor"}
// CHECK-NEXT:    %reshape2 = tx8be.Reshape %input3 {shape = array<i64: 1, 288>, layout_str = "Tensor"}
// CHECK-NEXT:    %add = tx8be.Add %reshape1, %reshape2 {layout_str = "Tensor"}
// CHECK-NEXT:    func.return %add
func.func @seed002(%input1: tensor<1x4x6x6xf32>, %input2: tensor<3x3x8x4xf32>, %input3: tensor<1x8x6x6xf32> {tx8c.layout = "NCHW"}) -> tensor<1x288xf32> {
  %conv = tx8be.Conv %input1, %input2 {pads = array<i64: 1, 1, 1, 1>, weight_format = "HWOI"} : (tensor<1x4x6x6xf32>, tensor<3x3x8x4xf32>) -> tensor<1x8x6x6xf32>
  %reshape1 = tx8be.Reshape %conv {shape = array<i64: 1, 288>} : (tensor<1x8x6x6xf32>) -> tensor<1x288xf32>
  %reshape2 = tx8be.Reshape %input3 {shape = array<i64: 1, 288>} : (tensor<1x8x6x6xf32>) -> tensor<1x288xf32>
  %add = tx8be.Add %reshape1, %reshape2 : (tensor<1x288xf32>, tensor<1x288xf32>) -> tensor<1x288xf32>
  func.return %add : tensor<1x288xf32>
}

// -----

// Conv -> Relu -> Conv: one Transpose in, one out; the Relu runs on NHWC. The constant
// OIHW weights become HWOI constants at compile time: no run-time Transpose of a weight.
// CHECK:      transposes = 2 : i64, transpose_bytes = 1152 : i64, reshapes = 0 : i64, const_transposes = 2 : i64, transposes_erased = 0 : i64, preset_ops = 3 : i64
// CHECK-LABEL: func.func @conv_relu_conv(
// CHECK-NEXT:    %[[IN:.*]] = tx8be.Transpose %x {perm = array<i64: 0, 2, 3, 1>, layout_str = "NHWC"}
// CHECK-NEXT:    %[[W1:.*]] = tx8be.Constant {value = dense<{{.*}}> : tensor<3x3x4x4xf32>, layout_str = "HWOI"}
// CHECK-NEXT:    %c1 = tx8be.Conv %[[IN]], %[[W1]] {{{.*}}data_format = "NHWC", weight_format = "HWOI", layout_str = "NHWC-HWOI-NHWC"}
// CHECK-NEXT:    %[[W2:.*]] = tx8be.Constant {value = dense<{{.*}}> : tensor<1x1x4x4xf32>, layout_str = "HWOI"}
// CHECK-NEXT:    %r = tx8be.Relu %c1 {layout_str = "NHWC"} : (tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
// CHECK-NEXT:    %c2 = tx8be.Conv %r, %[[W2]] {{{.*}}layout_str = "NHWC-HWOI-NHWC"}
// CHECK-NEXT:    %[[OUT:.*]] = tx8be.Transpose %c2 {perm = array<i64: 0, 3, 1, 2>, layout_str = "NCHW"}
// CHECK-NEXT:    func.return %[[OUT]]
func.func @conv_relu_conv(%x: tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> {
  %w1 = tx8be.Constant {value = dense<[[[[0.0, 0.1, 0.2], [0.3, 0.4, 0.5], [0.6, 0.7, 0.8]], [[1.0, 1.1, 1.2], [1.3, 1.4, 1.5], [1.6, 1.7, 1.8]], [[2.0, 2.1, 2.2], [2.3, 2.4, 2.5], [2.6, 2.7, 2.8]], [[3.0, 3.1, 3.2], [3.3, 3.4, 3.5], [3.6, 3.7, 3.8]]], [[[0.0, 0.1, 0.2], [0.3, 0.4, 0.5], [0.6, 0.7, 0.8]], [[1.0, 1.1, 1.2], [1.3, 1.4, 1.5], [1.6, 1.7, 1.8]], [[2.0, 2.1, 2.2], [2.3, 2.4, 2.5], [2.6, 2.7, 2.8]], [[3.0, 3.1, 3.2], [3.3, 3.4, 3.5], [3.6, 3.7, 3.8]]], [[[0.0, 0.1, 0.2], [0.3, 0.4, 0.5], [0.6, 0.7, 0.8]], [[1.0, 1.1, 1.2], [1.3, 1.4, 1.5], [1.6, 1.7, 1.8]], [[2.0, 2.1, 2.2], [2.3, 2.4, 2.5], [2.6, 2.7, 2.8]], [[3.0, 3.1, 3.2], [3.3, 3.4, 3.5], [3.6, 3.7, 3.8]]], [[[0.0, 0.1, 0.2], [0.3, 0.4, 0.5], [0.6, 0.7, 0.8]], [[1.0, 1.1, 1.2], [1.3, 1.4, 1.5], [1.6, 1.7, 1.8]], [[2.0, 2.1, 2.2], [2.3, 2.4, 2.5], [2.6, 2.7, 2.8]], [[3.0, 3.1, 3.2], [3.3, 3.4, 3.5], [3.6, 3.7, 3.8]]]]> : tensor<4x4x3x3xf32>} : () -> tensor<4x4x3x3xf32>
  %c1 = tx8be.Conv %x, %w1 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  %w2 = tx8be.Constant {value = dense<[[[[1.0]], [[2.0]], [[3.0]], [[4.0]]], [[[5.0]], [[6.0]], [[7.0]], [[8.0]]], [[[9.0]], [[10.0]], [[11.0]], [[12.0]]], [[[13.0]], [[14.0]], [[15.0]], [[16.0]]]]> : tensor<4x4x1x1xf32>} : () -> tensor<4x4x1x1xf32>
  %r = tx8be.Relu %c1 : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %c2 = tx8be.Conv %r, %w2 : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  func.return %c2 : tensor<1x4x6x6xf32>
}

// -----

// The HWOI constant keeps OIHW's values: element [o, i, h, w] moves to [h, w, o, i].
// CHECK-LABEL: func.func @weight_values(
// CHECK-NEXT:    tx8be.Transpose %x
// CHECK-NEXT:    tx8be.Constant {value = dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]]]> : tensor<1x1x2x2xf32>, layout_str = "HWOI"}
// CHECK-NOT:     tx8be.Transpose %{{.*}} : (tensor<2x2x1x1xf32>)
func.func @weight_values(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32> {
  %w = tx8be.Constant {value = dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>} : () -> tensor<2x2x1x1xf32>
  %c = tx8be.Conv %x, %w : (tensor<1x2x6x6xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x6x6xf32>
  func.return %c : tensor<1x2x6x6xf32>
}

// -----

// A residual block: Conv -> BN -> Relu -> Conv -> BN -> Add(skip) -> Relu. One Transpose
// in (shared by the first Conv and the skip connection when the Add runs on NHWC), one
// out. Greedy runs the Add on NHWC (it follows the BN); for optimal the Add on NCHW costs
// the same (the Transpose back moves before it) and ties stay original. BN's axis moves.
// CHECK:         transposes = 2 : i64, transpose_bytes = 1152 : i64
// CHECK-LABEL: func.func @residual(
// CHECK-NEXT:    %[[IN:.*]] = tx8be.Transpose %x {perm = array<i64: 0, 2, 3, 1>, layout_str = "NHWC"}
// CHECK:         %bn1 = tx8be.BatchNorm_Inference {{.*}}axis = 3 : i64, layout_str = "NHWC"}
// CHECK:         %bn2 = tx8be.BatchNorm_Inference {{.*}}axis = 3 : i64, layout_str = "NHWC"}
// GREEDY-NEXT:   %add = tx8be.Add %bn2, %[[IN]] {layout_str = "NHWC"}
// GREEDY-NEXT:   %out = tx8be.Relu %add {layout_str = "NHWC"}
// GREEDY-NEXT:   %[[BACK:.*]] = tx8be.Transpose %out {perm = array<i64: 0, 3, 1, 2>, layout_str = "NCHW"}
// GREEDY-NEXT:   func.return %[[BACK]]
// OPTIMAL-NEXT:  %[[BACK:.*]] = tx8be.Transpose %bn2 {perm = array<i64: 0, 3, 1, 2>, layout_str = "NCHW"}
// OPTIMAL-NEXT:  %add = tx8be.Add %[[BACK]], %x {layout_str = "NCHW"}
// OPTIMAL-NEXT:  %out = tx8be.Relu %add {layout_str = "NCHW"}
// OPTIMAL-NEXT:  func.return %out
func.func @residual(%x: tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> {
  %w = tx8be.Constant {value = dense<0.125> : tensor<4x4x3x3xf32>} : () -> tensor<4x4x3x3xf32>
  %p = tx8be.Constant {value = dense<1.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %c1 = tx8be.Conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  %bn1 = tx8be.BatchNorm_Inference %c1, %p, %p, %p, %p : (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %r = tx8be.Relu %bn1 : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %c2 = tx8be.Conv %r, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  %bn2 = tx8be.BatchNorm_Inference %c2, %p, %p, %p, %p : (tensor<1x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %add = tx8be.Add %bn2, %x : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %out = tx8be.Relu %add : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  func.return %out : tensor<1x4x6x6xf32>
}

// -----

// Conv -> Reshape -> Gemm: the Reshape turns CNN data into Tensor-class data, so it gets
// NCHW back and the Gemm sees exactly what it saw.
// CHECK-LABEL: func.func @conv_reshape_gemm(
// CHECK:         %c = tx8be.Conv {{.*}}layout_str = "NHWC-HWOI-NHWC"} : (tensor<1x6x6x4xf32>, tensor<1x1x8x4xf32>) -> tensor<1x6x6x8xf32>
// CHECK-NEXT:    %[[BACK:.*]] = tx8be.Transpose %c {perm = array<i64: 0, 3, 1, 2>, layout_str = "NCHW"}
// CHECK-NEXT:    %flat = tx8be.Reshape %[[BACK]] {shape = array<i64: 1, 288>, layout_str = "Tensor"} : (tensor<1x8x6x6xf32>) -> tensor<1x288xf32>
// CHECK-NEXT:    %y = tx8be.Gemm %flat, %wg {layout_str = "Tensor-NTensor-Tensor"}
func.func @conv_reshape_gemm(%x: tensor<1x4x6x6xf32>, %wg: tensor<288x10xf32>) -> tensor<1x10xf32> {
  %w = tx8be.Constant {value = dense<0.5> : tensor<8x4x1x1xf32>} : () -> tensor<8x4x1x1xf32>
  %c = tx8be.Conv %x, %w : (tensor<1x4x6x6xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x6x6xf32>
  %flat = tx8be.Reshape %c {shape = array<i64: 1, 288>} : (tensor<1x8x6x6xf32>) -> tensor<1x288xf32>
  %y = tx8be.Gemm %flat, %wg : (tensor<1x288xf32>, tensor<288x10xf32>) -> tensor<1x10xf32>
  func.return %y : tensor<1x10xf32>
}

// -----

// Inverse Transposes cancel: the user's NCHW -> NHWC after the first Conv meets the NHWC
// the preset Conv now makes, and the user's NHWC -> NCHW before the second Conv meets the
// Transpose that Conv would need; both go (transposes_erased = 2), the Sigmoid runs on
// the Conv's NHWC result directly.
// CHECK:         transposes = 2 : i64, transpose_bytes = 1152 : i64, reshapes = 0 : i64, const_transposes = 1 : i64, transposes_erased = 2 : i64
// CHECK-LABEL: func.func @inverse(
// CHECK-NEXT:    %[[IN:.*]] = tx8be.Transpose %x {perm = array<i64: 0, 2, 3, 1>
// CHECK-NEXT:    %[[W:.*]] = tx8be.Constant
// CHECK-NEXT:    %c1 = tx8be.Conv %[[IN]], %[[W]]
// CHECK-NEXT:    %s = tx8be.Sigmoid %c1 {layout_str = "NHWC"}
// CHECK-NEXT:    %c2 = tx8be.Conv %s, %[[W]]
// CHECK-NEXT:    %[[OUT:.*]] = tx8be.Transpose %c2 {perm = array<i64: 0, 3, 1, 2>
// CHECK-NEXT:    func.return %[[OUT]]
func.func @inverse(%x: tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> {
  %w = tx8be.Constant {value = dense<0.5> : tensor<4x4x1x1xf32>} : () -> tensor<4x4x1x1xf32>
  %c1 = tx8be.Conv %x, %w : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %t = tx8be.Transpose %c1 {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x4x6x6xf32>) -> tensor<1x6x6x4xf32>
  %s = tx8be.Sigmoid %t : (tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
  %b = tx8be.Transpose %s {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x6x6x4xf32>) -> tensor<1x4x6x6xf32>
  %c2 = tx8be.Conv %b, %w : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  func.return %c2 : tensor<1x4x6x6xf32>
}

// -----

// Multi-input ops see one layout. Add(x2, conv) -> Conv: greedy follows the Add's first
// operand (x2, NCHW), so the first Conv's result goes back to NCHW and the sum forward
// again: 4 Transposes. Optimal runs the Add on NHWC and converts x2 instead: 3. The
// V_VS bias [4,1,1] is a constant: on NHWC it becomes [1,1,4] at compile time.
// GREEDY:        transposes = 4 : i64, transpose_bytes = 2304 : i64, reshapes = 0 : i64, const_transposes = 1 : i64
// OPTIMAL:       transposes = 3 : i64, transpose_bytes = 1728 : i64, reshapes = 0 : i64, const_transposes = 2 : i64
// CHECK-LABEL: func.func @multi_input(
// GREEDY:        %c1 = tx8be.Conv
// GREEDY-NEXT:   %[[BACK:.*]] = tx8be.Transpose %c1 {perm = array<i64: 0, 3, 1, 2>, layout_str = "NCHW"}
// GREEDY-NEXT:   %s = tx8be.Add %x2, %[[BACK]] {layout_str = "NCHW"}
// GREEDY-NEXT:   %[[BIAS:.*]] = tx8be.Add %s, %b {layout_str = "NCHW"}
// GREEDY-NEXT:   %[[FWD:.*]] = tx8be.Transpose %[[BIAS]] {perm = array<i64: 0, 2, 3, 1>, layout_str = "NHWC"}
// OPTIMAL-DAG:   %[[X2:.*]] = tx8be.Transpose %x2 {perm = array<i64: 0, 2, 3, 1>, layout_str = "NHWC"}
// OPTIMAL-DAG:   %[[B:.*]] = tx8be.Constant {value = dense<[{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]]]> : tensor<1x1x4xf32>, layout_str = "Tensor"}
// OPTIMAL:       %s = tx8be.Add %[[X2]], %c1 {layout_str = "NHWC"}
// OPTIMAL-NEXT:  %{{.*}} = tx8be.Add %s, %[[B]] {layout_str = "NHWC"} : (tensor<1x6x6x4xf32>, tensor<1x1x4xf32>) -> tensor<1x6x6x4xf32>
func.func @multi_input(%x: tensor<1x4x6x6xf32>, %x2: tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32> {
  %w = tx8be.Constant {value = dense<0.5> : tensor<4x4x1x1xf32>} : () -> tensor<4x4x1x1xf32>
  %b = tx8be.Constant {value = dense<[[[1.0]], [[2.0]], [[3.0]], [[4.0]]]> : tensor<4x1x1xf32>} : () -> tensor<4x1x1xf32>
  %c1 = tx8be.Conv %x, %w : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %s = tx8be.Add %x2, %c1 : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %sb = tx8be.Add %s, %b : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %c2 = tx8be.Conv %sb, %w : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  func.return %c2 : tensor<1x4x6x6xf32>
}

// -----

// Concatenate and Pad need the preset too; their axis and pads move with the data.
// CHECK-LABEL: func.func @concat_pad(
// CHECK:         %cat = tx8be.Concatenate %{{.*}}, %{{.*}} {axis = 3 : i64, layout_str = "NHWC"} : (tensor<1x6x6x4xf32>, tensor<1x6x6x4xf32>) -> tensor<1x6x6x8xf32>
// CHECK-NEXT:    %pad = tx8be.Pad %cat {pads = array<i64: 0, 1, 2, 0, 0, 1, 2, 0>, layout_str = "NHWC"} : (tensor<1x6x6x8xf32>) -> tensor<1x8x10x8xf32>
// CHECK-NEXT:    tx8be.Transpose %pad {perm = array<i64: 0, 3, 1, 2>, layout_str = "NCHW"}
func.func @concat_pad(%x: tensor<1x4x6x6xf32> {tx8c.layout = "NCHW"}, %y: tensor<1x4x6x6xf32> {tx8c.layout = "NCHW"}) -> tensor<1x8x8x10xf32> {
  %cat = tx8be.Concatenate %x, %y {axis = 1 : i64} : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x8x6x6xf32>
  %pad = tx8be.Pad %cat {pads = array<i64: 0, 0, 1, 2, 0, 0, 1, 2>} : (tensor<1x8x6x6xf32>) -> tensor<1x8x8x10xf32>
  func.return %pad : tensor<1x8x8x10xf32>
}
