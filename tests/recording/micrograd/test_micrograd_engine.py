"""micrograd's engine adapter (``recording/micrograd/engine.py``): one engine per class, a class
refused with what it lacks or while a relative is hooked, sinks attached (``attach``) and
``record()`` one way at a time, attachments that outlive their thread, fork."""

import contextvars
import gc
import os
import sys
import threading
import warnings
import weakref

import pytest

import adtrace
from adtrace.recording import registry
from adtrace.recording.micrograd import HookError, ShapeError, attach, hooked_classes
from restored import assert_restored
from value_classes import EventLog, MiniValue, Value


def test_a_class_not_of_micrographs_shape_is_refused_with_what_it_lacks():
    class NoBackward:
        def __init__(self, data):
            self.data = data

    with pytest.raises(ShapeError, match="no backward"):
        adtrace.record(engine=NoBackward)
    with pytest.raises(ValueError, match="'autograd', 'micrograd'"):
        adtrace.record(engine="tinygrad")


def test_a_subclass_of_a_recorded_class_is_refused_and_nothing_is_left_hooked():
    class Sub(MiniValue):
        pass

    before = dict(vars(Sub))
    with adtrace.record(engine=MiniValue) as rec:
        with pytest.raises(HookError, match="recorded twice"):
            with adtrace.record(engine=Sub):
                pass
        x = MiniValue(2.0)
        (x * x).backward()
    assert [e.label for e in rec.of_kind("node")] == ["v0_leaf", "v1_mul"]  # no probe of Sub's shape recorded
    assert len(rec.of_kind("add_outgrads")) == 2 and dict(vars(Sub)) == before
    assert hooked_classes() == () and registry.active_recordings() == 0


def test_without_micrograd_installed_the_error_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "micrograd.engine", None)  # (an import of it raises ImportError)
    with pytest.raises(ValueError, match=r"pip install 'adtrace\[micrograd\]'"):
        adtrace.record(engine="micrograd")
    with adtrace.record(engine=Value) as rec:  # a class of its own needs nothing
        x = Value(2.0)
        (x * x).backward()
    assert len(rec.of_kind("add_outgrads")) == 2


def test_hooks_attached_directly_and_a_recording_exclude_each_other():
    with attach(Value, EventLog()):
        with pytest.raises(HookError, match="detach"):
            with adtrace.record(engine=Value):
                pass
    with adtrace.record(engine=Value):
        with pytest.raises(HookError, match="being recorded"):
            attach(Value, EventLog())
    assert hooked_classes() == ()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")  # (3.12+: on purpose)
def test_fork_while_one_thread_records_and_another_attaches_a_class():
    """A fork while a thread is inside ``attach()`` (checking a class, running its ``__init__``,
    outside the session's lock) and another records: the child restores the recorded class
    (through that lock) without deadlocking."""
    from children import wait_for

    checking, go_on, recording, leave = (threading.Event() for _ in range(4))
    own_backward = vars(Value)["backward"]

    class Gate:
        def __init__(self, data, _children=(), _op=''):
            if not checking.is_set():  # (attach's shape check makes a leaf: wait there)
                checking.set()
                go_on.wait()
            self.data, self.grad, self._backward, self._prev, self._op = data, 0.0, lambda: None, set(_children), _op

        def backward(self):
            self.grad = 1.0

    def record_value():
        with adtrace.record(engine=Value):
            recording.set()
            leave.wait()

    def attach_gate():
        attach(Gate, EventLog()).detach()

    threads = [threading.Thread(target=record_value), threading.Thread(target=attach_gate)]
    threads[0].start()
    recording.wait()
    threads[1].start()
    checking.wait()
    opening = threading.Timer(1.0, go_on.set)  # (lets attach finish, should a fork wait for it)
    opening.start()
    try:
        pid = os.fork()
        if pid == 0:  # the child: the other threads' recording dropped, Value restored
            os._exit(0 if vars(Value)["backward"] is own_backward else 3)
        status = wait_for(pid, 20)
    finally:
        go_on.set()
        leave.set()
        opening.join()
        for thread in threads:
            thread.join()
    assert status == 0


