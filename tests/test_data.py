"""utils.data: datasets (Tensor, Stack, Subset, Concat, Chain), samplers (random, subset,
weighted, batch) with their generator handling, DataLoader (batching, shuffle with a generator,
drop_last), default_collate of tensors/tuples/dicts/numbers, random_split."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import coretorch as ct
from coretorch.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    random_split,
)


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError(i)
        return {"x": ct.tensor([float(i), float(i * i)]), "y": i, "name": f"s{i}"}


def test_tensor_dataset_and_loader_batches():
    x = ct.arange(20, dtype=ct.float32).reshape(10, 2)
    y = ct.arange(10)
    ds = TensorDataset(x, y)
    assert len(ds) == 10
    xi, yi = ds[3]
    assert xi.tolist() == [6.0, 7.0] and int(yi) == 3
    batches = list(DataLoader(ds, batch_size=4))
    assert len(batches) == 3 and isinstance(batches[0], list)
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[0][0].shape == (4, 2) and batches[0][0].dtype is ct.float32
    dl = DataLoader(ds, batch_size=4, drop_last=True)
    assert len(dl) == 2 and [b[1].tolist() for b in dl] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert len(DataLoader(ds, batch_size=4)) == 3
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(x, ct.arange(3))


def test_loader_matches_default_collate_path():
    # the TensorDataset fast path gives what default_collate of the samples gives
    x = ct.randn(7, 3)
    y = ct.arange(7)
    ds = TensorDataset(x, y)
    fast = next(iter(DataLoader(ds, batch_size=5)))
    slow = next(iter(DataLoader(ds, batch_size=5, collate_fn=lambda b: default_collate(b))))
    assert type(fast) is type(slow) is list
    for a, b in zip(fast, slow):
        assert a.dtype is b.dtype
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_shuffle_with_generator_is_reproducible_and_a_permutation():
    ds = TensorDataset(ct.arange(50))

    def epoch_order(dl):
        return [int(v) for b in dl for v in b[0].tolist()]

    g1 = ct.Generator().manual_seed(123)
    g2 = ct.Generator().manual_seed(123)
    dl1 = DataLoader(ds, batch_size=8, shuffle=True, generator=g1)
    dl2 = DataLoader(ds, batch_size=8, shuffle=True, generator=g2)
    e1, e2 = epoch_order(dl1), epoch_order(dl2)
    assert e1 == e2 and sorted(e1) == list(range(50)) and e1 != list(range(50))
    assert epoch_order(dl1) != e1  # a new permutation each epoch
    ct.manual_seed(7)
    a = epoch_order(DataLoader(ds, batch_size=8, shuffle=True))
    ct.manual_seed(7)
    b = epoch_order(DataLoader(ds, batch_size=8, shuffle=True))
    assert a == b


def test_default_collate_structures():
    out = default_collate([ct.tensor([1.0, 2.0]), ct.tensor([3.0, 4.0])])
    assert out.shape == (2, 2) and out.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    out = default_collate([1, 2, 3])
    assert out.dtype is ct.int64 and out.tolist() == [1, 2, 3]
    out = default_collate([0.5, 1.5])
    assert out.dtype is ct.float64
    assert default_collate([True, False]).dtype is ct.bool
    assert default_collate(["a", "b"]) == ["a", "b"]
    out = default_collate([np.array([1, 2], dtype=np.int32), np.array([3, 4], dtype=np.int32)])
    assert out.dtype is ct.int32 and out.tolist() == [[1, 2], [3, 4]]
    assert default_collate([np.float32(1.5), np.float32(2.5)]).dtype is ct.float32
    out = default_collate([{"x": ct.zeros(2), "y": 1}, {"x": ct.ones(2), "y": 2}])
    assert set(out) == {"x", "y"} and out["x"].shape == (2, 2) and out["y"].tolist() == [1, 2]
    out = default_collate([(ct.zeros(1), 1), (ct.ones(1), 2)])
    assert isinstance(out, list) and out[0].shape == (2, 1) and out[1].tolist() == [1, 2]
    out = default_collate([[1, 2], [3, 4]])
    assert isinstance(out, list) and [o.tolist() for o in out] == [[1, 3], [2, 4]]
    Point = namedtuple("Point", "x y")
    out = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert isinstance(out, Point) and out.x.tolist() == [1, 3] and out.y.dtype is ct.float64
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors"):
        default_collate([object(), object()])
    conv = default_convert({"a": np.zeros(2), "b": [np.ones(1)], "c": "s"})
    assert isinstance(conv["a"], ct.Tensor) and isinstance(conv["b"][0], ct.Tensor)


def test_dict_dataset_through_loader():
    dl = DataLoader(Squares(5), batch_size=2)
    batches = list(dl)
    assert len(batches) == 3
    assert batches[0]["x"].tolist() == [[0.0, 0.0], [1.0, 1.0]]
    assert batches[1]["y"].tolist() == [2, 3] and batches[2]["name"] == ["s4"]


def test_batch_size_none_and_samplers():
    ds = Squares(3)
    items = list(DataLoader(ds, batch_size=None))
    assert len(items) == 3 and items[1]["y"] == 1
    assert list(SequentialSampler(ds)) == [0, 1, 2]
    g = ct.Generator().manual_seed(0)
    rs = RandomSampler(range(10), generator=g)
    assert sorted(rs) == list(range(10)) and len(rs) == 10
    rs = RandomSampler(range(4), replacement=True, num_samples=40, generator=g)
    draws = list(rs)
    assert len(draws) == 40 and set(draws) <= set(range(4))
    bs = BatchSampler(SequentialSampler(range(7)), 3, drop_last=False)
    assert list(bs) == [[0, 1, 2], [3, 4, 5], [6]] and len(bs) == 3
    bs = BatchSampler(SequentialSampler(range(7)), 3, drop_last=True)
    assert list(bs) == [[0, 1, 2], [3, 4, 5]] and len(bs) == 2
    dl = DataLoader(TensorDataset(ct.arange(6)), batch_sampler=[[5, 0], [2]])
    assert [b[0].tolist() for b in dl] == [[5, 0], [2]]
    with pytest.raises(ValueError, match="mutually exclusive"):
        DataLoader(ds, batch_size=2, shuffle=True, sampler=SequentialSampler(ds))
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        BatchSampler(SequentialSampler(ds), 0, False)


def test_iterable_dataset():
    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(7))

    assert [b.tolist() for b in DataLoader(Stream(), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [b.tolist() for b in DataLoader(Stream(), batch_size=3, drop_last=True)] == [
        [0, 1, 2],
        [3, 4, 5],
    ]
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        DataLoader(Stream(), shuffle=True)


def test_random_split_subset_concat():
    ds = TensorDataset(ct.arange(10))
    g = ct.Generator().manual_seed(42)
    a, b = random_split(ds, [7, 3], generator=g)
    assert len(a) == 7 and len(b) == 3
    seen = sorted(int(a[i][0]) for i in range(7)) + sorted(int(b[i][0]) for i in range(3))
    assert sorted(seen) == list(range(10))
    g = ct.Generator().manual_seed(42)
    a2, _ = random_split(ds, [7, 3], generator=g)
    assert a2.indices == a.indices
    parts = random_split(range(11), [0.5, 0.3, 0.2], generator=ct.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [6, 3, 2]  # floor(5.5, 3.3, 2.2), leftover to the first
    with pytest.raises(ValueError, match="Sum of input lengths does not equal"):
        random_split(ds, [5, 4])
    sub = Subset(ds, [9, 0])
    assert int(sub[0][0]) == 9 and len(sub) == 2
    cat = ConcatDataset([Squares(2), Squares(3)])
    assert len(cat) == 5 and cat[2]["y"] == 0 and cat[-1]["y"] == 2
    assert len(Squares(2) + Squares(2)) == 4


class Stream(IterableDataset):
    def __init__(self, values):
        self.values = values

    def __iter__(self):
        return iter(self.values)

    def __len__(self):
        return len(self.values)


def test_chain_and_stack_datasets():
    chain = ChainDataset([Stream([1, 2]), Stream([3])])
    assert list(chain) == [1, 2, 3] and len(chain) == 3
    both = Stream([1]) + Stream([2, 3])
    assert isinstance(both, ChainDataset) and list(both) == [1, 2, 3]
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(ChainDataset([Stream([1]), Squares(2)]))
    assert [b.tolist() for b in DataLoader(chain, batch_size=2)] == [[1, 2], [3]]
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        ConcatDataset([Squares(2), Stream([1])])

    x = TensorDataset(ct.arange(4))
    pairs = StackDataset(x, Squares(4))
    assert len(pairs) == 4 and int(pairs[2][0][0]) == 2 and pairs[2][1]["y"] == 2
    named = StackDataset(a=x, b=Squares(4))
    assert set(named[1]) == {"a", "b"} and named[1]["b"]["name"] == "s1"
    batch = next(iter(DataLoader(named, batch_size=3)))
    assert batch["a"][0].tolist() == [0, 1, 2] and batch["b"]["y"].tolist() == [0, 1, 2]
    sub = StackDataset(Subset(x, [3, 1]), Subset(x, [0, 2]))
    assert [(int(a[0]), int(b[0])) for a, b in sub.__getitems__([0, 1])] == [(3, 0), (1, 2)]
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(x, Squares(3))
    with pytest.raises(ValueError, match="At least one dataset should be passed"):
        StackDataset()
    with pytest.raises(ValueError, match="but both types are given"):
        StackDataset(x, b=x)


def test_weighted_random_sampler_draws_in_proportion():
    weights = [0.1, 0.0, 0.5, 0.4]
    draws = list(WeightedRandomSampler(weights, 20000, generator=ct.Generator().manual_seed(0)))
    assert len(draws) == 20000 and 1 not in draws
    freq = np.bincount(draws, minlength=4) / len(draws)
    np.testing.assert_allclose(freq, weights, atol=0.015)
    again = list(WeightedRandomSampler(weights, 20000, generator=ct.Generator().manual_seed(0)))
    assert again == draws
    ct.manual_seed(5)
    a = list(WeightedRandomSampler(weights, 50))
    ct.manual_seed(5)
    assert list(WeightedRandomSampler(weights, 50)) == a  # the global generator by default
    # without replacement: every index at most once; the first pick follows the weights
    g = ct.Generator().manual_seed(1)
    firsts = []
    for _ in range(4000):
        picks = list(WeightedRandomSampler([1.0, 3.0, 6.0], 3, replacement=False, generator=g))
        assert sorted(picks) == [0, 1, 2]
        firsts.append(picks[0])
    np.testing.assert_allclose(np.bincount(firsts) / 4000, [0.1, 0.3, 0.6], atol=0.03)
    s = WeightedRandomSampler(ct.tensor([1.0, 2.0]), 3)
    assert len(s) == 3 and s.weights.dtype is ct.float64


def test_weighted_random_sampler_errors_as_pytorch():
    with pytest.raises(
        ValueError, match="num_samples should be a positive integer value, but got num_samples=0"
    ):
        WeightedRandomSampler([1.0], 0)
    with pytest.raises(ValueError, match="replacement should be a boolean value"):
        WeightedRandomSampler([1.0], 1, replacement=1)
    with pytest.raises(
        ValueError,
        match=r"weights should be a 1d sequence but given weights "
        r"have shape \(1, 2\)",
    ):
        WeightedRandomSampler([[1.0, 2.0]], 2)
    for w, n, r, msg in [
        ([1.0, -1.0], 1, True, "contains either `inf`, `nan` or element < 0"),
        ([1.0, float("nan")], 1, True, "contains either `inf`, `nan`"),
        ([0.0, 0.0], 1, True, r"sum of probabilities <= 0"),
        ([1.0, 1.0], 3, False, "cannot sample n_sample > prob_dist.size"),
    ]:
        with pytest.raises(RuntimeError, match=msg):
            list(WeightedRandomSampler(w, n, replacement=r))


def test_subset_random_sampler_and_batch_sampler():
    idx = [10, 20, 30, 40, 50]
    a = list(SubsetRandomSampler(idx, generator=ct.Generator().manual_seed(3)))
    assert sorted(a) == idx and len(SubsetRandomSampler(idx)) == 5
    assert list(SubsetRandomSampler(idx, generator=ct.Generator().manual_seed(3))) == a
    ct.manual_seed(9)
    b = list(SubsetRandomSampler(idx))
    ct.manual_seed(9)
    assert list(SubsetRandomSampler(idx)) == b
    bs = BatchSampler(
        SubsetRandomSampler(idx, generator=ct.Generator().manual_seed(3)), 2, drop_last=False
    )
    assert list(bs) == [a[0:2], a[2:4], a[4:]] and len(bs) == 3
    assert list(BatchSampler(range(5), 2, drop_last=True)) == [[0, 1], [2, 3]]
    with pytest.raises(ValueError, match="drop_last should be a boolean value"):
        BatchSampler(range(5), 2, drop_last=None)


def test_random_split_generator_handling():
    ds = TensorDataset(ct.arange(10))
    ct.manual_seed(11)
    a = [s.indices for s in random_split(ds, [0.6, 0.4])]
    ct.manual_seed(11)
    assert [s.indices for s in random_split(ds, [0.6, 0.4])] == a  # the default generator
    assert sorted(a[0] + a[1]) == list(range(10)) and [len(x) for x in a] == [6, 4]
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        parts = random_split(range(2), [1.0, 0.0])
    assert [len(p) for p in parts] == [2, 0]
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        random_split(range(2), [1.5, -0.5])
