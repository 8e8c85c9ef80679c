// RUN: tx8c-opt %s --split-input-file -p layout-normalize-rank | filecheck %s
// RUN: tx8c-opt %s --split-input-file -p layout-normalize-rank | tx8c-opt --split-input-file -p layout-normalize-rank | filecheck %s --check-prefix=AGAIN
//
// layout-normalize-rank (issue 15): ops of odd rank run on a rank-4 (rank-2) view, which
// is the same bytes compact and aligned, so seed 000's odd-rank rule no longer makes them
// NALIGN; chains of Reshape/Transpose that are the identity on the bytes of every family
// they can run in become one tx8be.Relabel (moves no bytes). A second run changes nothing.
// AGAIN-COUNT-9: rank_views = 0 : i64, const_views = 0 : i64, transposes_split = 0 : i64, reshapes_absorbed = 0 : i64, compact_rows = 0 : i64

// A rank-3 LayerNorm between two Gemms: all three run on [1, 1, 8, 128] (the LayerNorm's
// axis follows its dim), one Relabel in (the graph input) and one out (the output).
// CHECK:       "layout-normalize-rank" = {rank_views = 3 : i64, const_views = 0 : i64, transposes_split = 0 : i64, reshapes_absorbed = 0 : i64, compact_rows = 0 : i64, odd_rank_ops = 0 : i64, relabels = 2 : i64, reshapes = 0 : i64, transposes = 0 : i64}
// CHECK-LABEL: func.func @ln_between_gemms(
// CHECK-NEXT:    %[[X:.*]] = tx8be.Relabel %x {shape = array<i64: 1, 1, 8, 128>, layout_str = "Tensor"} : (tensor<1x8x128xf32>) -> tensor<1x1x8x128xf32>
// CHECK-NEXT:    %h = tx8be.Gemm %[[X]], %w1 : (tensor<1x1x8x128xf32>, tensor<128x128xf32>) -> tensor<1x1x8x128xf32>
// CHECK-NEXT:    %n = tx8be.LayerNorm %h, %g, %b {axis = 3 : i64} : (tensor<1x1x8x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<1x1x8x128xf32>
// CHECK-NEXT:    %y = tx8be.Gemm %n, %w2 : (tensor<1x1x8x128xf32>, tensor<128x100xf32>) -> tensor<1x1x8x100xf32>
// CHECK-NEXT:    %[[Y:.*]] = tx8be.Relabel %y {shape = array<i64: 1, 8, 100>} : (tensor<1x1x8x100xf32>) -> tensor<1x8x100xf32>
// CHECK-NEXT:    func.return %[[Y]]
func.func @ln_between_gemms(%x: tensor<1x8x128xf32>, %w1: tensor<128x128xf32>, %w2: tensor<128x100xf32>, %g: tensor<128xf32>, %b: tensor<128xf32>) -> tensor<1x8x100xf32> {
  %h = tx8be.Gemm %x, %w1 : (tensor<1x8x128xf32>, tensor<128x128xf32>) -> tensor<1x8x128xf32>
  %n = tx8be.LayerNorm %h, %g, %b : (tensor<1x8x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<1x8x128xf32>
  %y = tx8be.Gemm %n, %w2 : (tensor<1x8x128xf32>, tensor<128x100xf32>) -> tensor<1x8x100xf32>
  func.return %y : tensor<1x8x100xf32>
}

// -----

// Attention's head split and merge: [1,8,128] -> [1,8,2,64] -> [1,2,8,64] keeps every
// element at its byte in Cx (channels in blocks of 64), so each chain is one Relabel.
// CHECK:       relabels = 2 : i64, reshapes = 0 : i64, transposes = 0 : i64
// CHECK-LABEL: func.func @head_split_merge(
// CHECK-NEXT:    %t = tx8be.Relabel %x {shape = array<i64: 1, 2, 8, 64>, view = array<i64: 8, 2, 64>, perm = array<i64: 1, 0, 2>} : (tensor<1x8x128xf32>) -> tensor<1x2x8x64xf32>
// CHECK-NEXT:    %m = tx8be.Mul %t, %s
// CHECK-NEXT:    %y = tx8be.Relabel %m {shape = array<i64: 1, 8, 128>, view = array<i64: 2, 8, 64>, perm = array<i64: 1, 0, 2>} : (tensor<1x2x8x64xf32>) -> tensor<1x8x128xf32>
// CHECK-NEXT:    func.return %y
func.func @head_split_merge(%x: tensor<1x8x128xf32>, %s: tensor<f32>) -> tensor<1x8x128xf32> {
  %r = tx8be.Reshape %x {shape = array<i64: 1, 8, 2, 64>} : (tensor<1x8x128xf32>) -> tensor<1x8x2x64xf32>
  %t = tx8be.Transpose %r {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x8x2x64xf32>) -> tensor<1x2x8x64xf32>
  %m = tx8be.Mul %t, %s : (tensor<1x2x8x64xf32>, tensor<f32>) -> tensor<1x2x8x64xf32>
  %u = tx8be.Transpose %m {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x8x64xf32>) -> tensor<1x8x2x64xf32>
  %y = tx8be.Reshape %u {shape = array<i64: 1, 8, 128>} : (tensor<1x8x2x64xf32>) -> tensor<1x8x128xf32>
  func.return %y : tensor<1x8x128xf32>
}

// -----

// The key of attention (heads, then [64, 8] per head) is no relabel; its Reshape and
// Transpose split into the free head split and one per-head Transpose.
// CHECK:       transposes_split = 1 : i64
// CHECK-LABEL: func.func @key(
// CHECK-NEXT:    %[[H:.*]] = tx8be.Relabel %x {shape = array<i64: 1, 2, 8, 64>, view = array<i64: 8, 2, 64>, perm = array<i64: 1, 0, 2>, layout_str = "Tensor"}
// CHECK-NEXT:    %t = tx8be.Transpose %[[H]] {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x8x64xf32>) -> tensor<1x2x64x8xf32>
// CHECK-NEXT:    func.return %t
func.func @key(%x: tensor<1x8x128xf32>) -> tensor<1x2x64x8xf32> {
  %r = tx8be.Reshape %x {shape = array<i64: 1, 8, 2, 64>} : (tensor<1x8x128xf32>) -> tensor<1x8x2x64xf32>
  %t = tx8be.Transpose %r {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x8x2x64xf32>) -> tensor<1x2x64x8xf32>
  func.return %t : tensor<1x2x64x8xf32>
}

// -----

// Not relabels in every family they may run in: [1,8,128] -> [8,128] is one only compact
// (the rows of NCx [8,128] are not Cx's channel blocks), NCHW -> NHWC moves elements.
// They stay (layout-align-to-npu prices them, layout-relabel converts the compact one).
// CHECK:       relabels = 0 : i64, reshapes = 1 : i64, transposes = 1 : i64
// CHECK-LABEL: func.func @moves(
// CHECK-NEXT:    %r = tx8be.Reshape %x
// CHECK-NEXT:    %t = tx8be.Transpose %y
func.func @moves(%x: tensor<1x8x128xf32>, %y: tensor<1x4x6x6xf32>) -> (tensor<8x128xf32>, tensor<1x6x6x4xf32>) {
  %r = tx8be.Reshape %x {shape = array<i64: 8, 128>} : (tensor<1x8x128xf32>) -> tensor<8x128xf32>
  %t = tx8be.Transpose %y {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x4x6x6xf32>) -> tensor<1x6x6x4xf32>
  func.return %r, %t : tensor<8x128xf32>, tensor<1x6x6x4xf32>
}

// -----

// Weights and attributes follow: the rank-3 constant is reshaped at compile time, the
// Reduce axes and the Softmax axis move to their dims, a lower-rank operand stays.
// CHECK:       rank_views = 4 : i64, const_views = 1 : i64
// CHECK-LABEL: func.func @weights_follow(
// CHECK-NEXT:    %[[X:.*]] = tx8be.Relabel %x {shape = array<i64: 1, 1, 8, 128>, layout_str = "Tensor"}
// CHECK-NEXT:    %[[C:.*]] = tx8be.Constant {value = dense<1.500000e+00> : tensor<1x1x8x128xf32>, layout_str = "Tensor"}
// CHECK-NEXT:    %a = tx8be.Add %[[X]], %[[C]] : (tensor<1x1x8x128xf32>, tensor<1x1x8x128xf32>) -> tensor<1x1x8x128xf32>
// CHECK-NEXT:    %m = tx8be.Reduce %a {mode = "mean", axes = array<i64: 3>} : (tensor<1x1x8x128xf32>) -> tensor<1x1x8x1xf32>
// CHECK-NEXT:    %s = tx8be.Softmax %a {axis = 2 : i64}
// CHECK-NEXT:    %d = tx8be.Div %s, %m
// CHECK-NEXT:    %[[D:.*]] = tx8be.Relabel %d {shape = array<i64: 1, 8, 128>}
// CHECK-NEXT:    func.return %[[D]]
func.func @weights_follow(%x: tensor<1x8x128xf32>) -> tensor<1x8x128xf32> {
  %c = tx8be.Constant {value = dense<1.5> : tensor<1x8x128xf32>} : () -> tensor<1x8x128xf32>
  %a = tx8be.Add %x, %c : (tensor<1x8x128xf32>, tensor<1x8x128xf32>) -> tensor<1x8x128xf32>
  %m = tx8be.Reduce %a {mode = "mean", axes = array<i64: -1>} : (tensor<1x8x128xf32>) -> tensor<1x8x1xf32>
  %s = tx8be.Softmax %a {axis = 1 : i64} : (tensor<1x8x128xf32>) -> tensor<1x8x128xf32>
  %d = tx8be.Div %s, %m : (tensor<1x8x128xf32>, tensor<1x8x1xf32>) -> tensor<1x8x128xf32>
  func.return %d : tensor<1x8x128xf32>
}

// -----

// Rank 1 takes the view [1, C]. A Reduce that drops a dim cannot take one view for its
// operand and its result: it keeps rank 3 (counted in odd_rank_ops).
// CHECK:       rank_views = 1 : i64, const_views = 0 : i64, transposes_split = 0 : i64, reshapes_absorbed = 0 : i64, compact_rows = 0 : i64, odd_rank_ops = 1 : i64
// CHECK-LABEL: func.func @rank1_and_unviewable(
// CHECK-NEXT:    %[[V:.*]] = tx8be.Relabel %v {shape = array<i64: 1, 128>, layout_str = "Tensor"}
// CHECK-NEXT:    %a = tx8be.Neg %[[V]] : (tensor<1x128xf32>) -> tensor<1x128xf32>
// CHECK-NEXT:    %[[A:.*]] = tx8be.Relabel %a {shape = array<i64: 128>}
// CHECK-NEXT:    %r = tx8be.Reduce %x {mode = "sum", axes = array<i64: 1>, keepdims = false} : (tensor<1x2x8x128xf32>) -> tensor<1x8x128xf32>
func.func @rank1_and_unviewable(%v: tensor<128xf32>, %x: tensor<1x2x8x128xf32>) -> (tensor<128xf32>, tensor<1x8x128xf32>) {
  %a = tx8be.Neg %v : (tensor<128xf32>) -> tensor<128xf32>
  %r = tx8be.Reduce %x {mode = "sum", axes = array<i64: 1>, keepdims = false} : (tensor<1x2x8x128xf32>) -> tensor<1x8x128xf32>
  func.return %a, %r : tensor<128xf32>, tensor<1x8x128xf32>
}

// -----

// Batch dims follow: GPT-2 reshapes the rows of every Gemm to 2-D and back. The Gemm
// takes the rows as they come ([1, 1, 8, 128]: batch dims of a matmul) and the reshapes
// on both sides compose away.
// CHECK:       reshapes_absorbed = 1 : i64
// CHECK-LABEL: func.func @gemm_rows(
// CHECK-NEXT:    %[[X:.*]] = tx8be.Relabel %x {shape = array<i64: 1, 1, 8, 128>, layout_str = "Tensor"}
// CHECK-NEXT:    %h = tx8be.Gemm %[[X]], %w : (tensor<1x1x8x128xf32>, tensor<128x128xf32>) -> tensor<1x1x8x128xf32>
// CHECK-NEXT:    %n = tx8be.LayerNorm %h, %g {axis = 3 : i64}
// CHECK-NEXT:    %[[N:.*]] = tx8be.Relabel %n {shape = array<i64: 1, 8, 128>}
// CHECK-NEXT:    func.return %[[N]]
func.func @gemm_rows(%x: tensor<1x8x128xf32>, %w: tensor<128x128xf32>, %g: tensor<128xf32>) -> tensor<1x8x128xf32> {
  %r = tx8be.Reshape %x {shape = array<i64: 8, 128>} : (tensor<1x8x128xf32>) -> tensor<8x128xf32>
  %h = tx8be.Gemm %r, %w : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
  %u = tx8be.Reshape %h {shape = array<i64: 1, 8, 128>} : (tensor<8x128xf32>) -> tensor<1x8x128xf32>
  %n = tx8be.LayerNorm %u, %g : (tensor<1x8x128xf32>, tensor<128xf32>) -> tensor<1x8x128xf32>
  func.return %n : tensor<1x8x128xf32>
}

// -----

// ViT's patches: NHWC back to NCHW, flattened, transposed to tokens: the three compose
// into one reshape of the NHWC data, a relabel in both families.
// CHECK:       relabels = 1 : i64, reshapes = 0 : i64, transposes = 0 : i64
// CHECK-LABEL: func.func @patches(
// CHECK-NEXT:    %p = tx8be.Relabel %x {shape = array<i64: 1, 4, 64>} : (tensor<1x2x2x64xf32>) -> tensor<1x4x64xf32>
// CHECK-NEXT:    func.return %p
func.func @patches(%x: tensor<1x2x2x64xf32>) -> tensor<1x4x64xf32> {
  %t = tx8be.Transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x2x2x64xf32>) -> tensor<1x64x2x2xf32>
  %r = tx8be.Reshape %t {shape = array<i64: 1, 64, 4>} : (tensor<1x64x2x2xf32>) -> tensor<1x64x4xf32>
  %p = tx8be.Transpose %r {perm = array<i64: 0, 2, 1>} : (tensor<1x64x4xf32>) -> tensor<1x4x64xf32>
  func.return %p : tensor<1x4x64xf32>
}

