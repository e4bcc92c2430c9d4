"""detect_anomaly: forward ops and backward nodes that produce NaN/Inf, reported with their site."""

from __future__ import annotations

import math
import sys
import warnings

import pytest

import coretorch as ct
from coretorch_profiler import AnomalyError, AnomalyWarning, detect_anomaly, profile


def _line() -> int:
    return sys._getframe(1).f_lineno


def _needs(*ops: str) -> None:
    x = ct.tensor([1.0])
    for op in ops:
        try:
            getattr(x, op)()
        except NotImplementedError:
            pytest.skip(f"cpu kernel for {op} not available yet")


def _needs_autograd() -> None:
    if (
        not hasattr(ct.Tensor, "backward")
        or not hasattr(ct, "autograd")
        or not hasattr(ct.autograd, "grad")
    ):
        pytest.skip("autograd engine not available yet")
    try:
        (ct.tensor([1.0]).requires_grad_().sqrt() * 0.0).sum().backward()
    except NotImplementedError as e:
        pytest.skip(f"autograd of sqrt/mul/sum not available yet: {e}")


def test_forward_log_of_zero_names_op_line_shapes_and_counts():
    _needs("log")
    x = ct.tensor([1.0, 0.0, 2.0])
    with detect_anomaly():
        with pytest.raises(AnomalyError) as info:
            line = _line() + 1
            x.log()
    e = info.value
    assert isinstance(e, RuntimeError)
    msg = str(e)
    assert msg.startswith(
        "Anomaly detected: aten::log returned inf values in its 0th output "
        "from finite inputs (0 nan and 1 inf of 3 values)."
    )
    assert f"{__file__}:{line}" in msg and "\n    x.log()\n" in msg
    assert "shapes [[3]], dtypes ['float32']" in msg
    assert (e.phase, e.op, e.output_index, e.nan_count, e.inf_count) == (
        "forward",
        "aten::log",
        0,
        0,
        1,
    )
    assert (e.filename, e.lineno, e.input_shapes, e.input_dtypes) == (
        __file__,
        line,
        [[3]],
        ["float32"],
    )


