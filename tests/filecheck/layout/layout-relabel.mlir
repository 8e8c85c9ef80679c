// RUN: tx8c-opt %s -p layout-relabel | filecheck %s
// RUN: tx8c-opt %s -p layout-relabel | tx8c-opt -p layout-relabel | filecheck %s --check-prefix=AGAIN
//
// layout-relabel (issue 15): after layout-align-to-npu, a Reshape/Transpose whose bytes in
// its family (dev_info) are its operand's bytes becomes a tx8be.Relabel: it moves nothing.
// A compact Reshape always is one; an aligned one when the channel blocks line up. The
// rest move bytes: the statistics count them (bytes each writes). Ops without dev_info
// (family not decided) are left alone. A second run makes no relabel.
// AGAIN: relabels_made = 0 : i64, relabels = 3 : i64

// CHECK:      "layout-relabel" = {relabels_made = 3 : i64, relabels = 3 : i64, reshapes = 1 : i64, reshape_bytes = 4096 : i64, transposes = 1 : i64, transpose_bytes = 576 : i64}
// compact [1,8,128] -> [8,128]: row-major bytes, a relabel
// CHECK:      %a = tx8be.Relabel %x {shape = array<i64: 8, 128>, dev_info = #tx8be.dev<imm_size = 0, mem_layout = NTensor,
// the same aligned: Cx [1,8,128] holds blocks of 64 channels, NCx [8,128] whole rows
// CHECK-NEXT: %b = tx8be.Reshape %x {shape = array<i64: 8, 128>, dev_info = #tx8be.dev<imm_size = 0, mem_layout = NCx,
// CHECK-NEXT: %c = tx8be.Relabel %x {shape = array<i64: 1, 1, 8, 128>, dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx,
// NCHW -> NHWC moves elements; a unit dim inserted into its result does not
// CHECK-NEXT: %t = tx8be.Transpose %y {perm = array<i64: 0, 2, 3, 1>,
// CHECK-NEXT: %d = tx8be.Relabel %t {shape = array<i64: 1, 6, 1, 6, 4>, dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx,
// no dev_info: left alone
// CHECK-NEXT: %u = tx8be.Reshape %y {shape = array<i64: 1, 6, 6, 4>} : (tensor<1x4x6x6xf32>) -> tensor<1x6x6x4xf32>
func.func @family_decides(%x: tensor<1x8x128xf32>, %y: tensor<1x4x6x6xf32>) -> (tensor<8x128xf32>, tensor<8x128xf32>, tensor<1x1x8x128xf32>, tensor<1x6x1x6x4xf32>, tensor<1x6x6x4xf32>) {
  %a = tx8be.Reshape %x {shape = array<i64: 8, 128>, dev_info = #tx8be.dev<imm_size = 0, mem_layout = NTensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>} : (tensor<1x8x128xf32>) -> tensor<8x128xf32>
  %b = tx8be.Reshape %x {shape = array<i64: 8, 128>, dev_info = #tx8be.dev<imm_size = 0, mem_layout = NCx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>} : (tensor<1x8x128xf32>) -> tensor<8x128xf32>
  %c = tx8be.Reshape %x {shape = array<i64: 1, 1, 8, 128>, dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>} : (tensor<1x8x128xf32>) -> tensor<1x1x8x128xf32>
  %t = tx8be.Transpose %y {perm = array<i64: 0, 2, 3, 1>, dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>} : (tensor<1x4x6x6xf32>) -> tensor<1x6x6x4xf32>
  %d = tx8be.Reshape %t {shape = array<i64: 1, 6, 1, 6, 4>, dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>} : (tensor<1x6x6x4xf32>) -> tensor<1x6x1x6x4xf32>
  %u = tx8be.Reshape %y {shape = array<i64: 1, 6, 6, 4>} : (tensor<1x4x6x6xf32>) -> tensor<1x6x6x4xf32>
  func.return %a, %b, %c, %d, %u : tensor<8x128xf32>, tensor<8x128xf32>, tensor<1x1x8x128xf32>, tensor<1x6x1x6x4xf32>, tensor<1x6x6x4xf32>
}
