"""The dispatcher: key sets, thread-local guards, kernel tables and their cache, redispatch,
fallthrough, alias keys, boxed fallbacks, backend keys allocated at registration."""

import itertools
import threading

import pytest

import coretorch as ct
from coretorch.dispatch import (
    DispatchKey,
    DispatchKeySet,
    ExcludeDispatchKeyGuard,
    IncludeDispatchKeyGuard,
    fallthrough_kernel,
    register_fallback,
    tls_excluded,
    tls_included,
)
from coretorch.library import Library
from coretorch.tensor.impl import new_impl
from coretorch.tensor.tensor import Tensor

K = DispatchKey
_ids = itertools.count()
# Backend keys are process-wide and never freed (59 slots): the tests share a few, each test
# registering only on ops of its own fresh namespace and removing any fallback it adds.
POOL = [DispatchKey.backend(f"TestDispatch{i}") for i in range(6)]
_taken = [0]


@pytest.fixture(autouse=True)
def _fresh_pool():
    _taken[0] = 0


def new_backend_key() -> DispatchKey:
    """A backend key not yet used by the running test."""
    key = POOL[_taken[0]]
    _taken[0] += 1
    return key


def fake(*keys: DispatchKey) -> Tensor:
    """A data-less tensor whose dispatch-key set is exactly `keys` (only the key set matters)."""
    return new_impl(
        Tensor, None, (), (), 0, ct.float32, ct.device("meta"), DispatchKeySet(keys).bits
    )


@pytest.fixture
def lib():
    """A fresh namespace with an op ``f(Tensor x) -> Tensor`` and an op ``g`` taking a tensor
    (or a number), an optional tensor, a list of tensors and a scalar; everything is undone
    afterwards."""
    library = Library(f"test_dispatch_{next(_ids)}", "DEF")
    library.define("f(Tensor x) -> Tensor")
    library.define(
        "g(Tensor|Scalar x, Tensor? other=None, Tensor[] more=[], Scalar scale=1) -> Tensor"
    )
    yield library
    library._destroy()


def op_of(library):
    return getattr(ct.ops, library.ns).f


def tagged(tag: str):
    def kernel(*args, **kwargs):
        return tag

    return kernel


# ---- DispatchKeySet ---------------------------------------------------------------------------


def test_keyset_union_remove_has():
    a, b = new_backend_key(), new_backend_key()
    s = DispatchKeySet([K.Autograd, a])
    assert s.has(K.Autograd) and a in s and not s.has(b)
    u = s | b
    assert set(u) == {K.Autograd, a, b} and s.union(DispatchKeySet(b)) == u
    assert set(u.remove(K.Autograd)) == {a, b}
    assert set(u - DispatchKeySet([a, b])) == {K.Autograd}
    assert set(u & DispatchKeySet([a, K.Python])) == {a}
    assert u.add(K.Python).highest() is K.Python
    assert set(s) == {K.Autograd, a}, "operations never change the set they are applied to"


def test_keyset_iterates_by_priority_and_highest():
    a, b = new_backend_key(), new_backend_key()
    s = DispatchKeySet([a, K.BackendSelect, K.Python, b, K.Autograd, K.Autocast])
    order = list(s)
    assert order[:4] == [K.Python, K.Autocast, K.Autograd, K.BackendSelect]
    assert set(order[4:]) == {a, b} and len(s) == 6
    assert s.highest() is K.Python
    assert DispatchKeySet(a).highest() is a
    assert DispatchKeySet().highest() is None and not DispatchKeySet()
    assert list(s.below(K.Autograd)) == [K.BackendSelect] + order[4:]


def test_keyset_is_immutable_and_hashable():
    s = DispatchKeySet([K.Autograd])
    with pytest.raises(AttributeError, match="immutable"):
        s.bits = 0
    assert s == DispatchKeySet(K.Autograd) and hash(s) == hash(DispatchKeySet(K.Autograd))
    assert {s: 1}[DispatchKeySet([K.Autograd])] == 1
    assert s != DispatchKeySet([K.Python])


def test_alias_keys_cannot_be_in_a_keyset():
    with pytest.raises(ValueError, match="alias key"):
        DispatchKeySet([K.CompositeImplicitAutograd])
    with pytest.raises(ValueError, match="alias key"):
        DispatchKeySet().add(K.CompositeExplicitAutograd)