def test_forward_reports_only_the_op_that_made_the_bad_values():
    _needs("log")
    x = ct.tensor([0.0, 1.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with detect_anomaly(action="warn"):
            line = _line() + 1
            y = x.log()
            z = (y * 0.0) + 1.0  # inf * 0 = nan: made from a non-finite input, not reported
    found = [w for w in caught if issubclass(w.category, AnomalyWarning)]
    assert len(found) == 1
    assert "aten::log" in str(found[0].message)
    assert (found[0].filename, found[0].lineno) == (__file__, line)
    assert math.isnan(z.tolist()[0])  # the program went on


def test_check_flags_and_bad_action():
    _needs("log", "sqrt")
    with detect_anomaly(check_inf=False):
        ct.tensor([0.0]).log()  # -inf only: not checked
        with pytest.raises(AnomalyError, match=r"aten::sqrt returned nan values .*1 nan of 1"):
            ct.tensor([-1.0]).sqrt()
    with detect_anomaly(check_nan=False):
        ct.tensor([-1.0]).sqrt()
    with pytest.raises(ValueError, match="expected action to be 'raise' or 'warn', got 'log'"):
        detect_anomaly(action="log")


def test_inplace_op_is_judged_on_its_inputs_before_it_ran():
    _needs("log")
    x = ct.tensor([0.0, 1.0])
    with detect_anomaly():
        with pytest.raises(AnomalyError, match="aten::log_"):
            x.log_()


def test_meta_tensors_are_not_checked_and_state_is_clean_after():
    from coretorch import record_function as rf_mod

    with detect_anomaly():
        ct.zeros(3, device="meta").log()
    assert not rf_mod.state.active and not rf_mod.open_regions()


def test_detector_and_profiler_together_keep_the_event():
    _needs("log")
    with profile() as prof:
        with detect_anomaly():
            with pytest.raises(AnomalyError):
                ct.tensor([0.0]).log()
    assert [e.name for e in prof.events()].count("aten::log") == 1


def test_backward_nan_names_the_node_and_carries_the_forward_site():
    _needs_autograd()
    _needs("sqrt")
    x = ct.tensor([0.0, 4.0]).requires_grad_()
    with detect_anomaly():
        line = _line() + 1
        y = x.sqrt()
        loss = (y * 0.0).sum()  # forward finite; backward: 0 * (1 / (2 * sqrt(0))) = nan
        with pytest.raises(AnomalyError) as info:
            loss.backward()
    e = info.value
    assert str(e).startswith("Function 'SqrtBackward0' returned nan values in its 0th output.")
    assert (e.phase, e.op, e.forward_op) == ("backward", "SqrtBackward0", "aten::sqrt")
    assert (e.filename, e.lineno, e.code) == (__file__, line, "y = x.sqrt()")
    assert e.input_shapes == [[2]] and f"{__file__}:{line}" in str(e)


def test_backward_nan_in_a_composites_part_carries_the_users_call():
    # linear is a composite: t, transpose and addmm make its nodes; each node's site is the
    # user's call of linear (the frames inside linear are coretorch's)
    _needs_autograd()
    x, b = ct.ones(2, 3), ct.ones(4)
    w = ct.ones(4, 3).requires_grad_()
    with detect_anomaly():
        line = _line() + 1
        y = ct.nn.functional.linear(x, w, b)
        with pytest.raises(AnomalyError) as info:
            y.backward(ct.full((2, 4), float("nan")))
    e = info.value
    assert (e.op, e.forward_op) == ("AddmmBackward0", "aten::linear")
    assert (e.filename, e.lineno) == (__file__, line)
    assert e.input_shapes == [[2, 3], [4, 3], [4]]


def test_backward_message_matches_torch():
    _needs_autograd()
    _needs("sqrt")
    torch = pytest.importorskip("torch")
    tx = torch.tensor([0.0, 4.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's "Anomaly Detection has been enabled"
        with torch.autograd.detect_anomaly(), pytest.raises(RuntimeError) as theirs:
            (tx.sqrt() * 0.0).sum().backward()
    x = ct.tensor([0.0, 4.0]).requires_grad_()
    with detect_anomaly():
        with pytest.raises(RuntimeError) as ours:
            (x.sqrt() * 0.0).sum().backward()
    assert str(ours.value).splitlines()[0].startswith(str(theirs.value).splitlines()[0])


def test_higher_order_gradient_anomaly():
    _needs_autograd()
    _needs("sqrt")
    if not hasattr(ct.autograd, "Function"):
        pytest.skip("coretorch.autograd.Function not available yet")

    class TimesSqrt(ct.autograd.Function):
        """Identity forward; backward g * sqrt(x): finite first derivative at 0, infinite second."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.sqrt()

    bwd_line = TimesSqrt.backward.__code__.co_firstlineno + 3
    x = ct.tensor([0.0, 1.0]).requires_grad_()
    with detect_anomaly():
        y = TimesSqrt.apply(x).sum()
        (g,) = ct.autograd.grad(y, x, create_graph=True)  # [0, 1]: finite
        with pytest.raises(AnomalyError) as info:
            ct.autograd.grad(g.sum(), x)
    e = info.value
    assert str(e).startswith("Function 'SqrtBackward0' returned inf values in its 0th output.")
    assert e.forward_op == "aten::sqrt" and (e.filename, e.lineno) == (__file__, bwd_line)
    assert "while computing the backward of" in str(e)


def test_out_argument_is_not_an_input():
    _needs("log")
    x = ct.tensor([0.0, 1.0])
    out = ct.tensor([float("nan"), float("nan")])  # old contents of out= do not count
    with detect_anomaly():
        with pytest.raises(AnomalyError, match="aten::log returned inf"):
            ct.log(x, out=out)


def test_large_tensors_rechecked_after_every_in_place_change():
    # big tensors found finite are remembered by version; an in-place op must still be judged
    # on the values its inputs hold when it runs
    w = ct.ones(8192) * 1.0
    with detect_anomaly():
        w.sub_(w)  # zeros: finite, remembered at the new version
        with pytest.raises(AnomalyError) as e:
            w.div_(w)  # 0/0 from finite inputs
    assert e.value.op == "aten::div_" and e.value.nan_count == 8192


def test_large_outputs_huge_but_finite_are_not_anomalies_and_one_nan_is_found():
    big = ct.full((8192,), 3e30)
    with detect_anomaly():
        big * 1.0  # squares overflow float32, values are finite
        x = ct.ones(8192)
        x[17] = 0.0
        with pytest.raises(AnomalyError) as e:
            x.log() * 0.0  # log(0) = -inf, then -inf * 0 = nan
    assert e.value.op == "aten::log" and e.value.inf_count == 1 and e.value.nan_count == 0


def test_a_checked_part_of_a_storage_vouches_only_for_itself():
    # checked tensors are remembered per storage: a part found finite says nothing of the rest
    base = ct.ones(140_000)
    base[100_000] = float("nan")  # made before the detector: nothing to report
    with detect_anomaly():
        base[:70_000].mul_(1.0)  # a finite part, checked before and after
        total = base.sum()  # nan from a non-finite input: passed along, no report
    assert math.isnan(total.item())


def test_a_view_changed_in_place_makes_its_whole_storage_checked_again():
    y = ct.ones(70_000) * 1.0
    with detect_anomaly():
        z = y * 1.0  # a whole storage found finite: vouches for its views
        with pytest.raises(AnomalyError, match="aten::div_"):
            z[:10].div_(0.0)  # inf from finite inputs; bumps the shared version
        w = z + 1.0  # from a non-finite input: passed along, no report
    assert math.isinf(w[0].item())
