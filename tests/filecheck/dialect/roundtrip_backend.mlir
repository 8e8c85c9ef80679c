// RUN: tx8c-opt %s | tx8c-opt | filecheck %s
// RUN: tx8c-opt %s --print-op-generic | tx8c-opt | filecheck %s
// Printing, parsing and printing again gives the same text; the generic form parses too.

// CHECK-LABEL: func.func @constants
func.func @constants() -> (tensor<2x3xf32>, tensor<3xf32>, tensor<1x2xbf16>, tensor<2xf16>, tensor<3xi8>, tensor<i64>, tensor<2xi1>) {
  // CHECK-NEXT: %dense = tx8be.Constant {value = dense<[[1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>, layout_str = "NCHW"} : () -> tensor<2x3xf32>
  // CHECK-NEXT: %splat = tx8be.Constant {value = dense<1.500000e+00> : tensor<3xf32>} : () -> tensor<3xf32>
  // CHECK-NEXT: %bf = tx8be.Constant {value = dense<[[1.500000e+00, -2.000000e+00]]> : tensor<1x2xbf16>} : () -> tensor<1x2xbf16>
  // CHECK-NEXT: %h = tx8be.Constant {value = dense<[2.500000e-01, -8.000000e+00]> : tensor<2xf16>} : () -> tensor<2xf16>
  // CHECK-NEXT: %i = tx8be.Constant {value = dense<[1, -2, 3]> : tensor<3xi8>} : () -> tensor<3xi8>
  // CHECK-NEXT: %scalar = tx8be.Constant {value = dense<7> : tensor<i64>} : () -> tensor<i64>
  // CHECK-NEXT: %b = tx8be.Constant {value = dense<[true, false]> : tensor<2xi1>} : () -> tensor<2xi1>
  %dense = tx8be.Constant {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>, layout_str = "NCHW"} : () -> tensor<2x3xf32>
  %splat = tx8be.Constant {value = dense<1.5> : tensor<3xf32>} : () -> tensor<3xf32>
  %bf = tx8be.Constant {value = dense<[[1.5, -2.0]]> : tensor<1x2xbf16>} : () -> tensor<1x2xbf16>
  %h = tx8be.Constant {value = dense<[0.25, -8.0]> : tensor<2xf16>} : () -> tensor<2xf16>
  %i = tx8be.Constant {value = dense<[1, -2, 3]> : tensor<3xi8>} : () -> tensor<3xi8>
  %scalar = tx8be.Constant {value = dense<7> : tensor<i64>} : () -> tensor<i64>
  %b = tx8be.Constant {value = dense<[true, false]> : tensor<2xi1>} : () -> tensor<2xi1>
  func.return %dense, %splat, %bf, %h, %i, %scalar, %b : tensor<2x3xf32>, tensor<3xf32>, tensor<1x2xbf16>, tensor<2xf16>, tensor<3xi8>, tensor<i64>, tensor<2xi1>
}

// CHECK-LABEL: func.func @load_const
func.func @load_const() -> (tensor<4x8xf32>, tensor<8xbf16>) {
  // CHECK-NEXT: %w = tx8be.LoadConst {const_id = 0 : i64, bypass_codegen = true, layout_str = "OIHW"} : () -> tensor<4x8xf32>
  // CHECK-NEXT: %bias = tx8be.LoadConst {const_id = 12 : i64, bypass_codegen = false} : () -> tensor<8xbf16>
  %w = tx8be.LoadConst {const_id = 0 : i64, bypass_codegen = true, layout_str = "OIHW"} : () -> tensor<4x8xf32>
  %bias = tx8be.LoadConst {const_id = 12 : i64, bypass_codegen = false} : () -> tensor<8xbf16>
  func.return %w, %bias : tensor<4x8xf32>, tensor<8xbf16>
}