def test_key_lookup_by_name():
    assert DispatchKey.get("Autograd") is K.Autograd
    with pytest.raises(ValueError, match="unknown dispatch key 'NoSuchKey'"):
        DispatchKey.get("NoSuchKey")


# ---- backend keys allocated at registration ---------------------------------------------------


def test_many_backend_keys_are_allocated_at_registration(lib):
    op = op_of(lib)
    keys = [new_backend_key() for _ in range(6)]
    assert len({k.bit for k in keys}) == 6
    others = [k for k in DispatchKey.backends() if k not in keys]
    assert others and {k.bit for k in keys}.isdisjoint({k.bit for k in others}), (
        "the backends' own keys (CPU, Meta, ...) keep their bits"
    )
    assert all(k.is_backend and not k.is_alias for k in keys)
    assert all(DispatchKey.backend(k.name) is k for k in keys), "allocating twice returns the key"
    assert all(k in DispatchKey.backends() for k in keys)
    for k in keys:
        lib.impl("f", tagged(k.name), k)
    for k in keys:
        assert op(fake(k)) == k.name
    assert {k.name for k in keys} <= set(op.kernel_keys())


def test_functionality_key_is_not_a_backend_key():
    with pytest.raises(ValueError, match="functionality key"):
        DispatchKey.backend("Autograd")


# ---- kernel tables, cache, missing kernels ----------------------------------------------------


def test_kernel_table_and_highest_key_wins(lib):
    op, a = op_of(lib), new_backend_key()
    lib.impl("f", tagged("backend"), a)
    lib.impl("f", tagged("autograd"), K.Autograd)
    assert op.has_kernel(a) and op.has_kernel(K.Autograd) and not op.has_kernel(K.Python)
    assert op(fake(a)) == "backend"
    assert op(fake(a, K.Autograd)) == "autograd"
    assert op(fake(a, K.Python)) == "backend", "a functionality key without kernel falls through"


def test_key_sets_of_all_tensor_arguments_are_ored(lib):
    op, a, b = getattr(ct.ops, lib.ns).g, new_backend_key(), new_backend_key()
    hi, lo = (a, b) if a.bit > b.bit else (b, a)
    lib.impl("g", tagged("hi"), hi)
    lib.impl("g", tagged("lo"), lo)
    assert op(fake(lo)) == "lo"
    assert op(fake(lo), fake(hi)) == "hi"
    assert op(fake(lo), more=[fake(lo), fake(hi)]) == "hi", "tensors inside a list count"
    assert op(fake(lo), other=fake(hi)) == "hi", "keyword tensor arguments count"


def test_cache_is_invalidated_on_registration(lib):
    op, a = op_of(lib), new_backend_key()
    lib.impl("f", tagged("v1"), a)
    assert op(fake(a)) == "v1"
    assert op(fake(a)) == "v1"  # now served from the cache
    lib.impl("f", tagged("v2"), a)
    assert op(fake(a)) == "v2"
    lib.impl("f", tagged("autograd"), K.Autograd)
    assert op(fake(a, K.Autograd)) == "autograd"
    op.unregister(K.Autograd)
    assert op(fake(a, K.Autograd)) == "v2"
    register_fallback(a, lambda o, ks, args, kwargs: "fallback")
    try:
        op.unregister(a)
        assert op(fake(a)) == "fallback", "fallback registration invalidates every op's cache"
    finally:
        register_fallback(a, None)


def test_missing_kernel_names_op_key_and_keys_with_kernels(lib):
    op, a, b = op_of(lib), new_backend_key(), new_backend_key()
    lib.impl("f", tagged("a"), a)
    lib.impl("f", tagged("ag"), K.Autograd)
    with pytest.raises(NotImplementedError) as info:
        op(fake(b))
    msg = str(info.value)
    assert f"{lib.ns}::f" in msg and f"'{b.name}'" in msg
    assert a.name in msg and "Autograd" in msg


# ---- redispatch, fallthrough ------------------------------------------------------------------


