"""autograd's sdist, fetched from the package index, verified, unpacked safely and kept in a cache.

The archive file itself is downloaded (never through pip, whose ``download`` runs the sdist's
build backend) from the index's simple API and checked against the sha256 the index publishes
before anything is extracted; nothing of it is built or run here. The cache (``$ADTRACE_CACHE``,
default ``~/.cache/adtrace``) keeps the verified archive, its sha256 and the unpacked tree; every
use re-checks the archive against that sha256 and the tree against the archive.
"""

import hashlib
import os
import shlex
import shutil
import tarfile
import tempfile
import warnings
import zlib
from pathlib import Path, PurePosixPath

from . import package_index
from .output import write_file


class UpstreamError(RuntimeError):
    """The upstream suite could not be fetched or run."""


class UpstreamCacheWarning(UserWarning):
    """The cache had been altered: its archive was downloaded again, or its tree unpacked again."""


def cache_dir():
    return Path(os.environ.get("ADTRACE_CACHE", Path.home() / ".cache" / "adtrace"))


def fetch_sdist(version, cache=None, indexes=None):
    """The unpacked sdist of autograd ``version``: its verified archive from the cache or the index,
    its tree checked against the archive (unpacked again where it differs). A cache that cannot be
    repaired so (a folder where a file should be, a file where a folder should be) is an
    ``UpstreamError`` naming it and how to clear it."""
    cache = Path(cache or cache_dir())
    try:
        return _fetch(version, cache, indexes)
    except OSError as exc:
        raise UpstreamError(f"the cache {cache} is damaged ({exc.strerror or exc}: {exc.filename}): clear it "
                            f"(rm -r {shlex.quote(str(cache))}) and run again") from None


def _fetch(version, cache, indexes):
    archive = cache / f"autograd-{version}.tar.gz"
    recorded = _recorded_sha256(archive)
    if recorded is None or _sha256(archive) != recorded:
        if recorded is not None:
            warnings.warn(UpstreamCacheWarning(f"{archive} does not match its sha256 (recorded in "
                                               f"{_sha256_file(archive).name}): downloaded again"), stacklevel=3)
        _download(version, archive, indexes)
    source = cache / f"autograd-{version}"
    try:
        with tarfile.open(archive) as tar:
            if not source.exists():
                _unpack(tar, archive, source)
            elif difference := _tree_difference(tar, archive, source):
                warnings.warn(UpstreamCacheWarning(f"{source}: {difference}; unpacked again from {archive.name}"),
                              stacklevel=3)
                _unpack(tar, archive, source)
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        raise UpstreamError(f"cannot unpack {archive} into {source}: {exc} "
                            f"(clear the cache: rm -r {shlex.quote(str(cache))})") from None
    if not (source / "tests").is_dir():
        raise UpstreamError(f"the sdist of autograd {version} has no tests/ folder ({archive})")
    return source


# -------------------- the archive: downloaded, verified --------------------


def _download(version, archive, indexes):
    try:
        url, expected = package_index.find_sdist("autograd", version, indexes)
    except package_index.NotOnIndex as exc:
        raise UpstreamError(f"could not download the sdist of autograd {version} from the package index: "
                            f"{exc} (cache {archive.parent})") from None
    archive.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=archive.parent, prefix=".download-", delete=False) as partial:
        try:
            package_index.download(url, partial)
        except package_index.FETCH_ERRORS as exc:
            os.unlink(partial.name)
            raise UpstreamError(f"could not download the sdist of autograd {version} from {url}: {exc} "
                                f"(cache {archive.parent})") from None
    got = _sha256(Path(partial.name))
    if got != expected:
        os.unlink(partial.name)
        raise UpstreamError(f"the sdist of autograd {version} from {url} has sha256 {got}, the index publishes "
                            f"{expected}: not kept (cache {archive.parent})")
    os.chmod(partial.name, 0o644)
    os.replace(partial.name, archive)
    write_file(_sha256_file(archive), f"{expected}  {archive.name}\n")


def _sha256_file(archive):
    return archive.with_name(archive.name + ".sha256")


