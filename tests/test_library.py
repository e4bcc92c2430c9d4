"""coretorch.library.Library: define, impl (also as a decorator), fallback, kinds and errors,
on the real devices."""

import itertools

import pytest

import coretorch as ct
from coretorch.dispatch import DispatchKey, get_operator
from coretorch.library import Library, fallthrough_kernel

_ids = itertools.count()


@pytest.fixture
def lib():
    library = Library(f"test_library_{next(_ids)}", "DEF")
    yield library
    library._destroy()


def device_key(device: str) -> DispatchKey:
    from coretorch.device import get_device_type

    return get_device_type(device).dispatch_key


def test_define_returns_operator_reachable_by_namespace(lib):
    op = lib.define("double(Tensor x) -> Tensor", doc="x + x")
    assert op is getattr(ct.ops, lib.ns).double is get_operator(f"{lib.ns}::double")
    assert op.qualname == f"{lib.ns}::double" and op.name == "double"
    assert str(op.schema) == "double(Tensor x) -> Tensor" and op.entry.__doc__ == "x + x"


def test_composite_implicit_kernel_runs_on_every_device(lib, device):
    lib.define("double(Tensor x) -> Tensor")

    @lib.impl("double", dispatch_key="CompositeImplicitAutograd")
    def double(x):
        return x + x

    assert double.__name__ == "double", "the decorator returns the function itself"
    x = ct.ones(2, 3, device=device)
    y = getattr(ct.ops, lib.ns).double(x)
    assert y.shape == (2, 3) and y.device == ct.device(device)


def test_composite_values_on_data_devices(lib, data_device):
    lib.define("double(Tensor x) -> Tensor")
    lib.impl("double", lambda x: x + x, "CompositeImplicitAutograd")
    x = ct.tensor([1.0, -2.5, 4.0], device=data_device)
    assert getattr(ct.ops, lib.ns).double(x).tolist() == [2.0, -5.0, 8.0]


def test_backend_kernel_beats_composite_on_its_device_only(lib, device):
    lib.define("which(Tensor x) -> str")
    lib.impl("which", lambda x: "composite", "CompositeImplicitAutograd")
    lib.impl("which", lambda x: "meta kernel", "Meta")
    want = "meta kernel" if device == "meta" else "composite"
    assert getattr(ct.ops, lib.ns).which(ct.zeros(1, device=device)) == want


def test_library_default_dispatch_key():
    ns = f"test_library_{next(_ids)}"
    lib = Library(ns, "DEF", "Meta")
    try:
        lib.define("name(Tensor x) -> str")

        @lib.impl("name")
        def name(x):
            return "meta"

        assert getattr(ct.ops, ns).name(ct.zeros(1, device="meta")) == "meta"
        assert get_operator(f"{ns}::name").has_kernel(DispatchKey.get("Meta"))
    finally:
        lib._destroy()


def test_missing_kernel_error_names_op_key_and_available_keys(lib, device):
    lib.define("only_meta(Tensor x) -> Tensor")
    lib.impl("only_meta", lambda x: x, "Meta")
    if device == "meta":
        pytest.skip("the op has a kernel on meta")
    key = device_key(device).name
    with pytest.raises(NotImplementedError) as info:
        getattr(ct.ops, lib.ns).only_meta(ct.zeros(1, device=device))
    msg = str(info.value)
    assert f"{lib.ns}::only_meta" in msg and f"'{key}'" in msg and "Meta" in msg


def test_fragment_and_impl_libraries(lib):
    lib.define("a(Tensor x) -> str")
    frag = Library(lib.ns, "FRAGMENT")
    impl = Library(lib.ns, "IMPL", "Meta")
    try:
        frag.define("b(Tensor x) -> str")
        impl.impl("a", lambda x: "a on meta")
        impl.impl("b", lambda x: "b on meta")
        x = ct.zeros(1, device="meta")
        assert getattr(ct.ops, lib.ns).a(x) == "a on meta"
        assert getattr(ct.ops, lib.ns).b(x) == "b on meta"
        with pytest.raises(RuntimeError, match="IMPL library cannot define"):
            impl.define("c(Tensor x) -> Tensor")
    finally:
        impl._destroy()
        frag._destroy()
    assert not get_operator(f"{lib.ns}::a").has_kernel(DispatchKey.get("Meta"))
    with pytest.raises(AttributeError):
        getattr(ct.ops, lib.ns).b


def test_impl_on_aten_op_from_outside_the_core(device):
    """A third party overrides an aten kernel for one device, then undoes it."""
    key = device_key(device)
    side = Library("aten", "IMPL", key)
    calls = []
    x = ct.zeros(2, device=device)
    try:
        # add is a structured op: its backend kernel fills an `out` the core allocated
        side.impl("add", lambda out, self, other, alpha: calls.append(out))
        y = ct.add(x, x)
        assert calls == [y] and y.shape == (2,)
    finally:
        side._destroy()
    y = ct.add(x, x)
    assert y.shape == (2,) and len(calls) == 1, "the backend's own kernel is back"


def test_fallback_through_library(lib, device):
    lib.define("anything(Tensor x) -> str")
    key = device_key(device)
    side = Library(lib.ns, "IMPL", key)
    seen = []

    def boxed(op, keyset, args, kwargs):
        seen.append(op.qualname)
        return "fallback"

    try:
        side.fallback(boxed)
        assert getattr(ct.ops, lib.ns).anything(ct.zeros(1, device=device)) == "fallback"
        assert seen == [f"{lib.ns}::anything"]
    finally:
        side._destroy()
    with pytest.raises(NotImplementedError):
        getattr(ct.ops, lib.ns).anything(ct.zeros(1, device=device))


def test_fallthrough_registration_through_library(lib):
    lib.define("f(Tensor x) -> str")
    lib.impl("f", lambda x: "meta", "Meta")
    lib.impl("f", fallthrough_kernel, "Autograd")
    x = ct.zeros(1, device="meta").requires_grad_()
    assert getattr(ct.ops, lib.ns).f(x) == "meta"


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda: Library("x", "BAD"), ValueError, "kind must be one of"),
        (lambda: Library("x", "DEF").define("not a schema"), ValueError, "cannot parse schema"),
        (
            lambda: Library("x", "DEF").impl("nope", lambda: 0, "Meta"),
            RuntimeError,
            "operator x::nope is not defined",
        ),
        (lambda: Library("aten", "IMPL").impl("add", lambda: 0), ValueError, "no dispatch_key"),
        (lambda: Library("aten", "IMPL").fallback(lambda *a: 0), ValueError, "no dispatch_key"),
        (lambda: Library("aten", "IMPL", "NoSuchKey"), ValueError, "unknown dispatch key"),
    ],
)
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_defining_twice_is_an_error(lib):
    lib.define("once(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match="already defined"):
        lib.define("once(Tensor x) -> Tensor")


def test_destroy_removes_definitions():
    ns = f"test_library_{next(_ids)}"
    lib = Library(ns, "DEF")
    lib.define("gone(Tensor x) -> Tensor")
    lib._destroy()
    with pytest.raises(RuntimeError, match="no operator named"):
        get_operator(f"{ns}::gone")