def test_redispatch_reaches_the_keys_below(lib):
    op, a = op_of(lib), new_backend_key()
    seen = []

    def autograd_kernel(keyset, x):
        seen.append(keyset)
        return ("wrapped", op.redispatch(keyset, x))

    lib.impl("f", autograd_kernel, K.Autograd, with_keyset=True)
    lib.impl("f", tagged("backend"), a)
    assert op(fake(a, K.Autograd)) == ("wrapped", "backend")
    assert seen[0] == DispatchKeySet(a), "the kernel gets the key set below its own key"
    assert op.redispatch(DispatchKeySet(a), fake(a, K.Autograd)) == "backend"


def test_fallthrough_kernel_for_one_op(lib):
    op, a = op_of(lib), new_backend_key()
    lib.impl("f", tagged("backend"), a)
    lib.impl("f", fallthrough_kernel, K.Autograd)
    assert op(fake(a, K.Autograd)) == "backend"


def test_fallthrough_fallback_for_every_op_at_a_key(lib):
    op, hi, lo = op_of(lib), new_backend_key(), new_backend_key()
    if hi.bit < lo.bit:
        hi, lo = lo, hi
    lib2 = Library(f"test_dispatch_{next(_ids)}", "DEF")
    try:
        lib2.define("g(Tensor x) -> Tensor")
        g = getattr(ct.ops, lib2.ns).g
        lib.impl("f", tagged("f-lo"), lo)
        lib2.impl("g", tagged("g-lo"), lo)
        lib2.impl("g", tagged("g-hi"), hi)
        lib.fallback(fallthrough_kernel, hi)
        assert op(fake(hi, lo)) == "f-lo", "no kernel at hi: the fallthrough skips it"
        assert g(fake(hi, lo)) == "g-hi", "a kernel registered at the key beats the fallback"
    finally:
        lib2._destroy()


# ---- alias keys -------------------------------------------------------------------------------


def test_composite_implicit_serves_every_backend_and_autograd(lib):
    op, a, b = op_of(lib), new_backend_key(), new_backend_key()
    calls = []

    def composite(x):
        calls.append(1)
        return "implicit"

    lib.impl("f", composite, "CompositeImplicitAutograd")
    assert op(fake(a)) == "implicit" and op(fake(b)) == "implicit"
    calls.clear()
    assert op(fake(a, K.Autograd)) == "implicit"
    assert len(calls) == 1, "runs once, at Autograd (its autograd comes from the ops it calls)"


def test_composite_explicit_serves_backends_not_autograd(lib):
    op, a = op_of(lib), new_backend_key()
    lib.impl("f", tagged("explicit"), "CompositeExplicitAutograd")
    assert op(fake(a)) == "explicit"
    assert op(fake(a, K.Autograd)) == "explicit"  # Autograd has no kernel: falls through
    lib.impl("f", tagged("autograd"), K.Autograd)
    assert op(fake(a, K.Autograd)) == "autograd"


def test_precedence_direct_then_explicit_then_implicit(lib):
    op, a, b = op_of(lib), new_backend_key(), new_backend_key()
    lib.impl("f", tagged("implicit"), "CompositeImplicitAutograd")
    lib.impl("f", tagged("explicit"), "CompositeExplicitAutograd")
    assert op(fake(a)) == "explicit", "CompositeExplicitAutograd beats CompositeImplicitAutograd"
    lib.impl("f", tagged("direct"), a)
    assert op(fake(a)) == "direct", "a direct registration beats an alias"
    assert op(fake(b)) == "explicit"
    assert op(fake(a, K.Autograd)) == "implicit", "at Autograd the implicit composite decomposes"


def test_direct_registration_beats_backend_fallback_and_alias_beats_fallback(lib):
    op, a = op_of(lib), new_backend_key()
    register_fallback(a, lambda o, ks, args, kwargs: "fallback")
    try:
        assert op(fake(a)) == "fallback"
        lib.impl("f", tagged("implicit"), "CompositeImplicitAutograd")
        assert op(fake(a)) == "implicit"
        lib.impl("f", tagged("direct"), a)
        assert op(fake(a)) == "direct"
    finally:
        register_fallback(a, None)


# ---- per-backend boxed fallbacks --------------------------------------------------------------