// CHECK-LABEL: func.func @movement
func.func @movement(%a: tensor<1x3x4x4xf32>, %n: tensor<2x64xi8>) -> (tensor<1x3x4x4xf32>, tensor<2x64xi8>) {
  // CHECK-NEXT: %to_cx = tx8be.ChannelNorm %a {direction = true} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  // CHECK-NEXT: %to_compact = tx8be.ChannelNorm %to_cx {direction = false, layout_str = "NCHW"} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  // CHECK-NEXT: %ld = tx8be.LoadVar %n {layout_str = "NC"} : (tensor<2x64xi8>) -> tensor<2x64xi8>
  // CHECK-NEXT: %st = tx8be.StoreVar %ld : (tensor<2x64xi8>) -> tensor<2x64xi8>
  %to_cx = tx8be.ChannelNorm %a {direction = true} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %to_compact = tx8be.ChannelNorm %to_cx {direction = false, layout_str = "NCHW"} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %ld = tx8be.LoadVar %n {layout_str = "NC"} : (tensor<2x64xi8>) -> tensor<2x64xi8>
  %st = tx8be.StoreVar %ld : (tensor<2x64xi8>) -> tensor<2x64xi8>
  func.return %to_compact, %st : tensor<1x3x4x4xf32>, tensor<2x64xi8>
}

