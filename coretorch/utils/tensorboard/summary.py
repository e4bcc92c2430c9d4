"""``Summary`` protocol buffers for TensorBoard, built with the tensorboard package's own protos
in the records ``torch.utils.tensorboard`` writes (legacy scalars, histograms and images that
TensorBoard's scalar, histogram and image dashboards read; text and hyperparameters through
their plugins' metadata)."""

from __future__ import annotations

import io
import numbers
import wave

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto

from .images import encode_png, to_hwc

__all__ = [
    "to_numpy",
    "scalar",
    "histogram",
    "histogram_raw",
    "image",
    "text",
    "audio",
    "hparams",
    "tensorflow_bins",
]


def to_numpy(x) -> np.ndarray:
    """A tensor (any device: read back), numpy array or Python number as a numpy array."""
    from coretorch.tensor.tensor import Tensor

    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, Tensor):
        if x.device.type == "meta":
            raise ValueError("SummaryWriter: a meta tensor has no values to log")
        return x.detach().cpu().numpy()
    if isinstance(x, (numbers.Number, np.generic)):
        return np.array([x])
    if isinstance(x, (list, tuple)):
        return np.asarray(x)
    raise TypeError(
        f"SummaryWriter: expected a tensor, numpy array or number, got {type(x).__name__}"
    )


def scalar(tag: str, value, new_style: bool = False, double_precision: bool = False) -> Summary:
    """One scalar (``simple_value``, or a tensor with the scalars plugin when `new_style`)."""
    arr = to_numpy(value).squeeze()
    if arr.ndim != 0:
        raise ValueError(
            f"add_scalar(): expected one value for {tag!r}, got {arr.size} values "
            f"(shape {arr.shape})"
        )
    v = float(arr)
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=v)])
    proto = (
        TensorProto(double_val=[v], dtype="DT_DOUBLE")
        if double_precision
        else TensorProto(float_val=[v], dtype="DT_FLOAT")
    )
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=tag, tensor=proto, metadata=meta)])


def tensorflow_bins() -> list[float]:
    """TensorFlow's default histogram bucket edges (±1e-12 growing by 1.1 up to 1e20, and 0)."""
    v, pos = 1e-12, []
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return [-b for b in reversed(pos)] + [0] + pos


def histogram_raw(
    tag: str,
    min,
    max,
    num,
    sum,
    sum_squares,
    bucket_limits,  # noqa: A002
    bucket_counts,
) -> Summary:
    """A histogram from its statistics and buckets (upper limits and counts)."""
    hist = HistogramProto(
        min=min,
        max=max,
        num=num,
        sum=sum,
        sum_squares=sum_squares,
        bucket_limit=list(bucket_limits),
        bucket=list(bucket_counts),
    )
    return Summary(value=[Summary.Value(tag=tag, histo=hist)])


def histogram(tag: str, values, bins, max_bins: int | None = None) -> Summary:
    """A histogram of `values` over `bins` (numpy's ``histogram`` bins argument); empty buckets
    at both ends are dropped, as TensorFlow's histogram does."""
    values = to_numpy(values).astype(np.float64).reshape(-1)
    if values.size == 0:
        raise ValueError("add_histogram(): the input has no element")
    if not np.all(np.isfinite(values)):
        raise ValueError("add_histogram(): the values contain NaN or infinity")
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        # merge groups of len // max_bins buckets (PyTorch's rule: it may leave more than
        # max_bins)
        step = len(counts) // max_bins
        counts = np.pad(counts, (0, (-len(counts)) % step)).reshape(-1, step).sum(axis=1)
        limits = np.concatenate([limits[:-1:step], limits[-1:]])
    nonzero = np.flatnonzero(counts)
    if nonzero.size == 0:
        raise ValueError("add_histogram(): every value lies outside the bins")
    start, end = int(nonzero[0]), int(nonzero[-1]) + 1
    # bucket i holds (limits[i], limits[i+1]]: keep an empty bucket before the first one used
    counts = counts[start - 1 : end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start : end + 1]
    return histogram_raw(
        tag,
        float(values.min()),
        float(values.max()),
        int(values.size),
        float(values.sum()),
        float(values.dot(values)),
        limits.tolist(),
        counts.tolist(),
    )


def image(tag: str, img, dataformats: str = "NCHW", rescale: float = 1) -> Summary:
    """One PNG image from `img` laid out as `dataformats` (floats in [0, 1] or uint8)."""
    arr = to_numpy(img)
    hwc = to_hwc(arr, dataformats)
    scale = 1 if arr.dtype == np.uint8 else 255
    hwc = (hwc.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    png, h, w, c = encode_png(hwc, rescale)
    return Summary(
        value=[
            Summary.Value(
                tag=tag,
                image=Summary.Image(height=h, width=w, colorspace=c, encoded_image_string=png),
            )
        ]
    )


def text(tag: str, text_string: str) -> Summary:
    """A text (markdown) entry for TensorBoard's text dashboard (tag ``<tag>/text_summary``)."""
    from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

    meta = SummaryMetadata(
        plugin_data=SummaryMetadata.PluginData(
            plugin_name="text", content=TextPluginData(version=0).SerializeToString()
        )
    )
    proto = TensorProto(
        dtype="DT_STRING",
        string_val=[text_string.encode("utf-8")],
        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]),
    )
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=meta, tensor=proto)])


