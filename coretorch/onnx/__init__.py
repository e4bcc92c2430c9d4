"""``coretorch.onnx``: ONNX export does not exist in coretorch yet.

Importing works, so programs that only mention ONNX (``if args.export_onnx: ...``, model code that
asks `is_in_onnx_export()`) run; `export` raises `OnnxExporterError` (a RuntimeError) saying what to
do instead: save the weights (``coretorch.save(model.state_dict(), ...)`` writes safetensors) and
export from PyTorch, whose ``load_state_dict`` takes them.
"""

from __future__ import annotations

__all__ = ["export", "is_in_onnx_export", "OnnxExporterError", "dynamo_export"]


class OnnxExporterError(RuntimeError):
    """Raised by `export`: coretorch cannot write ONNX models."""


def is_in_onnx_export() -> bool:
    """False: coretorch never runs a model for ONNX export."""
    return False


def export(model, args=(), f=None, *, kwargs=None, **options):
    """Not available: coretorch has no ONNX exporter (raises `OnnxExporterError`)."""
    raise OnnxExporterError(
        f"coretorch.onnx.export(): coretorch cannot export {type(model).__name__} to ONNX (there "
        f"is no exporter yet). Save the weights with coretorch.save(model.state_dict(), "
        f"'model.safetensors'), load them into the same model in PyTorch and export from there."
    )


def dynamo_export(model, *args, **kwargs):
    """Not available: coretorch has no ONNX exporter (raises `OnnxExporterError`)."""
    return export(model, args)
