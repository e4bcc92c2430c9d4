"""Embedding: a lookup table of `num_embeddings` vectors of size `embedding_dim`."""

from __future__ import annotations

from ...autograd.grad_mode import no_grad
from .. import functional as F, init
from ..functional.sparse import normalize_padding_idx
from ..parameter import Parameter
from ._factory import new_param
from ._layer import options_repr
from .module import Module

__all__ = ["Embedding"]


class _EmbeddingTable(Module):
    """The (num_embeddings, embedding_dim) weight and the lookup options that Embedding and
    EmbeddingBag share; the weight starts N(0, 1) with the `padding_idx` row zero."""

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None,
        max_norm: float | None,
        norm_type: float,
        scale_grad_by_freq: bool,
        sparse: bool,
        _weight,
        requires_grad: bool,
        device,
        dtype,
    ) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = normalize_padding_idx(padding_idx, num_embeddings)
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = new_param((num_embeddings, embedding_dim), device, dtype)
            self.weight.requires_grad_(requires_grad)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError(
                    "Shape of weight does not match num_embeddings and embedding_dim"
                )
            self.weight = Parameter(_weight, requires_grad=requires_grad)

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)


class Embedding(_EmbeddingTable):
    """Rows of `weight` (num_embeddings, embedding_dim) picked by integer indices; weights start as
    N(0, 1) and the `padding_idx` row is zero and receives no gradient.

    Examples:
        >>> import coretorch
        >>> emb = coretorch.nn.Embedding(10, 4, padding_idx=0)
        >>> emb
        Embedding(10, 4, padding_idx=0)
        >>> emb(coretorch.tensor([[0, 2], [5, 9]])).shape
        coretorch.Size([2, 2, 4])
        >>> emb(coretorch.tensor([0]))
        tensor([[0., 0., 0., 0.]], grad_fn=<EmbeddingBackward0>)
        >>> emb(coretorch.tensor([10]))
        Traceback (most recent call last):
            ...
        IndexError: index out of range in self
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight=None,
        _freeze: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(
            num_embeddings,
            embedding_dim,
            padding_idx,
            max_norm,
            norm_type,
            scale_grad_by_freq,
            sparse,
            _weight,
            not _freeze,
            device,
            dtype,
        )

    def forward(self, input):
        return F.embedding(
            input,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    def extra_repr(self) -> str:
        return options_repr(
            self,
            ("num_embeddings", "embedding_dim"),
            padding_idx=None,
            max_norm=None,
            norm_type=2,
            scale_grad_by_freq=False,
            sparse=False,
        )

    @classmethod
    def from_pretrained(
        cls,
        embeddings,
        freeze: bool = True,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> "Embedding":
        """An Embedding whose weight is the 2-D tensor `embeddings` (frozen by default)."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(
            rows,
            cols,
            _weight=embeddings,
            _freeze=freeze,
            padding_idx=padding_idx,
            max_norm=max_norm,
            norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq,
            sparse=sparse,
        )
