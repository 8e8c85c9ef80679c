// RUN: tx8c-opt %s -p canonicalize-cast | filecheck %s
// canonicalize-cast removes casts to the operand's own type and merges a cast of a cast
// when the chain gives the same bits as one cast (see the table in canonicalize_cast.py):
// the first cast is exact (widening), or both are integer truncations.

func.func @merged(%h: tensor<4xf16>, %b: tensor<4xi8>, %l: tensor<4xi64>, %x: tensor<4xf32>)
    -> (tensor<4xf16>, tensor<4xf32>, tensor<4xi8>, tensor<4xi8>, tensor<4xf32>) {
  %up = tx8be.Cast %h {to = "f32"} : (tensor<4xf16>) -> tensor<4xf32>
  %back = tx8be.Cast %up {to = "f16"} : (tensor<4xf32>) -> tensor<4xf16>
  %w = tx8be.Cast %b {to = "i32"} : (tensor<4xi8>) -> tensor<4xi32>
  %f = tx8be.Cast %w {to = "f32"} : (tensor<4xi32>) -> tensor<4xf32>
  %t32 = tx8be.Cast %l {to = "i32"} : (tensor<4xi64>) -> tensor<4xi32>
  %t8 = tx8be.Cast %t32 {to = "i8"} : (tensor<4xi32>) -> tensor<4xi8>
  %w64 = tx8be.Cast %b {to = "i64"} : (tensor<4xi8>) -> tensor<4xi64>
  %n8 = tx8be.Cast %w64 {to = "i8"} : (tensor<4xi64>) -> tensor<4xi8>
  %same = tx8be.Cast %x {to = "f32"} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %back, %f, %t8, %n8, %same : tensor<4xf16>, tensor<4xf32>, tensor<4xi8>, tensor<4xi8>, tensor<4xf32>
}
// CHECK-LABEL: func.func @merged
// CHECK-NEXT:    %f = tx8be.Cast %b {to = "f32"} : (tensor<4xi8>) -> tensor<4xf32>
// CHECK-NEXT:    %t8 = tx8be.Cast %l {to = "i8"} : (tensor<4xi64>) -> tensor<4xi8>
// CHECK-NEXT:    func.return %h, %f, %t8, %b, %x

// A chain of three collapses in the one walk: bf16 -> f32 -> f32 -> bf16 is the input.
func.func @long(%g: tensor<4xbf16>) -> tensor<4xbf16> {
  %a = tx8be.Cast %g {to = "f32"} : (tensor<4xbf16>) -> tensor<4xf32>
  %b = tx8be.Cast %a {to = "f32"} : (tensor<4xf32>) -> tensor<4xf32>
  %c = tx8be.Cast %b {to = "bf16"} : (tensor<4xf32>) -> tensor<4xbf16>
  func.return %c : tensor<4xbf16>
}
// CHECK-LABEL: func.func @long
// CHECK-NEXT:    func.return %g

// Not merged: rounding (f32 -> f16 -> f32), truncation (f32 -> i32 -> f32), a bool in
// the middle, a narrowing followed by a widening. An inner cast with another user stays.
func.func @kept(%x: tensor<4xf32>, %i: tensor<4xi32>, %h: tensor<4xf16>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi64>, tensor<4xf32>, tensor<4xf32>) {
  %r = tx8be.Cast %x {to = "f16"} : (tensor<4xf32>) -> tensor<4xf16>
  %r2 = tx8be.Cast %r {to = "f32"} : (tensor<4xf16>) -> tensor<4xf32>
  %t = tx8be.Cast %x {to = "i32"} : (tensor<4xf32>) -> tensor<4xi32>
  %t2 = tx8be.Cast %t {to = "f32"} : (tensor<4xi32>) -> tensor<4xf32>
  %k = tx8be.Cast %x {to = "i1"} : (tensor<4xf32>) -> tensor<4xi1>
  %k2 = tx8be.Cast %k {to = "f32"} : (tensor<4xi1>) -> tensor<4xf32>
  %n = tx8be.Cast %i {to = "i8"} : (tensor<4xi32>) -> tensor<4xi8>
  %n2 = tx8be.Cast %n {to = "i64"} : (tensor<4xi8>) -> tensor<4xi64>
  %up = tx8be.Cast %h {to = "f32"} : (tensor<4xf16>) -> tensor<4xf32>
  %e = tx8be.Exp %up : (tensor<4xf32>) -> tensor<4xf32>
  %back = tx8be.Cast %up {to = "f16"} : (tensor<4xf32>) -> tensor<4xf16>
  %u = tx8be.Cast %back {to = "f32"} : (tensor<4xf16>) -> tensor<4xf32>
  func.return %r2, %t2, %k2, %n2, %e, %u : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi64>, tensor<4xf32>, tensor<4xf32>
}
// CHECK-LABEL: func.func @kept
// CHECK-NEXT:    %r = tx8be.Cast %x {to = "f16"}
// CHECK-NEXT:    %r2 = tx8be.Cast %r {to = "f32"}
// CHECK-NEXT:    %t = tx8be.Cast %x {to = "i32"}
// CHECK-NEXT:    %t2 = tx8be.Cast %t {to = "f32"}
// CHECK-NEXT:    %k = tx8be.Cast %x {to = "i1"}
// CHECK-NEXT:    %k2 = tx8be.Cast %k {to = "f32"}
// CHECK-NEXT:    %n = tx8be.Cast %i {to = "i8"}
// CHECK-NEXT:    %n2 = tx8be.Cast %n {to = "i64"}
// CHECK-NEXT:    %up = tx8be.Cast %h {to = "f32"}
// CHECK-NEXT:    %e = tx8be.Exp %up
// CHECK-NEXT:    %u = tx8be.Cast %h {to = "f32"}
// CHECK-NEXT:    func.return %r2, %t2, %k2, %n2, %e, %u
