"""The checks the conformance tests run for one (OpInfo, dtype, device).

Each check runs every sample, collects the failing ones and raises one AssertionError naming
the op, dtype, device and each failing sample with its error, so one test report says it all.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ...tensor.impl import is_overlapping
from ...tensor.layout import POINTWISE_FAMILIES
from ..comparison import assert_close
from ..make_tensor import same_layout_copy
from ..opinfo import OpInfo, SampleInput, from_torch, to_numpy_args, to_torch_args
from ..torch_arrays import torch_from_numpy
from ..trees import geometry, is_tensor, map_tensors, tensors_in

__all__ = [
    "check_forward",
    "check_inplace",
    "check_out",
    "check_overlapping_writes",
    "check_torch_parity",
    "check_autograd",
    "check_error_inputs",
    "check_meta_refuses_alike",
    "has_data",
    "compare_meta",
    "MAX_REPORTED",
]

MAX_REPORTED = 6  # failing samples listed in full per test


class _Failures:
    def __init__(self, what: str, opinfo: OpInfo, dtype, device):
        self.head = f"{what}: op {opinfo.name!r}, dtype {dtype.name}, backend device {device!r}"
        self.items: list[str] = []
        self.total = 0

    def add(self, i: int, sample: SampleInput, message: str) -> None:
        self.total += 1
        if len(self.items) < MAX_REPORTED:
            self.items.append(f"--- sample {i} {sample!r}\n{message}")

    def raise_if_any(self) -> None:
        if self.total:
            more = (
                f"\n... and {self.total - len(self.items)} more failing samples"
                if self.total > len(self.items)
                else ""
            )
            raise AssertionError(
                f"{self.head}: {self.total} failing sample(s)\n" + "\n".join(self.items) + more
            )


def has_data(device) -> bool:
    """True when tensors on `device` hold data (False on the meta device)."""
    from ...device import get_device_type

    return get_device_type(device).has_data


def _err(e: BaseException) -> str:
    return f"raised {type(e).__name__}: {e}"


def _call(fn, s: SampleInput, **extra):
    return fn(s.input, *s.args, **{**s.kwargs, **extra})


_BF16, _F32 = _dt.bfloat16.numpy, np.dtype(np.float32)


def _map_arrays(x, fn):
    if isinstance(x, (np.ndarray, np.dtype)):
        return fn(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_map_arrays(y, fn) for y in x)
    if isinstance(x, dict):
        return {k: _map_arrays(v, fn) for k, v in x.items()}
    return x


def _widen_bf16(x):
    if isinstance(x, np.dtype):
        return _F32 if x == _BF16 else x
    return x.astype(_F32) if x.dtype == _BF16 else x


def _ref(opinfo: OpInfo, s: SampleInput):
    assert opinfo.ref is not None  # callers check that there is one
    args, kwargs = to_numpy_args(s.all_args()), to_numpy_args(s.kwargs)
    if not any(is_tensor(t) and t.dtype is _dt.bfloat16 for t in tensors_in(s.all_args())):
        return opinfo.ref(*args, **kwargs)
    # numpy computes ml_dtypes' bfloat16 in bfloat16 steps or not at all: the reference runs in
    # float32 (exact for every bfloat16) and rounds once, as PyTorch's kernels compute it
    out = opinfo.ref(*_map_arrays(args, _widen_bf16), **_map_arrays(kwargs, _widen_bf16))
    if isinstance(out, np.generic):
        out = np.asarray(out)
    return _map_arrays(out, lambda a: a.astype(_BF16) if getattr(a, "dtype", None) == _F32 else a)


def _expected_like(actual, expected):
    """Shape the reference's result like coretorch's (numpy scalars -> 0-d arrays, tuples)."""
    if is_tensor(actual):
        return np.asarray(expected)
    if isinstance(actual, (tuple, list)) and isinstance(expected, (tuple, list)):
        return tuple(_expected_like(a, e) for a, e in zip(actual, expected))
    if isinstance(actual, (bool, int, float)) and isinstance(expected, np.generic):
        return expected.item()
    return expected


def _compare_values(opinfo: OpInfo, dtype, actual, expected, check_dtype: bool) -> None:
    rtol, atol = opinfo.tolerances(dtype)
    assert_close(
        actual,
        _expected_like(actual, expected),
        rtol=rtol,
        atol=atol,
        equal_nan=True,
        check_dtype=check_dtype,
    )


def compare_meta(actual, reference, device) -> None:
    """Shape-only devices: shapes, dtypes and strides equal those of the cpu result."""
    got, want = geometry(actual), geometry(reference)
    if got != want:
        raise AssertionError(
            f"(shape, dtype, strides) on {device} differ from cpu's:\n"
            f"  {device}: {got}\n  cpu:  {want}"
        )
    _check_device(actual, device)


def _check_device(x, device) -> None:
    for t in tensors_in(x):
        if t._device.type != str(device).split(":")[0]:
            raise AssertionError(f"result is on {t._device}, expected {device}")


def _samples_with_cpu_twins(opinfo: OpInfo, dtype, device, requires_grad=False):
    samples = list(opinfo.sample_inputs(device, dtype, requires_grad))
    if has_data(device):
        return [(s, None) for s in samples]
    cpu = list(opinfo.sample_inputs("cpu", dtype, requires_grad))
    if len(cpu) != len(samples):
        raise AssertionError(
            f"{opinfo.name}: sample_inputs gave {len(samples)} samples on "
            f"{device} but {len(cpu)} on cpu; samples must not depend on the "
            f"device"
        )
    return list(zip(samples, cpu))


def _data_dependent(opinfo: OpInfo, s: SampleInput) -> bool:
    return opinfo.data_dependent or s.name.startswith("data-dependent")


def _compares_values(opinfo: OpInfo, data: bool) -> bool:
    """Whether results on a device with(out) `data` are compared with the numpy reference."""
    return data and opinfo.ref is not None and opinfo.check_values and not opinfo.random


# ---- forward ------------------------------------------------------------------------------


def check_forward(opinfo: OpInfo, dtype, device) -> None:
    """Functional form: values equal the reference on data devices; on shape-only devices the
    result's (shape, dtype, strides) equal the cpu result's."""
    fails = _Failures("forward", opinfo, dtype, device)
    op = opinfo.op
    data = has_data(device)
    for i, (s, twin) in enumerate(_samples_with_cpu_twins(opinfo, dtype, device)):
        if not data and _data_dependent(opinfo, s):
            try:
                got = _call(op, s)
            except (NotImplementedError, RuntimeError):
                continue
            # answering without the data is fine when the answer is cpu's (equal() of
            # different shapes)
            want = _call(op, twin)
            if geometry(got) != geometry(want) or (not is_tensor(got) and got != want):
                fails.add(
                    i,
                    s,
                    f"a data-dependent op must raise NotImplementedError or "
                    f"RuntimeError on a shape-only device; it returned {got!r} "
                    f"where cpu gives {want!r}",
                )
            continue
        # the reference first: ops that write into their input would change what it sees
        want = _compares_values(opinfo, data)
        try:
            expected = _ref(opinfo, s) if want else None
        except Exception as e:  # noqa: BLE001
            fails.add(i, s, f"the numpy reference {_err(e)} (a bad sample or reference)")
            continue
        try:
            actual = _call(op, s)
        except Exception as e:  # noqa: BLE001 - report every failing sample
            fails.add(i, s, _err(e))
            continue
        try:
            if not data:
                compare_meta(actual, _call(op, twin), device)
            elif opinfo.random:
                _check_random_result(opinfo, s, actual)
            elif want:
                _compare_values(opinfo, dtype, actual, expected, check_dtype=False)
            elif not opinfo.check_values and opinfo.ref is not None:
                _check_shape_dtype(opinfo, s, actual)
        except AssertionError as e:
            fails.add(i, s, str(e))
        except Exception as e:  # noqa: BLE001
            fails.add(i, s, f"while checking the result: {_err(e)}")
    fails.raise_if_any()


def _check_shape_dtype(opinfo: OpInfo, s: SampleInput, actual) -> None:
    """The result's shape and dtype are the reference's (its values are not compared)."""
    expected = np.asarray(_ref(opinfo, s))
    if tuple(actual._shape) != expected.shape:
        raise AssertionError(f"shape {list(actual._shape)} != expected {list(expected.shape)}")
    if actual._dtype.numpy != expected.dtype:
        raise AssertionError(f"dtype {actual._dtype.name} != expected {expected.dtype}")


def _check_random_result(opinfo: OpInfo, s: SampleInput, actual) -> None:
    """Random ops: shape and dtype as the reference says, values in range, and the same values
    again after re-seeding."""
    import coretorch

    _check_shape_dtype(opinfo, s, actual)
    values = np.array(np.asarray(actual))
    if opinfo.value_range is not None and values.size:
        opinfo.value_range(values, s)
    # reproducibility: the same seed gives the same values (sample inputs are rebuilt because
    # in-place random ops overwrite their input)
    runs = []
    for _ in range(2):
        coretorch.manual_seed(1234)
        runs.append(np.array(np.asarray(_call(opinfo.op, _fresh(s)))))
    np.testing.assert_array_equal(runs[0], runs[1], err_msg="same seed, different values")
    if values.size > 8:
        coretorch.manual_seed(4321)
        other = np.array(np.asarray(_call(opinfo.op, _fresh(s))))
        if np.array_equal(other, runs[0]) and np.unique(runs[0]).size > 1:
            raise AssertionError("different seeds gave identical values")


def _fresh(s: SampleInput) -> SampleInput:
    """A copy of the sample whose tensor input is a clone (for ops that overwrite it)."""
    inp = s.input.clone() if is_tensor(s.input) else s.input
    return SampleInput(inp, s.args, dict(s.kwargs), s.name)


# ---- in-place -------------------------------------------------------------------------------


def _overlapping(t) -> bool:
    return is_overlapping(tuple(t._shape), tuple(t._stride))


def _inplace_eligible(opinfo: OpInfo, s: SampleInput) -> bool:
    from ...ops.declare import can_cast

    inp = s.input
    if not is_tensor(inp) or _overlapping(inp) or _data_dependent(opinfo, s):
        return False
    decl = opinfo.decl
    if decl.meta is None:
        return True
    try:
        spec = decl.output_spec(inp, *s.args, **s.kwargs)
    except Exception:  # noqa: BLE001 - the functional test reports a failing meta rule
        return False
    if isinstance(spec, list):
        return False
    return tuple(spec[0]) == tuple(inp._shape) and can_cast(spec[1], inp._dtype)


def check_inplace(opinfo: OpInfo, dtype, device) -> None:
    """`op_` on a copy of the input with the input's strides returns that tensor, bumps its
    version and holds the reference's values (cast to its dtype) / the cpu metadata."""
    fails = _Failures("in-place", opinfo, dtype, device)
    op_ = opinfo.inplace_op
    assert op_ is not None  # checked for ops that have an in-place form
    data = has_data(device)
    for i, (s, twin) in enumerate(_samples_with_cpu_twins(opinfo, dtype, device)):
        if not _inplace_eligible(opinfo, s):
            continue
        try:
            target = same_layout_copy(s.input)
            version = target._version
            res = op_(target, *s.args, **s.kwargs)
            if res is not target:
                raise AssertionError(f"{opinfo.name}_() must return self")
            if target._version <= version:
                raise AssertionError(f"{opinfo.name}_() did not bump the version counter")
            if tuple(target._stride) != tuple(s.input._stride):
                raise AssertionError(
                    f"{opinfo.name}_() changed the strides of self: "
                    f"{target._stride} != {s.input._stride}"
                )
            if data and opinfo.ref is not None:
                expected = np.asarray(_ref(opinfo, s))
                expected = expected.astype(s.input._dtype.numpy)
                _compare_values(opinfo, dtype, target, expected, check_dtype=True)
            elif not data:
                twin_target = same_layout_copy(twin.input)
                op_(twin_target, *twin.args, **twin.kwargs)
                compare_meta(target, twin_target, device)
        except AssertionError as e:
            fails.add(i, s, str(e))
        except Exception as e:  # noqa: BLE001
            fails.add(i, s, _err(e))
    fails.raise_if_any()