def test_a_sink_attached_while_a_record_opens_is_one_way_at_a_time(monkeypatch):
    """A class is hooked by sinks or by ``record()``, one way at a time, decided under the session's
    lock: a sink attached by another thread after ``record()`` made its recorder, before it opened,
    makes ``record()`` refuse (the check is not made beforehand, outside the lock)."""
    from adtrace.recording.micrograd.engine import MicrogradEngine

    engine, attached, make = registry.engine_named(Value), [], MicrogradEngine.recorder

    def make_then_another_thread_attaches(self, *args, **options):
        recorder = make(self, *args, **options)
        thread = threading.Thread(target=lambda: attached.append(attach(Value, EventLog())))
        thread.start()
        thread.join()
        return recorder

    monkeypatch.setattr(MicrogradEngine, "recorder", make_then_another_thread_attaches)
    with pytest.raises(HookError, match="has sinks attached"):
        with adtrace.record(engine=Value):
            pass
    assert registry.recorders_of(engine) == attached and attached[0].attached
    attached[0].detach()
    assert hooked_classes() == () and registry.active_recordings() == 0


def test_a_record_opened_while_a_sink_attaches_is_one_way_at_a_time(monkeypatch):
    """The other order: ``record()`` opens on another thread after ``attach()`` made its attachment,
    before it opened: the attachment is refused, the recording records."""
    from adtrace.recording.micrograd.engine import Attachment

    opened, leave, init = threading.Event(), threading.Event(), Attachment.__init__
    recordings = []

    def keep_recording():
        with adtrace.record(engine=Value) as rec:
            recordings.append(rec)
            opened.set()
            leave.wait()
            x = Value(3.0)
            (x * x).backward()

    thread = threading.Thread(target=keep_recording)

    def made_then_another_thread_records(self, sink):
        init(self, sink)
        thread.start()
        opened.wait()

    monkeypatch.setattr(Attachment, "__init__", made_then_another_thread_records)
    try:
        with pytest.raises(HookError, match="being recorded by adtrace.record"):
            attach(Value, EventLog())
        assert [type(r).__name__ for r in registry.recorders_of(registry.engine_named(Value))] == ["Recorder"]
    finally:
        leave.set()
        thread.join()
    assert len(recordings[0].of_kind("add_outgrads")) == 2
    assert hooked_classes() == () and registry.active_recordings() == 0


def test_each_refusal_says_which_class_is_hooked_and_how():
    class Named(MiniValue):
        pass

    class Fresh(MiniValue):
        pass

    class Sub(Named):
        pass

    with adtrace.record(engine=Named):  # (Named's engine is named: it is checked once, before this)
        with pytest.raises(HookError, match=r"\.Named is being recorded by adtrace.record\(\); attach a sink after "
                                            r"it ends$"):
            attach(Named, EventLog())
    with attach(Named, EventLog()), attach(Fresh, EventLog()):
        with pytest.raises(HookError, match=r"\.Named has sinks attached \(adtrace.recording.micrograd.attach\); "
                                            r"detach them before recording it$"):
            with adtrace.record(engine=Named):
                pass
        with pytest.raises(HookError, match=r"\.Fresh is hooked and \S*\.Fresh is it, its subclass or its base: its "
                                            r"values would be recorded twice; record one class at a time$"):
            adtrace.record(engine=Fresh)
        with pytest.raises(HookError, match=r"\.Named is hooked and \S*\.Sub is its subclass or base: its values would "
                                            r"be recorded twice; record one class at a time$"):
            attach(Sub, EventLog())
    assert hooked_classes() == () and registry.active_recordings() == 0


def test_two_sinks_on_one_class_each_get_every_event_once():
    before = dict(vars(Value))
    outer, inner = EventLog(), EventLog()
    outer_attachment = attach(Value, outer)
    with attach(Value, inner):
        a = Value(3.0)
        (a + a).backward()
    assert hooked_classes() == (Value,)
    outer_attachment.detach()
    outer_attachment.detach()  # a second call does nothing
    assert_restored(Value, before)
    assert outer.events == inner.events and len(outer.of("node_created")) == 2
    assert len(outer.of("grad_written")) == 2


