"""Atomic writes (coretorch.save, and coretorch.utils.atomic_write for other writers such as the
profiler's Chrome trace): the old file survives a crash, a killed writer's temporary file is
recognisable and removed by the next write, new files honour the umask, symlinks are written
through, and errors name the target."""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time

import pytest

import coretorch as ct
from coretorch.utils.atomic_write import TEMP_SUFFIX, atomic_write


def _temps(folder):
    return sorted(n for n in os.listdir(folder) if n.endswith(TEMP_SUFFIX))


def test_a_failed_save_keeps_the_old_file_and_no_temp(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.pt"
    ct.save({"v": ct.tensor([1.0])}, path)
    before = path.read_bytes()

    def crash(*args, **kwargs):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="simulated"):
        ct.save({"v": ct.tensor([2.0])}, path)
    monkeypatch.undo()
    assert path.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["ckpt.pt"]

    def interrupted(f):
        f.write(b"half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_write(path, interrupted, caller="save()")
    assert ct.load(path)["v"].tolist() == [1.0]
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"]


_KILLED_WRITER = textwrap.dedent("""
    import os, sys, time
    import coretorch as ct
    def hang(fd):
        open(sys.argv[2], "w").close()   # the temporary file is written: tell the test
        time.sleep(120)
    os.fsync = hang
    ct.save({"w": ct.ones(1000)}, sys.argv[1])
""")


@pytest.mark.skipif(os.name == "nt", reason="SIGKILL")
def test_a_killed_save_leaves_a_temp_that_the_next_save_removes(tmp_path):
    target, ready = tmp_path / "ckpt.pt", tmp_path / "ready"
    ct.save({"w": ct.zeros(3)}, target)
    child = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(target), str(ready)])
    try:
        deadline = time.monotonic() + 120
        while not ready.exists():
            assert child.poll() is None and time.monotonic() < deadline, "writer never started"
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait()
    left = _temps(tmp_path)
    assert len(left) == 1 and left[0].startswith(".ckpt.pt.")  # recognisable, named for its target
    assert ct.load(target)["w"].tolist() == [0.0, 0.0, 0.0]  # the old file is intact

    ct.save({"w": ct.ones(2)}, tmp_path / "other.pt")  # another target's save leaves it alone
    assert _temps(tmp_path) == left
    ct.save({"w": ct.ones(2)}, target)
    assert _temps(tmp_path) == [] and ct.load(target)["w"].tolist() == [1.0, 1.0]


def test_temps_of_running_writers_are_kept(tmp_path):
    target = tmp_path / "ckpt.pt"
    from coretorch.utils.atomic_write import _host_tag

    live = tmp_path / f".ckpt.pt.{_host_tag()}-{os.getppid()}-0000{TEMP_SUFFIX}"
    other_host = tmp_path / f".ckpt.pt.ffffffff-999999-0000{TEMP_SUFFIX}"
    live.write_bytes(b"x")
    other_host.write_bytes(b"x")
    ct.save({"w": ct.ones(1)}, target)
    assert _temps(tmp_path) == sorted([live.name, other_host.name])


@pytest.fixture
def umask():
    old = os.umask(0o022)
    try:
        yield os.umask
    finally:
        os.umask(old)


def test_saved_files_honour_the_umask(tmp_path, umask):
    umask(0o022)
    ct.save({"w": ct.ones(1)}, tmp_path / "a.pt")
    ct.save({"m": {1, 2}}, tmp_path / "z.pt")  # the pickled (zip) format too
    umask(0o077)
    ct.save({"w": ct.ones(1)}, tmp_path / "b.pt")
    mode = lambda name: stat.S_IMODE(os.stat(tmp_path / name).st_mode)  # noqa: E731
    assert (mode("a.pt"), mode("z.pt"), mode("b.pt")) == (0o644, 0o644, 0o600)
    os.chmod(tmp_path / "a.pt", 0o640)  # an existing file keeps its mode
    umask(0o022)
    ct.save({"w": ct.zeros(1)}, tmp_path / "a.pt")
    assert mode("a.pt") == 0o640


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")
def test_save_writes_through_a_symlink(tmp_path):
    real = tmp_path / "store" / "real.pt"
    real.parent.mkdir()
    ct.save({"w": ct.zeros(1)}, real)
    link = tmp_path / "latest.pt"
    link.symlink_to(real)
    ct.save({"w": ct.ones(1)}, link)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert ct.load(real)["w"].tolist() == [1.0]
    dangling = tmp_path / "dangling.pt"
    dangling.symlink_to(tmp_path / "store" / "new.pt")
    ct.save({"w": ct.ones(1)}, dangling)
    assert dangling.is_symlink() and (tmp_path / "store" / "new.pt").is_file()


def test_errors_name_the_target_not_the_temp(tmp_path, monkeypatch):
    missing = tmp_path / "no_such_dir" / "ckpt.pt"
    with pytest.raises(FileNotFoundError) as info:
        ct.save({"w": ct.ones(1)}, missing)
    assert info.value.filename == str(missing) and "save()" in str(info.value)
    assert TEMP_SUFFIX not in str(info.value) and ".tmp" not in str(info.value)

    target = tmp_path / "ckpt.pt"

    def full(src, dst):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), src)

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OSError) as info:
        ct.save({"w": ct.ones(1)}, target)
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(target)
    assert TEMP_SUFFIX not in str(info.value) and _temps(tmp_path) == []

    with pytest.raises(IsADirectoryError) as info:
        ct.save({"w": ct.ones(1)}, tmp_path)
    assert info.value.filename == str(tmp_path)


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="no /dev/null")
def test_device_targets_are_written_in_place():
    ct.save({"w": ct.ones(3)}, "/dev/null")  # renaming over it would replace the device node
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_atomic_write_serves_other_writers(tmp_path):
    path = tmp_path / "trace.json"
    assert atomic_write(path, b'{"a": 1}', caller="export_chrome_trace()") == str(path)
    assert path.read_bytes() == b'{"a": 1}'
    atomic_write(path, lambda f: f.write(b"[]"), caller="export_chrome_trace()")
    assert path.read_bytes() == b"[]"
    with pytest.raises(FileNotFoundError, match=r"export_chrome_trace\(\)"):
        atomic_write(tmp_path / "missing" / "t.json", b"{}", caller="export_chrome_trace()")
