"""Release files on the package index: pip's configured indexes, the simple API's JSON and HTML forms."""

import json

import pytest

from adtrace.tools import package_index

HASH = "ab" * 32


def test_pip_s_configured_index_comes_first_and_pypi_last(monkeypatch):
    monkeypatch.setenv("PIP_INDEX_URL", "https://mirror.invalid/simple")
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "file:///srv/one/simple file:///srv/two/simple/")
    assert package_index.configured_indexes() == [
        "https://mirror.invalid/simple/", "file:///srv/one/simple/", "file:///srv/two/simple/", package_index.PYPI]


def test_an_index_url_from_a_pip_configuration_file_unless_the_environment_sets_one(monkeypatch, tmp_path):
    (tmp_path / "pip.conf").write_text("[global]\nindex-url = https://conf-mirror.invalid/simple\n")
    monkeypatch.setenv("PIP_CONFIG_FILE", str(tmp_path / "pip.conf"))
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    indexes = package_index.configured_indexes()
    assert indexes[0] == "https://conf-mirror.invalid/simple/" and indexes[-1] == package_index.PYPI
    monkeypatch.setenv("PIP_INDEX_URL", "https://env-mirror.invalid/simple/")
    assert package_index.configured_indexes()[:2] == ["https://env-mirror.invalid/simple/", *indexes[1:2]]


def test_the_json_form_of_a_project_page(tmp_path):
    page = tmp_path / "autograd.json"
    page.write_text(json.dumps({"meta": {"api-version": "1.1"}, "name": "autograd", "files": [
        {"filename": "autograd-1.0.tar.gz", "url": "../files/autograd-1.0.tar.gz", "hashes": {"sha256": HASH}},
        {"filename": "autograd-1.0-py3-none-any.whl", "url": "https://elsewhere.invalid/a.whl", "hashes": {}}]}))
    assert package_index.project_files(page.as_uri()) == {
        "autograd-1.0.tar.gz": ((tmp_path.parent / "files" / "autograd-1.0.tar.gz").as_uri(), HASH),
        "autograd-1.0-py3-none-any.whl": ("https://elsewhere.invalid/a.whl", None)}


def test_the_html_form_of_a_project_page(tmp_path):
    (tmp_path / "autograd").mkdir()
    (tmp_path / "autograd" / "index.html").write_text(
        f'<html><body><a href="../f/autograd-1.0.tar.gz#sha256={HASH}">autograd-1.0.tar.gz</a><br>\n'
        '<a href="https://x.invalid/autograd-0.9.tar.gz#md5=00" data-requires-python="">autograd-0.9.tar.gz</a>'
        "</body></html>")
    page = (tmp_path / "autograd").as_uri() + "/"
    assert package_index.project_files(page) == {
        "autograd-1.0.tar.gz": ((tmp_path / "f" / "autograd-1.0.tar.gz").as_uri(), HASH),
        "autograd-0.9.tar.gz": ("https://x.invalid/autograd-0.9.tar.gz", None)}


def test_the_first_index_listing_the_file_with_a_sha256_wins(tmp_path):
    def index(name, link):
        (tmp_path / name / "autograd").mkdir(parents=True)
        (tmp_path / name / "autograd" / "index.html").write_text(link)
        return (tmp_path / name).as_uri() + "/"

    missing = index("missing", '<a href="autograd-2.0.tar.gz#sha256=00">autograd-2.0.tar.gz</a>')
    unhashed = index("unhashed", '<a href="autograd-1.0.tar.gz">autograd-1.0.tar.gz</a>')
    listed = index("listed", f'<a href="autograd-1.0.tar.gz#sha256={HASH}">autograd-1.0.tar.gz</a>')
    unreachable = (tmp_path / "nowhere").as_uri() + "/"
    url, sha256 = package_index.find_sdist("autograd", "1.0", [unreachable, missing, unhashed, listed])
    assert (url, sha256) == (f"{listed}autograd/autograd-1.0.tar.gz", HASH)
    with pytest.raises(package_index.NotOnIndex) as caught:
        package_index.find_sdist("autograd", "1.0", [unreachable, missing, unhashed])
    assert str(caught.value).count("no autograd-1.0.tar.gz with a sha256") == 2 and "nowhere" in str(caught.value)


def test_the_index_publishes_the_sha256_of_autograd_1_9_1_s_sdist():
    url, sha256 = package_index.find_sdist("autograd", "1.9.1")  # the configured indexes, pypi.org last
    assert url.endswith("/autograd-1.9.1.tar.gz")
    assert sha256 == "7818c5c69ddf9efb7da74097bd741a4c7920133f41966f68537223a15ef798bc"
