"""Grad modes: no_grad / enable_grad / set_grad_enabled / inference_mode as context managers
and decorators, nesting, and thread-locality."""

from __future__ import annotations

import threading

import pytest

import coretorch as ct


def _decorated(mode) -> tuple:
    """``t * 2`` decorated with ``mode()`` and with the bare ``mode``."""

    def double(t):
        return t * 2

    return mode()(double), mode(double)


def test_no_grad_context_and_decorators(device):
    x = ct.ones(2, device=device, requires_grad=True)
    assert ct.is_grad_enabled()
    with ct.no_grad():
        assert not ct.is_grad_enabled()
        assert not (x * 2).requires_grad
    assert ct.is_grad_enabled() and (x * 2).requires_grad

    f, g = _decorated(ct.no_grad)
    assert not f(x).requires_grad and not g(x).requires_grad
    assert f.__name__ == g.__name__ == "double" and ct.is_grad_enabled()


def test_enable_grad_inside_no_grad(device):
    x = ct.ones(2, device=device, requires_grad=True)
    with ct.no_grad():
        with ct.enable_grad():
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad

    @ct.enable_grad()
    def h(t):
        return t * 2

    with ct.no_grad():
        assert h(x).requires_grad


def test_set_grad_enabled(device):
    x = ct.ones(2, device=device, requires_grad=True)
    with ct.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert ct.is_grad_enabled()
    ct.set_grad_enabled(False)  # as a plain call it takes effect at once
    try:
        assert not ct.is_grad_enabled()
    finally:
        ct.set_grad_enabled(True)
    assert ct.is_grad_enabled()

    @ct.set_grad_enabled(False)
    def k(t):
        return t * 2

    assert ct.is_grad_enabled()  # decorating does not change the current mode
    assert not k(x).requires_grad and ct.is_grad_enabled()
    with pytest.raises(TypeError, match="mode"):
        ct.set_grad_enabled("yes")


def test_inference_mode(device):
    x = ct.ones(2, device=device, requires_grad=True)
    assert not ct.is_inference_mode_enabled()
    with ct.inference_mode():
        assert ct.is_inference_mode_enabled() and not ct.is_grad_enabled()
        assert not (x * 2).requires_grad
    with ct.inference_mode(False):
        assert not ct.is_inference_mode_enabled() and (x * 2).requires_grad

    f, g = _decorated(ct.inference_mode)
    assert not f(x).requires_grad and not g(x).requires_grad
    assert ct.is_grad_enabled()


def test_restored_after_exception():
    with pytest.raises(ValueError):
        with ct.no_grad():
            raise ValueError("boom")
    assert ct.is_grad_enabled()


def test_grad_mode_is_thread_local(device):
    x = ct.ones(2, device=device, requires_grad=True)
    seen = {}
    inside = threading.Event()
    release = threading.Event()

    def other():
        seen["enabled_in_new_thread"] = ct.is_grad_enabled()
        seen["records"] = (x * 2).requires_grad
        with ct.no_grad():
            inside.set()
            release.wait(5)

    with ct.no_grad():
        t = threading.Thread(target=other)
        t.start()
        inside.wait(5)
        # the other thread's no_grad does not leak here and ours did not leak there
        release.set()
        t.join()
        assert not ct.is_grad_enabled()
    assert seen == {"enabled_in_new_thread": True, "records": True}
    assert ct.is_grad_enabled()
