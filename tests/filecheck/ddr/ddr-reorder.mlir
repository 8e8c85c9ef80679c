// RUN: tx8c-opt %s -p ddr-alloc,ddr-reorder | filecheck %s
// RUN: not tx8c-opt %s -p ddr-reorder 2>&1 | filecheck %s --check-prefix=ERR
//
// ddr-reorder (opt_ddr): the variables start on 4096-byte DDR banks. The chain of
// ddr-alloc.mlir with 400-byte tensors: two live at once take 2 x 512 bytes at the
// default 256-byte alignment, 2 x 4096 on banks; the 7168 bytes more are reported.

func.func @main(%x: tensor<1x100xf32>) -> tensor<1x100xf32> {
  %a = tx8be.Group(%x) {group_id = 0 : i64, group_tag = 0 : i64} : (tensor<1x100xf32>) -> tensor<1x100xf32> {
  ^bb0(%i: tensor<1x100xf32>):
    %l = tx8be.LoadVar %i : (tensor<1x100xf32>) -> tensor<1x100xf32>
    %r = tx8be.Relu %l : (tensor<1x100xf32>) -> tensor<1x100xf32>
    %s = tx8be.StoreVar %r : (tensor<1x100xf32>) -> tensor<1x100xf32>
    tx8be.Yield %s : tensor<1x100xf32>
  }
  %b = tx8be.Group(%a) {group_id = 1 : i64, group_tag = 0 : i64} : (tensor<1x100xf32>) -> tensor<1x100xf32> {
  ^bb0(%i: tensor<1x100xf32>):
    %l = tx8be.LoadVar %i : (tensor<1x100xf32>) -> tensor<1x100xf32>
    %r = tx8be.Relu %l : (tensor<1x100xf32>) -> tensor<1x100xf32>
    %s = tx8be.StoreVar %r : (tensor<1x100xf32>) -> tensor<1x100xf32>
    tx8be.Yield %s : tensor<1x100xf32>
  }
  %c = tx8be.Group(%b) {group_id = 2 : i64, group_tag = 0 : i64} : (tensor<1x100xf32>) -> tensor<1x100xf32> {
  ^bb0(%i: tensor<1x100xf32>):
    %l = tx8be.LoadVar %i : (tensor<1x100xf32>) -> tensor<1x100xf32>
    %r = tx8be.Relu %l : (tensor<1x100xf32>) -> tensor<1x100xf32>
    %s = tx8be.StoreVar %r : (tensor<1x100xf32>) -> tensor<1x100xf32>
    tx8be.Yield %s : tensor<1x100xf32>
  }
  func.return %c : tensor<1x100xf32>
}
// CHECK: builtin.module attributes {tx8c.ddr = "{
// CHECK-SAME: \22align\22:4096,\22constants_bytes\22:0,\22lower_bound\22:8192,
// CHECK-SAME: \22offsets\22:{\22g0.0\22:{{0|4096}},\22g1.0\22:{{0|4096}},\22g2.0\22:{{0|4096}},\22in0\22:{{0|4096}}},
// CHECK-SAME: \22opt_ddr\22:true,{{.*}}\22peak\22:8192,\22reorder_bytes\22:7168,\22total_bytes\22:8192,

// ERR: ddr-reorder needs the DDR allocation of ddr-alloc; run ddr-alloc first
