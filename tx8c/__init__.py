"""tx8c: a compiler from ONNX to the TX8 spatial NPU, with a C-model to check it."""

__version__ = "0.1.0"