# ---- out= -------------------------------------------------------------------------------


def _out_for(spec, device, resize: bool):
    from ...ops import REGISTRY

    empty = REGISTRY["empty"].op
    if isinstance(spec, list):
        return tuple(_out_for(x, device, resize) for x in spec)
    shape, dt, _ = spec
    return empty((0,) if resize else shape, dtype=dt, device=device)


def check_out(opinfo: OpInfo, dtype, device) -> None:
    """``op(..., out=t)`` writes into `t` (resized when its shape is wrong) and returns it."""
    fails = _Failures("out=", opinfo, dtype, device)
    op = opinfo.op
    data = has_data(device)
    for i, (s, twin) in enumerate(_samples_with_cpu_twins(opinfo, dtype, device)):
        if _data_dependent(opinfo, s):
            continue
        try:
            want = _compares_values(opinfo, data)
            expected = _ref(opinfo, s) if want else None
            spec = opinfo.decl.output_spec(s.input, *s.args, **s.kwargs)
            out = _out_for(spec, device, resize=bool(i % 2))
            res = _call(op, s, out=out)
            outs = out if isinstance(out, tuple) else (out,)
            got = tuple(res) if isinstance(out, tuple) else (res,)
            if len(got) != len(outs) or any(g is not o for g, o in zip(got, outs)):
                raise AssertionError(f"{opinfo.name}(out=...) must return the out tensor(s)")
            if want:
                _compare_values(opinfo, dtype, res, expected, check_dtype=False)
            elif not data:  # against cpu's out= form (a new result may be laid out otherwise)
                compare_meta(res, _call(op, twin, out=_out_for(spec, "cpu", bool(i % 2))), device)
        except AssertionError as e:
            fails.add(i, s, str(e))
        except Exception as e:  # noqa: BLE001
            fails.add(i, s, _err(e))
    fails.raise_if_any()


