"""autograd's sdist: verified against the index's sha256, unpacked safely, its cache checked on every use.

Every archive here is crafted in the test and served from a local ``file://`` index in the simple
API's HTML form: no network.
"""

import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import warnings

import pytest

from adtrace.tools import sdist

VERSION = "0.0.1"
TOP = f"autograd-{VERSION}"
GOOD = {f"{TOP}/tests/test_a.py": b"def test_a():\n    assert True\n",
        f"{TOP}/tests/test_b.py": b"def test_b():\n    assert 1 + 1 == 2\n",
        f"{TOP}/autograd/__init__.py": b""}


def crafted_archive(files=GOOD, extra=()):
    """A .tar.gz of ``files`` (name -> bytes) and ``extra`` TarInfo members (links, devices...)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, content in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
        for info in extra:
            tar.addfile(info)
    return buffer.getvalue()


def member(name, kind, linkname=""):
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, linkname
    return info


def serve(tmp_path, archive, published=None):
    """A local index holding ``archive`` as autograd 0.0.1's sdist; its URL."""
    (tmp_path / "files").mkdir(exist_ok=True)
    (tmp_path / "files" / f"{TOP}.tar.gz").write_bytes(archive)
    page = tmp_path / "simple" / "autograd"
    page.mkdir(parents=True, exist_ok=True)
    digest = published or hashlib.sha256(archive).hexdigest()
    (page / "index.html").write_text(f'<html><body><a href="../../files/{TOP}.tar.gz#sha256={digest}">'
                                     f"{TOP}.tar.gz</a></body></html>\n")
    return [(tmp_path / "simple").as_uri() + "/"]


@pytest.fixture
def cache(tmp_path):
    return tmp_path / "cache"


def test_a_verified_sdist_is_unpacked_and_its_archive_kept(tmp_path, cache):
    archive = crafted_archive()
    source = sdist.fetch_sdist(VERSION, cache, serve(tmp_path, archive))
    assert source == cache / TOP
    assert (source / "tests" / "test_b.py").read_bytes() == GOOD[f"{TOP}/tests/test_b.py"]
    assert (cache / f"{TOP}.tar.gz").read_bytes() == archive
    assert (cache / f"{TOP}.tar.gz.sha256").read_text() == f"{hashlib.sha256(archive).hexdigest()}  {TOP}.tar.gz\n"
    assert sorted(p.name for p in cache.iterdir()) == [TOP, f"{TOP}.tar.gz", f"{TOP}.tar.gz.sha256"]


def test_an_archive_whose_sha256_differs_from_the_index_is_not_kept(tmp_path, cache):
    indexes = serve(tmp_path, crafted_archive(), published="0" * 64)
    with pytest.raises(sdist.UpstreamError, match=f"the index publishes {'0' * 64}: not kept") as caught:
        sdist.fetch_sdist(VERSION, cache, indexes)
    assert str(cache) in str(caught.value)
    assert list(cache.iterdir()) == []


def test_a_release_missing_from_the_index_names_the_index_and_the_cache(tmp_path, cache):
    indexes = serve(tmp_path, crafted_archive())
    with pytest.raises(sdist.UpstreamError, match="could not download the sdist of autograd 9.9.9") as caught:
        sdist.fetch_sdist("9.9.9", cache, indexes)
    assert "no autograd-9.9.9.tar.gz with a sha256" in str(caught.value) and str(cache) in str(caught.value)


UNSAFE = {
    "absolute path": ([], [member("/tmp/adtrace-evil", tarfile.REGTYPE)], "an absolute path"),
    "dot-dot": ([], [member(f"{TOP}/../evil", tarfile.REGTYPE)], "'..' in its path"),
    "outside the top folder": ([], [member("elsewhere/evil", tarfile.REGTYPE)], f"outside {TOP}/"),
    "symlink to an absolute path": ([], [member(f"{TOP}/l", tarfile.SYMTYPE, "/etc/passwd")], "pointing outside"),
    "symlink climbing out": ([], [member(f"{TOP}/tests/l", tarfile.SYMTYPE, "../../x")], "pointing outside"),
    "symlink to a folder": ([], [member(f"{TOP}/d", tarfile.SYMTYPE, ".")], "pointing outside"),
    "symlink into another folder": ([], [member(f"{TOP}/l", tarfile.SYMTYPE, "../x/tests/test_a.py")],
                                    "pointing outside"),
    "hard link out": ([], [member(f"{TOP}/h", tarfile.LNKTYPE, "../etc/passwd")], "pointing outside"),
    "fifo": ([], [member(f"{TOP}/fifo", tarfile.FIFOTYPE)], "a device or fifo"),
    "device": ([], [member(f"{TOP}/dev", tarfile.CHRTYPE)], "a device or fifo"),
}


