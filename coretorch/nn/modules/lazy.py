"""Lazy layers: LazyLinear, LazyConv1d/2d/3d, LazyConvTranspose1d/2d/3d, LazyBatchNorm1d/2d/3d
and LazyInstanceNorm1d/2d/3d infer their input size (in_features, in_channels, num_features)
from the first input they see; until then their parameters are `UninitializedParameter`s
(buffers `UninitializedBuffer`s). After that first call each becomes the plain layer
(``LazyLinear`` -> ``Linear``), as in PyTorch."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ... import dtypes as _dt
from ...autograd.grad_mode import no_grad
from ...ops import aten
from ...tensor.tensor import Tensor
from ..parameter import Parameter
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .conv import Conv1d, Conv2d
from .conv_transpose import Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .linear import Linear
from .module import Module

# what the mixins below are mixed into, for the type checker (plain mixins at run time)
if TYPE_CHECKING:
    _TensorBase = Tensor
    _ModuleBase = Module
else:
    _TensorBase = _ModuleBase = object

__all__ = [
    "UninitializedParameter",
    "UninitializedBuffer",
    "LazyModuleMixin",
    "LazyLinear",
    "LazyConv1d",
    "LazyConv2d",
    "LazyConv3d",
    "LazyConvTranspose1d",
    "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
]


class _Uninitialized(_TensorBase):
    """What the uninitialized tensors share: no shape until `materialize`."""

    __slots__ = ()
    cls_to_become: type = Tensor

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give the tensor data of `shape` (uninitialized values) and turn it into a plain
        Parameter / Tensor."""
        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        self.data = aten.empty(tuple(shape), device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. "
            "This error usually happens in `load_state_dict` when trying to "
            "load an uninitialized parameter into an initialized one. Call "
            "`forward` to initialize the parameters before accessing their "
            "attributes."
        )

    # the ignore: mypy finds this signature, the same as Tensor's, incompatible (a dunder quirk)
    def __repr__(self, *, tensor_contents=None) -> str:  # type: ignore[override]
        return f"<{type(self).__name__}>"


class UninitializedParameter(_Uninitialized, Parameter):  # type: ignore[misc]  # the __repr__ quirk
    """A parameter whose shape is not known yet (a lazy layer's, until its first call)."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        data = aten.empty(0, device=device, dtype=dtype)
        return Parameter.__new__(cls, data, requires_grad)


class UninitializedBuffer(_Uninitialized, Tensor):
    """A buffer whose shape is not known yet."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None):
        from ...tensor.impl import new_impl

        data = aten.empty(0, device=device, dtype=dtype)
        return new_impl(
            cls,
            data._storage,
            data._shape,
            data._stride,
            data._offset,
            data._dtype,
            data._device,
            data._keys,
            data._vc,
            None,
        )


def _is_uninitialized(t) -> bool:
    return isinstance(t, _Uninitialized)


class LazyModuleMixin(_ModuleBase):
    """A layer whose parameters are built by ``initialize_parameters(*inputs)`` on its first
    call (a forward pre-hook); it then becomes ``cls_to_become``."""

    cls_to_become: type | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer still waits for its shape."""
        tensors = list(self._parameters.values()) + list(self._buffers.values())
        return any(_is_uninitialized(t) for t in tensors)

    def initialize_parameters(self, *args, **kwargs) -> None:
        """Materialize the uninitialized parameters from the shapes of the first input; a lazy
        module overrides it (this one raises NotImplementedError)."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {type(self).__name__}"
        )


class _LazyLayer(LazyModuleMixin):
    """A lazy layer whose parameters wait for the size named by `_inferred`, which the first
    input gives (`in_features`, `in_channels` or `num_features`)."""

    _inferred: str
    cls_to_become: type  # set by _lazy_class
    weight: Parameter  # an UninitializedParameter until the first call

    def _lazy_init(self, out_attr: str, out_size: int, bias: bool, device, dtype) -> None:
        # An uninitialized weight (and bias) of a layer with `out_size` outputs.
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        setattr(self, out_attr, out_size)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        # Nothing to reset until the first input has given the parameters their shapes.
        if not self.has_uninitialized_params() and getattr(self, self._inferred) != 0:
            super().reset_parameters()  # type: ignore[misc]  # the layer mixed in has it


