// RUN: tx8c-opt %s --split-input-file --verify-diagnostics | filecheck %s
// Ops that break their rules are rejected with a message naming the op and the rule.

func.func @resize_mode(%x: tensor<1x3x4x6xf32>) -> tensor<1x3x8x12xf32> {
  %0 = tx8be.Resize %x {mode = "cubic", sizes = array<i64: 1, 3, 8, 12>} : (tensor<1x3x4x6xf32>) -> tensor<1x3x8x12xf32>
  func.return %0 : tensor<1x3x8x12xf32>
}
// CHECK: 'tx8be.Resize' op mode must be one of nearest, bilinear, bicubic, got "cubic"

// -----

func.func @resize_coordinate_mode(%x: tensor<1x3x4x6xf32>) -> tensor<1x3x8x12xf32> {
  %0 = tx8be.Resize %x {mode = "nearest", sizes = array<i64: 1, 3, 8, 12>, coordinate_transformation_mode = "tf_half_pixel_for_nn"} : (tensor<1x3x4x6xf32>) -> tensor<1x3x8x12xf32>
  func.return %0 : tensor<1x3x8x12xf32>
}
// CHECK: 'tx8be.Resize' op coordinate_transformation_mode must be one of half_pixel, asymmetric, align_corners, pytorch_half_pixel, half_pixel_symmetric, tf_crop_and_resize, got "tf_half_pixel_for_nn"

// -----

func.func @resize_crop_needs_roi(%x: tensor<1x3x4x6xf32>) -> tensor<1x3x8x12xf32> {
  %0 = tx8be.Resize %x {mode = "nearest", sizes = array<i64: 1, 3, 8, 12>, coordinate_transformation_mode = "tf_crop_and_resize"} : (tensor<1x3x4x6xf32>) -> tensor<1x3x8x12xf32>
  func.return %0 : tensor<1x3x8x12xf32>
}
// CHECK: 'tx8be.Resize' op coordinate_transformation_mode "tf_crop_and_resize" needs roi

// -----

func.func @resize_roi_without_crop(%x: tensor<1x3x4x6xf32>) -> tensor<1x3x8x12xf32> {
  %0 = tx8be.Resize %x {mode = "nearest", sizes = array<i64: 1, 3, 8, 12>, roi = array<f64: 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0>} : (tensor<1x3x4x6xf32>) -> tensor<1x3x8x12xf32>
  func.return %0 : tensor<1x3x8x12xf32>
}
// CHECK: 'tx8be.Resize' op roi applies to coordinate_transformation_mode "tf_crop_and_resize" only

// -----

func.func @resize_roi_length(%x: tensor<1x3x4x6xf32>) -> tensor<1x3x8x12xf32> {
  %0 = tx8be.Resize %x {mode = "nearest", sizes = array<i64: 1, 3, 8, 12>, coordinate_transformation_mode = "tf_crop_and_resize", roi = array<f64: 0.1, 0.2, 0.9, 0.8>} : (tensor<1x3x4x6xf32>) -> tensor<1x3x8x12xf32>
  func.return %0 : tensor<1x3x8x12xf32>
}
// CHECK: 'tx8be.Resize' op roi [0.1, 0.2, 0.9, 0.8] must have two values per input axis, starts then ends (8)

// -----

func.func @resize_bicubic_roi_channels(%x: tensor<1x3x4x6xf32>) -> tensor<1x3x8x12xf32> {
  %0 = tx8be.Resize %x {mode = "bicubic", sizes = array<i64: 1, 3, 8, 12>, coordinate_transformation_mode = "tf_crop_and_resize", roi = array<f64: 0.0, 0.5, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0>} : (tensor<1x3x4x6xf32>) -> tensor<1x3x8x12xf32>
  func.return %0 : tensor<1x3x8x12xf32>
}
// CHECK: 'tx8be.Resize' op mode "bicubic" resizes H and W only: roi [0.0, 0.5, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0] must be [0, 1] on N and C

// -----

func.func @resize_bicubic_rank(%x: tensor<3x4x6xf32>) -> tensor<3x8x12xf32> {
  %0 = tx8be.Resize %x {mode = "bicubic", sizes = array<i64: 3, 8, 12>} : (tensor<3x4x6xf32>) -> tensor<3x8x12xf32>
  func.return %0 : tensor<3x8x12xf32>
}
// CHECK: 'tx8be.Resize' op mode "bicubic" needs a rank-4 NCHW input, got rank 3

// -----

func.func @resize_bicubic_int(%x: tensor<1x3x4x6xi8>) -> tensor<1x3x8x12xi8> {
  %0 = tx8be.Resize %x {mode = "bicubic", sizes = array<i64: 1, 3, 8, 12>} : (tensor<1x3x4x6xi8>) -> tensor<1x3x8x12xi8>
  func.return %0 : tensor<1x3x8x12xi8>
}
// CHECK: 'tx8be.Resize' op mode "bicubic" needs a float element type, got i8

// -----

func.func @resize_nearest_mode(%x: tensor<1x3x4x6xf32>) -> tensor<1x3x8x12xf32> {
  %0 = tx8be.Resize %x {mode = "nearest", sizes = array<i64: 1, 3, 8, 12>, nearest_mode = "round"} : (tensor<1x3x4x6xf32>) -> tensor<1x3x8x12xf32>
  func.return %0 : tensor<1x3x8x12xf32>
}
// CHECK: 'tx8be.Resize' op nearest_mode must be one of round_prefer_floor, round_prefer_ceil, floor, ceil, got "round"

// -----

