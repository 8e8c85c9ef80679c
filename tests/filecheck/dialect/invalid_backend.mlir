// RUN: tx8c-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s
// Backend ops that break their rules are rejected with a message naming the op and the rule.

func.func @constant_type(%a: tensor<3xf32>) -> tensor<3xf16> {
  %0 = tx8be.Constant {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf16>
  func.return %0 : tensor<3xf16>
}
// CHECK: 'tx8be.Constant' op result type tensor<3xf16> must equal the type of value, tensor<3xf32>

// -----

func.func @constant_shape() -> tensor<2x3xf32> {
  %0 = tx8be.Constant {value = dense<1.0> : tensor<3xf32>} : () -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: 'tx8be.Constant' op result type tensor<2x3xf32> must equal the type of value, tensor<3xf32>

// -----

func.func @constant_operand(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = tx8be.Constant %a {value = dense<1.0> : tensor<3xf32>} : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
// CHECK: 'tx8be.Constant' op expects 0 operand(s) (), got 1

// -----

func.func @load_const_negative() -> tensor<3xf32> {
  %0 = tx8be.LoadConst {const_id = -1 : i64} : () -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
// CHECK: 'tx8be.LoadConst' op const_id must be >= 0, got -1

// -----

func.func @load_const_no_id() -> tensor<3xf32> {
  %0 = tx8be.LoadConst : () -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
// CHECK: attribute 'const_id' expected in operation 'tx8be.LoadConst'

// -----

func.func @load_const_bypass() -> tensor<3xf32> {
  %0 = tx8be.LoadConst {const_id = 0 : i64, bypass_codegen = 1 : i64} : () -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
// CHECK: 'tx8be.LoadConst' op bypass_codegen must be a bool (true or false), got 1 : i64

// -----

func.func @load_const_no_result() {
  tx8be.LoadConst {const_id = 0 : i64} : () -> ()
  func.return
}
// CHECK: 'tx8be.LoadConst' op needs its result type given explicitly (the type of the constant it loads)

// -----

func.func @channel_norm_no_direction(%a: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %0 = tx8be.ChannelNorm %a : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  func.return %0 : tensor<1x3x4x4xf32>
}
// CHECK: attribute 'direction' expected in operation 'tx8be.ChannelNorm'

// -----

func.func @channel_norm_direction(%a: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %0 = tx8be.ChannelNorm %a {direction = 1 : i64} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  func.return %0 : tensor<1x3x4x4xf32>
}
// CHECK: 'tx8be.ChannelNorm' op direction must be a bool (true or false), got 1 : i64

// -----

func.func @channel_norm_result(%a: tensor<1x3x4x4xf32>) -> tensor<1x4x4x3xf32> {
  %0 = tx8be.ChannelNorm %a {direction = true} : (tensor<1x3x4x4xf32>) -> tensor<1x4x4x3xf32>
  func.return %0 : tensor<1x4x4x3xf32>
}
// CHECK: 'tx8be.ChannelNorm' op result #0 has type tensor<1x4x4x3xf32> but its operands and attributes give tensor<1x3x4x4xf32>

// -----

func.func @load_var_operands(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.LoadVar %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: 'tx8be.LoadVar' op expects 1 operand(s) (input), got 2

// -----

func.func @store_var_result(%a: tensor<2x3xf32>) -> tensor<2x3xf16> {
  %0 = tx8be.StoreVar %a : (tensor<2x3xf32>) -> tensor<2x3xf16>
  func.return %0 : tensor<2x3xf16>
}
// CHECK: 'tx8be.StoreVar' op result #0 has type tensor<2x3xf16> but its operands and attributes give tensor<2x3xf32>

// -----

func.func @group_arg_count(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.Group(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> {
  ^bb0(%x: tensor<2x3xf32>):
    tx8be.Yield %x : tensor<2x3xf32>
  }
  func.return %0 : tensor<2x3xf32>
}
// CHECK: 'tx8be.Group' op body has 1 argument(s) but the group has 2 operand(s); they must correspond one to one

// -----

func.func @group_arg_type(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.Group(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%x: tensor<3x2xf32>):
    %1 = tx8be.Relu %x : (tensor<3x2xf32>) -> tensor<3x2xf32>
    tx8be.Yield %1 : tensor<3x2xf32>
  }
  func.return %0 : tensor<2x3xf32>
}
// CHECK: 'tx8be.Group' op body argument #0 has type tensor<3x2xf32> but operand #0 has type tensor<2x3xf32>

// -----

func.func @yield_type(%a: tensor<2x3xf32>) -> tensor<2x3xf16> {
  %0 = tx8be.Group(%a) : (tensor<2x3xf32>) -> tensor<2x3xf16> {
  ^bb0(%x: tensor<2x3xf32>):
    tx8be.Yield %x : tensor<2x3xf32>
  }
  func.return %0 : tensor<2x3xf16>
}
// CHECK: 'tx8be.Group' op tx8be.Yield operand #0 has type tensor<2x3xf32> but result #0 has type tensor<2x3xf16>

// -----

func.func @yield_count(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.Group(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%x: tensor<2x3xf32>):
    tx8be.Yield %x, %x : tensor<2x3xf32>, tensor<2x3xf32>
  }
  func.return %0 : tensor<2x3xf32>
}
// CHECK: 'tx8be.Group' op tx8be.Yield returns 2 value(s) but the group has 1 result(s)

// -----

func.func @group_no_yield(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.Group(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%x: tensor<2x3xf32>):
    %1 = tx8be.Relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  }
  func.return %0 : tensor<2x3xf32>
}
// CHECK: Operation tx8be.Relu terminates block in single-block region but is not a terminator

// -----

func.func @group_wrong_terminator(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.Group(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%x: tensor<2x3xf32>):
    func.return %x : tensor<2x3xf32>
  }
  func.return %0 : tensor<2x3xf32>
}
// CHECK: 'func.return' expects parent op 'func.func'

// -----

func.func @group_uses_outside_value(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.Group(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%x: tensor<2x3xf32>):
    %1 = tx8be.Relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
    tx8be.Yield %1 : tensor<2x3xf32>
  }
  func.return %0 : tensor<2x3xf32>
}
// CHECK: Operation using value defined out of its IsolatedFromAbove parent: ReluOp(%0 = tx8be.Relu %a

// -----

func.func @yield_outside_group(%a: tensor<2x3xf32>) {
  tx8be.Yield %a : tensor<2x3xf32>
}
// CHECK: 'tx8be.Yield' expects parent op 'tx8be.Group'

// -----

func.func @group_tag() {
  tx8be.Group() {group_tag = 3 : i64} : () -> () {
    tx8be.Yield
  }
  func.return
}
// CHECK: 'tx8be.Group' op group_tag must be 0 (slice), 1 (split nht) or 2 (no slicing), got 3

// -----

func.func @spm_alloc_size() {
  tx8be.Group() {spm_alloc_size = -1 : i64} : () -> () {
    tx8be.Yield
  }
  func.return
}
// CHECK: 'tx8be.Group' op spm_alloc_size must be in [0, 4294967295], got -1

// -----

func.func @dev_region() {
  tx8be.Group() {dev_region = array<i64: 4>} : () -> () {
    tx8be.Yield
  }
  func.return
}
// CHECK: 'tx8be.Group' op dev_region must be [x_dim, y_dim] with both >= 1, got [4]

// -----

func.func @sp_stage_num() {
  tx8be.Group() {sp_stage_num = 0 : i64} : () -> () {
    tx8be.Yield
  }
  func.return
}
// CHECK: 'tx8be.Group' op sp_stage_num must be >= 1, got 0

// -----

func.func @need_barrier() {
  tx8be.Group() {need_barrier = 0 : i64} : () -> () {
    tx8be.Yield
  }
  func.return
}
// CHECK: 'tx8be.Group' op need_barrier must be a bool (true or false), got 0 : i64

// -----

func.func @dev_attr_range(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.LoadVar %a {dev_info = #tx8be.dev<imm_size = -1, mem_layout = Cx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: tx8be.dev: field 'imm_size' = -1 is out of range [0, 18446744073709551615]

// -----

func.func @dev_attr_i32_range(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.StoreVar %a {dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx, multi_buf_en = false, multi_buf_num = 2147483648, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: tx8be.dev: field 'multi_buf_num' = 2147483648 is out of range [-2147483648, 2147483647]

// -----

func.func @dev_attr_order(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.LoadVar %a {dev_info = #tx8be.dev<mem_layout = Cx, imm_size = 0, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: Expected 'imm_size' in tx8be.dev (fields in this order)

// -----

func.func @parallel_attr_order(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.LoadVar %a {tile_parallel = #tx8be.parallel<is_dp_inner = false, parallel = DP, dp_dim_x = 1, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 1, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = []>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: Expected 'parallel' in tx8be.parallel (fields in this order)

// -----

func.func @parallel_attr_range(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.LoadVar %a {chip_parallel = #tx8be.parallel<parallel = DP, is_dp_inner = false, dp_dim_x = 4294967296, dp_dim_y = 1, dp_dim_z = 1, tp_dim_x = 1, tp_dim_y = 1, tp_dim_z = 1, sharding_is_given = false, shape_spatial_sharding = []>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: tx8be.parallel: field 'dp_dim_x' = 4294967296 is out of range [-2147483648, 2147483647]
