"""``coretorch.utils.tensorboard.SummaryWriter``: event files that TensorBoard's own reader
(`EventAccumulator`) parses, holding what PyTorch's SummaryWriter would write."""

from __future__ import annotations

import io
import wave

import numpy as np
import pytest

import coretorch as ct

pytest.importorskip(
    "tensorboard", reason="the tensorboard package is an optional extra (pip install tensorboard)"
)
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

from coretorch.utils.tensorboard import SummaryWriter  # noqa: E402


def read(path) -> EventAccumulator:
    acc = EventAccumulator(str(path), size_guidance={"tensors": 0, "images": 0, "histograms": 0})
    acc.Reload()
    return acc


def test_scalars_round_trip(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_scalar("loss", ct.tensor(0.5), 0, walltime=100.0)
        w.add_scalar("loss", np.float64(0.25), 1, walltime=101.0)
        w.add_scalar("loss", 0.125, 2)
        w.add_scalar("acc", ct.tensor([0.75]), 5, new_style=True)
        with pytest.raises(ValueError, match="expected one value for 'bad'"):
            w.add_scalar("bad", ct.tensor([1.0, 2.0]))
    acc = read(tmp_path)
    events = acc.Scalars("loss")
    assert [(e.step, e.value) for e in events] == [(0, 0.5), (1, 0.25), (2, 0.125)]
    assert [e.wall_time for e in events[:2]] == [100.0, 101.0]
    (new_style,) = acc.Tensors("acc")
    assert new_style.step == 5 and list(new_style.tensor_proto.float_val) == [0.75]


def test_add_scalars_writes_one_run_per_key(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_scalars("loss", {"train": 1.0, "val": 2.0}, 3)
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["loss_train", "loss_val"]
    assert [(e.step, e.value) for e in read(tmp_path / "loss_val").Scalars("loss")] == [(3, 2.0)]


def test_histogram_statistics_and_buckets(tmp_path):
    values = np.random.default_rng(0).standard_normal(500)
    with SummaryWriter(tmp_path) as w:
        w.add_histogram("w", ct.tensor(values), 7)
        w.add_histogram("auto", values, 7, bins="auto")
        w.add_histogram("few", values, 7, bins=np.linspace(-4, 4, 41), max_bins=10)
        with pytest.raises(ValueError, match="no element"):
            w.add_histogram("empty", np.zeros(0))
    acc = read(tmp_path)
    for tag in ("w", "auto", "few"):
        h = acc.Histograms(tag)[0].histogram_value
        assert (h.num, h.min, h.max) == (500, values.min(), values.max())
        assert h.sum == pytest.approx(values.sum()) and h.sum_squares == pytest.approx(
            values @ values
        )
        assert sum(h.bucket) == 500 and len(h.bucket) == len(h.bucket_limit)
    few = acc.Histograms("few")[0].histogram_value
    counts, _ = np.histogram(values, np.linspace(-4, 4, 41))
    merged = counts.reshape(10, 4).sum(1)
    assert [c for c in few.bucket if c] == [c for c in merged.tolist() if c]


def test_histograms_match_pytorch_s_writer(tmp_path):
    pytest.importorskip("torch")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    values = np.random.default_rng(1).standard_normal(300).astype(np.float32) * 3
    for writer, sub in ((SummaryWriter, "ours"), (TorchWriter, "theirs")):
        with writer(tmp_path / sub) as w:
            w.add_histogram("tf", values, 0)
            w.add_histogram("auto", values, 0, bins="auto", max_bins=7)
    for tag in ("tf", "auto"):
        a = read(tmp_path / "ours").Histograms(tag)[0].histogram_value
        b = read(tmp_path / "theirs").Histograms(tag)[0].histogram_value
        assert list(a.bucket) == list(b.bucket)
        assert list(a.bucket_limit) == pytest.approx(list(b.bucket_limit))
        assert (a.num, a.min, a.max) == (b.num, b.min, b.max)


def _pixels(image_event) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(image_event.encoded_image_string)))


