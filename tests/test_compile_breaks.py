"""coretorch.compile graph breaks: whatever reads tensor values on the host, makes a tensor from
host data or has a data-dependent output size ends the capture. Without fullgraph the function
runs eagerly (right results) and says why once, naming the op and the user's line; with
fullgraph=True it raises `GraphBreak` naming both."""

from __future__ import annotations

import warnings

import pytest

import coretorch as ct
from coretorch.compile import CompileWarning, GraphBreak

BREAKS = {  # name -> (what the step does to y, the op the message names, why)
    "item": (lambda y: y.sum().item(), "item()", "reads tensor values on the host"),
    "tolist": (lambda y: y.tolist(), "tolist()", "reads tensor values on the host"),
    "print": (lambda y: print(y), "__repr__()", "reads tensor values on the host"),
    "format": (lambda y: f"{y.sum():.3f}", "__format__()", "reads tensor values on the host"),
    "numpy": (lambda y: y.numpy(), "numpy()", "reads tensor values on the host"),
    "bool": (lambda y: bool(y.sum() > 0), "__bool__()", "reads tensor values on the host"),
    "float": (lambda y: float(y.sum()), "__float__()", "reads tensor values on the host"),
    "int": (lambda y: int(y.sum()), "__int__()", "reads tensor values on the host"),
    "nonzero": (
        lambda y: y.nonzero(),
        "nonzero() (through _nonzero)",
        "its kernel allocates its own result",
    ),
    "masked_select": (
        lambda y: y.masked_select(y > 0),
        "masked_select() (through _nonzero)",
        "its kernel allocates its own result",
    ),
    "unique": (
        lambda y: ct.unique(y),
        "unique() (through _nonzero)",
        "its kernel allocates its own result",
    ),
    "tensor": (
        lambda y: y + ct.tensor([1.0, 2.0, 3.0]),
        "tensor()",
        "writes host data into a tensor",
    ),
    "from_numpy": (
        lambda y: y + ct.from_numpy(__import__("numpy").ones(3, "float32")),
        "from_numpy()",
        "makes a tensor from host data",
    ),
}


def _step(body):
    def step(x):
        y = x * 2
        body(y)  # the line the messages name
        return y + 1

    return step


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_graph_break_falls_back_to_eager_and_warns_once(name, capsys):
    body, what, why = BREAKS[name]
    f = ct.compile(_step(body))
    x = ct.tensor([1.0, -2.0, 3.0])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        results = [f(x).tolist() for _ in range(4)]
    assert results == [[3.0, -3.0, 7.0]] * 4
    msgs = [str(m.message) for m in w if issubclass(m.category, CompileWarning)]
    assert len(msgs) == 1, msgs
    assert f"step runs eagerly: graph break in {what}: " in msgs[0] and why in msgs[0]
    assert (
        "test_compile_breaks.py:" in msgs[0]
        and "body(y)  # the line the messages name" not in msgs[0]
    )  # the user's own line: the lambda above, not the step's call of it
    capsys.readouterr()


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_graph_break_raises_with_fullgraph(name, capsys):
    body, what, why = BREAKS[name]
    f = ct.compile(_step(body), fullgraph=True)
    x = ct.tensor([1.0, -2.0, 3.0])
    f(x)  # the first call runs eagerly
    with pytest.raises(GraphBreak) as e:
        f(x)
    assert e.value.what == what and why in e.value.why
    assert (
        e.value.site.startswith("tests/test_compile_breaks.py:")
        or "test_compile_breaks.py:" in e.value.site
    )
    assert str(e.value).startswith(f"coretorch.compile: graph break in {what}: ")
    capsys.readouterr()


def test_adam_single_tensor_path_breaks_at_its_step_read():
    import coretorch.nn.functional as F
    from coretorch import nn

    ct.manual_seed(0)
    model = nn.Linear(4, 2)
    opt = ct.optim.Adam(model.parameters(), foreach=False, fused=False)

    def step(x, y):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()

    f = ct.compile(step, fullgraph=True)
    x, y = ct.randn(3, 4), ct.randn(3, 2)
    f(x, y)
    with pytest.raises(GraphBreak, match=r"graph break in step\(\) \(through item\(\)\)") as e:
        f(x, y)
    assert "opt.step()" in e.value.site


def test_forward_only_result_with_a_graph_runs_eagerly():
    from coretorch import nn

    lin = nn.Linear(2, 1)
    f = ct.compile(lambda x: lin(x))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(3):
            out = f(ct.ones(1, 2))
    assert out.grad_fn is not None  # eager: the caller may call backward
    assert any("graph break in the result: it requires grad" in str(m.message) for m in w)