# ---- writes into self-overlapping tensors --------------------------------------------------

_OVERLAP_MESSAGE = "more than one element of the written-to tensor refers to a single memory"


def _expanded(shape: tuple, dtype, device):
    """A tensor of `shape` whose first dim of size > 1 has stride 0 (None for an empty shape
    or one whose dims are all at most 1: such a tensor cannot overlap itself)."""
    from ...ops import REGISTRY

    if 0 in shape:
        return None
    for d, n in enumerate(shape):
        if n > 1:
            base = REGISTRY["zeros"].op(
                shape[:d] + (1,) + shape[d + 1 :], dtype=dtype, device=device
            )
            return base.expand(shape)
    return None


def _refuses_overlap(what: str, call) -> str | None:
    try:
        call()
    except RuntimeError as e:
        if _OVERLAP_MESSAGE in str(e):
            return None
        return f"{what}: raised RuntimeError without the overlap message: {e}"
    except Exception as e:  # noqa: BLE001
        return f"{what}: {_err(e)} instead of the overlap RuntimeError"
    return f"{what}: wrote into a tensor whose elements share memory without raising"


def check_overlapping_writes(opinfo: OpInfo, dtype, device) -> None:
    """In-place (``op_``, or an op that writes `self`) and ``out=`` writes into an `expand`ed
    tensor raise PyTorch's "more than one element of the written-to tensor refers to a single
    memory location" (ops declared with ``aliased_writes``, such as fill_, write it)."""
    fails = _Failures("overlapping writes", opinfo, dtype, device)
    decl = opinfo.decl
    writes_self = (
        opinfo.inplace_op if opinfo.supports_inplace else (opinfo.op if decl.inplace_only else None)
    )
    for i, (s, _) in enumerate(_samples_with_cpu_twins(opinfo, dtype, device)):
        problems = []
        target = (
            _expanded(tuple(s.input._shape), s.input._dtype, device) if is_tensor(s.input) else None
        )
        if writes_self is not None and target is not None and _inplace_eligible(opinfo, s):
            if decl.aliased_writes:
                writes_self(target, *s.args, **s.kwargs)
            else:
                problems.append(
                    _refuses_overlap("in-place", lambda: writes_self(target, *s.args, **s.kwargs))
                )
        if opinfo.supports_out and not _data_dependent(opinfo, s):
            spec = decl.output_spec(s.input, *s.args, **s.kwargs)
            first = spec[0] if isinstance(spec, list) else spec
            out = _expanded(tuple(first[0]), first[1], device)
            if out is not None:
                outs = (
                    (out,) + tuple(_out_for(x, device, False) for x in spec[1:])
                    if isinstance(spec, list)
                    else out
                )
                problems.append(_refuses_overlap("out=", lambda: _call(opinfo.op, s, out=outs)))
        for p in problems:
            if p is not None:
                fails.add(i, s, p)
    fails.raise_if_any()


