// RUN: tx8c-opt %s --split-input-file -p regroup-by-cost | filecheck %s
// RUN: tx8c-opt %s --split-input-file -p regroup-by-cost | tx8c-opt --split-input-file > /dev/null
//
// regroup-by-cost: adjacent groups become one where the slicing search estimates the
// merged group cheaper than its parts; a value passed between them then stays in SPM.

// Two elementwise groups in a chain: merged, the Relu's result is no longer stored and
// loaded back, and %x, read by both, is loaded once.
func.func @chain(%x: tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32> {
  %r = tx8be.Group(%x) {group_id = 0 : i64, group_tag = 0 : i64} : (tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32> {
  ^bb0(%a: tensor<1x32x28x28xf32>):
    %la = tx8be.LoadVar %a : (tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32>
    %y = tx8be.Relu %la : (tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32>
    %sy = tx8be.StoreVar %y : (tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32>
    tx8be.Yield %sy : tensor<1x32x28x28xf32>
  }
  %s = tx8be.Group(%r, %x) {group_id = 1 : i64, group_tag = 0 : i64} : (tensor<1x32x28x28xf32>, tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32> {
  ^bb0(%b: tensor<1x32x28x28xf32>, %c: tensor<1x32x28x28xf32>):
    %lb = tx8be.LoadVar %b : (tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32>
    %lc = tx8be.LoadVar %c : (tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32>
    %z = tx8be.Add %lb, %lc : (tensor<1x32x28x28xf32>, tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32>
    %sz = tx8be.StoreVar %z : (tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32>
    tx8be.Yield %sz : tensor<1x32x28x28xf32>
  }
  func.return %s : tensor<1x32x28x28xf32>
}
// CHECK-LABEL: func.func @chain
// CHECK:         %{{.*}} = tx8be.Group(%x) {group_id = 0 : i64, group_tag = 0 : i64}
// CHECK-NEXT:    ^bb0(%x{{.*}}: tensor<1x32x28x28xf32>):
// CHECK-NEXT:      %[[L:.*]] = tx8be.LoadVar %x
// CHECK-NEXT:      %[[Y:.*]] = tx8be.Relu %[[L]]
// CHECK-NEXT:      %[[Z:.*]] = tx8be.Add %[[Y]], %[[L]]
// CHECK-NEXT:      %[[S:.*]] = tx8be.StoreVar %[[Z]]
// CHECK-NEXT:      tx8be.Yield %[[S]]
// CHECK-NOT:     tx8be.Group
// CHECK:         func.return

// -----

// The Relu's result is returned as well: the merged group keeps its StoreVar and has
// two results.
func.func @side_output(%x: tensor<1x32x28x28xf32>) -> (tensor<1x32x28x28xf32>, tensor<1x32x28x28xf32>) {
  %r = tx8be.Group(%x) {group_id = 0 : i64, group_tag = 0 : i64} : (tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32> {
  ^bb0(%a: tensor<1x32x28x28xf32>):
    %la = tx8be.LoadVar %a : (tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32>
    %y = tx8be.Relu %la : (tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32>
    %sy = tx8be.StoreVar %y : (tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32>
    tx8be.Yield %sy : tensor<1x32x28x28xf32>
  }
  %s = tx8be.Group(%r) {group_id = 1 : i64, group_tag = 0 : i64} : (tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32> {
  ^bb0(%b: tensor<1x32x28x28xf32>):
    %lb = tx8be.LoadVar %b : (tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32>
    %z = tx8be.Sigmoid %lb : (tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32>
    %sz = tx8be.StoreVar %z : (tensor<1x32x28x28xf32>) -> tensor<1x32x28x28xf32>
    tx8be.Yield %sz : tensor<1x32x28x28xf32>
  }
  func.return %r, %s : tensor<1x32x28x28xf32>, tensor<1x32x28x28xf32>
}
// CHECK-LABEL: func.func @side_output
// CHECK:         %[[R:.*]], %[[S:.*]] = tx8be.Group(%x)
// CHECK:           %[[Y:.*]] = tx8be.Relu
// CHECK-NEXT:      %[[Z:.*]] = tx8be.Sigmoid %[[Y]]
// CHECK-NEXT:      %[[SY:.*]] = tx8be.StoreVar %[[Y]]
// CHECK-NEXT:      %[[SZ:.*]] = tx8be.StoreVar %[[Z]]
// CHECK-NEXT:      tx8be.Yield %[[SY]], %[[SZ]]
// CHECK:         func.return %[[R]], %[[S]]

// -----

// Kept apart: the Gather reads its table straight from DDR (no LoadVar), so the first
// group's result must stay stored.
func.func @kept_apart(%x: tensor<64x256xf32>, %i: tensor<8xi32>) -> tensor<8x256xf32> {
  %r = tx8be.Group(%x) {group_id = 0 : i64, group_tag = 0 : i64} : (tensor<64x256xf32>) -> tensor<64x256xf32> {
  ^bb0(%a: tensor<64x256xf32>):
    %la = tx8be.LoadVar %a : (tensor<64x256xf32>) -> tensor<64x256xf32>
    %y = tx8be.Relu %la : (tensor<64x256xf32>) -> tensor<64x256xf32>
    %sy = tx8be.StoreVar %y : (tensor<64x256xf32>) -> tensor<64x256xf32>
    tx8be.Yield %sy : tensor<64x256xf32>
  }
  %g = tx8be.Group(%r, %i) {group_id = 1 : i64, group_tag = 0 : i64} : (tensor<64x256xf32>, tensor<8xi32>) -> tensor<8x256xf32> {
  ^bb0(%t: tensor<64x256xf32>, %j: tensor<8xi32>):
    %lj = tx8be.LoadVar %j : (tensor<8xi32>) -> tensor<8xi32>
    %gg = tx8be.Gather %t, %lj : (tensor<64x256xf32>, tensor<8xi32>) -> tensor<8x256xf32>
    %sg = tx8be.StoreVar %gg : (tensor<8x256xf32>) -> tensor<8x256xf32>
    tx8be.Yield %sg : tensor<8x256xf32>
  }
  func.return %g : tensor<8x256xf32>
}
// CHECK-LABEL: func.func @kept_apart
// CHECK:         %[[R:.*]] = tx8be.Group(%x) {group_id = 0 : i64, group_tag = 0 : i64}
// CHECK:         tx8be.Group(%[[R]], %i) {group_id = 1 : i64, group_tag = 0 : i64}
// CHECK:           tx8be.Gather
