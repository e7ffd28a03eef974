"""A release file on the package index: where it is and the sha256 the index publishes for it.

The indexes are the ones pip is configured with (``PIP_INDEX_URL``, ``index-url`` and
``extra-index-url`` in pip's configuration files, as ``pip config list`` shows them), then
https://pypi.org/simple/. A project page is read in the simple API's JSON form (PEP 691) or its
HTML form (PEP 503, the hash in each link's ``#sha256=`` fragment, as a mirror or a local
``file://`` index serves it).
"""

import ast
import http.client
import json
import os
import shutil
import ssl
import subprocess
import sys
import urllib.request
from functools import lru_cache
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlparse
from urllib.request import url2pathname

PYPI = "https://pypi.org/simple/"
ACCEPT = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"
FETCH_ERRORS = (OSError, http.client.HTTPException, ValueError)  # unreachable, cut short, not a URL


class NotOnIndex(LookupError):
    """No configured index lists the file with a sha256."""


def configured_indexes():
    """The index URLs to ask, in order: pip's index-url (default pypi.org), its extra index URLs,
    then pypi.org."""
    index = _pip_setting("index-url") or PYPI
    urls = [index, *_pip_setting("extra-index-url").split(), PYPI]
    return list(dict.fromkeys(url.rstrip("/") + "/" for url in urls))


def _pip_setting(name):
    """A pip setting as pip would take it for ``pip download``: environment first, then the
    ``download`` section, then ``global``; ``""`` when unset or pip cannot say."""
    settings = _pip_config(tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("PIP_"))))
    return next((str(settings[k]) for k in (f":env:.{name}", f"download.{name}", f"global.{name}")
                 if settings.get(k)), "")


@lru_cache(maxsize=4)
def _pip_config(pip_environment):
    """``pip config list`` as a dict; asked again only when a ``PIP_*`` variable changes."""
    try:
        done = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True,
                              timeout=60)
    except (OSError, subprocess.SubprocessError):
        return {}
    settings = {}
    for line in done.stdout.splitlines():
        key, _, value = line.partition("=")
        try:
            settings[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            continue
    return settings


def find_sdist(project, version, indexes=None):
    """``(url, sha256)`` of ``project-version.tar.gz`` on the first index that lists it with a sha256."""
    filename = f"{project}-{version}.tar.gz"
    tried = []
    for index in indexes or configured_indexes():
        page = urljoin(index.rstrip("/") + "/", f"{project}/")
        try:
            files = project_files(page)
        except (*FETCH_ERRORS, KeyError, TypeError) as exc:  # and a page that is not the simple API
            tried.append(f"{page}: {exc}")
            continue
        if filename in files and files[filename][1]:
            return files[filename]
        tried.append(f"{page}: no {filename} with a sha256")
    raise NotOnIndex("; ".join(tried))


def project_files(page):
    """``{filename: (absolute url, sha256 or None)}`` from a project page, JSON or HTML."""
    text = _read(page).decode("utf-8")
    if text.lstrip().startswith("{"):
        return {f["filename"]: (urljoin(page, f["url"]), f.get("hashes", {}).get("sha256"))
                for f in json.loads(text)["files"]}
    links = _Links()
    links.feed(text)
    files = {}
    for href, name in links.found:
        url, fragment = urldefrag(urljoin(page, href))
        algorithm, _, digest = fragment.partition("=")
        files[name or Path(urlparse(url).path).name] = (url, digest if algorithm == "sha256" else None)
    return files


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found, self._href, self._text = [], None, []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self._href, self._text = dict(attrs).get("href"), []

    def handle_data(self, data):
        if self._href is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag == "a" and self._href is not None:
            self.found.append((self._href, "".join(self._text).strip()))
            self._href = None


def download(url, out):
    """Copy the file at ``url`` into the open binary file ``out``."""
    with _open(url) as response:
        shutil.copyfileobj(response, out)


def _read(url):
    with _open(url) as response:
        return response.read()


def _open(url):
    parsed = urlparse(url)
    if parsed.scheme == "file":  # a local index: a project's folder holds its index.html, as pip reads it
        path = Path(url2pathname(parsed.path))
        return open(path / "index.html" if path.is_dir() else path, "rb")
    request = urllib.request.Request(url, headers={"Accept": ACCEPT, "User-Agent": "adtrace"})
    cert = _pip_setting("cert")
    context = ssl.create_default_context(cafile=cert) if cert else None
    return urllib.request.urlopen(request, timeout=120, context=context)