def _materialize(p: Tensor | None, shape: tuple) -> None:
    """Give `p` its `shape` if it is still uninitialized (a layer without bias has None)."""
    if isinstance(p, _Uninitialized):
        p.materialize(shape)


def _infer_parameters(module, args):
    module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    del module._initialize_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become


class LazyLinear(_LazyLayer, Linear):
    """A Linear layer whose `in_features` is the last dim of its first input."""

    cls_to_become = Linear
    _inferred = "in_features"

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(0, 0, False)
        self._lazy_init("out_features", out_features, bias, device, dtype)

    def initialize_parameters(self, input) -> None:
        """Set `in_features` from the last dim of `input` and materialize `weight` (and `bias`)."""
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                _materialize(self.weight, (self.out_features, self.in_features))
                _materialize(self.bias, (self.out_features,))
                self.reset_parameters()


class _LazyConvMixin(_LazyLayer):
    # set by the convolution classes it is mixed into
    _n: int
    in_channels: int
    out_channels: int
    groups: int
    transposed: bool
    kernel_size: tuple[int, ...]
    _inferred = "in_channels"

    def __init__(
        self,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode)
        self._lazy_init("out_channels", out_channels, bias, device, dtype)

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        if not self.has_uninitialized_params():
            return
        n = self._n
        if input.dim() not in (n + 1, n + 2):
            raise RuntimeError(
                f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                f"{self.cls_to_become.__name__}, but got input of size: "
                f"{list(input.shape)}"
            )
        self.in_channels = input.shape[0 if input.dim() == n + 1 else 1]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        with no_grad():
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups)
            else:
                shape = (self.out_channels, self.in_channels // self.groups)
            _materialize(self.weight, shape + tuple(self.kernel_size))
            _materialize(self.bias, (self.out_channels,))
            self.reset_parameters()


class _LazyConvTransposeMixin(_LazyConvMixin):
    def __init__(
        self,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
        device=None,
        dtype=None,
    ) -> None:
        LazyModuleMixin.__init__(
            self,
            0,
            0,
            kernel_size,
            stride,
            padding,
            output_padding,
            groups,
            False,
            dilation,
            padding_mode,
        )
        self._lazy_init("out_channels", out_channels, bias, device, dtype)


class _LazyNormMixin(_LazyLayer):
    _inferred = "num_features"

    def __init__(
        self,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(0, eps, momentum, False, False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = aten.zeros((), dtype=_dt.int64, device=device)

    def _feature_dim(self, input) -> int:
        return 1 if input.dim() > 1 else 0

    def initialize_parameters(self, input) -> None:
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[self._feature_dim(input)]
        with no_grad():
            for name in ("weight", "bias", "running_mean", "running_var"):
                t = getattr(self, name)
                if _is_uninitialized(t):
                    t.materialize((self.num_features,))
            self.reset_parameters()


class _LazyInstanceNormMixin(_LazyNormMixin):
    _spatial: int  # set by the instance-norm class it is mixed into

    def _feature_dim(self, input) -> int:
        # an unbatched instance-norm input has its channels first
        return 0 if input.dim() == self._spatial + 1 else 1


def _lazy_class(mixin: type[_LazyLayer], base: type) -> type:
    """The lazy form of `base`: `mixin` first (its __init__ and initialize_parameters), and
    it becomes `base` after its first call."""
    name = "Lazy" + base.__name__
    return type(
        name,
        (mixin, base),
        {
            "cls_to_become": base,
            "__module__": __name__,
            "__doc__": f"A {base.__name__} whose `{mixin._inferred}` comes from its first input.",
        },
    )


LazyConv1d, LazyConv2d, LazyConv3d = (
    _lazy_class(_LazyConvMixin, base) for base in (Conv1d, Conv2d, Conv3d)
)
LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = (
    _lazy_class(_LazyConvTransposeMixin, base)
    for base in (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)
)
LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d = (
    _lazy_class(_LazyNormMixin, base) for base in (BatchNorm1d, BatchNorm2d, BatchNorm3d)
)
LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d = (
    _lazy_class(_LazyInstanceNormMixin, base)
    for base in (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d)
)
