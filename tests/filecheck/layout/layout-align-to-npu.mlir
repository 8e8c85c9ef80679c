// RUN: tx8c-opt %s --split-input-file -p 'layout-align-to-npu{strategy=greedy}' | filecheck %s --check-prefix=GREEDY
// RUN: tx8c-opt %s --split-input-file -p layout-align-to-npu | filecheck %s --check-prefix=OPTIMAL
// RUN: tx8c-opt %s --split-input-file -p layout-align-to-npu | tx8c-opt --split-input-file > /dev/null
//
// The figures of seed 000 with both strategies. ALIGN ops (Transpose, Pool, Reduce, Gemm)
// store Cx/NCx, NALIGN ones (graph inputs and outputs, odd ranks) Tensor/NTensor, BOTH ops
// (Relu, Neg, Exp, Add, BroadCast, Reshape) choose. A ChannelNorm (CN) goes in at each
// conflict, direction true = to Cx. Tensors of 1x4x4x5xf32 take 320 bytes compact and
// 512 bytes Cx (C = 5 padded to 8); 1x4x5x4xf32 takes 320 bytes either way.

// Seed 000 "普通情况": BOTH ops follow their parent along an ALIGN/NALIGN/BOTH chain.
// Greedy: Relu follows the input (Tensor), Neg and Exp follow the Transposes (Cx).
func.func @chain(%x: tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32> {
  %r = tx8be.Relu %x : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  %t = tx8be.Transpose %r {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x4x4x5xf32>) -> tensor<1x4x5x4xf32>
  %n = tx8be.Neg %t : (tensor<1x4x5x4xf32>) -> tensor<1x4x5x4xf32>
  %t2 = tx8be.Transpose %n {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x4x5x4xf32>) -> tensor<1x4x4x5xf32>
  %e = tx8be.Exp %t2 : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  func.return %e : tensor<1x4x4x5xf32>
}
// GREEDY:      "layout-align-to-npu" = {strategy = "greedy", channel_norms = 2 : i64, channel_norm_bytes = 832 : i64, const_channel_norms = 0 : i64, conversions_elided = 0 : i64, movement_bytes = 832 : i64}
// GREEDY:      %r = tx8be.Relu %x {dev_info = #tx8be.dev<imm_size = 0, mem_layout = Tensor,
// GREEDY-NEXT: %[[CN:.*]] = tx8be.ChannelNorm %r {direction = true, dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx,
// GREEDY-NEXT: %t = tx8be.Transpose %[[CN]] {{.*}}mem_layout = Cx,
// GREEDY-NEXT: %n = tx8be.Neg %t {{.*}}mem_layout = Cx,
// GREEDY-NEXT: %t2 = tx8be.Transpose %n {{.*}}mem_layout = Cx,
// GREEDY-NEXT: %e = tx8be.Exp %t2 {{.*}}mem_layout = Cx,
// GREEDY-NEXT: %[[OUT:.*]] = tx8be.ChannelNorm %e {direction = false, {{.*}}mem_layout = Tensor,
// GREEDY-NEXT: func.return %[[OUT]]
// The optimum costs the same 512 + 320 bytes; free ops that may go either way stay compact.
// %t (1x4x5x4: C = 4 needs no padding) has the same bytes in both families, so Neg reads
// and writes it compact with no ChannelNorm either side (2 conversions elided).
// OPTIMAL:      "layout-align-to-npu" = {strategy = "optimal", channel_norms = 2 : i64, channel_norm_bytes = 832 : i64, const_channel_norms = 0 : i64, conversions_elided = 2 : i64, movement_bytes = 832 : i64}
// OPTIMAL:      %r = tx8be.Relu %x {{.*}}mem_layout = Tensor,
// OPTIMAL-NEXT: %[[CN:.*]] = tx8be.ChannelNorm %r {direction = true,
// OPTIMAL-NEXT: %t = tx8be.Transpose %[[CN]] {{.*}}mem_layout = Cx,
// OPTIMAL-NEXT: %n = tx8be.Neg %t {{.*}}mem_layout = Tensor,
// OPTIMAL-NEXT: %t2 = tx8be.Transpose %n {{.*}}mem_layout = Cx,
// OPTIMAL-NEXT: %[[BACK:.*]] = tx8be.ChannelNorm %t2 {direction = false,
// OPTIMAL-NEXT: %e = tx8be.Exp %[[BACK]] {{.*}}mem_layout = Tensor,
// OPTIMAL-NEXT: func.return %e

// -----

// A BOTH op between an ALIGN op and a NALIGN op (odd rank): one CN either side of it.
func.func @both_between(%x: tensor<1x4x4x5xf32>) -> tensor<4x4x5xf32> {
  %t = tx8be.Transpose %x {perm = array<i64: 0, 1, 2, 3>} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  %r = tx8be.Relu %t : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  %s = tx8be.Reshape %r {shape = array<i64: 4, 4, 5>} : (tensor<1x4x4x5xf32>) -> tensor<4x4x5xf32>
  func.return %s : tensor<4x4x5xf32>
}
// GREEDY:      channel_norms = 2 : i64, channel_norm_bytes = 832 : i64
// GREEDY:      %[[IN:.*]] = tx8be.ChannelNorm %x {direction = true,
// GREEDY-NEXT: %t = tx8be.Transpose %[[IN]] {{.*}}mem_layout = Cx,
// GREEDY-NEXT: %r = tx8be.Relu %t {{.*}}mem_layout = Cx,
// GREEDY-NEXT: %[[OUT:.*]] = tx8be.ChannelNorm %r {direction = false,
// GREEDY-NEXT: %s = tx8be.Reshape %[[OUT]] {{.*}}mem_layout = NTensor,
// GREEDY-NEXT: func.return %s
// OPTIMAL:      channel_norms = 2 : i64, channel_norm_bytes = 832 : i64
// OPTIMAL:      %t = tx8be.Transpose %{{.*}}mem_layout = Cx,
// OPTIMAL-NEXT: %[[OUT:.*]] = tx8be.ChannelNorm %t {direction = false,
// OPTIMAL-NEXT: %r = tx8be.Relu %[[OUT]] {{.*}}mem_layout = Tensor,
// OPTIMAL-NEXT: %s = tx8be.Reshape %r {{.*}}mem_layout = NTensor,

// -----

// A BOTH op that grows its data (BroadCast 1 -> 8 batches) before an ALIGN op: greedy
// follows the compact input and converts the big result (4096 bytes NCx); the optimum
// converts the small input (512 bytes) instead. The result goes back to NTensor (2560).
func.func @grow(%x: tensor<1x4x4x5xf32>) -> tensor<8x4x5x4xf32> {
  %b = tx8be.BroadCast %x {shape = array<i64: 8, 4, 4, 5>} : (tensor<1x4x4x5xf32>) -> tensor<8x4x4x5xf32>
  %t = tx8be.Transpose %b {perm = array<i64: 0, 1, 3, 2>} : (tensor<8x4x4x5xf32>) -> tensor<8x4x5x4xf32>
  func.return %t : tensor<8x4x5x4xf32>
}
// GREEDY:      channel_norms = 2 : i64, channel_norm_bytes = 6656 : i64
// GREEDY:      %b = tx8be.BroadCast %x {{.*}}mem_layout = NTensor,
// GREEDY-NEXT: %[[CN:.*]] = tx8be.ChannelNorm %b {direction = true, {{.*}}mem_layout = NCx,
// GREEDY-NEXT: %t = tx8be.Transpose %[[CN]]
// OPTIMAL:      channel_norms = 2 : i64, channel_norm_bytes = 3072 : i64
// OPTIMAL:      %[[CN:.*]] = tx8be.ChannelNorm %x {direction = true, {{.*}}mem_layout = Cx,
// OPTIMAL-NEXT: %b = tx8be.BroadCast %[[CN]] {{.*}}mem_layout = NCx,
// OPTIMAL-NEXT: %t = tx8be.Transpose %b {{.*}}mem_layout = NCx,
// OPTIMAL-NEXT: %[[OUT:.*]] = tx8be.ChannelNorm %t {direction = false, {{.*}}mem_layout = NTensor,

// -----

// Seed 000 "多输入Op": parents disagree, greedy takes the topologically first parent's mode
// (%a, defined first, though it is the second operand): Add is Cx, %b and the result are
// converted (640 + 640 + 400). The optimum keeps Add compact and converts %a back (400).
func.func @disagree(%x: tensor<1x4x5x5xf32>, %y: tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> {
  %a = tx8be.Transpose %x {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  %b = tx8be.Neg %y : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  %s = tx8be.Add %b, %a : (tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  func.return %s : tensor<1x4x5x5xf32>
}
// GREEDY:      channel_norms = 3 : i64, channel_norm_bytes = 1680 : i64
// GREEDY:      %b = tx8be.Neg %y {{.*}}mem_layout = Tensor,
// GREEDY-NEXT: %[[B:.*]] = tx8be.ChannelNorm %b {direction = true,
// GREEDY-NEXT: %s = tx8be.Add %[[B]], %a {{.*}}mem_layout = Cx,
// GREEDY-NEXT: %[[OUT:.*]] = tx8be.ChannelNorm %s {direction = false,
// GREEDY-NEXT: func.return %[[OUT]]
// OPTIMAL:      channel_norms = 2 : i64, channel_norm_bytes = 1040 : i64
// OPTIMAL:      %a = tx8be.Transpose
// OPTIMAL-NEXT: %[[A:.*]] = tx8be.ChannelNorm %a {direction = false,
// OPTIMAL-NEXT: %b = tx8be.Neg %y {{.*}}mem_layout = Tensor,
// OPTIMAL-NEXT: %s = tx8be.Add %b, %[[A]] {{.*}}mem_layout = Tensor,
// OPTIMAL-NEXT: func.return %s

// -----

// Seed 000 "Need BroadCast Ops": a V_VS op follows its complete operand. %s follows the
// Transpose (Cx) and its broadcast constant is stored Cx too (no CN). %v follows %y
// (Tensor) even though Pool wants Cx: the reduced [1,1,1,5] operand is converted to
// Tensor (20 bytes) and %v to Cx for the Pool (640). Besides: %x to Cx (640), both
// results back to Tensor (400 each).
func.func @broadcast(%x: tensor<1x4x5x5xf32>, %y: tensor<1x4x5x5xf32>) -> (tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>) {
  %t = tx8be.Transpose %x {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  %c = tx8be.Constant {value = dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>} : () -> tensor<5xf32>
  %s = tx8be.Add %t, %c : (tensor<1x4x5x5xf32>, tensor<5xf32>) -> tensor<1x4x5x5xf32>
  %m = tx8be.Reduce %t {mode = "sum", axes = array<i64: 0, 1, 2>} : (tensor<1x4x5x5xf32>) -> tensor<1x1x1x5xf32>
  %v = tx8be.Mul %y, %m : (tensor<1x4x5x5xf32>, tensor<1x1x1x5xf32>) -> tensor<1x4x5x5xf32>
  %p = tx8be.Pool %v {mode = "max", kernel = array<i64: 1, 1>} : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  func.return %s, %p : tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>
}
// GREEDY:      channel_norms = 5 : i64, channel_norm_bytes = 2100 : i64
// GREEDY:      %c = tx8be.Constant {{.*}}mem_layout = Cx,
// GREEDY-NEXT: %s = tx8be.Add %t, %c {{.*}}mem_layout = Cx,
// GREEDY-NEXT: %[[S:.*]] = tx8be.ChannelNorm %s {direction = false,
// GREEDY-NEXT: %m = tx8be.Reduce %t {{.*}}mem_layout = Cx,
// GREEDY-NEXT: %[[M:.*]] = tx8be.ChannelNorm %m {direction = false, {{.*}}mem_layout = Tensor,
// GREEDY-NEXT: %v = tx8be.Mul %y, %[[M]] {{.*}}mem_layout = Tensor,
// GREEDY-NEXT: %[[V:.*]] = tx8be.ChannelNorm %v {direction = true,
// GREEDY-NEXT: %p = tx8be.Pool %[[V]] {{.*}}mem_layout = Cx,
// OPTIMAL:      channel_norms = 5 : i64, channel_norm_bytes = 2100 : i64
// OPTIMAL:      %s = tx8be.Add %t, %c {{.*}}mem_layout = Cx,
// OPTIMAL:      %v = tx8be.Mul %y, %{{.*}}mem_layout = Tensor,

// -----

// Fan-out: one value read by ALIGN and NALIGN consumers gets exactly one CN per
// direction, shared by every consumer on the other side.
func.func @fanout(%x: tensor<1x4x4x5xf32>) -> (tensor<1x4x4x5xf32>, tensor<4x4x5xf32>, tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>) {
  %r = tx8be.Relu %x : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  %t = tx8be.Transpose %r {perm = array<i64: 0, 1, 2, 3>} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  %p = tx8be.Pool %r {mode = "max", kernel = array<i64: 1, 1>} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  %q = tx8be.Pool %t {mode = "max", kernel = array<i64: 1, 1>} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  %s = tx8be.Reshape %t {shape = array<i64: 4, 4, 5>} : (tensor<1x4x4x5xf32>) -> tensor<4x4x5xf32>
  func.return %r, %s, %t, %q : tensor<1x4x4x5xf32>, tensor<4x4x5xf32>, tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>
}
// GREEDY:      channel_norms = 3 : i64, channel_norm_bytes = 1152 : i64
// GREEDY:      %r = tx8be.Relu %x {{.*}}mem_layout = Tensor,
// GREEDY-NEXT: %[[R:.*]] = tx8be.ChannelNorm %r {direction = true,
// GREEDY-NEXT: %t = tx8be.Transpose %[[R]]
// GREEDY-NEXT: %[[T:.*]] = tx8be.ChannelNorm %t {direction = false,
// GREEDY-NEXT: %p = tx8be.Pool %[[R]]
// GREEDY-NEXT: %q = tx8be.Pool %t
// GREEDY-NEXT: %[[Q:.*]] = tx8be.ChannelNorm %q {direction = false,
// GREEDY-NEXT: %s = tx8be.Reshape %[[T]]
// GREEDY-NEXT: func.return %r, %s, %[[T]], %[[Q]]
// OPTIMAL:      channel_norms = 3 : i64, channel_norm_bytes = 1152 : i64
// OPTIMAL:      %[[R:.*]] = tx8be.ChannelNorm %r {direction = true,
// OPTIMAL-NEXT: %t = tx8be.Transpose %[[R]]
// OPTIMAL-NEXT: %[[T:.*]] = tx8be.ChannelNorm %t {direction = false,
// OPTIMAL-NEXT: %p = tx8be.Pool %[[R]]

// -----

// Odd ranks: a BOTH op of rank 3 is compact; an ALIGN-only op of rank 3 (Gemm) stays
// aligned, its kernel reads nothing else. The weight constant is stored NCx (no CN).
func.func @odd_rank(%x: tensor<1x6x5xf32>) -> tensor<1x6x5xf32> {
  %w = tx8be.Constant {value = dense<1.0> : tensor<5x5xf32>} : () -> tensor<5x5xf32>
  %g = tx8be.Gemm %x, %w : (tensor<1x6x5xf32>, tensor<5x5xf32>) -> tensor<1x6x5xf32>
  %r = tx8be.Relu %g : (tensor<1x6x5xf32>) -> tensor<1x6x5xf32>
  func.return %r : tensor<1x6x5xf32>
}
// GREEDY:      channel_norms = 2 : i64, channel_norm_bytes = 312 : i64
// GREEDY:      %[[X:.*]] = tx8be.ChannelNorm %x {direction = true,
// GREEDY-NEXT: %w = tx8be.Constant {{.*}}mem_layout = NCx,
// GREEDY-NEXT: %g = tx8be.Gemm %[[X]], %w {{.*}}mem_layout = Cx,
// GREEDY-NEXT: %[[G:.*]] = tx8be.ChannelNorm %g {direction = false,
// GREEDY-NEXT: %r = tx8be.Relu %[[G]] {{.*}}mem_layout = Tensor,
// OPTIMAL:      channel_norms = 2 : i64, channel_norm_bytes = 312 : i64
// OPTIMAL:      %g = tx8be.Gemm %{{.*}}mem_layout = Cx,
// OPTIMAL:      %r = tx8be.Relu %{{.*}}mem_layout = Tensor,

// -----

// A dev_info on an op fixes its family (other fields are kept); an existing ChannelNorm
// reads the family opposite to the one it writes, so %x needs no other conversion.
func.func @fixed(%x: tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32> {
  %r = tx8be.Relu %x {dev_info = #tx8be.dev<imm_size = 7, mem_layout = Cx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  %c = tx8be.ChannelNorm %r {direction = false} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  func.return %c : tensor<1x4x4x5xf32>
}
// GREEDY:      channel_norms = 1 : i64, channel_norm_bytes = 512 : i64
// GREEDY:      %[[X:.*]] = tx8be.ChannelNorm %x {direction = true,
// GREEDY-NEXT: %r = tx8be.Relu %[[X]] {dev_info = #tx8be.dev<imm_size = 7, mem_layout = Cx,
// GREEDY-NEXT: %c = tx8be.ChannelNorm %r {direction = false, {{.*}}mem_layout = Tensor,
// GREEDY-NEXT: func.return %c
// OPTIMAL:      channel_norms = 1 : i64, channel_norm_bytes = 512 : i64

// -----

// A constant read in both families: it takes its first reader's family (Cx, for the
// Transpose) and the other reader gets a CN of the constant, free at run time (0 bytes;
// layout-align-opt folds it into a copy of the constant).
func.func @const_both(%x: tensor<1x4x4x5xf32>) -> (tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>) {
  %c = tx8be.Constant {value = dense<2.0> : tensor<1x4x4x5xf32>} : () -> tensor<1x4x4x5xf32>
  %t = tx8be.Transpose %c {perm = array<i64: 0, 1, 2, 3>} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  %a = tx8be.Add %x, %c : (tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  func.return %t, %a : tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>
}
// GREEDY:      channel_norms = 2 : i64, channel_norm_bytes = 320 : i64, const_channel_norms = 1 : i64
// GREEDY:      %c = tx8be.Constant {{.*}}mem_layout = Cx,
// GREEDY-NEXT: %[[C:.*]] = tx8be.ChannelNorm %c {direction = false,
// GREEDY-NEXT: %t = tx8be.Transpose %c
// GREEDY-NEXT: %[[T:.*]] = tx8be.ChannelNorm %t {direction = false,
// GREEDY-NEXT: %a = tx8be.Add %x, %[[C]] {{.*}}mem_layout = Tensor,
// OPTIMAL:      channel_norms = 2 : i64, channel_norm_bytes = 320 : i64, const_channel_norms = 1 : i64

// -----

// Inserted ChannelNorms carry their input's layout_str; a graph input's is the one
// layout-transmit recorded in its `tx8c.layout` argument attribute. layout_str is
// otherwise untouched.
func.func @layout_strs(%x: tensor<1x4x3x5xf32> {tx8c.layout = "NCHW"}) -> tensor<1x4x5x3xf32> {
  %t = tx8be.Transpose %x {perm = array<i64: 0, 1, 3, 2>, layout_str = "Tensor"} : (tensor<1x4x3x5xf32>) -> tensor<1x4x5x3xf32>
  func.return %t : tensor<1x4x5x3xf32>
}
// GREEDY:      %[[X:.*]] = tx8be.ChannelNorm %x {direction = true, layout_str = "NCHW",
// GREEDY-NEXT: %t = tx8be.Transpose %[[X]] {perm = array<i64: 0, 1, 3, 2>, layout_str = "Tensor",
// GREEDY-NEXT: %[[T:.*]] = tx8be.ChannelNorm %t {direction = false, layout_str = "Tensor",
// GREEDY-NEXT: func.return %[[T]]