@pytest.mark.parametrize("case", list(UNSAFE))
def test_an_unsafe_member_is_refused_on_every_python(tmp_path, cache, case):
    _, extra, reason = UNSAFE[case]
    indexes = serve(tmp_path, crafted_archive(extra=extra))
    with pytest.raises(sdist.UpstreamError) as caught:
        sdist.fetch_sdist(VERSION, cache, indexes)
    message = str(caught.value)
    assert message.startswith(f"refused {extra[0].name!r} in {cache / TOP}.tar.gz: ") and reason in message
    assert "\n" not in message
    assert sorted(p.name for p in cache.iterdir()) == [f"{TOP}.tar.gz", f"{TOP}.tar.gz.sha256"]  # no tree
    assert not (tmp_path / "evil").exists() and not os.path.lexists("/tmp/adtrace-evil")


def test_an_archive_that_is_no_tarball_is_an_error_naming_it(tmp_path, cache):
    with pytest.raises(sdist.UpstreamError, match=f"cannot unpack {cache / TOP}.tar.gz into {cache / TOP}: "):
        sdist.fetch_sdist(VERSION, cache, serve(tmp_path, b"not a tarball"))


def test_a_link_inside_the_tree_is_unpacked_as_a_copy(tmp_path, cache):
    links = [member(f"{TOP}/tests/same.py", tarfile.SYMTYPE, "test_a.py"),
             member(f"{TOP}/hard.py", tarfile.LNKTYPE, f"{TOP}/tests/test_b.py")]
    source = sdist.fetch_sdist(VERSION, cache, serve(tmp_path, crafted_archive(extra=links)))
    assert not (source / "tests" / "same.py").is_symlink()
    assert (source / "tests" / "same.py").read_bytes() == GOOD[f"{TOP}/tests/test_a.py"]
    assert (source / "hard.py").read_bytes() == GOOD[f"{TOP}/tests/test_b.py"]


@pytest.mark.parametrize("tamper", ["empty a test file", "truncate a test file", "add a test file",
                                    "remove a test file", "garbage bytes in a test file"])
def test_a_tampered_tree_is_unpacked_again_from_the_archive(tmp_path, cache, tamper):
    indexes = serve(tmp_path, crafted_archive())
    source = sdist.fetch_sdist(VERSION, cache, indexes)
    (source / "tests" / "__pycache__").mkdir()
    (source / "tests" / "__pycache__" / "test_a.cpython.pyc").write_bytes(b"compiled")  # Python's own: fine
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sdist.fetch_sdist(VERSION, cache, indexes) == source
    target = source / "tests" / "test_a.py"
    if tamper == "empty a test file":
        target.write_bytes(b"")
    elif tamper == "truncate a test file":
        target.write_bytes(GOOD[f"{TOP}/tests/test_a.py"][:10])
    elif tamper == "garbage bytes in a test file":
        target.write_bytes(b"\xff\xfe\x00 not UTF-8 \x80")
    elif tamper == "add a test file":
        (source / "tests" / "test_extra.py").write_text("def test_extra():\n    pass\n")
    else:
        target.unlink()
    with pytest.warns(sdist.UpstreamCacheWarning, match=f"{source}: tests/test_"):
        sdist.fetch_sdist(VERSION, cache, indexes)
    assert target.read_bytes() == GOOD[f"{TOP}/tests/test_a.py"]
    assert sorted(p.name for p in (source / "tests").iterdir()) == ["test_a.py", "test_b.py"]