def _recorded_sha256(archive):
    """The sha256 recorded beside ``archive`` (what the file holds, garbage too: it then matches
    nothing and the archive is downloaded again), ``None`` if none is."""
    recorded = _sha256_file(archive)
    if not recorded.exists():
        return None
    words = recorded.read_bytes().decode("ascii", errors="replace").split()
    return words[0] if words else ""


def _sha256(path):
    if not path.exists():
        return None
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# -------------------- the tree: unpacked safely, checked against the archive --------------------


def _files(tar, archive):
    """``{path inside the top folder: member holding its bytes}``; an unsafe member is refused."""
    top = archive.name[: -len(".tar.gz")]
    members = {}
    for member in tar.getmembers():
        parts = _safe_parts(member.name, top, archive)
        if member.isdir():
            continue
        if not (member.isfile() or member.issym() or member.islnk()):
            raise UpstreamError(f"refused {member.name!r} in {archive}: a device or fifo")
        if not parts:
            raise UpstreamError(f"refused {member.name!r} in {archive}: {top} is not a folder")
        members[parts] = member
    return {PurePosixPath(*parts): _content_member(members, parts, top, archive) for parts in members}


def _safe_parts(name, top, archive):
    path = PurePosixPath(name)
    if path.is_absolute():
        raise UpstreamError(f"refused {name!r} in {archive}: an absolute path")
    parts = tuple(p for p in path.parts if p != ".")
    if ".." in parts:
        raise UpstreamError(f"refused {name!r} in {archive}: '..' in its path")
    if not parts or parts[0] != top:
        raise UpstreamError(f"refused {name!r} in {archive}: outside {top}/")
    return parts[1:]


def _content_member(members, parts, top, archive):
    """The regular file a member's bytes come from: itself, or what its links lead to inside the tree
    (links are never created on disk: a link inside is unpacked as a copy of its target)."""
    member = members[parts]
    for _ in range(len(members) + 1):
        if member.isfile():
            return member
        if member.issym():
            parts = _normalized(PurePosixPath(top, *parts[:-1], member.linkname))
        else:  # a hard link names its target from the archive's root
            parts = _normalized(PurePosixPath(member.linkname))
        parts = parts[1:] if parts and parts[0] == top else None
        if parts is None or parts not in members:
            raise UpstreamError(f"refused {member.name!r} in {archive}: a link pointing outside the tree "
                                f"or to no file in it ({member.linkname!r})")
        member = members[parts]
    raise UpstreamError(f"refused {member.name!r} in {archive}: a cycle of links")


def _normalized(path):
    if path.is_absolute():
        return None
    parts = []
    for part in path.parts:
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part != ".":
            parts.append(part)
    return tuple(parts)


def _unpack(tar, archive, source):
    """Unpack into a new folder beside ``source``, then put it in place whole."""
    files = _files(tar, archive)
    folder = Path(tempfile.mkdtemp(dir=source.parent, prefix=".unpack-"))
    try:
        for path, member in files.items():
            target = folder.joinpath(*path.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with tar.extractfile(member) as content, open(target, "wb") as out:
                shutil.copyfileobj(content, out)
        os.chmod(folder, 0o755)
        if source.exists():
            old = Path(tempfile.mkdtemp(dir=source.parent, prefix=".old-"))
            source.rename(old / source.name)
            shutil.rmtree(old)
        folder.rename(source)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def _tree_difference(tar, archive, source):
    """The first way ``source`` differs from the archive's files, or ``None``; Python's
    ``__pycache__`` folders do not count."""
    files = _files(tar, archive)
    on_disk = {PurePosixPath(p.relative_to(source).as_posix()) for p in source.rglob("*")
               if p.is_file() or p.is_symlink()}
    on_disk = {p for p in on_disk if "__pycache__" not in p.parts}
    for path in sorted(on_disk - set(files)):
        return f"{path} is not in the archive"
    for path, member in sorted(files.items()):
        if path not in on_disk:
            return f"{path} is missing"
        on_file = source.joinpath(*path.parts)
        with tar.extractfile(member) as content:
            if on_file.is_symlink() or on_file.read_bytes() != content.read():
                return f"{path} differs from the archive"
    return None
