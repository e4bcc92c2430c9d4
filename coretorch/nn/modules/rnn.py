"""Recurrent layers: RNN, LSTM, GRU (multi-layer, bidirectional, batch_first, dropout between
layers, LSTM projections, packed sequences) and the single-step RNNCell, LSTMCell, GRUCell.

Parameter names, shapes, registration order and initialization (U(-1/√hidden, 1/√hidden) on
every parameter) are PyTorch's, so a state_dict moves between the two."""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any, Callable

from ...ops import aten
from .. import init
from ..functional import rnn as _rnn
from ..utils.rnn import PackedSequence
from ._factory import new_param
from ._layer import options_repr
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _permute(hx, permutation):
    if permutation is None:
        return hx
    if isinstance(hx, tuple):
        return tuple(h.index_select(1, permutation) for h in hx)
    return hx.index_select(1, permutation)


def _check_hidden(hx, expected: tuple, msg: str) -> None:
    if tuple(hx.shape) != expected:
        raise RuntimeError(msg.format(expected, list(hx.shape)))


class RNNBase(Module):
    """The parameters and checks shared by RNN, LSTM and GRU (`mode` is "RNN_TANH",
    "RNN_RELU", "LSTM" or "GRU")."""

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        if (
            not isinstance(dropout, numbers.Number)
            or isinstance(dropout, bool)
            or not 0 <= dropout <= 1
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the "
                "probability of an element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                f"dropout option adds dropout after all but last recurrent layer, so "
                f"non-zero dropout expects num_layers greater than 1, but got "
                f"dropout={dropout} and num_layers={num_layers}",
                stacklevel=3,
            )
        for name, value, kind in (
            ("bias", bias, bool),
            ("batch_first", batch_first, bool),
            ("input_size", input_size, int),
            ("hidden_size", hidden_size, int),
        ):
            if not isinstance(value, kind):
                raise TypeError(
                    f"{name} should be of type {kind.__name__}, got: {type(value).__name__}"
                )
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _rnn.GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size, self.hidden_size = input_size, hidden_size
        self.num_layers, self.bias = num_layers, bias
        self.batch_first, self.dropout = batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        gate_size = _rnn.GATES[mode] * hidden_size
        dirs = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(dirs):
                layer_input = input_size if layer == 0 else real_hidden * dirs
                suffix = "_reverse" if direction == 1 else ""
                shapes: list[tuple[str, tuple[int, ...]]] = [
                    ("weight_ih", (gate_size, layer_input)),
                    ("weight_hh", (gate_size, real_hidden)),
                ]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for base, shape in shapes:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, new_param(shape, device, dtype))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list:
        """The parameters per layer and direction, as lists."""
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """Kept for PyTorch compatibility; parameters need no flattening here."""

    def reset_parameters(self) -> None:
        """Re-initialize every weight and bias uniformly in +-1/sqrt(hidden_size)."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _real_hidden(self) -> int:
        return self.proj_size if self.proj_size > 0 else self.hidden_size

    def check_input(self, input, batch_sizes) -> None:
        """Check `input` against the layer.

        Raises:
            ValueError: when its dtype differs from the weights'.
            RuntimeError: when it has the wrong number of dimensions or its last size is
                not input_size.
        """
        w = self._flat_weights[0]
        if input.dtype is not w.dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype "
                f"({w.dtype}). Convert input: input.to({w.dtype}), or convert "
                f"model: model.to({input.dtype})"
            )
        expected_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_dim:
            raise RuntimeError(f"input must have {expected_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {input.size(-1)}"
            )

    def _mini_batch(self, input, batch_sizes) -> int:
        if batch_sizes is not None:
            return int(batch_sizes[0])
        return input.size(0) if self.batch_first else input.size(1)

    def get_expected_hidden_size(self, input, batch_sizes) -> tuple:
        """The hidden state shape (num_layers * directions, batch, hidden) expected for `input`."""
        dirs = 2 if self.bidirectional else 1
        return (self.num_layers * dirs, self._mini_batch(input, batch_sizes), self._real_hidden())

    def check_hidden_size(
        self, hx, expected_hidden_size: tuple, msg: str = "Expected hidden size {}, got {}"
    ) -> None:
        """Check that `hx` has `expected_hidden_size`.

        Raises:
            RuntimeError: with `msg` formatted with the expected and actual sizes.
        """
        _check_hidden(hx, expected_hidden_size, msg)

    def check_forward_args(self, input, hidden, batch_sizes) -> None:
        """Check `input` and the hidden state before a forward pass.

        Raises:
            ValueError: on a dtype mismatch.
            RuntimeError: on a wrong input or hidden shape.
        """
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        """Reorder the batch dimension of `hx` by `permutation` (None leaves it)."""
        return _permute(hx, permutation)

    def _zeros_state(self, input, batch: int):
        dirs = 2 if self.bidirectional else 1
        return aten.zeros(
            (self.num_layers * dirs, batch, self._real_hidden()),
            dtype=input.dtype,
            device=input.device,
        )

    def _check_state_rank(self, hx, batched: bool) -> None:
        want = 3 if batched else 2
        if hx.dim() != want:
            kind = "batched 3-D" if batched else "unbatched 2-D"
            raise RuntimeError(
                f"For {kind} input, hx should also be {want}-D but got {hx.dim()}-D tensor"
            )

    def _unsqueeze_state(self, hx):
        return hx.unsqueeze(1)

    def _prepare(self, input, hx):
        """(input, hx, batch_sizes, sorted_indices, unsorted_indices, batched, batch_dim): the
        input unpacked from a PackedSequence or given a batch dim, hx filled in and permuted."""
        name = "RNN" if self.mode.startswith("RNN") else self.mode
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            sizes = [int(b) for b in batch_sizes.tolist()]
            if hx is None:
                hx = self._zeros_state(data, sizes[0])
            else:
                hx = self.permute_hidden(hx, sorted_indices)
            return data, hx, sizes, sorted_indices, unsorted_indices, True, None
        if input.dim() not in (2, 3):
            raise ValueError(
                f"{name}: Expected input to be 2D or 3D, got {input.dim()}D tensor instead"
            )
        batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not batched:
            input = input.unsqueeze(batch_dim)
        if hx is not None:
            self._check_state_rank(hx, batched)
            if not batched:
                hx = self._unsqueeze_state(hx)
        else:
            hx = self._zeros_state(input, input.size(batch_dim))
        return input, hx, None, None, None, batched, batch_dim

    def _run(self, input, hx, batch_sizes):
        return _rnn.rnn_forward(
            self.mode,
            input,
            hx,
            self._flat_weights,
            self.bias,
            self.num_layers,
            self.dropout,
            self.training,
            self.bidirectional,
            self.batch_first,
            batch_sizes,
            self.proj_size,
        )

    def forward(self, input, hx=None):
        orig = input
        input, hx, batch_sizes, sorted_idx, unsorted_idx, batched, batch_dim = self._prepare(
            input, hx
        )
        self.check_forward_args(input, hx, batch_sizes)
        output, hidden = self._run(input, hx, batch_sizes)
        if isinstance(orig, PackedSequence):
            return (
                PackedSequence(output, orig.batch_sizes, sorted_idx, unsorted_idx),
                self.permute_hidden(hidden, unsorted_idx),
            )
        if not batched:
            return output.squeeze(batch_dim), hidden.squeeze(1)
        return output, hidden

    def extra_repr(self) -> str:
        return options_repr(
            self,
            ("input_size", "hidden_size"),
            proj_size=0,
            num_layers=1,
            bias=True,
            batch_first=False,
            dropout=0,
            bidirectional=False,
        )


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ihᵀ + b_ih + h_{t-1} W_hhᵀ + b_hh) (``nonlinearity="relu"``
    for ReLU). ``output, h_n = rnn(input, h_0)``.

    ``RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
    batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None)``
    """

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(
                f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(mode, *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory: ``output, (h_n, c_n) = lstm(input, (h_0, c_0))``; with
    `proj_size` > 0 the hidden state is projected to proj_size by ``weight_hr``.

    ``LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, proj_size=0, device=None, dtype=None)``

    Raises:
        ValueError: when the input's dtype differs from the weights'.
        RuntimeError: when the input or a state has the wrong shape.

    Examples:
        >>> import coretorch
        >>> lstm = coretorch.nn.LSTM(4, 8, num_layers=2, batch_first=True)
        >>> lstm
        LSTM(4, 8, num_layers=2, batch_first=True)
        >>> out, (h, c) = lstm(coretorch.zeros(3, 5, 4))  # batch 3, 5 steps, 4 features
        >>> out.shape, h.shape, c.shape
        (coretorch.Size([3, 5, 8]), coretorch.Size([2, 3, 8]), coretorch.Size([2, 3, 8]))
        >>> lstm(coretorch.zeros(3, 5, 6))
        Traceback (most recent call last):
            ...
        RuntimeError: input.size(-1) must be equal to input_size. Expected 4, got 6
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes) -> tuple:
        """The cell state shape (num_layers * directions, batch, hidden_size) expected for
        `input`."""
        dirs = 2 if self.bidirectional else 1
        return (self.num_layers * dirs, self._mini_batch(input, batch_sizes), self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes) -> None:
        """Check `input` and the (h, c) state before a forward pass.

        Raises:
            ValueError: on a dtype mismatch.
            RuntimeError: on a wrong input, hidden or cell shape.
        """
        self.check_input(input, batch_sizes)
        self.check_hidden_size(
            hidden[0],
            self.get_expected_hidden_size(input, batch_sizes),
            "Expected hidden[0] size {}, got {}",
        )
        self.check_hidden_size(
            hidden[1],
            self.get_expected_cell_size(input, batch_sizes),
            "Expected hidden[1] size {}, got {}",
        )

    def _zeros_state(self, input, batch: int):
        dirs = 2 if self.bidirectional else 1
        c = aten.zeros(
            (self.num_layers * dirs, batch, self.hidden_size),
            dtype=input.dtype,
            device=input.device,
        )
        return super()._zeros_state(input, batch), c

    def _check_state_rank(self, hx, batched: bool) -> None:
        want = 3 if batched else 2
        if hx[0].dim() != want or hx[1].dim() != want:
            kind = "batched 3-D" if batched else "unbatched 2-D"
            raise RuntimeError(
                f"For {kind} input, hx and cx should also be {want}-D but got "
                f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors"
            )

    def _unsqueeze_state(self, hx):
        return hx[0].unsqueeze(1), hx[1].unsqueeze(1)

    def _prepare(self, input, hx):
        return super()._prepare(input, None if hx is None else tuple(hx))

    def forward(self, input, hx=None):
        orig = input
        input, hx, batch_sizes, sorted_idx, unsorted_idx, batched, batch_dim = self._prepare(
            input, hx
        )
        self.check_forward_args(input, hx, batch_sizes)
        output, h, c = self._run(input, hx, batch_sizes)
        if isinstance(orig, PackedSequence):
            return (
                PackedSequence(output, orig.batch_sizes, sorted_idx, unsorted_idx),
                self.permute_hidden((h, c), unsorted_idx),
            )
        if not batched:
            return output.squeeze(batch_dim), (h.squeeze(1), c.squeeze(1))
        return output, (h, c)