def test_a_truncated_or_altered_archive_is_downloaded_again(tmp_path, cache):
    archive = crafted_archive()
    indexes = serve(tmp_path, archive)
    sdist.fetch_sdist(VERSION, cache, indexes)
    kept = cache / f"{TOP}.tar.gz"
    kept.write_bytes(archive[: len(archive) // 2])
    with pytest.warns(sdist.UpstreamCacheWarning, match=f"{kept} does not match its sha256"):
        sdist.fetch_sdist(VERSION, cache, indexes)
    assert kept.read_bytes() == archive
    (cache / f"{TOP}.tar.gz.sha256").write_text("f" * 64 + f"  {TOP}.tar.gz\n")
    with pytest.warns(sdist.UpstreamCacheWarning, match="downloaded again"):
        sdist.fetch_sdist(VERSION, cache, indexes)
    assert (cache / f"{TOP}.tar.gz.sha256").read_text().split()[0] == hashlib.sha256(archive).hexdigest()


def test_garbage_in_the_recorded_sha256_downloads_the_archive_again(tmp_path, cache):
    archive = crafted_archive()
    indexes = serve(tmp_path, archive)
    sdist.fetch_sdist(VERSION, cache, indexes)
    (cache / f"{TOP}.tar.gz.sha256").write_bytes(b"\xff\xfe\x00 garbage")
    with pytest.warns(sdist.UpstreamCacheWarning, match="does not match its sha256 .* downloaded again"):
        sdist.fetch_sdist(VERSION, cache, indexes)
    assert (cache / f"{TOP}.tar.gz.sha256").read_text().split()[0] == hashlib.sha256(archive).hexdigest()


@pytest.mark.parametrize("damage", ["the cache is a file", "the archive is a folder", "its sha256 is a folder"])
def test_a_cache_that_cannot_be_repaired_is_an_error_naming_it_and_how_to_clear_it(tmp_path, cache, damage):
    indexes = serve(tmp_path, crafted_archive())
    sdist.fetch_sdist(VERSION, cache, indexes)
    spoiled = {"the cache is a file": cache, "the archive is a folder": cache / f"{TOP}.tar.gz",
               "its sha256 is a folder": cache / f"{TOP}.tar.gz.sha256"}[damage]
    if damage == "the cache is a file":
        shutil.rmtree(spoiled)
        spoiled.write_bytes(b"\xff")
    else:
        spoiled.unlink()
        spoiled.mkdir()
    with pytest.raises(sdist.UpstreamError, match=f"the cache {cache} is damaged .*{spoiled.name}.*rm -r {cache}"):
        sdist.fetch_sdist(VERSION, cache, indexes)


def test_a_truncated_archive_whose_recorded_sha256_matches_it_names_the_cache_and_how_to_clear_it(tmp_path, cache):
    archive = crafted_archive()
    indexes = serve(tmp_path, archive)
    sdist.fetch_sdist(VERSION, cache, indexes)
    truncated = archive[: len(archive) // 2]
    (cache / f"{TOP}.tar.gz").write_bytes(truncated)
    (cache / f"{TOP}.tar.gz.sha256").write_text(f"{hashlib.sha256(truncated).hexdigest()}  {TOP}.tar.gz\n")
    with pytest.raises(sdist.UpstreamError, match=f"cannot unpack {cache / TOP}.tar.gz .*rm -r {cache}"):
        sdist.fetch_sdist(VERSION, cache, indexes)


def test_a_truncated_archive_that_cannot_be_fetched_again_names_the_cache(tmp_path, cache):
    archive = crafted_archive()
    sdist.fetch_sdist(VERSION, cache, serve(tmp_path, archive))
    (cache / f"{TOP}.tar.gz").write_bytes(archive[:100])
    gone = [(tmp_path / "nowhere").as_uri() + "/"]
    refused = pytest.raises(sdist.UpstreamError, match="could not download the sdist of autograd 0.0.1")
    with pytest.warns(sdist.UpstreamCacheWarning), refused as caught:
        sdist.fetch_sdist(VERSION, cache, gone)
    assert f"(cache {cache})" in str(caught.value)


def test_the_command_line_refuses_an_unsafe_sdist_in_one_line(tmp_path):
    indexes = serve(tmp_path, crafted_archive(extra=[member(f"{TOP}/../../evil", tarfile.REGTYPE)]))
    env = {**os.environ, "PIP_INDEX_URL": indexes[0], "ADTRACE_CACHE": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-m", "adtrace", "upstream", "--version", VERSION],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 2
    assert out.stderr.splitlines() == [f"adtrace: refused '{TOP}/../../evil' in {tmp_path / 'cache' / TOP}.tar.gz: "
                                       "'..' in its path"]


def test_the_command_to_clear_a_cache_with_a_space_in_its_path_clears_that_cache(tmp_path):
    cache = tmp_path / "my cache"
    sdist.fetch_sdist(VERSION, cache, serve(tmp_path, crafted_archive()))
    (cache / f"{TOP}.tar.gz").unlink()
    (cache / f"{TOP}.tar.gz").mkdir()
    with pytest.raises(sdist.UpstreamError) as error:
        sdist.fetch_sdist(VERSION, cache, serve(tmp_path, crafted_archive()))
    (tmp_path / "my").mkdir()  # what an unquoted `rm -r .../my cache` would remove instead
    command = str(error.value).split("(rm -r ", 1)[1].rsplit(")", 1)[0]
    subprocess.run(f"rm -r {command}", shell=True, check=True)
    assert sorted(os.listdir(tmp_path)) == ["files", "my", "simple"]
