"""Where the gate looks for sg-exec: next to the modules, else an editable install's.

The build hook compiles the helper outside the source tree; a wheel install has
it next to the modules, an editable install under site-packages (recorded in
RECORD). These tests lay out real dist-info directories and read them through
importlib.metadata, as the lookup does at import.
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

import pytest

from shellgate.executors import _helper_lookup

RECORDED = _helper_lookup.RECORDED_AS


def install(site: Path, *, url: str | None, editable: bool = True, helper: bool = True) -> Path:
    """A dist-info under ``site`` recording the helper; returns the helper's path."""
    info = site / "shellgate-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shellgate\nVersion: 0.1.0\n")
    target = site / RECORDED
    records = ["shellgate-0.1.0.dist-info/METADATA,,"]
    if helper:
        target.parent.mkdir(parents=True)
        target.write_bytes(b"\x7fELF")
        records.append(f"{RECORDED},sha256=x,4")
    (info / "RECORD").write_text("\n".join(records) + "\n")
    if url is not None:
        direct = {"url": url, "dir_info": {"editable": True} if editable else {}}
        (info / "direct_url.json").write_text(json.dumps(direct))
    return target


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No helper next to the modules; the distribution is read from ``tmp/site``."""
    site = tmp_path / "site"
    monkeypatch.setattr(_helper_lookup, "PACKAGED", tmp_path / "src" / "sg-exec")
    monkeypatch.setattr(
        metadata,
        "distribution",
        lambda name: metadata.PathDistribution(site / f"{name}-0.1.0.dist-info"),
    )
    return site


def test_editable_install_of_this_tree_finds_the_recorded_helper(site: Path) -> None:
    helper = install(site, url=_helper_lookup.SOURCE_ROOT.as_uri())
    assert _helper_lookup.locate_helper() == helper


def test_a_helper_next_to_the_modules_wins(site: Path, tmp_path: Path) -> None:
    install(site, url=_helper_lookup.SOURCE_ROOT.as_uri())
    packaged = tmp_path / "src" / "sg-exec"
    packaged.parent.mkdir()
    packaged.write_bytes(b"\x7fELF")
    assert _helper_lookup.locate_helper() == packaged


@pytest.mark.parametrize(
    ("url", "editable"),
    [
        pytest.param("file:///elsewhere/checkout", True, id="another-checkout"),
        pytest.param(None, True, id="no-direct-url"),
        pytest.param("SOURCE_ROOT", False, id="not-editable"),
        pytest.param("https://example.invalid/shellgate.whl", True, id="not-a-file-url"),
    ],
)
def test_other_installs_do_not_lend_their_helper(
    site: Path, tmp_path: Path, url: str | None, editable: bool
) -> None:
    if url == "SOURCE_ROOT":
        url = _helper_lookup.SOURCE_ROOT.as_uri()
    install(site, url=url, editable=editable)
    assert _helper_lookup.locate_helper() == tmp_path / "src" / "sg-exec"  # absent: setpriv


def test_an_editable_install_without_a_helper_falls_back(site: Path, tmp_path: Path) -> None:
    install(site, url=_helper_lookup.SOURCE_ROOT.as_uri(), helper=False)
    assert _helper_lookup.locate_helper() == tmp_path / "src" / "sg-exec"


def test_no_distribution_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_helper_lookup, "PACKAGED", tmp_path / "sg-exec")

    def missing(name: str) -> metadata.Distribution:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", missing)
    assert _helper_lookup.locate_helper() == tmp_path / "sg-exec"
