// RUN: tx8c-opt %s --split-input-file -p group-mapping | filecheck %s
// RUN: tx8c-opt %s --split-input-file -p group-mapping{tile-dx=2} | filecheck %s --check-prefix=OPT
// RUN: not tx8c-opt %s --split-input-file -p group-mapping{tile-dy=5} 2>&1 | filecheck %s --check-prefix=ERR
//
// group-mapping (seed 003 GroupMappingPass): every group's dev_region is the module's
// [tx8c.tile_dx, tx8c.tile_dy]; without the attributes, the whole chip (TX8Config mesh
// 4 x 4), written back to the module. Pass options override both.

func.func @whole_chip(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = tx8be.Group(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %n = tx8be.Neg %a : (tensor<4xf32>) -> tensor<4xf32>
    tx8be.Yield %n : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}
// CHECK:       builtin.module attributes {tx8c.tile_dx = 4 : i64, tx8c.tile_dy = 4 : i64}
// CHECK:       tx8be.Group(%x) {dev_region = array<i64: 4, 4>}
// OPT:         builtin.module attributes {tx8c.tile_dx = 2 : i64, tx8c.tile_dy = 4 : i64}
// OPT:         tx8be.Group(%x) {dev_region = array<i64: 2, 4>}
// ERR:         error: group-mapping{tile-dy=5}: a group's tile region must be 1 to 4 tiles

// -----

builtin.module attributes {tx8c.tile_dx = 2 : i64, tx8c.tile_dy = 1 : i64} {
  func.func @from_module(%x: tensor<4xf32>) -> tensor<4xf32> {
    %y = tx8be.Group(%x) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%a: tensor<4xf32>):
      %n = tx8be.Neg %a : (tensor<4xf32>) -> tensor<4xf32>
      tx8be.Yield %n : tensor<4xf32>
    }
    %z = tx8be.Group(%y) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%b: tensor<4xf32>):
      %m = tx8be.Abs %b : (tensor<4xf32>) -> tensor<4xf32>
      tx8be.Yield %m : tensor<4xf32>
    }
    func.return %z : tensor<4xf32>
  }
}
// CHECK:       builtin.module attributes {tx8c.tile_dx = 2 : i64, tx8c.tile_dy = 1 : i64}
// CHECK:       tx8be.Group(%x) {dev_region = array<i64: 2, 1>}
// CHECK:       tx8be.Group(%y) {dev_region = array<i64: 2, 1>}
// OPT:         builtin.module attributes {tx8c.tile_dx = 2 : i64, tx8c.tile_dy = 1 : i64}