def audio(tag: str, samples, sample_rate: int = 44100) -> Summary:
    """A mono WAV clip from samples in [-1, 1] (clipped beyond)."""
    arr = to_numpy(samples).squeeze()
    if arr.ndim != 1:
        raise ValueError(
            f"add_audio(): expected one channel of samples (1-d), got shape {arr.shape}"
        )
    pcm = (np.clip(arr, -1, 1) * np.iinfo(np.int16).max).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sample_rate)
        w.writeframes(pcm.tobytes())
    return Summary(
        value=[
            Summary.Value(
                tag=tag,
                audio=Summary.Audio(
                    sample_rate=sample_rate,
                    num_channels=1,
                    length_frames=pcm.shape[-1],
                    encoded_audio_string=buf.getvalue(),
                    content_type="audio/wav",
                ),
            )
        ]
    )


def _hparam_value(name: str, v):
    """(field of google.protobuf.Value, value, hparams DataType name) of one hyperparameter."""
    from coretorch.tensor.tensor import Tensor

    if isinstance(v, bool):
        return "bool_value", v, "DATA_TYPE_BOOL"
    if isinstance(v, (int, float)):
        return "number_value", float(v), "DATA_TYPE_FLOAT64"
    if isinstance(v, str):
        return "string_value", v, "DATA_TYPE_STRING"
    if isinstance(v, Tensor):
        return "number_value", float(to_numpy(v).reshape(-1)[0]), "DATA_TYPE_FLOAT64"
    raise ValueError(
        f"add_hparams(): hyperparameter {name!r} should be an int, float, str, bool "
        f"or tensor, got {type(v).__name__}"
    )


def _plugin_summary(tag: str, data) -> Summary:
    from tensorboard.plugins.hparams.metadata import PLUGIN_DATA_VERSION, PLUGIN_NAME
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData

    content = HParamsPluginData(version=PLUGIN_DATA_VERSION, **data).SerializeToString()
    meta = SummaryMetadata(
        plugin_data=SummaryMetadata.PluginData(plugin_name=PLUGIN_NAME, content=content)
    )
    return Summary(value=[Summary.Value(tag=tag, metadata=meta)])


def hparams(hparam_dict: dict, metric_dict: dict, hparam_domain_discrete: dict | None = None):
    """The experiment, session-start and session-end summaries of the hparams plugin."""
    from google.protobuf import struct_pb2
    from tensorboard.plugins.hparams import metadata
    from tensorboard.plugins.hparams.api_pb2 import (
        DataType,
        Experiment,
        HParamInfo,
        MetricInfo,
        MetricName,
        Status,
    )
    from tensorboard.plugins.hparams.plugin_data_pb2 import SessionEndInfo, SessionStartInfo

    if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
        raise TypeError("add_hparams(): hparam_dict and metric_dict should be dictionaries")
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError("add_hparams(): hparam_domain_discrete should be a dictionary")
    for k, values in domains.items():
        if (
            k not in hparam_dict
            or not isinstance(values, list)
            or not all(isinstance(d, type(hparam_dict[k])) for d in values)
        ):
            raise TypeError(
                f"add_hparams(): hparam_domain_discrete[{k!r}] should be a list of "
                f"values of the type of hparam_dict[{k!r}]"
            )
    start = SessionStartInfo()
    infos = []
    for k, v in hparam_dict.items():
        if v is None:
            continue
        field, value, dtype = _hparam_value(k, v)
        setattr(start.hparams[k], field, value)
        discrete = None
        if k in domains:
            discrete = struct_pb2.ListValue(
                values=[struct_pb2.Value(**{field: d}) for d in domains[k]]
            )
        infos.append(HParamInfo(name=k, type=DataType.Value(dtype), domain_discrete=discrete))
    experiment = Experiment(
        hparam_infos=infos, metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict]
    )
    return (
        _plugin_summary(metadata.EXPERIMENT_TAG, {"experiment": experiment}),
        _plugin_summary(metadata.SESSION_START_INFO_TAG, {"session_start_info": start}),
        _plugin_summary(
            metadata.SESSION_END_INFO_TAG,
            {"session_end_info": SessionEndInfo(status=Status.Value("STATUS_SUCCESS"))},
        ),
    )