# ---- torch parity -------------------------------------------------------------------------


def check_torch_parity(opinfo: OpInfo, dtype, device) -> None:
    """Values, shapes and dtypes equal PyTorch's for the same sample (the oracle for ops numpy
    has no reference for, and the dtype oracle for all)."""
    fails = _Failures("torch parity", opinfo, dtype, device)
    tref = opinfo.torch_ref
    assert tref is not None  # checked for ops that have a torch reference
    for i, s in enumerate(opinfo.sample_inputs(device, dtype)):
        if opinfo.random:
            continue
        try:
            expected = from_torch(tref(*to_torch_args(s.all_args()), **to_torch_args(s.kwargs)))
        except Exception as e:  # noqa: BLE001
            fails.add(i, s, f"the torch reference {_err(e)} (a bad sample or reference)")
            continue
        try:
            actual = _call(opinfo.op, s)
            # a new elementwise result is laid out as PyTorch lays it out
            # (`coretorch.tensor.layout`) where the backend's own kernel fills it (a CPU
            # fallback's result is laid out as its copy back)
            if _native_pointwise(opinfo.decl, device):
                _compare_strides(actual, tref(*_torch_like(s.all_args()), **_torch_like(s.kwargs)))
            if opinfo.check_values:
                _compare_values(opinfo, dtype, actual, expected, check_dtype=True)
            else:
                a, want = np.asarray(actual), np.asarray(expected)
                if a.shape != want.shape or a.dtype != want.dtype:
                    raise AssertionError(
                        f"(shape, dtype) {a.shape, a.dtype} != torch's {want.shape, want.dtype}"
                    )
        except AssertionError as e:
            fails.add(i, s, str(e))
        except Exception as e:  # noqa: BLE001
            fails.add(i, s, _err(e))
    fails.raise_if_any()


