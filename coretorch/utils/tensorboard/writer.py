"""`SummaryWriter` (``torch.utils.tensorboard.SummaryWriter``): log training to TensorBoard event
files, written by tensorboard's own `EventFileWriter`."""

from __future__ import annotations

import os
import socket
import time
from datetime import datetime

from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from . import summary as S

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes `Event` protocol buffers to one event file in `log_dir` (asynchronously, flushed
    every `flush_secs` and when `max_queue` events wait)."""

    def __init__(
        self, log_dir, max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = ""
    ) -> None:
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        """The directory the event file is written in."""
        return self.event_writer.get_logdir()

    def add_event(self, event: Event, step=None, walltime=None) -> None:
        """Write `event`, stamped with `walltime` (now by default) and `step`."""
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None) -> None:
        """Write a Summary protobuf as an event at `global_step`."""
        self.add_event(Event(summary=summary), global_step, walltime)

    def flush(self) -> None:
        """Flush pending events to disk."""
        self.event_writer.flush()

    def close(self) -> None:
        """Flush and close the event file."""
        self.event_writer.close()

    def reopen(self) -> None:
        """Reopen the event writer after close()."""
        self.event_writer.reopen()


def _not_available(what: str, why: str):
    raise NotImplementedError(f"SummaryWriter.{what}(): {why}")


class SummaryWriter:
    """Log scalars, histograms, images, text, audio and hyperparameters for TensorBoard.

    `log_dir` defaults to ``runs/<date>_<host><comment>``; `purge_step` hides events at or after
    that step left by a crashed earlier run in TensorBoard. Usable as a context manager.
    """

    def __init__(
        self,
        log_dir=None,
        comment: str = "",
        purge_step=None,
        max_queue: int = 10,
        flush_secs: int = 120,
        filename_suffix: str = "",
    ) -> None:
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self.max_queue, self.flush_secs = max_queue, flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer: FileWriter | None = None
        self.all_writers: dict[str, FileWriter] | None = None
        self.default_bins = S.tensorflow_bins()
        self._get_file_writer()

    def _get_file_writer(self) -> FileWriter:
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(
                self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix
            )
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                self.file_writer.add_event(
                    Event(step=self.purge_step, file_version="brain.Event:2")
                )
                self.file_writer.add_event(
                    Event(step=self.purge_step, session_log=SessionLog(status=SessionLog.START))
                )
                self.purge_step = None
        return self.file_writer

    def _add(self, summary, global_step=None, walltime=None) -> None:
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def get_logdir(self) -> str:
        """The directory the event files go to."""
        return self.log_dir

    # ---- what TensorBoard's dashboards show ------------------------------------------------
    def add_scalar(
        self,
        tag: str,
        scalar_value,
        global_step=None,
        walltime=None,
        new_style: bool = False,
        double_precision: bool = False,
    ) -> None:
        """Log one number (a Python number, numpy scalar or one-element tensor)."""
        self._add(S.scalar(tag, scalar_value, new_style, double_precision), global_step, walltime)

    def add_scalars(
        self, main_tag: str, tag_scalar_dict: dict, global_step=None, walltime=None
    ) -> None:
        """Log several numbers on one chart: each key goes to its own run directory
        ``<log_dir>/<main_tag>_<key>``, as PyTorch does."""
        walltime = time.time() if walltime is None else walltime
        logdir = self._get_file_writer().get_logdir()
        writers = self.all_writers
        assert writers is not None  # made with the file writer
        for tag, value in tag_scalar_dict.items():
            fw_tag = logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = writers.get(fw_tag)
            if fw is None:
                fw = writers[fw_tag] = FileWriter(
                    fw_tag, self.max_queue, self.flush_secs, self.filename_suffix
                )
            fw.add_summary(S.scalar(main_tag, value), global_step, walltime)

    def add_histogram(
        self, tag: str, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None
    ) -> None:
        """Log the distribution of `values` (``bins``: ``"tensorflow"``, a numpy bins argument
        such as ``"auto"``, a count, or edges)."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._add(S.histogram(tag, values, bins, max_bins), global_step, walltime)

    def add_histogram_raw(
        self,
        tag: str,
        min,
        max,
        num,
        sum,
        sum_squares,  # noqa: A002
        bucket_limits,
        bucket_counts,
        global_step=None,
        walltime=None,
    ) -> None:
        """Log a histogram given as statistics and buckets."""
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("add_histogram_raw(): len(bucket_limits) != len(bucket_counts)")
        self._add(
            S.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts),
            global_step,
            walltime,
        )

    def add_image(
        self, tag: str, img_tensor, global_step=None, walltime=None, dataformats: str = "CHW"
    ) -> None:
        """Log an image (floats in [0, 1] or uint8; 1, 3 or 4 channels)."""
        self._add(S.image(tag, img_tensor, dataformats), global_step, walltime)

    def add_images(
        self, tag: str, img_tensor, global_step=None, walltime=None, dataformats: str = "NCHW"
    ) -> None:
        """Log a batch of images as one grid image."""
        self._add(S.image(tag, img_tensor, dataformats), global_step, walltime)

    def add_figure(
        self, tag: str, figure, global_step=None, close: bool = True, walltime=None
    ) -> None:
        """Log a matplotlib figure (or a list of them, as a grid) rendered to an image."""
        import numpy as np

        figures = figure if isinstance(figure, list) else [figure]
        images = np.stack([_render(f, close) for f in figures])
        if isinstance(figure, list):
            self.add_images(tag, images, global_step, walltime, dataformats="NHWC")
        else:
            self.add_image(tag, images[0], global_step, walltime, dataformats="HWC")

    def add_text(self, tag: str, text_string: str, global_step=None, walltime=None) -> None:
        """Log text (rendered as markdown by TensorBoard)."""
        self._add(S.text(tag, text_string), global_step, walltime)

    def add_audio(
        self, tag: str, snd_tensor, global_step=None, sample_rate: int = 44100, walltime=None
    ) -> None:
        """Log a mono sound clip (samples in [-1, 1])."""
        self._add(S.audio(tag, snd_tensor, sample_rate), global_step, walltime)

    def add_hparams(
        self,
        hparam_dict: dict,
        metric_dict: dict,
        hparam_domain_discrete=None,
        run_name: str | None = None,
        global_step=None,
    ) -> None:
        """Log one run's hyperparameters and final metrics for TensorBoard's HPARAMS tab (in a
        sub-run ``<log_dir>/<run_name>``, default: the time, as PyTorch does)."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("add_hparams(): hparam_dict and metric_dict should be dictionaries")
        summaries = S.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=logdir) as w:
            for s in summaries:
                w._get_file_writer().add_summary(s, global_step)
            for k, v in metric_dict.items():
                w.add_scalar(k, v, global_step)

    # ---- what coretorch cannot produce ----------------------------------------------------
    def add_graph(
        self, model, input_to_model=None, verbose: bool = False, use_strict_trace: bool = True
    ) -> None:
        """Not available: coretorch cannot trace a model into a TensorBoard graph."""
        _not_available(
            "add_graph",
            "coretorch has no model tracer to build the graph from "
            "(log scalars, histograms and images instead)",
        )

    def add_onnx_graph(self, prototxt) -> None:
        """Not available: coretorch has no ONNX support."""
        _not_available("add_onnx_graph", "coretorch has no ONNX support")

    def add_embedding(
        self,
        mat,
        metadata=None,
        label_img=None,
        global_step=None,
        tag: str = "default",
        metadata_header=None,
    ) -> None:
        """Not available yet: the embedding projector's files are not written."""
        _not_available(
            "add_embedding", "the projector (embedding) files are not written by coretorch"
        )

    def add_video(
        self, tag: str, vid_tensor, global_step=None, fps: int = 4, walltime=None
    ) -> None:
        """Not available yet: videos are not encoded."""
        _not_available("add_video", "coretorch does not encode videos (log frames with add_images)")

    def add_mesh(
        self,
        tag: str,
        vertices,
        colors=None,
        faces=None,
        config_dict=None,
        global_step=None,
        walltime=None,
    ) -> None:
        """Not available yet: meshes are not written."""
        _not_available("add_mesh", "coretorch does not write mesh summaries")

    def add_pr_curve(
        self,
        tag: str,
        labels,
        predictions,
        global_step=None,
        num_thresholds: int = 127,
        weights=None,
        walltime=None,
    ) -> None:
        """Not available yet: precision-recall curves are not written."""
        _not_available("add_pr_curve", "coretorch does not write precision-recall curves")

    def add_custom_scalars(self, layout: dict) -> None:
        """Not available yet: custom scalar layouts are not written."""
        _not_available("add_custom_scalars", "coretorch does not write custom scalar layouts")

    # ---- file handling -------------------------------------------------------------------
    def flush(self) -> None:
        """Write pending events to disk."""
        for w in (self.all_writers or {}).values():
            w.flush()

    def close(self) -> None:
        """Flush and close every event file."""
        for w in (self.all_writers or {}).values():
            w.flush()
            w.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> "SummaryWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _render(figure, close: bool):
    """A matplotlib figure as an H×W×3 uint8 array."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    image = np.asarray(canvas.buffer_rgba(), dtype=np.uint8)[..., :3]
    if close:
        import matplotlib.pyplot as plt

        plt.close(figure)
    return image