func.func @resize_sizes_length(%x: tensor<1x3x4x6xf32>) -> tensor<8x12xf32> {
  %0 = tx8be.Resize %x {mode = "nearest", sizes = array<i64: 8, 12>} : (tensor<1x3x4x6xf32>) -> tensor<8x12xf32>
  func.return %0 : tensor<8x12xf32>
}
// CHECK: 'tx8be.Resize' op sizes [8, 12] must have one value per input axis (4)

// -----

func.func @resize_sizes_positive(%x: tensor<1x3x4x6xf32>) -> tensor<1x3x0x12xf32> {
  %0 = tx8be.Resize %x {mode = "nearest", sizes = array<i64: 1, 3, 0, 12>} : (tensor<1x3x4x6xf32>) -> tensor<1x3x0x12xf32>
  func.return %0 : tensor<1x3x0x12xf32>
}
// CHECK: 'tx8be.Resize' op sizes must be positive, got [1, 3, 0, 12]

// -----

func.func @resize_bilinear_rank(%x: tensor<3x4x6xf32>) -> tensor<3x8x12xf32> {
  %0 = tx8be.Resize %x {mode = "bilinear", sizes = array<i64: 3, 8, 12>} : (tensor<3x4x6xf32>) -> tensor<3x8x12xf32>
  func.return %0 : tensor<3x8x12xf32>
}
// CHECK: 'tx8be.Resize' op mode "bilinear" needs a rank-4 NCHW input, got rank 3

// -----

func.func @resize_bilinear_channels(%x: tensor<1x3x4x6xf32>) -> tensor<1x6x8x12xf32> {
  %0 = tx8be.Resize %x {mode = "bilinear", sizes = array<i64: 1, 6, 8, 12>} : (tensor<1x3x4x6xf32>) -> tensor<1x6x8x12xf32>
  func.return %0 : tensor<1x6x8x12xf32>
}
// CHECK: 'tx8be.Resize' op mode "bilinear" resizes H and W only: sizes [1, 6, 8, 12] must keep N and C of the NCHW input [1, 3, 4, 6]

// -----

func.func @resize_bilinear_int(%x: tensor<1x3x4x6xi32>) -> tensor<1x3x8x12xi32> {
  %0 = tx8be.Resize %x {mode = "bilinear", sizes = array<i64: 1, 3, 8, 12>} : (tensor<1x3x4x6xi32>) -> tensor<1x3x8x12xi32>
  func.return %0 : tensor<1x3x8x12xi32>
}
// CHECK: 'tx8be.Resize' op mode "bilinear" needs a float element type, got i32

// -----

func.func @resize_result(%x: tensor<1x3x4x6xf32>) -> tensor<1x3x8x8xf32> {
  %0 = tx8be.Resize %x {mode = "nearest", sizes = array<i64: 1, 3, 8, 12>} : (tensor<1x3x4x6xf32>) -> tensor<1x3x8x8xf32>
  func.return %0 : tensor<1x3x8x8xf32>
}
// CHECK: 'tx8be.Resize' op result #0 has type tensor<1x3x8x8xf32> but its operands and attributes give tensor<1x3x8x12xf32>

// -----

func.func @resize_data_format(%x: tensor<1x4x6x3xf32>) -> tensor<1x8x12x3xf32> {
  %0 = tx8be.Resize %x {mode = "bilinear", sizes = array<i64: 1, 8, 12, 3>, data_format = "NWHC"} : (tensor<1x4x6x3xf32>) -> tensor<1x8x12x3xf32>
  func.return %0 : tensor<1x8x12x3xf32>
}
// CHECK: 'tx8be.Resize' op data_format must be one of NCHW, NHWC, got "NWHC"

// -----

func.func @resize_nhwc_channels(%x: tensor<1x4x6x3xf32>) -> tensor<1x8x12x6xf32> {
  %0 = tx8be.Resize %x {mode = "bilinear", sizes = array<i64: 1, 8, 12, 6>, data_format = "NHWC"} : (tensor<1x4x6x3xf32>) -> tensor<1x8x12x6xf32>
  func.return %0 : tensor<1x8x12x6xf32>
}
// CHECK: 'tx8be.Resize' op mode "bilinear" resizes H and W only: sizes [1, 8, 12, 6] must keep N and C of the NHWC input [1, 4, 6, 3]

// -----

func.func @resize_nhwc_roi_channels(%x: tensor<1x4x6x3xf32>) -> tensor<1x8x12x3xf32> {
  %0 = tx8be.Resize %x {mode = "bicubic", sizes = array<i64: 1, 8, 12, 3>, coordinate_transformation_mode = "tf_crop_and_resize", roi = array<f64: 0.0, 0.0, 0.0, 0.5, 1.0, 1.0, 1.0, 1.0>, data_format = "NHWC"} : (tensor<1x4x6x3xf32>) -> tensor<1x8x12x3xf32>
  func.return %0 : tensor<1x8x12x3xf32>
}
// CHECK: 'tx8be.Resize' op mode "bicubic" resizes H and W only: roi [0.0, 0.0, 0.0, 0.5, 1.0, 1.0, 1.0, 1.0] must be [0, 1] on N and C

// -----

func.func @resize_nhwc_rank(%x: tensor<4x6x3xf32>) -> tensor<8x12x3xf32> {
  %0 = tx8be.Resize %x {mode = "bilinear", sizes = array<i64: 8, 12, 3>, data_format = "NHWC"} : (tensor<4x6x3xf32>) -> tensor<8x12x3xf32>
  func.return %0 : tensor<8x12x3xf32>
}
// CHECK: 'tx8be.Resize' op mode "bilinear" needs a rank-4 NHWC input, got rank 3
