// RUN: tx8c-opt %s --split-input-file --verify-diagnostics | filecheck %s
// Data-movement ops that break their rules are rejected with a message naming the op and the rule.

func.func @reshape_count(%a: tensor<2x6xf32>) -> tensor<5x2xf32> {
  %0 = tx8be.Reshape %a {shape = array<i64: 5, 2>} : (tensor<2x6xf32>) -> tensor<5x2xf32>
  func.return %0 : tensor<5x2xf32>
}
// CHECK: 'tx8be.Reshape' op cannot reshape [2, 6] (12 elements) to [5, 2] (10 elements)

// -----

func.func @reshape_minus_one(%a: tensor<2x6xf32>) -> tensor<3x4xf32> {
  %0 = tx8be.Reshape %a {shape = array<i64: -1, 4>} : (tensor<2x6xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}
// CHECK: 'tx8be.Reshape' op shape [-1, 4] has non-positive entries [-1]; give the full static shape (no -1 or 0)

// -----

func.func @reshape_result(%a: tensor<2x6xf32>) -> tensor<4x3xf32> {
  %0 = tx8be.Reshape %a {shape = array<i64: 3, 4>} : (tensor<2x6xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}
// CHECK: 'tx8be.Reshape' op result #0 has type tensor<4x3xf32> but its operands and attributes give tensor<3x4xf32>

// -----

func.func @transpose_length(%a: tensor<2x3x4xf32>) -> tensor<3x2x4xf32> {
  %0 = tx8be.Transpose %a {perm = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  func.return %0 : tensor<3x2x4xf32>
}
// CHECK: 'tx8be.Transpose' op perm has 2 entries, expected 3 (the input rank)

// -----

func.func @transpose_not_perm(%a: tensor<2x3x4xf32>) -> tensor<3x3x4xf32> {
  %0 = tx8be.Transpose %a {perm = array<i64: 1, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<3x3x4xf32>
  func.return %0 : tensor<3x3x4xf32>
}
// CHECK: 'tx8be.Transpose' op perm [1, 1, 2] is not a permutation of 0..2

// -----

func.func @relabel_size(%a: tensor<2x6xf32>) -> tensor<4x4xf32> {
  %0 = tx8be.Relabel %a {shape = array<i64: 4, 4>} : (tensor<2x6xf32>) -> tensor<4x4xf32>
  func.return %0 : tensor<4x4xf32>
}
// CHECK: 'tx8be.Relabel' op shape [4, 4] must have positive entries and hold the operand's 12 elements

// -----

func.func @relabel_view(%a: tensor<2x6xf32>) -> tensor<12xf32> {
  %0 = tx8be.Relabel %a {shape = array<i64: 12>, view = array<i64: 5, 2>, perm = array<i64: 1, 0>} : (tensor<2x6xf32>) -> tensor<12xf32>
  func.return %0 : tensor<12xf32>
}
// CHECK: 'tx8be.Relabel' op view [5, 2] must have positive entries and hold the operand's 12 elements

// -----

func.func @relabel_perm(%a: tensor<2x6xf32>) -> tensor<12xf32> {
  %0 = tx8be.Relabel %a {shape = array<i64: 12>, view = array<i64: 2, 6>, perm = array<i64: 0>} : (tensor<2x6xf32>) -> tensor<12xf32>
  func.return %0 : tensor<12xf32>
}
// CHECK: 'tx8be.Relabel' op perm has 1 entries, expected 2 (one per dim of view)

// -----

func.func @relabel_not_perm(%a: tensor<2x6xf32>) -> tensor<12xf32> {
  %0 = tx8be.Relabel %a {shape = array<i64: 12>, view = array<i64: 2, 6>, perm = array<i64: 1, 1>} : (tensor<2x6xf32>) -> tensor<12xf32>
  func.return %0 : tensor<12xf32>
}
// CHECK: 'tx8be.Relabel' op perm [1, 1] is not a permutation of 0..1

// -----

func.func @broadcast(%a: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %0 = tx8be.BroadCast %a {shape = array<i64: 4, 3>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}
// CHECK: 'tx8be.BroadCast' op input shape [2, 3] does not broadcast to [4, 3]

// -----

func.func @broadcast_negative(%a: tensor<1x3xf32>) -> tensor<4x3xf32> {
  %0 = tx8be.BroadCast %a {shape = array<i64: -1, 3>} : (tensor<1x3xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}
// CHECK: 'tx8be.BroadCast' op shape [-1, 3] has negative entries

// -----

func.func @slice_lengths(%a: tensor<4x6xf32>) -> tensor<2x6xf32> {
  %0 = tx8be.Slice %a {starts = array<i64: 0, 0>, ends = array<i64: 2>} : (tensor<4x6xf32>) -> tensor<2x6xf32>
  func.return %0 : tensor<2x6xf32>
}
// CHECK: 'tx8be.Slice' op ends has 1 entries, expected 2 (one per entry of starts)

// -----

func.func @slice_axis(%a: tensor<4x6xf32>) -> tensor<2x6xf32> {
  %0 = tx8be.Slice %a {starts = array<i64: 0>, ends = array<i64: 2>, axes = array<i64: 2>} : (tensor<4x6xf32>) -> tensor<2x6xf32>
  func.return %0 : tensor<2x6xf32>
}
// CHECK: 'tx8be.Slice' op axes entry 2 is out of range for rank 2

// -----

func.func @slice_repeated_axis(%a: tensor<4x6xf32>) -> tensor<2x6xf32> {
  %0 = tx8be.Slice %a {starts = array<i64: 0, 1>, ends = array<i64: 2, 3>, axes = array<i64: 1, -1>} : (tensor<4x6xf32>) -> tensor<2x6xf32>
  func.return %0 : tensor<2x6xf32>
}
// CHECK: 'tx8be.Slice' op axes [1, -1] names dim 1 twice

// -----

func.func @slice_zero_step(%a: tensor<4x6xf32>) -> tensor<2x6xf32> {
  %0 = tx8be.Slice %a {starts = array<i64: 0>, ends = array<i64: 2>, steps = array<i64: 0>} : (tensor<4x6xf32>) -> tensor<2x6xf32>
  func.return %0 : tensor<2x6xf32>
}
// CHECK: 'tx8be.Slice' op steps [0] has a zero entry

// -----

func.func @slice_result(%a: tensor<4x6xf32>) -> tensor<2x6xf32> {
  %0 = tx8be.Slice %a {starts = array<i64: -1>, ends = array<i64: -5>, steps = array<i64: -1>} : (tensor<4x6xf32>) -> tensor<2x6xf32>
  func.return %0 : tensor<2x6xf32>
}
// CHECK: 'tx8be.Slice' op result #0 has type tensor<2x6xf32> but its operands and attributes give tensor<4x6xf32>

// -----

func.func @concat_none() -> tensor<2x6xf32> {
  %0 = tx8be.Concatenate {axis = 0 : i64} : () -> tensor<2x6xf32>
  func.return %0 : tensor<2x6xf32>
}
// CHECK: 'tx8be.Concatenate' op expects at least 1 operand(s) (inputs*), got 0

// -----

func.func @concat_shapes(%a: tensor<2x6xf32>, %b: tensor<3x5xf32>) -> tensor<5x6xf32> {
  %0 = tx8be.Concatenate %a, %b {axis = 0 : i64} : (tensor<2x6xf32>, tensor<3x5xf32>) -> tensor<5x6xf32>
  func.return %0 : tensor<5x6xf32>
}
// CHECK: 'tx8be.Concatenate' op operand #1 has shape [3, 5], which differs from operand #0's [2, 6] outside axis 0

// -----

func.func @concat_rank(%a: tensor<2x6xf32>, %b: tensor<6xf32>) -> tensor<3x6xf32> {
  %0 = tx8be.Concatenate %a, %b {axis = 0 : i64} : (tensor<2x6xf32>, tensor<6xf32>) -> tensor<3x6xf32>
  func.return %0 : tensor<3x6xf32>
}
// CHECK: 'tx8be.Concatenate' op operand #1 has rank 1, operand #0 has rank 2

// -----

func.func @concat_axis(%a: tensor<2x6xf32>) -> tensor<2x12xf32> {
  %0 = tx8be.Concatenate %a, %a {axis = -3 : i64} : (tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<2x12xf32>
  func.return %0 : tensor<2x12xf32>
}
// CHECK: 'tx8be.Concatenate' op axis -3 is out of range for rank 2

// -----

func.func @concat_dtypes(%a: tensor<2x6xf32>, %b: tensor<2x6xf16>) -> tensor<4x6xf32> {
  %0 = tx8be.Concatenate %a, %b {axis = 0 : i64} : (tensor<2x6xf32>, tensor<2x6xf16>) -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}
// CHECK: 'tx8be.Concatenate' op operands [0, 1] must share one element type, got f32, f16

// -----

func.func @split_sum(%a: tensor<2x6xf32>) -> tensor<2x2xf32> {
  %0, %1 = tx8be.Split %a {axis = 1 : i64, split = array<i64: 2, 3>} : (tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>)
  func.return %0 : tensor<2x2xf32>
}
// CHECK: 'tx8be.Split' op split [2, 3] sums to 5, but dim 1 of the input has size 6

// -----

func.func @split_count(%a: tensor<2x6xf32>) -> tensor<2x2xf32> {
  %0, %1 = tx8be.Split %a {axis = 1 : i64, split = array<i64: 2, 2, 2>} : (tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  func.return %0 : tensor<2x2xf32>
}
// CHECK: 'tx8be.Split' op expects 3 result(s), got 2

// -----

func.func @split_empty(%a: tensor<2x6xf32>) {
  tx8be.Split %a {split = array<i64>} : (tensor<2x6xf32>) -> ()
  func.return
}
// CHECK: 'tx8be.Split' op split must have at least one entry

// -----

func.func @split_negative(%a: tensor<2x6xf32>) -> tensor<2x8xf32> {
  %0, %1 = tx8be.Split %a {axis = -1 : i64, split = array<i64: 8, -2>} : (tensor<2x6xf32>) -> (tensor<2x8xf32>, tensor<2x2xf32>)
  func.return %0 : tensor<2x8xf32>
}
// CHECK: 'tx8be.Split' op split [8, -2] has negative entries

// -----

func.func @tile_length(%a: tensor<2x6xf32>) -> tensor<4x6xf32> {
  %0 = tx8be.Tile %a {repeats = array<i64: 2>} : (tensor<2x6xf32>) -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}
// CHECK: 'tx8be.Tile' op repeats has 1 entries, expected 2 (the input rank)

// -----

func.func @tile_negative(%a: tensor<2x6xf32>) -> tensor<4x6xf32> {
  %0 = tx8be.Tile %a {repeats = array<i64: 2, -1>} : (tensor<2x6xf32>) -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}
// CHECK: 'tx8be.Tile' op repeats [2, -1] has negative entries

// -----

func.func @pad_length(%a: tensor<2x6xf32>) -> tensor<3x6xf32> {
  %0 = tx8be.Pad %a {pads = array<i64: 1, 0>} : (tensor<2x6xf32>) -> tensor<3x6xf32>
  func.return %0 : tensor<3x6xf32>
}
// CHECK: 'tx8be.Pad' op pads has 2 entries, expected 4 (two per input dim, begins then ends)

// -----

func.func @pad_negative(%a: tensor<2x6xf32>) -> tensor<2x5xf32> {
  %0 = tx8be.Pad %a {pads = array<i64: 0, 0, 0, -1>} : (tensor<2x6xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}
// CHECK: 'tx8be.Pad' op pads [0, 0, 0, -1] has negative entries; express cropping as a Slice

// -----

func.func @pad_mode(%a: tensor<2x6xf32>) -> tensor<2x6xf32> {
  %0 = tx8be.Pad %a {pads = array<i64: 0, 0, 0, 0>, mode = "symmetric"} : (tensor<2x6xf32>) -> tensor<2x6xf32>
  func.return %0 : tensor<2x6xf32>
}
// CHECK: 'tx8be.Pad' op mode must be one of constant, reflect, edge, wrap, got "symmetric"

// -----

func.func @pad_wrap_empty(%a: tensor<0x6xf32>) -> tensor<1x6xf32> {
  %0 = tx8be.Pad %a {pads = array<i64: 1, 0, 0, 0>, mode = "wrap"} : (tensor<0x6xf32>) -> tensor<1x6xf32>
  func.return %0 : tensor<1x6xf32>
}
// CHECK: 'tx8be.Pad' op wrap padding of dim 0 needs a non-empty dim

// -----

func.func @pad_reflect(%a: tensor<2x6xf32>) -> tensor<4x6xf32> {
  %0 = tx8be.Pad %a {pads = array<i64: 2, 0, 0, 0>, mode = "reflect"} : (tensor<2x6xf32>) -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}
// CHECK: 'tx8be.Pad' op reflect pads (2, 0) on dim 0 must be smaller than its size 2

// -----

func.func @pad_int_value(%a: tensor<2x6xi32>) -> tensor<3x6xi32> {
  %0 = tx8be.Pad %a {pads = array<i64: 1, 0, 0, 0>, value = 0.5 : f64} : (tensor<2x6xi32>) -> tensor<3x6xi32>
  func.return %0 : tensor<3x6xi32>
}
// CHECK: 'tx8be.Pad' op value 0.5 is not an integer, the input is i32

// -----

func.func @pad_bool_value(%a: tensor<2x6xi1>) -> tensor<3x6xi1> {
  %0 = tx8be.Pad %a {pads = array<i64: 1, 0, 0, 0>, value = 2.0 : f64} : (tensor<2x6xi1>) -> tensor<3x6xi1>
  func.return %0 : tensor<3x6xi1>
}
// CHECK: 'tx8be.Pad' op value 2.0 is not 0 or 1, the input is i1

// -----

func.func @pad_dtype(%a: tensor<2x6xui8>) -> tensor<3x6xui8> {
  %0 = tx8be.Pad %a {pads = array<i64: 1, 0, 0, 0>} : (tensor<2x6xui8>) -> tensor<3x6xui8>
  func.return %0 : tensor<3x6xui8>
}
// CHECK: 'tx8be.Pad' op operand #0 has element type ui8; this op accepts bf16, f16, f32, i1, i32, i64, i8
