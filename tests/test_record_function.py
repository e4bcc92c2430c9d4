"""RecordFunction: global and thread-local callbacks, scopes, what callbacks see, user scopes,
and the one-flag fast path when no callback is registered."""

import importlib
import threading

import pytest

import coretorch as ct

rfm = importlib.import_module("coretorch.record_function")
Scope = rfm.RecordScope


@pytest.fixture
def recorder():
    """Register callbacks through `add(...)`; every one is removed after the test."""
    handles = []

    class Recorder:
        def __init__(self):
            self.started, self.ended = [], []

        def start(self, rf):
            self.started.append(rf)
            return f"state-{len(self.started)}"

        def end(self, rf, state):
            self.ended.append((rf, state))

        def add(self, scopes=None, local=False):
            add = rfm.add_thread_local_callback if local else rfm.add_global_callback
            handles.append(add(self.start, self.end, scopes=scopes))
            return handles[-1]

        def names(self):
            return [rf.name for rf in self.started]

    yield Recorder()
    for h in handles:
        rfm.remove_callback(h)
    assert not rfm.state.active


def test_fast_path_flag_follows_callbacks():
    assert not rfm.state.active
    h = rfm.add_global_callback(lambda rf: None)
    assert rfm.state.active
    rfm.remove_callback(h)
    assert not rfm.state.active
    h = rfm.add_thread_local_callback(lambda rf: None)
    assert rfm.state.active
    rfm.remove_callback(h)
    assert not rfm.state.active


def test_op_is_recorded_with_name_scope_inputs(recorder, device):
    a = ct.zeros(2, 3, device=device)
    b = ct.zeros(3, dtype=ct.float64, device=device)
    recorder.add()
    out = a + b
    assert recorder.names() == ["aten::add"]
    rf = recorder.started[0]
    assert rf.scope is Scope.FUNCTION
    assert rf.input_shapes() == [[2, 3], [3], []]  # alpha, as PyTorch records it
    assert rf.input_dtypes() == ["float32", "float64", "Scalar"]
    assert rf.outputs is out
    assert rf.seq_nr == -1, "no autograd involved: no sequence number"
    assert rf.thread_id == threading.get_ident()
    assert rf.end_ns >= rf.start_ns > 0
    assert recorder.ended == [(rf, "state-1")], "end gets what start returned"


def test_scalar_and_list_inputs(recorder, device):
    a = ct.zeros(2, device=device)
    recorder.add()
    a + 2.5
    rf = recorder.started[0]
    assert rf.input_shapes() == [[2], [], []]
    assert rf.input_dtypes() == ["float32", "Scalar", "Scalar"]


def test_sequence_number_for_ops_on_tensors_requiring_grad(recorder, device):
    x = ct.zeros(2, device=device).requires_grad_()
    recorder.add(scopes=[Scope.FUNCTION])
    expected = rfm.peek_sequence_nr()
    x + 1
    rf = next(r for r in recorder.started if r.name == "aten::add")
    assert rf.seq_nr == expected >= 0


def test_sequence_numbers_are_per_thread_and_increase():
    first = rfm.next_sequence_nr()
    assert rfm.next_sequence_nr() == first + 1 and rfm.peek_sequence_nr() == first + 2
    other = []
    th = threading.Thread(target=lambda: other.append(rfm.peek_sequence_nr()))
    th.start()
    th.join()
    assert other == [0]


def test_scopes_filter_callbacks(recorder, device):
    a = ct.zeros(2, device=device)
    recorder.add(scopes=[Scope.USER_SCOPE])
    a + a
    with rfm.record_function("region"):
        a + a
    assert recorder.names() == ["region"]
    assert recorder.started[0].scope is Scope.USER_SCOPE


def test_record_function_scope_encloses_its_ops(recorder, device):
    a = ct.zeros(2, device=device)
    recorder.add()
    with rfm.record_function("outer"):
        a + a
        with rfm.record_function("inner"):
            a + 2
    names = recorder.names()
    assert names[0] == "outer" and "inner" in names
    by_name = {rf.name: rf for rf in recorder.started}
    assert by_name["outer"].parent is None
    assert by_name["inner"].parent is by_name["outer"]
    ops = [rf for rf in recorder.started if rf.scope is Scope.FUNCTION]
    assert ops[0].parent is by_name["outer"] and ops[-1].parent is by_name["inner"]
    ended = [rf.name for rf, _ in recorder.ended]
    assert ended.index("inner") < ended.index("outer"), "scopes end innermost first"