def _native_pointwise(decl, device) -> bool:
    """Whether `decl` is an elementwise primitive with a kernel of `device`'s own."""
    from ...device import get_device_type

    if decl is None or decl.family not in POINTWISE_FAMILIES or decl.kind != "primitive":
        return False
    return decl.op.has_kernel(get_device_type(device).dispatch_key)


def _torch_like(x):
    """`to_torch_args` with every tensor's strides kept (a transposed or expanded sample stays
    so), for comparing result layouts."""
    if not is_tensor(x):
        if isinstance(x, (list, tuple)):
            return type(x)(_torch_like(y) for y in x)
        if isinstance(x, dict):
            return {k: _torch_like(v) for k, v in x.items()}
        return to_torch_args(x)
    values = np.asarray(x.detach())
    shape, stride = tuple(x._shape), tuple(x._stride)
    span = 1 + sum((n - 1) * st for n, st in zip(shape, stride)) if values.size else 0
    buf = np.zeros(span, values.dtype)
    if values.size:
        np.copyto(
            np.lib.stride_tricks.as_strided(
                buf, shape, tuple(st * values.itemsize for st in stride)
            ),
            values,
        )
    return torch_from_numpy(buf).as_strided(shape, stride)


def _compare_strides(actual, theirs) -> None:
    """A tensor result's strides equal those of PyTorch's result (empty results aside: no
    layout to follow)."""
    if not is_tensor(actual) or 0 in actual._shape:
        return
    want = tuple(theirs.stride())
    if tuple(actual._stride) != want:
        raise AssertionError(
            f"strides {tuple(actual._stride)} != torch's {want} (shape {list(actual._shape)})"
        )


# ---- autograd -------------------------------------------------------------------------------


def _differentiable_outputs(res):
    """The outputs finite differences can check: float64 ones (a float16 cast loses the
    perturbation; integer outputs have no gradient)."""
    if is_tensor(res):
        return (res,) if res._dtype is _dt.float64 else ()
    if isinstance(res, (tuple, list)):
        return tuple(r for r in res if is_tensor(r) and r._dtype is _dt.float64)
    return ()