def test_images_in_every_layout(tmp_path):
    chw = np.random.default_rng(2).random((3, 4, 5)).astype(np.float32)
    with SummaryWriter(tmp_path) as w:
        w.add_image("chw", ct.tensor(chw), 0)
        w.add_image("hwc", chw.transpose(1, 2, 0), 0, dataformats="HWC")
        w.add_image("hw", (chw[0] * 255).astype(np.uint8), 0, dataformats="HW")
        w.add_images("batch", ct.tensor(chw[:, None]), 0)  # 3 gray images in a row
        with pytest.raises(ValueError, match="does not match dataformats"):
            w.add_image("bad", chw, 0, dataformats="HW")
    acc = read(tmp_path)
    expected = (chw.transpose(1, 2, 0) * 255).clip(0, 255).astype(np.uint8)
    assert np.array_equal(_pixels(acc.Images("chw")[0]), expected)
    assert np.array_equal(_pixels(acc.Images("hwc")[0]), expected)
    gray = (chw[0] * 255).astype(np.uint8)
    assert np.array_equal(_pixels(acc.Images("hw")[0]), np.stack([gray] * 3, 2))
    batch = acc.Images("batch")[0]
    assert (batch.height, batch.width) == (4, 15)
    assert np.array_equal(_pixels(batch)[:, 5:10, 0], expected[:, :, 1])


def test_text_audio_and_hparams(tmp_path):
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData

    samples = np.sin(np.linspace(0, 20, 800)) * 0.5
    with SummaryWriter(tmp_path) as w:
        w.add_text("notes", "lr **0.1**", 2)
        w.add_audio("tone", ct.tensor(samples), 0, sample_rate=8000)
        w.add_hparams(
            {"lr": 0.1, "opt": "adam", "bn": True, "skip": None},
            {"hparam/acc": 0.9},
            run_name="trial",
        )
        with pytest.raises(TypeError, match="dictionaries"):
            w.add_hparams([("lr", 0.1)], {})
        with pytest.raises(ValueError, match="hyperparameter 'x'"):
            w.add_hparams({"x": [1]}, {})
    acc = read(tmp_path)
    (text,) = acc.Tensors("notes/text_summary")
    assert text.step == 2 and list(text.tensor_proto.string_val) == [b"lr **0.1**"]
    clip = acc.Audio("tone")[0]
    with wave.open(io.BytesIO(clip.encoded_audio_string)) as wav:
        assert wav.getframerate() == 8000
        pcm = np.frombuffer(wav.readframes(wav.getnframes()), "<i2")
    assert np.allclose(pcm / 32767, samples, atol=1e-4)
    trial = read(tmp_path / "trial")
    assert [e.value for e in trial.Scalars("hparam/acc")] == [pytest.approx(0.9)]
    content = trial.PluginTagToContent("hparams")
    start = HParamsPluginData.FromString(content["_hparams_/session_start_info"])
    hp = start.session_start_info.hparams
    assert (hp["lr"].number_value, hp["opt"].string_value, hp["bn"].bool_value) == (
        0.1,
        "adam",
        True,
    )
    assert "skip" not in hp
    exp = HParamsPluginData.FromString(content["_hparams_/experiment"]).experiment
    assert [i.name for i in exp.hparam_infos] == ["lr", "opt", "bn"]
    assert [m.name.tag for m in exp.metric_infos] == ["hparam/acc"]


def test_what_cannot_be_written_says_so(tmp_path):
    with SummaryWriter(tmp_path) as w:
        with pytest.raises(
            NotImplementedError, match="add_graph\\(\\): coretorch has no model tracer"
        ):
            w.add_graph(ct.nn.Linear(2, 2), ct.zeros(1, 2))
        for call in (
            lambda: w.add_embedding(ct.zeros(3, 2)),
            lambda: w.add_video("v", ct.zeros(1, 2, 3, 4, 4)),
            lambda: w.add_pr_curve("pr", ct.zeros(3), ct.zeros(3)),
        ):
            with pytest.raises(NotImplementedError):
                call()


def test_default_log_dir_and_comment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_lr0.1")
    w.close()
    (run,) = (tmp_path / "runs").iterdir()
    assert run.name.endswith("_lr0.1") and w.get_logdir() == str(run.relative_to(tmp_path))