// Every Group attribute set to a non-default value, a nested group, a group with no
// operands or results, and mixed operand dtypes.
// CHECK-LABEL: func.func @groups
func.func @groups(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %k: tensor<4xi32>) -> (tensor<2x3xf32>, tensor<4xi32>) {
  // CHECK-NEXT:   %g, %g_1 = tx8be.Group(%a, %b, %k) {pipeline_parallel = true, sp_stage_num = 2 : i64, dev_region = array<i64: 4, 4>, spm_alloc_size = 65536 : i64, group_tag = 0 : i64, stream_online_check = array<i64: 1, 0>, stream_offline = array<i64: 2>, need_barrier = false, group_id = 3 : i64, template_id = 1 : i64, layout_str = "NCHW"} : (tensor<2x3xf32>, tensor<3xf32>, tensor<4xi32>) -> (tensor<2x3xf32>, tensor<4xi32>) {
  // CHECK-NEXT:   ^bb0(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %z: tensor<4xi32>):
  // CHECK-NEXT:     %lx = tx8be.LoadVar %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT:     %c = tx8be.LoadConst {const_id = 1 : i64} : () -> tensor<3xf32>
  // CHECK-NEXT:     %inner = tx8be.Group(%lx, %y, %c) {group_tag = 2 : i64, group_id = 4 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32> {
  // CHECK-NEXT:     ^bb0(%p: tensor<2x3xf32>, %q: tensor<3xf32>, %r: tensor<3xf32>):
  // CHECK-NEXT:       %s = tx8be.Add %p, %q : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT:       %t = tx8be.Mul %s, %r : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT:       tx8be.Yield %t : tensor<2x3xf32>
  // CHECK-NEXT:     }
  // CHECK-NEXT:     %out = tx8be.StoreVar %inner : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT:     tx8be.Yield %out, %z : tensor<2x3xf32>, tensor<4xi32>
  // CHECK-NEXT:   }
  // CHECK-NEXT:   tx8be.Group() {group_tag = 1 : i64} : () -> () {
  // CHECK-NEXT:     tx8be.Yield
  // CHECK-NEXT:   }
  %g, %g_1 = tx8be.Group(%a, %b, %k) {pipeline_parallel = true, sp_stage_num = 2 : i64, dev_region = array<i64: 4, 4>, spm_alloc_size = 65536 : i64, group_tag = 0 : i64, stream_online_check = array<i64: 1, 0>, stream_offline = array<i64: 2>, need_barrier = false, group_id = 3 : i64, template_id = 1 : i64, layout_str = "NCHW"} : (tensor<2x3xf32>, tensor<3xf32>, tensor<4xi32>) -> (tensor<2x3xf32>, tensor<4xi32>) {
  ^bb0(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %z: tensor<4xi32>):
    %lx = tx8be.LoadVar %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %c = tx8be.LoadConst {const_id = 1 : i64} : () -> tensor<3xf32>
    %inner = tx8be.Group(%lx, %y, %c) {group_tag = 2 : i64, group_id = 4 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32> {
    ^bb0(%p: tensor<2x3xf32>, %q: tensor<3xf32>, %r: tensor<3xf32>):
      %s = tx8be.Add %p, %q : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
      %t = tx8be.Mul %s, %r : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
      tx8be.Yield %t : tensor<2x3xf32>
    }
    %out = tx8be.StoreVar %inner : (tensor<2x3xf32>) -> tensor<2x3xf32>
    tx8be.Yield %out, %z : tensor<2x3xf32>, tensor<4xi32>
  }
  tx8be.Group() {group_tag = 1 : i64} : () -> () {
    tx8be.Yield
  }
  func.return %g, %g_1 : tensor<2x3xf32>, tensor<4xi32>
}

// The common attributes every op carries: dev_info, chip_parallel, tile_parallel (the
// #tx8be.dev and #tx8be.parallel struct attributes, every field set), on a data op and on
// a group; and the enum attributes as discardable attributes.
// CHECK-LABEL: func.func @common_attributes
func.func @common_attributes(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: %0 = tx8be.LoadVar %a {dev_info = #tx8be.dev<imm_size = 128, mem_layout = NCx, multi_buf_en = true, multi_buf_num = 2, out_shape_buf_idx = [0, 1], temporal_mem_slice = [1, 2, 3], source_type = 1, imm_addr = -4, mem_addr = [4096, 8192]>, chip_parallel = #tx8be.parallel<parallel = DP_TP, is_dp_inner = true, dp_dim_x = 2, dp_dim_y = 3, dp_dim_z = 4, tp_dim_x = 5, tp_dim_y = 6, tp_dim_z = 7, sharding_is_given = true, shape_spatial_sharding = [1, 2]>, tile_parallel = #tx8be.parallel<parallel = TP, is_dp_inner = false, dp_dim_x = 1, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 4, tp_dim_y = 4, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = []>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %1 = tx8be.Group(%0) {dev_info = #tx8be.dev<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>, tile_parallel = #tx8be.parallel<parallel = DP, is_dp_inner = false, dp_dim_x = 16, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 1, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = [16, 1]>} : (tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-NEXT: ^bb0(%x: tensor<2x3xf32>):
  // CHECK-NEXT:   %2 = tx8be.StoreVar %x {dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>, tx8c.layout = #tx8be<layout NTensor>, tx8c.scope = #tx8be<mem_scope "3DDRAM">, tx8c.scope2 = #tx8be<mem_scope SPM>, tx8c.align = #tx8be<align NALIGN>, tx8c.mode = #tx8be<parallel_mode DP>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT:   tx8be.Yield %2 : tensor<2x3xf32>
  // CHECK-NEXT: }
  %0 = tx8be.LoadVar %a {dev_info = #tx8be.dev<imm_size = 128, mem_layout = NCx, multi_buf_en = true, multi_buf_num = 2, out_shape_buf_idx = [0, 1], temporal_mem_slice = [1, 2, 3], source_type = 1, imm_addr = -4, mem_addr = [4096, 8192]>, chip_parallel = #tx8be.parallel<parallel = DP_TP, is_dp_inner = true, dp_dim_x = 2, dp_dim_y = 3, dp_dim_z = 4, tp_dim_x = 5, tp_dim_y = 6, tp_dim_z = 7, sharding_is_given = true, shape_spatial_sharding = [1, 2]>, tile_parallel = #tx8be.parallel<parallel = TP, is_dp_inner = false, dp_dim_x = 1, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 4, tp_dim_y = 4, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = []>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = tx8be.Group(%0) {dev_info = #tx8be.dev<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>, tile_parallel = #tx8be.parallel<parallel = DP, is_dp_inner = false, dp_dim_x = 16, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 1, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = [16, 1]>} : (tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%x: tensor<2x3xf32>):
    %2 = tx8be.StoreVar %x {dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>, tx8c.layout = #tx8be<layout NTensor>, tx8c.scope = #tx8be<mem_scope "3DDRAM">, tx8c.scope2 = #tx8be<mem_scope SPM>, tx8c.align = #tx8be<align NALIGN>, tx8c.mode = #tx8be<parallel_mode DP>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    tx8be.Yield %2 : tensor<2x3xf32>
  }
  func.return %1 : tensor<2x3xf32>
}