def _non_finite(s: SampleInput) -> bool:
    """Samples holding NaN/inf on purpose: their finite differences are NaN."""
    return "nan" in s.name or "inf" in s.name


def check_autograd(opinfo: OpInfo, dtype, device, gradcheck) -> None:
    """Gradients of every float input equal finite differences (``gradcheck``)."""
    fails = _Failures("gradcheck", opinfo, dtype, device)
    for i, s in enumerate(opinfo.sample_inputs(device, dtype, requires_grad=True)):
        leaves = [t for t in tensors_in(s.all_args()) if t.requires_grad]
        if (
            not leaves
            or not s.gradcheck
            or _non_finite(s)
            or _data_dependent(opinfo, s)
            or any(_overlapping(t) for t in leaves)
        ):
            continue
        all_args = s.all_args()
        # an op that writes into its input is checked on a copy (a leaf must not be mutated)
        writes_self = opinfo.decl.inplace_only

        def fn(*tensors, _args=all_args, _kw=s.kwargs, _clone=writes_self):
            it = iter(tensors)
            rebuilt = map_tensors(list(_args), lambda t: next(it) if t.requires_grad else t)
            if _clone and is_tensor(rebuilt[0]):
                rebuilt[0] = rebuilt[0].clone()
            return _differentiable_outputs(opinfo.op(*rebuilt, **_kw))

        try:
            if not fn(*leaves):
                continue
            ok = gradcheck(fn, tuple(leaves), eps=1e-6, atol=1e-5, rtol=1e-3)
            if ok is False:
                raise AssertionError("gradcheck returned False")
        except Exception as e:  # noqa: BLE001
            fails.add(i, s, str(e) if isinstance(e, AssertionError) else _err(e))
    fails.raise_if_any()


# ---- refusals ----------------------------------------------------------------------------------


def check_error_inputs(opinfo: OpInfo, dtype, device) -> None:
    """Every error input raises its declared exception type and message on `device`."""
    import re

    fails = _Failures("error inputs", opinfo, dtype, device)
    for i, e in enumerate(opinfo.error_inputs(device, dtype)):
        try:
            _call(opinfo.op, e.sample)
        except Exception as err:  # noqa: BLE001 - the type is what is checked
            if not isinstance(err, e.error_type) or not re.search(e.match, str(err)):
                fails.add(
                    i,
                    e.sample,
                    f"expected {e.error_type.__name__} matching {e.match!r}, got {_err(err)}",
                )
            continue
        fails.add(
            i, e.sample, f"expected {e.error_type.__name__} matching {e.match!r}; the call returned"
        )
    fails.raise_if_any()


def _outcome(fn, s: SampleInput):
    """None if the call returns, else the type of what it raised."""
    try:
        _call(fn, s)
    except Exception as err:  # noqa: BLE001 - the type is the outcome
        return type(err)
    return None


def check_meta_refuses_alike(opinfo: OpInfo, dtype, data_device) -> None:
    """The meta device raises for a sample (or error input) exactly when `data_device` does,
    with the same exception type: refusing arguments is the meta rule's job alone, so a shape-
    only device refuses the same calls as one with data. Samples whose outcome depends on the
    values (data-dependent shapes, division by zero) are not compared."""
    fails = _Failures("meta refuses alike", opinfo, dtype, data_device)
    pairs = zip(opinfo.sample_inputs(data_device, dtype), opinfo.sample_inputs("meta", dtype))
    errors = zip(
        (e.sample for e in opinfo.error_inputs(data_device, dtype)),
        (e.sample for e in opinfo.error_inputs("meta", dtype)),
    )
    for i, (s, m) in enumerate([*pairs, *errors]):
        if opinfo.data_dependent or s.name.startswith("data-dependent"):
            continue
        got, want = _outcome(opinfo.op, m), _outcome(opinfo.op, s)
        if got is not want:
            fails.add(
                i,
                s,
                f"on {data_device}: {want.__name__ if want else 'returns'}; on meta: "
                f"{got.__name__ if got else 'returns'}",
            )
    fails.raise_if_any()