// -----

// An LM head's logits are returned (compact); as rows [8, 256] their NCx bytes are the
// compact bytes (256 channels, rows of 1024 bytes), so the Gemm takes its operand as rows
// (128 wide: the smaller one to reshape) and the logits need no ChannelNorm.
// CHECK:       compact_rows = 1 : i64
// CHECK-LABEL: func.func @lm_head(
// CHECK-NEXT:    %[[X:.*]] = tx8be.Relabel %x {shape = array<i64: 1, 1, 8, 128>, layout_str = "Tensor"}
// CHECK-NEXT:    %n = tx8be.RMSNorm %[[X]], %g {axis = 3 : i64}
// CHECK-NEXT:    %[[R:.*]] = tx8be.Reshape %n {shape = array<i64: 8, 128>, layout_str = "NTensor"}
// CHECK-NEXT:    %y = tx8be.Gemm %[[R]], %w : (tensor<8x128xf32>, tensor<128x256xf32>) -> tensor<8x256xf32>
// CHECK-NEXT:    %[[Y:.*]] = tx8be.Reshape %y {shape = array<i64: 1, 8, 256>}
// CHECK-NEXT:    func.return %[[Y]]
func.func @lm_head(%x: tensor<1x8x128xf32>, %g: tensor<128xf32>, %w: tensor<128x256xf32>) -> tensor<1x8x256xf32> {
  %n = tx8be.RMSNorm %x, %g : (tensor<1x8x128xf32>, tensor<128xf32>) -> tensor<1x8x128xf32>
  %y = tx8be.Gemm %n, %w : (tensor<1x8x128xf32>, tensor<128x256xf32>) -> tensor<1x8x256xf32>
  func.return %y : tensor<1x8x256xf32>
}
