"""The ``>>>`` examples in the docstrings of the most used public API run and print what they
show, so the examples cannot rot."""

from __future__ import annotations

import doctest
import importlib

import pytest

# module -> the fewest examples it must hold (an example deleted by mistake fails the test too)
MODULES = {
    "coretorch.ops.factories_public": 10,  # tensor, zeros, ones, full, arange, view, sum, mean
    "coretorch.nn.modules.linear": 5,  # nn.Linear
    "coretorch.nn.modules.conv": 4,  # nn.Conv2d
    "coretorch.nn.modules.sparse": 4,  # nn.Embedding
    "coretorch.nn.modules.rnn": 4,  # nn.LSTM
    "coretorch.nn.modules.normalization": 3,  # nn.LayerNorm
    "coretorch.nn.functional.loss": 5,  # relu, softmax, cross_entropy
    "coretorch.optim.sgd": 5,  # optim.SGD
    "coretorch.optim.adam": 4,  # optim.Adam
    "coretorch.optim.lr_scheduler": 5,  # lr_scheduler.StepLR
    "coretorch.autograd.function": 5,  # autograd.Function
    "coretorch.utils.data.dataset": 6,  # TensorDataset, random_split
    "coretorch.utils.data.dataloader": 4,  # DataLoader
    "coretorch.utils.data.collate": 3,  # default_collate
    "coretorch.nn.utils.clip_grad": 5,  # nn.utils.clip_grad_norm_
    "coretorch.nn.utils.rnn": 3,  # nn.utils.rnn.pad_sequence
    "coretorch.serialization": 10,  # save, load
    "coretorch.library": 5,  # Library
    "coretorch_profiler.profiling": 4,  # profile, record_function
    "coretorch_profiler.schedule": 6,  # schedule
    "coretorch.device": 5,  # device
    "coretorch.autograd.gradcheck": 2,  # autograd.gradcheck
    "coretorch.autograd.grad_mode": 6,  # no_grad, set_grad_enabled
    "coretorch.random": 4,  # manual_seed, Generator
}

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@pytest.mark.parametrize("name", sorted(MODULES))
def test_docstring_examples(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    failures = []
    for test in finder.find(module, name):
        out: list[str] = []
        runner.run(test, out=out.append)
        failures.extend(out)
    results = runner.summarize(verbose=False)
    assert not failures, "".join(failures)
    assert results.attempted >= MODULES[name], (
        f"{name}: {results.attempted} examples ran, expected at least {MODULES[name]}"
    )