def test_record_function_as_decorator(recorder, device):
    @rfm.record_function("step")
    def step(x):
        return x + 1

    x = ct.zeros(1, device=device)
    recorder.add()
    out = step(x)
    assert out.shape == (1,) and recorder.names()[:2] == ["step", "aten::add"]


def test_record_function_costs_nothing_without_callbacks():
    with rfm.record_function("nobody listens") as r:
        assert r._rf is None
    assert not rfm.open_regions()


def test_thread_local_callback_sees_only_its_thread(recorder, device):
    a = ct.zeros(2, device=device)
    recorder.add(local=True)
    th = threading.Thread(target=lambda: a + a)
    th.start()
    th.join()
    assert recorder.started == []
    a + a
    assert recorder.names() == ["aten::add"]


def test_global_callback_sees_every_thread(recorder, device):
    a = ct.zeros(2, device=device)
    recorder.add()
    ids = []

    def work():
        ids.append(threading.get_ident())
        a + a

    th = threading.Thread(target=work)
    th.start()
    th.join()
    a + a
    assert [rf.thread_id for rf in recorder.started] == [ids[0], threading.get_ident()]


def test_thread_local_callback_registered_in_another_thread_stays_there(device):
    a = ct.zeros(2, device=device)
    seen = []
    ready, done = threading.Event(), threading.Event()

    def other():
        h = rfm.add_thread_local_callback(lambda rf: seen.append(("other", rf.name)))
        ready.set()
        done.wait(5)
        a + a
        rfm.remove_callback(h)

    th = threading.Thread(target=other)
    th.start()
    assert ready.wait(5)
    a + a  # main thread: the other thread's callback must not fire
    done.set()
    th.join()
    assert seen == [("other", "aten::add")]
    assert not rfm.state.active


def test_removed_callback_is_not_called(recorder, device):
    a = ct.zeros(2, device=device)
    h = recorder.add()
    a + a
    rfm.remove_callback(h)
    a + a
    assert recorder.names() == ["aten::add"]


def test_several_callbacks_each_get_their_state(device):
    a = ct.zeros(2, device=device)
    log = []
    h1 = rfm.add_global_callback(lambda rf: "one", lambda rf, st: log.append(st))
    h2 = rfm.add_global_callback(lambda rf: "two", lambda rf, st: log.append(st))
    try:
        a + a
    finally:
        rfm.remove_callback(h1)
        rfm.remove_callback(h2)
    assert log == ["one", "two"]
    assert not rfm.state.active


def test_dispatch_does_not_build_record_functions_on_the_fast_path(monkeypatch, device):
    a = ct.zeros(2, device=device)
    built = []
    monkeypatch.setattr(rfm, "call_op", lambda *args: built.append(args))
    a + a
    assert built == [], "with no callback the dispatcher only checks the flag"


@pytest.mark.parametrize("n_callbacks", [1, 2], ids=["one observer", "two observers"])
@pytest.mark.parametrize("failing", ["start", "end"])
def test_a_failing_callback_propagates_and_leaves_regions_balanced(device, failing, n_callbacks):
    # one observer takes the dispatcher's inlined path, two the general one: both must agree
    a = ct.zeros(2, device=device)
    seen = []

    def boom(*_):
        raise ValueError(f"{failing} callback failed")

    start = boom if failing == "start" else (lambda rf: None)
    end = boom if failing == "end" else (lambda rf, st: None)
    handles = [rfm.add_global_callback(start, end)]
    if n_callbacks == 2:
        handles.append(rfm.add_global_callback(None, lambda rf, st: seen.append(rf.name)))
    try:
        with pytest.raises(ValueError, match=f"{failing} callback failed"):
            a + a
        assert not rfm.open_regions()
    finally:
        for h in handles:
            rfm.remove_callback(h)
    parents = []
    h = rfm.add_global_callback(lambda rf: parents.append(rf.parent))
    try:
        a + a
    finally:
        rfm.remove_callback(h)
    assert parents == [None]
    if n_callbacks == 2 and failing == "end":
        assert seen == ["aten::add"]  # the other observer's end still ran
