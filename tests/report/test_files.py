"""report/files.py: a report's text written safely whatever its path names (never the real /dev/null:
a FIFO, a pty and temporary files stand in for devices)."""

import os
import stat
import tty

import pytest

from adtrace.report import files
from adtrace.report.files import write_file
from cli_run import read_fifo


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "r.md"
    path.write_text("old\n")
    with pytest.raises(UnicodeEncodeError):
        write_file(path, "half \ud800 written")  # a lone surrogate: no encoding can write it
    assert path.read_text() == "old\n" and os.listdir(tmp_path) == ["r.md"]


def test_an_interrupted_write_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "r.md"
    path.write_text("old\n")

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(files.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_file(path, "new\n")
    assert path.read_text() == "old\n" and os.listdir(tmp_path) == ["r.md"]


def test_a_written_file_is_utf8_with_the_usual_mode(tmp_path):
    write_file(tmp_path / "r.md", "a · b\n")
    assert (tmp_path / "r.md").read_bytes() == "a · b\n".encode("utf-8")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "r.md").stat().st_mode) == 0o666 & ~umask


# -------------------- what a path names: file, link, device, FIFO, folder --------------------


def test_a_regular_file_is_replaced_keeping_its_mode(tmp_path):
    path = tmp_path / "r.md"
    path.write_text("old\n")
    path.chmod(0o600)
    before = path.stat().st_ino
    write_file(path, "new\n")
    assert path.read_text() == "new\n" and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.stat().st_ino != before and os.listdir(tmp_path) == ["r.md"]  # a new file, renamed over it


def test_a_hard_linked_file_is_written_in_place_for_every_link(tmp_path):
    path, other = tmp_path / "r.md", tmp_path / "other.md"
    path.write_text("old text, longer than the new\n")
    os.link(path, other)
    write_file(path, "new\n")
    assert path.read_text() == other.read_text() == "new\n"
    assert path.stat().st_ino == other.stat().st_ino and path.stat().st_nlink == 2


def test_a_symbolic_link_is_written_through(tmp_path):
    (tmp_path / "real").mkdir()
    target, link = tmp_path / "real" / "r.md", tmp_path / "link.md"
    target.write_text("old\n")
    target.chmod(0o640)
    link.symlink_to(target)
    write_file(link, "new\n")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new\n" and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(os.listdir(tmp_path / "real")) == ["r.md"]  # the temporary file was beside the target
    dangling = tmp_path / "dangling.md"
    dangling.symlink_to(tmp_path / "real" / "new.md")
    write_file(dangling, "created\n")
    assert dangling.is_symlink() and (tmp_path / "real" / "new.md").read_text() == "created\n"


def test_a_fifo_is_written_into_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert files._write_kind(fifo)[0] == "stream"  # found by stat, without opening (which would wait)
    text = "a · b\n" * 5000
    assert read_fifo(fifo, lambda: write_file(fifo, text)) == text.encode("utf-8")
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and os.listdir(tmp_path) == ["pipe"]


def test_a_character_device_is_written_directly(tmp_path):
    leader, follower = os.openpty()  # a terminal: a character device that is not the machine's /dev/null
    try:
        tty.setraw(follower)  # (no "\n" -> "\r\n")
        device = os.ttyname(follower)
        write_file(device, "to the terminal\n")
        assert os.read(leader, 100) == b"to the terminal\n"
        assert stat.S_ISCHR(os.stat(device).st_mode)
    finally:
        os.close(leader)
        os.close(follower)


def test_a_dash_is_standard_output(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_file("-", "the report\n")
    assert capsys.readouterr().out == "the report\n" and os.listdir(tmp_path) == []


def test_a_folder_is_an_error_and_is_left_alone(tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(IsADirectoryError):
        write_file(tmp_path / "d", "text\n")
    with pytest.raises(IsADirectoryError):
        files.writable(tmp_path / "d")
    assert os.listdir(tmp_path) == ["d"] and os.listdir(tmp_path / "d") == []


def test_writable_finds_what_writing_would_raise_without_writing(tmp_path):
    (tmp_path / "a_file").write_text("")
    with pytest.raises(FileNotFoundError, match="no such folder"):
        files.writable(tmp_path / "missing" / "r.md")
    with pytest.raises(NotADirectoryError, match="not a folder"):
        files.writable(tmp_path / "a_file" / "r.md")
    files.writable(tmp_path / "r.md")
    files.writable("-")
    assert os.listdir(tmp_path) == ["a_file"]


def _as_a_user(monkeypatch):
    """``os.access`` as for a user who is not root (who may write anything): by the owner's write bit."""
    monkeypatch.setattr(os, "access", lambda path, mode: not mode & os.W_OK or bool(os.stat(path).st_mode & 0o200))


def test_a_read_only_file_is_refused_and_left_alone(tmp_path, monkeypatch):
    _as_a_user(monkeypatch)
    path = tmp_path / "r.md"
    path.write_text("kept\n")
    path.chmod(0o444)  # protected by its owner, in a folder they may write: `>` and open() refuse it
    with pytest.raises(PermissionError):
        files.writable(path)
    with pytest.raises(PermissionError):
        write_file(path, "new\n")
    assert path.read_text() == "kept\n" and os.listdir(tmp_path) == ["r.md"]


def test_a_writable_file_in_a_read_only_folder_is_written_in_place(tmp_path, monkeypatch):
    _as_a_user(monkeypatch)
    (tmp_path / "shared").mkdir()
    path = tmp_path / "shared" / "r.md"
    path.write_text("old text, longer than the new\n")
    before = path.stat().st_ino
    (tmp_path / "shared").chmod(0o555)  # no temporary file can be made beside it: written as `>` would
    try:
        files.writable(path)
        write_file(path, "new\n")
    finally:
        (tmp_path / "shared").chmod(0o755)
    assert path.read_text() == "new\n" and path.stat().st_ino == before and os.listdir(tmp_path / "shared") == ["r.md"]


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_file_replaced_by_root_keeps_its_owner(tmp_path):
    """``sudo adtrace report ... -o ~user/r.md``: the user still owns (and can write) their report."""
    path = tmp_path / "r.md"
    path.write_text("old\n")
    os.chown(path, 65534, 65534)
    write_file(path, "new\n")
    assert path.read_text() == "new\n" and (path.stat().st_uid, path.stat().st_gid) == (65534, 65534)


@pytest.mark.parametrize("name", ["new/", "a_file/"])
def test_a_name_ending_in_a_slash_names_a_folder_never_a_file(tmp_path, name):
    """``-o out/`` (as a shell's ``> out/``): an error, not a file ``out`` made or replaced."""
    (tmp_path / "a_file").write_text("kept\n")
    with pytest.raises(OSError):
        files.writable(f"{tmp_path}/{name}")
    with pytest.raises(OSError):
        write_file(f"{tmp_path}/{name}", "text\n")
    assert os.listdir(tmp_path) == ["a_file"] and (tmp_path / "a_file").read_text() == "kept\n"


@pytest.mark.parametrize("name", ["r" * 252 + ".md", "é" * 126 + ".md"])  # 255 bytes each
def test_a_file_name_as_long_as_the_system_allows_is_written(tmp_path, name):
    """Its temporary file's name (``.NAME.XXXXXXXX.tmp``) is kept under the system's 255 bytes too."""
    path = tmp_path / name
    write_file(path, "text\n")
    write_file(path, "new\n")
    assert path.read_text() == "new\n" and os.listdir(tmp_path) == [path.name]