def test_sinks_may_leave_in_any_order():
    before = dict(vars(Value))
    first, second = attach(Value, EventLog()), attach(Value, EventLog())
    first.detach()
    a = Value(2.0)
    (a * a).backward()
    assert len(second.sink.of("grad_written")) == 2 and first.sink.events == []
    second.detach()
    assert_restored(Value, before)


def test_a_subclass_or_base_of_a_hooked_class_is_refused():
    class Sub(MiniValue):
        pass

    with attach(MiniValue, EventLog()):
        with pytest.raises(HookError, match="recorded twice"):
            attach(Sub, EventLog())
    with attach(Sub, EventLog()):
        with pytest.raises(HookError, match="recorded twice"):
            attach(MiniValue, EventLog())
    assert hooked_classes() == ()


def test_a_detached_sink_is_not_kept_by_the_context():
    gc.disable()
    try:
        log = EventLog()
        freed = weakref.ref(log)
        attachment = attach(Value, log)
        active = next(engine.hooks.active for engine in registry.installed() if engine.cls is Value)
        x = Value(3.0)
        (x * x).backward()
        attachment.detach()
        del log, attachment
        assert freed() is None
        assert active not in contextvars.copy_context()
    finally:
        gc.enable()


def test_detached_from_another_thread():
    log = EventLog()
    attachment = attach(Value, log)
    thread = threading.Thread(target=attachment.detach)
    thread.start()
    thread.join()
    assert hooked_classes() == ()
    x = Value(3.0)
    (x * x).backward()
    assert log.events == [] and x.grad == 6.0

    before = dict(vars(Value))
    first, second = attach(Value, EventLog()), attach(Value, log)
    thread = threading.Thread(target=second.detach)
    thread.start()
    thread.join()
    (x * x).backward()  # still hooked for the first; the second, detached elsewhere, gets nothing
    assert log.events == [] and len(first.sink.of("grad_written")) == 2
    first.detach()
    assert_restored(Value, before)


def test_an_attachment_stays_until_detached_after_the_thread_that_made_it_ended():
    made = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        thread = threading.Thread(target=lambda: made.update(attachment=attach(Value, EventLog())))
        thread.start()
        thread.join()
        gc.collect()
    assert made["attachment"].attached and hooked_classes() == (Value,) and caught == []
    made["attachment"].detach()
    assert hooked_classes() == ()


def test_an_attachment_made_inside_a_record_stays_after_it():
    with adtrace.record(engine=MiniValue):
        attachment = attach(Value, EventLog())
    x = Value(3.0)
    (x * x).backward()
    assert attachment.attached and len(attachment.sink.of("grad_written")) == 2
    attachment.detach()
    assert hooked_classes() == ()


def test_detach_leaves_an_attribute_the_user_replaced_without_a_word():
    own = vars(Value)["backward"]
    attachment = attach(Value, EventLog())

    def mine(self):
        return "mine"

    try:
        Value.backward = mine
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            attachment.detach()
        assert vars(Value)["backward"] is mine and hooked_classes() == ()
    finally:
        Value.backward = own


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")  # (3.12+: on purpose)
def test_a_fork_child_keeps_the_attachments_of_other_threads():
    """No thread owns an attachment: in a fork child, one made by a thread the child does not have
    stays attached (and its class hooked) until it is detached there."""
    from children import wait_for

    made, attached, leave = {}, threading.Event(), threading.Event()

    def keep_attached():
        made["attachment"] = attach(MiniValue, EventLog())
        attached.set()
        leave.wait()

    thread = threading.Thread(target=keep_attached)
    thread.start()
    attached.wait()
    try:
        pid = os.fork()
        if pid == 0:
            kept = made["attachment"].attached and hooked_classes() == (MiniValue,)
            made["attachment"].detach()
            os._exit(0 if kept and hooked_classes() == () else 3)
        status = wait_for(pid, 20)
    finally:
        leave.set()
        thread.join()
    made["attachment"].detach()
    assert status == 0 and hooked_classes() == ()

