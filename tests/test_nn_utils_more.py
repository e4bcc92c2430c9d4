"""nn.utils.parametrize / parametrizations (weight_norm, spectral_norm), the hook-based
weight_norm and spectral_norm, parameters_to_vector, DataParallel and nn.init's completeness,
against PyTorch where it decides the behaviour."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from nn_oracle import close, grads_close, load_from_torch, to_ct, torch_or_skip

import coretorch as ct
import coretorch.nn as nn
import coretorch.nn.functional as F
from coretorch.nn.utils import parametrize


class _Symmetric(nn.Module):
    def forward(self, x):
        return x.triu() + x.triu(1).transpose(0, 1)

    def right_inverse(self, a):
        return a.triu()


class _Double(nn.Module):
    def forward(self, x):
        return 2 * x

    def right_inverse(self, a):
        return a / 2


def test_register_parametrization_behaves_like_torch():
    layer = nn.Linear(3, 3, dtype=ct.float64)
    parametrize.register_parametrization(layer, "weight", _Symmetric())
    w = layer.weight.detach().numpy()
    assert np.allclose(w, w.T)
    assert type(layer).__name__ == "ParametrizedLinear"
    assert parametrize.type_before_parametrizations(layer) is nn.Linear
    assert parametrize.is_parametrized(layer) and parametrize.is_parametrized(layer, "weight")
    assert not parametrize.is_parametrized(layer, "bias")
    assert list(layer.state_dict()) == ["bias", "parametrizations.weight.original"]
    target = ct.tensor([[1.0, 2.0, 3.0], [2.0, 5.0, 6.0], [3.0, 6.0, 9.0]], dtype=ct.float64)
    layer.weight = target
    close(layer.weight, target)
    parametrize.register_parametrization(layer, "weight", _Double())
    close(layer.weight, target * 2)
    out = layer(ct.ones(1, 3, dtype=ct.float64))
    out.sum().backward()
    assert layer.parametrizations.weight.original.grad is not None
    with parametrize.cached():
        assert layer.weight is layer.weight
    parametrize.remove_parametrizations(layer, "weight")
    assert type(layer) is nn.Linear
    assert isinstance(layer.weight, nn.Parameter)
    close(layer.weight, target * 2)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
        parametrize.register_parametrization(layer, "nope", _Double())


def test_weight_norm_parametrization_matches_torch():
    torch = torch_or_skip()
    for dim in (0, 1, None):
        theirs = torch.nn.utils.parametrizations.weight_norm(
            torch.nn.Conv2d(3, 4, 3, dtype=torch.float64), dim=dim
        )
        ours = nn.utils.parametrizations.weight_norm(nn.Conv2d(3, 4, 3, dtype=ct.float64), dim=dim)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        load_from_torch(ours, theirs)
        close(ours.weight, theirs.weight)
        x = torch.randn(2, 3, 5, 5, dtype=torch.float64)
        theirs(x).pow(2).sum().backward()
        ours(to_ct(x)).pow(2).sum().backward()
        grads_close(ours.parameters(), theirs.parameters())
    fresh = nn.utils.parametrizations.weight_norm(nn.Linear(4, 2, dtype=ct.float64))
    g = fresh.parametrizations.weight.original0
    assert tuple(g.shape) == (2, 1)


def test_spectral_norm_parametrization_matches_torch():
    torch = torch_or_skip()
    for make_t, make_c, shape in [
        (
            lambda: torch.nn.Linear(5, 4, dtype=torch.float64),
            lambda: nn.Linear(5, 4, dtype=ct.float64),
            (3, 5),
        ),
        (
            lambda: torch.nn.ConvTranspose2d(3, 2, 3, dtype=torch.float64),
            lambda: nn.ConvTranspose2d(3, 2, 3, dtype=ct.float64),
            (1, 3, 4, 4),
        ),
    ]:
        theirs = torch.nn.utils.parametrizations.spectral_norm(make_t(), n_power_iterations=2)
        ours = nn.utils.parametrizations.spectral_norm(make_c(), n_power_iterations=2)
        load_from_torch(ours, theirs)
        x = torch.randn(*shape, dtype=torch.float64)
        for train in (True, True, False):
            theirs.train(train)
            ours.train(train)
            out_t, out_c = theirs(x), ours(to_ct(x))
            close(out_c, out_t)
        close(ours.parametrizations.weight[0]._u, theirs.parametrizations.weight[0]._u)
        out_t.sum().backward()
        out_c.sum().backward()
        grads_close(ours.parameters(), theirs.parameters())


def test_hook_based_weight_and_spectral_norm_match_torch():
    torch = torch_or_skip()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        theirs = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3, dtype=torch.float64))
        ours = nn.utils.weight_norm(nn.Linear(4, 3, dtype=ct.float64))
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    ours.load_state_dict({k: to_ct(v) for k, v in theirs.state_dict().items()})
    x = torch.randn(2, 4, dtype=torch.float64)
    close(ours(to_ct(x)), theirs(x))
    nn.utils.remove_weight_norm(ours)
    torch.nn.utils.remove_weight_norm(theirs)
    assert sorted(ours.state_dict()) == ["bias", "weight"]
    close(ours.weight, theirs.weight)

    theirs = torch.nn.utils.spectral_norm(torch.nn.Linear(4, 3, dtype=torch.float64))
    ours = nn.utils.spectral_norm(nn.Linear(4, 3, dtype=ct.float64))
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    ours.load_state_dict({k: to_ct(v) for k, v in theirs.state_dict().items()})
    for _ in range(2):
        close(ours(to_ct(x)), theirs(x))
    close(ours.weight_u, theirs.weight_u)
    nn.utils.remove_spectral_norm(ours)
    torch.nn.utils.remove_spectral_norm(theirs)
    close(ours.weight, theirs.weight)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        nn.utils.remove_spectral_norm(ours)


def test_parameters_to_vector_round_trip():
    model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    vec = nn.utils.parameters_to_vector(model.parameters())
    assert tuple(vec.shape) == (3 * 2 + 2 + 2 + 1,)
    nn.utils.vector_to_parameters(ct.arange(11, dtype=ct.float32), model.parameters())
    assert model[0].weight.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert model[1].bias.tolist() == [10.0]
    with pytest.raises(RuntimeError, match="11"):
        nn.utils.vector_to_parameters(ct.zeros(5), model.parameters())


def test_data_parallel_runs_the_module_on_its_device():
    torch = torch_or_skip()
    inner_t = torch.nn.Linear(3, 2, dtype=torch.float64)
    inner_c = nn.Linear(3, 2, dtype=ct.float64)
    load_from_torch(inner_c, inner_t)
    ours, theirs = nn.DataParallel(inner_c), torch.nn.DataParallel(inner_t)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    x = torch.randn(4, 3, dtype=torch.float64)
    close(ours(to_ct(x)), theirs(x))
    # (PyTorch's functional form needs an accelerator; here it runs on the module's device)
    close(nn.parallel.data_parallel(inner_c, to_ct(x)), inner_t(x))
    assert ours.module is inner_c
    with pytest.raises(NotImplementedError, match="several devices"):
        nn.DataParallel(inner_c, device_ids=[0, 1])


def test_init_has_every_torch_initializer():
    torch = torch_or_skip()
    for name, fn in vars(torch.nn.init).items():
        if name.startswith("_") or not inspect.isfunction(fn) or fn.__module__ != "torch.nn.init":
            continue
        ours = getattr(nn.init, name)
        assert [p.name for p in inspect.signature(ours).parameters.values()] == [
            p.name for p in inspect.signature(fn).parameters.values()
        ], name
    w = ct.empty(3, 4)
    with pytest.warns(FutureWarning, match="nn.init.xavier_uniform` is now deprecated"):
        nn.init.xavier_uniform(w)
    bound = (6 / 7) ** 0.5
    assert float(w.abs().max()) <= bound


def test_module_and_functional_names_exist():
    """Every layer named by the task exists under PyTorch's name, functional forms too."""
    for name in (
        "RNN",
        "LSTM",
        "GRU",
        "RNNCell",
        "LSTMCell",
        "GRUCell",
        "Transformer",
        "TransformerEncoder",
        "TransformerDecoder",
        "TransformerEncoderLayer",
        "TransformerDecoderLayer",
        "ConvTranspose1d",
        "ConvTranspose2d",
        "Conv3d",
        "PixelShuffle",
        "PixelUnshuffle",
        "Upsample",
        "InstanceNorm1d",
        "InstanceNorm2d",
        "LocalResponseNorm",
        "ReflectionPad1d",
        "ReflectionPad2d",
        "ReplicationPad1d",
        "ReplicationPad2d",
        "ZeroPad1d",
        "ZeroPad2d",
        "ConstantPad1d",
        "ConstantPad2d",
        "AdaptiveMaxPool1d",
        "AdaptiveMaxPool2d",
        "MaxUnpool2d",
        "Dropout2d",
        "Dropout3d",
        "AlphaDropout",
        "PReLU",
        "Softmax2d",
        "CosineSimilarity",
        "PairwiseDistance",
        "EmbeddingBag",
        "MarginRankingLoss",
        "HingeEmbeddingLoss",
        "MultiLabelMarginLoss",
        "MultiMarginLoss",
        "SoftMarginLoss",
        "MultiLabelSoftMarginLoss",
        "TripletMarginLoss",
        "TripletMarginWithDistanceLoss",
        "CosineEmbeddingLoss",
        "CTCLoss",
        "PoissonNLLLoss",
        "GaussianNLLLoss",
        "DataParallel",
    ):
        assert issubclass(getattr(nn, name), nn.Module), name
    for name in (
        "conv_transpose1d",
        "conv_transpose2d",
        "conv3d",
        "pixel_shuffle",
        "interpolate",
        "instance_norm",
        "local_response_norm",
        "pad",
        "adaptive_max_pool2d",
        "max_unpool2d",
        "dropout2d",
        "dropout3d",
        "alpha_dropout",
        "prelu",
        "cosine_similarity",
        "pairwise_distance",
        "embedding_bag",
        "ctc_loss",
        "poisson_nll_loss",
        "gaussian_nll_loss",
        "margin_ranking_loss",
        "triplet_margin_loss",
        "multilabel_margin_loss",
    ):
        assert callable(getattr(F, name)), name
    with pytest.raises(NotImplementedError, match="linalg"):
        nn.utils.parametrizations.orthogonal(nn.Linear(2, 2))
