// RUN: tx8c-opt %s -p layout-init,layout-transmit,layout-preset-to-npu,layout-align-to-npu,layout-align-opt | filecheck %s --check-prefix=BEFORE
// RUN: tx8c-opt %s -p layout-init,layout-transmit,layout-preset-to-npu,layout-normalize-rank,layout-align-to-npu,layout-align-opt,layout-relabel | filecheck %s --check-prefix=AFTER
//
// The layout stage on a BERT-style layer (hidden 128 = 2 heads of 64, 8 tokens), before
// and after issue 15 (layout-normalize-rank and layout-relabel). Before, seed 000 makes
// the rank-3 Split, LayerNorm, Add and Gelu compact, so every Gemm (ALIGN-only) has a
// ChannelNorm either side: 8 of them, 48 KiB, and the four head Transposes move bytes.
// After, the layer runs on [1, 1, 8, 128] views, aligned end to end; the head split and
// merge are relabels; ChannelNorms only where the graph's input comes in and its output
// goes out (2, 8 KiB); one Transpose moves bytes: the key's per-head transpose.

// BEFORE:      "layout-align-opt" = {inverse_erased = 0 : i64, redundant_erased = 0 : i64, const_folded = 0 : i64, channel_norms = 8 : i64, channel_norm_bytes = 49152 : i64}
// BEFORE:      %qkv = tx8be.Gemm
// BEFORE-NEXT: tx8be.ChannelNorm %qkv {direction = false
// BEFORE-NEXT: tx8be.Split {{.*}}mem_layout = Tensor,
// BEFORE-COUNT-3: tx8be.Transpose
// BEFORE:      %n = tx8be.LayerNorm {{.*}}mem_layout = Tensor,