class GRU(RNNBase):
    """Gated recurrent unit: ``output, h_n = gru(input, h_0)``.

    ``GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, device=None, dtype=None)``
    """

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# ---- single steps ----------------------------------------------------------------------------


class RNNCellBase(Module):
    """``weight_ih`` (chunks * hidden, input), ``weight_hh`` (chunks * hidden, hidden) and the
    optional ``bias_ih``/``bias_hh``, all U(-1/√hidden, 1/√hidden)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = new_param((num_chunks * hidden_size, input_size), device, dtype)
        self.weight_hh = new_param((num_chunks * hidden_size, hidden_size), device, dtype)
        if bias:
            self.bias_ih = new_param((num_chunks * hidden_size,), device, dtype)
            self.bias_hh = new_param((num_chunks * hidden_size,), device, dtype)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-initialize every weight and bias uniformly in +-1/sqrt(hidden_size)."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _batched(self, input, hx, states: int):
        """(input, hx, batched): 1-D input and state get a batch dim; hx None becomes zeros."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        parts = () if hx is None else ((hx,) if states == 1 else tuple(hx))
        for i, h in enumerate(parts):
            if h.dim() not in (1, 2):
                what = "hidden" if states == 1 else f"hx[{i}]"
                raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {h.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
            parts = tuple(h.unsqueeze(0) for h in parts)
        if not parts:
            z = aten.zeros(
                (input.size(0), self.hidden_size), dtype=input.dtype, device=input.device
            )
            parts = (z,) * states
        return input, (parts[0] if states == 1 else parts), batched


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh) (or relu)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, hx, batched = self._batched(input, hx, 1)
        if self.nonlinearity == "tanh":
            fn = _rnn.rnn_tanh_cell
        elif self.nonlinearity == "relu":
            fn = _rnn.rnn_relu_cell
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        ret = fn(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if batched else ret.squeeze(0)


class _GatedCell(RNNCellBase):
    """A cell of `_chunks` gates whose step is the functional `_cell` over `_states` states."""

    _chunks = _states = 1
    _cell: Callable[..., Any]  # the functional cell (per subclass)

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, self._chunks, device, dtype)

    def forward(self, input, hx=None):
        input, hx, batched = self._batched(input, hx, self._states)
        ret = type(self)._cell(
            input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh
        )
        if batched:
            return ret
        return tuple(r.squeeze(0) for r in ret) if self._states > 1 else ret.squeeze(0)


class LSTMCell(_GatedCell):
    """One LSTM step: ``h', c' = cell(x, (h, c))``."""

    _chunks, _states, _cell = 4, 2, staticmethod(_rnn.lstm_cell)


class GRUCell(_GatedCell):
    """One GRU step: ``h' = cell(x, h)``."""

    _chunks, _states, _cell = 3, 1, staticmethod(_rnn.gru_cell)