def test_boxed_fallback_gets_op_keyset_args_kwargs(lib):
    op, a, b = getattr(ct.ops, lib.ns).g, new_backend_key(), new_backend_key()
    got = []

    def fallback(o, keyset, args, kwargs):
        got.append((o, keyset, args, kwargs))
        return "boxed"

    lib.fallback(fallback, a)
    x = fake(a)
    assert op(x, scale=2) == "boxed"
    o, keyset, args, kwargs = got[0]
    # the fallback gets the bound argument record: schema order, defaults filled
    assert o is op and args == (x, None, (), 2) and kwargs == {}
    assert isinstance(keyset, DispatchKeySet) and a not in keyset
    with pytest.raises(NotImplementedError, match=b.name):  # a fallback serves one key only
        op(fake(b))


def test_boxed_fallback_removed_with_its_library():
    a = new_backend_key()
    owner = Library(f"test_dispatch_{next(_ids)}", "DEF")
    owner.define("f(Tensor x) -> Tensor")
    op = getattr(ct.ops, owner.ns).f
    side = Library("aten", "IMPL", a)
    side.fallback(lambda o, ks, args, kwargs: "boxed")
    assert op(fake(a)) == "boxed"
    side._destroy()
    with pytest.raises(NotImplementedError):
        op(fake(a))
    owner._destroy()


# ---- thread-local include/exclude -------------------------------------------------------------


def test_exclude_guard_skips_keys_and_restores(lib):
    op, a = op_of(lib), new_backend_key()
    lib.impl("f", tagged("backend"), a)
    lib.impl("f", tagged("autograd"), K.Autograd)
    x = fake(a, K.Autograd)
    with ExcludeDispatchKeyGuard(K.Autograd):
        assert K.Autograd in tls_excluded()
        assert op(x) == "backend"
        with ExcludeDispatchKeyGuard(DispatchKeySet([K.Python])):
            assert op(x) == "backend" and K.Autograd in tls_excluded()
        assert K.Python not in tls_excluded()
    assert op(x) == "autograd" and K.Autograd not in tls_excluded()


def test_include_guard_adds_keys(lib):
    op, a = getattr(ct.ops, lib.ns).g, new_backend_key()
    lib.impl("g", tagged("backend"), a)
    lib.impl("g", tagged("python"), K.Python)
    with IncludeDispatchKeyGuard(K.Python):
        assert K.Python in tls_included()
        assert op(fake(a)) == "python"
    assert op(fake(a)) == "backend" and K.Python not in tls_included()
    with IncludeDispatchKeyGuard(a):
        assert op(1.0) == "backend", "an included backend key routes a call with no tensors"


def test_guards_restore_after_exceptions(lib):
    with pytest.raises(KeyError):
        with ExcludeDispatchKeyGuard(K.Autograd), IncludeDispatchKeyGuard(K.Python):
            raise KeyError
    assert not tls_excluded() and not tls_included()


def test_guards_are_thread_local(lib):
    op, a = op_of(lib), new_backend_key()
    lib.impl("f", tagged("backend"), a)
    lib.impl("f", tagged("autograd"), K.Autograd)
    x = fake(a, K.Autograd)
    results = {}
    inside, release = threading.Event(), threading.Event()

    def other():
        results["other_before"] = op(x)  # main thread holds an exclude guard right now
        with ExcludeDispatchKeyGuard(K.Autograd):
            inside.set()
            release.wait(5)
            results["other_inside"] = op(x)

    th = threading.Thread(target=other)
    with ExcludeDispatchKeyGuard(K.Autograd):
        th.start()
        assert inside.wait(5)
    results["main_after"] = op(x)  # the other thread still holds its guard
    release.set()
    th.join()
    assert results == {
        "other_before": "autograd",
        "other_inside": "backend",
        "main_after": "autograd",
    }


# ---- the real operators -----------------------------------------------------------------------


def test_real_ops_dispatch_on_tensor_device(device):
    a = ct.zeros(2, 3, device=device)
    out = ct.ops.aten.add(a, a)
    assert out.device == ct.device(device) and out.shape == (2, 3)
    assert ct.ops.aten.add.entry is ct.add is ct.Tensor.add


def test_no_grad_style_exclusion_on_real_tensors(device):
    a = ct.zeros(2, device=device).requires_grad_()
    assert K.Autograd in DispatchKeySet(a._keys)
    with ExcludeDispatchKeyGuard(K.Autograd):
        b = a + 1
    assert b.shape == (2,) and b.grad_fn is None
