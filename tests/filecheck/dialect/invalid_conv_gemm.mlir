// RUN: tx8c-opt %s --split-input-file --verify-diagnostics | filecheck %s
// Ops that break their rules are rejected with a message naming the op and the rule.

func.func @conv_input_rank(%x: tensor<4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %0 = tx8be.Conv %x, %w : (tensor<4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}
// CHECK: 'tx8be.Conv' op input must have rank 4, got rank 3

// -----

func.func @conv_weight_rank(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3xf32>) -> tensor<1x6x6x6xf32> {
  %0 = tx8be.Conv %x, %w : (tensor<1x4x8x8xf32>, tensor<6x4x3xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}
// CHECK: 'tx8be.Conv' op weight must have rank 4, got rank 3

// -----

func.func @conv_cin_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %0 = tx8be.Conv %x, %w {groups = 3 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}
// CHECK: 'tx8be.Conv' op input channels (4) must be divisible by groups (3)

// -----

func.func @conv_cout_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<5x1x3x3xf32>) -> tensor<1x5x6x6xf32> {
  %0 = tx8be.Conv %x, %w {groups = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<5x1x3x3xf32>) -> tensor<1x5x6x6xf32>
  func.return %0 : tensor<1x5x6x6xf32>
}
// CHECK: 'tx8be.Conv' op output channels (5) must be divisible by groups (4)

// -----

func.func @conv_channels_per_group(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %0 = tx8be.Conv %x, %w : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}
// CHECK: 'tx8be.Conv' op weight has 2 input channel(s) per group, but the input's 4 channels in 1 group(s) give 4

// -----

func.func @conv_strides(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %0 = tx8be.Conv %x, %w {groups = 2 : i64, strides = array<i64: 0, 1>} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}
// CHECK: 'tx8be.Conv' op strides must be positive, got [0, 1]

// -----

func.func @conv_strides_length(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %0 = tx8be.Conv %x, %w {groups = 2 : i64, strides = array<i64: 1>} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}
// CHECK: 'tx8be.Conv' op strides must have 2 values, got [1]

// -----

func.func @conv_dilations(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %0 = tx8be.Conv %x, %w {groups = 2 : i64, dilations = array<i64: 1, -1>} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}
// CHECK: 'tx8be.Conv' op dilations must be positive, got [1, -1]

// -----

func.func @conv_pads(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %0 = tx8be.Conv %x, %w {groups = 2 : i64, pads = array<i64: 1, 1, -1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}
// CHECK: 'tx8be.Conv' op pads must be non-negative, got [1, 1, -1, 1]

// -----

func.func @conv_pads_length(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %0 = tx8be.Conv %x, %w {groups = 2 : i64, pads = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}
// CHECK: 'tx8be.Conv' op pads must have 4 values, got [1, 1]

// -----

func.func @conv_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %0 = tx8be.Conv %x, %w {groups = 0 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}
// CHECK: 'tx8be.Conv' op groups must be at least 1, got 0

// -----

func.func @conv_kernel_too_large(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %0 = tx8be.Conv %x, %w {groups = 2 : i64, dilations = array<i64: 5, 1>, pads = array<i64: 0, 0, 1, 0>} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}
// CHECK: 'tx8be.Conv' op kernel 3x3 (dilated 11x3) does not fit in the padded input 9x8

// -----

func.func @conv_bias(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x6x6x6xf32> {
  %0 = tx8be.Conv %x, %w, %b {groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<4xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}
// CHECK: 'tx8be.Conv' op bias must have shape [6] (C_out), got [4]

// -----

func.func @conv_data_format(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %0 = tx8be.Conv %x, %w {groups = 2 : i64, data_format = "NCDHW"} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}
// CHECK: 'tx8be.Conv' op data_format must be "NCHW" or "NHWC", got "NCDHW"

// -----

func.func @conv_weight_format(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %0 = tx8be.Conv %x, %w {groups = 2 : i64, weight_format = "OHWI"} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}
// CHECK: 'tx8be.Conv' op weight_format must be "OIHW" or "HWOI", got "OHWI"

// -----

func.func @conv_nhwc_weight_read_as_oihw(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x6x4xf32>) -> tensor<1x6x6x6xf32> {
  %0 = tx8be.Conv %x, %w {data_format = "NHWC"} : (tensor<1x8x8x4xf32>, tensor<3x3x6x4xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}
// CHECK: 'tx8be.Conv' op weight has 3 input channel(s) per group, but the input's 4 channels in 1 group(s) give 4

// -----

func.func @conv_result(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  %0 = tx8be.Conv %x, %w {groups = 2 : i64, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}
// CHECK: 'tx8be.Conv' op result #0 has type tensor<1x6x6x6xf32> but its operands and attributes give tensor<1x6x3x3xf32>

// -----

func.func @conv_int(%x: tensor<1x4x8x8xi8>, %w: tensor<6x4x3x3xi8>) -> tensor<1x6x6x6xi8> {
  %0 = tx8be.Conv %x, %w : (tensor<1x4x8x8xi8>, tensor<6x4x3x3xi8>) -> tensor<1x6x6x6xi8>
  func.return %0 : tensor<1x6x6x6xi8>
}
// CHECK: 'tx8be.Conv' op operand #0 has element type i8; this op accepts bf16, f16, f32

// -----

func.func @conv_mixed(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf16>) -> tensor<1x6x6x6xf32> {
  %0 = tx8be.Conv %x, %w : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf16>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}
// CHECK: 'tx8be.Conv' op operands [0, 1] must share one element type, got f32, f16

// -----

func.func @gemm_rank(%a: tensor<3xf32>, %b: tensor<3x4xf32>) -> tensor<4xf32> {
  %0 = tx8be.Gemm %a, %b : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: 'tx8be.Gemm' op a must have rank >= 2, got rank 1

// -----

func.func @gemm_k(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = tx8be.Gemm %a, %b {trans_a = true} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}
// CHECK: 'tx8be.Gemm' op contraction dims differ: op(a) is [3, 2] (K = 2), op(b) is [3, 4] (K = 3)

// -----

func.func @gemm_batch(%a: tensor<2x2x3xf32>, %b: tensor<5x3x4xf32>) -> tensor<2x2x4xf32> {
  %0 = tx8be.Gemm %a, %b : (tensor<2x2x3xf32>, tensor<5x3x4xf32>) -> tensor<2x2x4xf32>
  func.return %0 : tensor<2x2x4xf32>
}
// CHECK: 'tx8be.Gemm' op batch dims [2] of a and [5] of b do not broadcast

// -----

func.func @gemm_bias(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = tx8be.Gemm %a, %b, %c : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}
// CHECK: 'tx8be.Gemm' op bias shape [3, 4] does not broadcast to the result shape [2, 4]

// -----

func.func @gemm_bias_grows_result(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<5x1x4xf32>) -> tensor<2x4xf32> {
  %0 = tx8be.Gemm %a, %b, %c : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<5x1x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}
// CHECK: 'tx8be.Gemm' op bias shape [5, 1, 4] does not broadcast to the result shape [2, 4]

// -----

func.func @gemm_result(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.Gemm %a, %b {trans_b = true} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: 'tx8be.Gemm' op result #0 has type tensor<2x3xf32> but its operands and attributes give tensor<2x4xf32>

// -----

func.func @gemm_operands(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.Gemm %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: 'tx8be.Gemm' op expects 2 to 3 operand(s) (a, b, bias?), got 1
