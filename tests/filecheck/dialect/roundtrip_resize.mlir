// RUN: tx8c-opt %s | tx8c-opt | filecheck %s
// RUN: tx8c-opt %s --print-op-generic | tx8c-opt | filecheck %s
// Printing, parsing and printing again gives the same text; the generic form parses too.

func.func @resize(%x: tensor<1x3x4x6xf32>, %i: tensor<2x5x4xi8>) -> tensor<4x5x2xi8> {
  // CHECK:      %{{.*}} = tx8be.Resize %x {mode = "bilinear", sizes = array<i64: 1, 3, 8, 12>} : (tensor<1x3x4x6xf32>) -> tensor<1x3x8x12xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Resize %x {mode = "bilinear", sizes = array<i64: 1, 3, 2, 9>, coordinate_transformation_mode = "align_corners", layout_str = "NCHW"} : (tensor<1x3x4x6xf32>) -> tensor<1x3x2x9xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Resize %x {mode = "nearest", sizes = array<i64: 1, 6, 8, 3>} : (tensor<1x3x4x6xf32>) -> tensor<1x6x8x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Resize %x {mode = "nearest", sizes = array<i64: 1, 3, 8, 12>, coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : (tensor<1x3x4x6xf32>) -> tensor<1x3x8x12xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Resize %x {mode = "nearest", sizes = array<i64: 1, 3, 5, 5>, coordinate_transformation_mode = "pytorch_half_pixel", nearest_mode = "round_prefer_ceil"} : (tensor<1x3x4x6xf32>) -> tensor<1x3x5x5xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Resize %i {mode = "nearest", sizes = array<i64: 4, 5, 2>, nearest_mode = "ceil"} : (tensor<2x5x4xi8>) -> tensor<4x5x2xi8>
  %0 = tx8be.Resize %x {mode = "bilinear", sizes = array<i64: 1, 3, 8, 12>} : (tensor<1x3x4x6xf32>) -> tensor<1x3x8x12xf32>
  %1 = tx8be.Resize %x {mode = "bilinear", sizes = array<i64: 1, 3, 2, 9>, coordinate_transformation_mode = "align_corners", layout_str = "NCHW"} : (tensor<1x3x4x6xf32>) -> tensor<1x3x2x9xf32>
  %2 = tx8be.Resize %x {mode = "nearest", sizes = array<i64: 1, 6, 8, 3>} : (tensor<1x3x4x6xf32>) -> tensor<1x6x8x3xf32>
  %3 = tx8be.Resize %x {mode = "nearest", sizes = array<i64: 1, 3, 8, 12>, coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : (tensor<1x3x4x6xf32>) -> tensor<1x3x8x12xf32>
  %4 = tx8be.Resize %x {mode = "nearest", sizes = array<i64: 1, 3, 5, 5>, coordinate_transformation_mode = "pytorch_half_pixel", nearest_mode = "round_prefer_ceil"} : (tensor<1x3x4x6xf32>) -> tensor<1x3x5x5xf32>
  %5 = tx8be.Resize %i {mode = "nearest", sizes = array<i64: 4, 5, 2>, nearest_mode = "ceil"} : (tensor<2x5x4xi8>) -> tensor<4x5x2xi8>
  func.return %5 : tensor<4x5x2xi8>
}

func.func @resize_opset19(%x: tensor<1x3x4x6xf32>, %i: tensor<2x5x4xi8>) -> tensor<4x5x2xi8> {
  // CHECK-LABEL: func.func @resize_opset19
  // CHECK-NEXT:  %{{.*}} = tx8be.Resize %x {mode = "bicubic", sizes = array<i64: 1, 3, 8, 12>} : (tensor<1x3x4x6xf32>) -> tensor<1x3x8x12xf32>
  // CHECK-NEXT:  %{{.*}} = tx8be.Resize %x {mode = "bicubic", sizes = array<i64: 1, 3, 3, 9>, coordinate_transformation_mode = "align_corners", cubic_coeff_a = -5.000000e-01 : f64, exclude_outside = true} : (tensor<1x3x4x6xf32>) -> tensor<1x3x3x9xf32>
  // CHECK-NEXT:  %{{.*}} = tx8be.Resize %x {mode = "bilinear", sizes = array<i64: 1, 3, 9, 13>, coordinate_transformation_mode = "half_pixel_symmetric", scales = array<f64: 1.000000e+00, 1.000000e+00, 2.300000e+00, 2.200000e+00>} : (tensor<1x3x4x6xf32>) -> tensor<1x3x9x13xf32>
  // CHECK-NEXT:  %{{.*}} = tx8be.Resize %x {mode = "bilinear", sizes = array<i64: 1, 3, 5, 5>, coordinate_transformation_mode = "tf_crop_and_resize", roi = array<f64: 0.000000e+00, 0.000000e+00, 1.000000e-01, -2.000000e-01, 1.000000e+00, 1.000000e+00, 9.000000e-01, 1.100000e+00>, extrapolation_value = -1.500000e+00 : f64} : (tensor<1x3x4x6xf32>) -> tensor<1x3x5x5xf32>
  // CHECK-NEXT:  %{{.*}} = tx8be.Resize %i {mode = "nearest", sizes = array<i64: 4, 5, 2>, coordinate_transformation_mode = "tf_crop_and_resize", roi = array<f64: 5.000000e-01, 0.000000e+00, 0.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00>, nearest_mode = "floor"} : (tensor<2x5x4xi8>) -> tensor<4x5x2xi8>
  %0 = tx8be.Resize %x {mode = "bicubic", sizes = array<i64: 1, 3, 8, 12>} : (tensor<1x3x4x6xf32>) -> tensor<1x3x8x12xf32>
  %1 = tx8be.Resize %x {mode = "bicubic", sizes = array<i64: 1, 3, 3, 9>, coordinate_transformation_mode = "align_corners", cubic_coeff_a = -0.5 : f64, exclude_outside = true} : (tensor<1x3x4x6xf32>) -> tensor<1x3x3x9xf32>
  %2 = tx8be.Resize %x {mode = "bilinear", sizes = array<i64: 1, 3, 9, 13>, coordinate_transformation_mode = "half_pixel_symmetric", scales = array<f64: 1.0, 1.0, 2.3, 2.2>} : (tensor<1x3x4x6xf32>) -> tensor<1x3x9x13xf32>
  %3 = tx8be.Resize %x {mode = "bilinear", sizes = array<i64: 1, 3, 5, 5>, coordinate_transformation_mode = "tf_crop_and_resize", roi = array<f64: 0.0, 0.0, 0.1, -0.2, 1.0, 1.0, 0.9, 1.1>, extrapolation_value = -1.5 : f64} : (tensor<1x3x4x6xf32>) -> tensor<1x3x5x5xf32>
  %4 = tx8be.Resize %i {mode = "nearest", sizes = array<i64: 4, 5, 2>, coordinate_transformation_mode = "tf_crop_and_resize", roi = array<f64: 0.5, 0.0, 0.0, 1.0, 1.0, 1.0>, nearest_mode = "floor"} : (tensor<2x5x4xi8>) -> tensor<4x5x2xi8>
  func.return %4 : tensor<4x5x2xi8>
}

func.func @resize_nhwc(%x: tensor<1x4x6x3xf32>) -> tensor<1x8x12x3xf32> {
  // CHECK-LABEL: func.func @resize_nhwc
  // CHECK-NEXT:  %{{.*}} = tx8be.Resize %x {mode = "bilinear", sizes = array<i64: 1, 8, 12, 3>, data_format = "NHWC"} : (tensor<1x4x6x3xf32>) -> tensor<1x8x12x3xf32>
  // CHECK-NEXT:  %{{.*}} = tx8be.Resize %x {mode = "bicubic", sizes = array<i64: 1, 5, 5, 3>, coordinate_transformation_mode = "tf_crop_and_resize", roi = array<f64: 0.000000e+00, 1.000000e-01, -2.000000e-01, 0.000000e+00, 1.000000e+00, 9.000000e-01, 1.100000e+00, 1.000000e+00>, data_format = "NHWC"} : (tensor<1x4x6x3xf32>) -> tensor<1x5x5x3xf32>
  // The default data_format is not printed
  // CHECK-NEXT:  %{{.*}} = tx8be.Resize %x {mode = "bilinear", sizes = array<i64: 1, 4, 6, 3>} : (tensor<1x4x6x3xf32>) -> tensor<1x4x6x3xf32>
  %0 = tx8be.Resize %x {mode = "bilinear", sizes = array<i64: 1, 8, 12, 3>, data_format = "NHWC"} : (tensor<1x4x6x3xf32>) -> tensor<1x8x12x3xf32>
  %1 = tx8be.Resize %x {mode = "bicubic", sizes = array<i64: 1, 5, 5, 3>, coordinate_transformation_mode = "tf_crop_and_resize", roi = array<f64: 0.0, 0.1, -0.2, 0.0, 1.0, 0.9, 1.1, 1.0>, data_format = "NHWC"} : (tensor<1x4x6x3xf32>) -> tensor<1x5x5x3xf32>
  %2 = tx8be.Resize %x {mode = "bilinear", sizes = array<i64: 1, 4, 6, 3>, data_format = "NCHW"} : (tensor<1x4x6x3xf32>) -> tensor<1x4x6x3xf32>
  func.return %0 : tensor<1x8x12x3xf32>
}