// AFTER:       "layout-align-opt" = {inverse_erased = 0 : i64, redundant_erased = 0 : i64, const_folded = 0 : i64, channel_norms = 2 : i64, channel_norm_bytes = 8192 : i64}
// AFTER-SAME:  "layout-relabel" = {relabels_made = 0 : i64, relabels = 6 : i64, reshapes = 0 : i64, reshape_bytes = 0 : i64, transposes = 1 : i64, transpose_bytes = 4096 : i64}
// AFTER:       %[[X:.*]] = tx8be.Relabel %x {shape = array<i64: 1, 1, 8, 128>
// AFTER-NEXT:  %[[XA:.*]] = tx8be.ChannelNorm %[[X]] {direction = true,
// AFTER-NEXT:  %qkv = tx8be.Gemm %[[XA]], %wqkv, %bqkv {{.*}}mem_layout = Cx,{{.*}} -> tensor<1x1x8x384xf32>
// AFTER-NEXT:  %q, %k, %v = tx8be.Split %qkv {axis = 3 : i64, {{.*}}mem_layout = Cx,
// AFTER-NEXT:  %qh = tx8be.Relabel %q {shape = array<i64: 1, 2, 8, 64>, view = array<i64: 8, 2, 64>, perm = array<i64: 1, 0, 2>, {{.*}}mem_layout = Cx,
// AFTER-NEXT:  %[[K:.*]] = tx8be.Relabel %k {shape = array<i64: 1, 2, 8, 64>,
// AFTER-NEXT:  %kt = tx8be.Transpose %[[K]] {perm = array<i64: 0, 1, 3, 2>,
// AFTER-NEXT:  %vh = tx8be.Relabel %v {shape = array<i64: 1, 2, 8, 64>,
// AFTER:       %[[OM:.*]] = tx8be.Relabel %o {shape = array<i64: 1, 1, 8, 128>, view = array<i64: 2, 8, 64>, perm = array<i64: 1, 0, 2>, {{.*}}mem_layout = Cx,
// AFTER-NEXT:  %a = tx8be.Gemm %[[OM]], %wo {{.*}}mem_layout = Cx,
// AFTER-NEXT:  %r = tx8be.Add %a, %[[XA]] {{.*}}mem_layout = Cx,
// AFTER-NEXT:  %n = tx8be.LayerNorm %r, %g, %b {axis = 3 : i64, {{.*}}mem_layout = Cx,
// AFTER-NEXT:  %h = tx8be.Gemm %n, %w1 {{.*}}mem_layout = Cx,
// AFTER-NEXT:  %e = tx8be.Gelu %h {{.*}}mem_layout = Cx,
// AFTER-NEXT:  %f = tx8be.Gemm %e, %w2 {{.*}}mem_layout = Cx,
// AFTER-NEXT:  %r2 = tx8be.Add %f, %n {{.*}}mem_layout = Cx,
// AFTER-NEXT:  %[[OUT:.*]] = tx8be.ChannelNorm %r2 {direction = false,
// AFTER-NEXT:  %n2 = tx8be.LayerNorm %[[OUT]], %g, %b {axis = 3 : i64, {{.*}}mem_layout = Tensor,
// AFTER-NEXT:  %[[N2:.*]] = tx8be.Relabel %n2 {shape = array<i64: 1, 8, 128>
// AFTER-NEXT:  func.return %[[N2]]
func.func @bert_layer(%x: tensor<1x8x128xf32>, %wqkv: tensor<128x384xf32>, %bqkv: tensor<384xf32>, %wo: tensor<128x128xf32>, %w1: tensor<128x256xf32>, %w2: tensor<256x128xf32>, %g: tensor<128xf32>, %b: tensor<128xf32>) -> tensor<1x8x128xf32> {
  %qkv = tx8be.Gemm %x, %wqkv, %bqkv : (tensor<1x8x128xf32>, tensor<128x384xf32>, tensor<384xf32>) -> tensor<1x8x384xf32>
  %q, %k, %v = tx8be.Split %qkv {axis = 2 : i64, split = array<i64: 128, 128, 128>} : (tensor<1x8x384xf32>) -> (tensor<1x8x128xf32>, tensor<1x8x128xf32>, tensor<1x8x128xf32>)
  %q4 = tx8be.Reshape %q {shape = array<i64: 1, 8, 2, 64>} : (tensor<1x8x128xf32>) -> tensor<1x8x2x64xf32>
  %qh = tx8be.Transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x8x2x64xf32>) -> tensor<1x2x8x64xf32>
  %k4 = tx8be.Reshape %k {shape = array<i64: 1, 8, 2, 64>} : (tensor<1x8x128xf32>) -> tensor<1x8x2x64xf32>
  %kt = tx8be.Transpose %k4 {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x8x2x64xf32>) -> tensor<1x2x64x8xf32>
  %v4 = tx8be.Reshape %v {shape = array<i64: 1, 8, 2, 64>} : (tensor<1x8x128xf32>) -> tensor<1x8x2x64xf32>
  %vh = tx8be.Transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x8x2x64xf32>) -> tensor<1x2x8x64xf32>
  %s = tx8be.Gemm %qh, %kt : (tensor<1x2x8x64xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x8x8xf32>
  %p = tx8be.Softmax %s {axis = -1 : i64} : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %o = tx8be.Gemm %p, %vh : (tensor<1x2x8x8xf32>, tensor<1x2x8x64xf32>) -> tensor<1x2x8x64xf32>
  %ot = tx8be.Transpose %o {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x2x8x64xf32>) -> tensor<1x8x2x64xf32>
  %om = tx8be.Reshape %ot {shape = array<i64: 1, 8, 128>} : (tensor<1x8x2x64xf32>) -> tensor<1x8x128xf32>
  %a = tx8be.Gemm %om, %wo : (tensor<1x8x128xf32>, tensor<128x128xf32>) -> tensor<1x8x128xf32>
  %r = tx8be.Add %a, %x : (tensor<1x8x128xf32>, tensor<1x8x128xf32>) -> tensor<1x8x128xf32>
  %n = tx8be.LayerNorm %r, %g, %b : (tensor<1x8x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<1x8x128xf32>
  %h = tx8be.Gemm %n, %w1 : (tensor<1x8x128xf32>, tensor<128x256xf32>) -> tensor<1x8x256xf32>
  %e = tx8be.Gelu %h : (tensor<1x8x256xf32>) -> tensor<1x8x256xf32>
  %f = tx8be.Gemm %e, %w2 : (tensor<1x8x256xf32>, tensor<256x128xf32>) -> tensor<1x8x128xf32>
  %r2 = tx8be.Add %f, %n : (tensor<1x8x128xf32>, tensor<1x8x128xf32>) -> tensor<1x8x128xf32>
  %n2 = tx8be.LayerNorm %r2, %g, %b : (tensor<1x8x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<1x8x128xf32>
  func.return %n2 : tensor<1x8x128xf32>
}
