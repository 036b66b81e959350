"""Encoders and vector writes: the static encoder, building the ONNX encoder, writing vectors."""
