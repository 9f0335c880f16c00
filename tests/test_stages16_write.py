"""The batch's write stage draws overview.png in a forked child while the parcels are written.

Outputs must be byte for byte what the serial write gave, errors the same error at the same
place in the order (an earlier one wins), and nothing published after any error.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import geopandas as gpd
import pytest

import gis_sw.batch.aside as aside
import gis_sw.batch.write as write
import gis_sw.outputs.maps.overview as overview
from gis_sw.batch.api import screen_town
from gis_sw.batch.aside import start_aside
from gis_sw.batch.synthetic import synthetic_frames, write_synthetic_town
from gis_sw.errors import LayerError, OutputError, Problem

pytestmark = pytest.mark.usefixtures("single_threaded")  # forks need one thread

OUTPUTS = ("parcels.parquet", "problems.csv", "summary.csv", "overview.png")


def _write_town(folder: Path, n: int, seed: int) -> Path:
    """A generated town as GeoParquet files and a layers manifest, as `gis-sw sample` does."""
    return write_synthetic_town(folder, n, seed=seed)


@pytest.fixture(scope="module")
def town(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write_town(tmp_path_factory.mktemp("town"), 300, seed=16)


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _serial(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the write stage did before: everything in this process, in turn."""
    monkeypatch.setattr(aside, "fork_ready", lambda: False)


def _record_forks(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    seen: list[bool] = []

    def recording(task, **kwargs):
        started = start_aside(task, **kwargs)
        seen.append(started.forked)
        return started

    monkeypatch.setattr(write, "start_aside", recording)
    return seen


def test_outputs_drawn_aside_are_byte_identical_to_the_serial_write(
    town: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    forks = _record_forks(monkeypatch)
    screen_town(town, out=tmp_path / "aside", workers=1)
    assert forks == [True]
    _serial(monkeypatch)
    screen_town(town, out=tmp_path / "serial", workers=1)
    assert forks == [True, False]
    aside_files, serial_files = _files(tmp_path / "aside"), _files(tmp_path / "serial")
    assert sorted(aside_files) == sorted(serial_files)
    for name in OUTPUTS:
        assert aside_files[name] == serial_files[name], name
    assert aside_files["overview.png"].startswith(b"\x89PNG")
    a = gpd.read_file(tmp_path / "aside" / "parcels.gpkg", engine="pyogrio")
    s = gpd.read_file(tmp_path / "serial" / "parcels.gpkg", engine="pyogrio")
    assert len(a) == 300
    assert a.drop(columns="geometry").equals(s.drop(columns="geometry"))
    assert list(a.geometry.to_wkb()) == list(s.geometry.to_wkb())


def _failing_overview(*args, **kwargs) -> bytes:
    raise OutputError("overview map: drawing failed (test). Fix: none needed.")


@pytest.mark.parametrize("mode", ["aside", "serial"])
def test_an_overview_error_is_the_serial_error_and_nothing_is_published(
    town: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    out = tmp_path / "out"
    screen_town(town, out=out, workers=1)
    before = _files(out)
    monkeypatch.setattr(overview, "render_overview", _failing_overview)
    forks = _record_forks(monkeypatch)
    if mode == "serial":
        _serial(monkeypatch)
    with pytest.raises(OutputError) as caught:
        screen_town(town, out=out, workers=1, overwrite=True)
    assert str(caught.value) == "overview map: drawing failed (test). Fix: none needed."
    assert forks == [mode == "aside"]
    assert _files(out) == before  # the old set whole, no new file, no temporary file left
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("mode", ["aside", "serial"])
def test_an_earlier_error_wins_and_the_drawing_child_is_reaped(
    town: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    def full_disk(frame, path, *, overwrite):
        raise OutputError(f"writing {path} failed: No space left on device.")

    monkeypatch.setattr(overview, "render_overview", _failing_overview)
    monkeypatch.setattr(write, "write_frame", full_disk)
    if mode == "serial":
        _serial(monkeypatch)
    out = tmp_path / "out"
    with pytest.raises(OutputError) as caught:
        screen_town(town, out=out, workers=1)
    assert (
        str(caught.value) == f"writing {out / 'parcels.parquet'} failed: No space left on device."
    )
    assert not [p for p in out.iterdir() if p.is_file()]
    with pytest.raises(ChildProcessError):  # no child left running or unreaped
        os.waitpid(-1, os.WNOHANG)


def test_the_value_comes_from_the_child() -> None:
    parent = os.getpid()
    started = start_aside(lambda: (os.getpid(), b"x" * 3_000_000))
    assert started.forked
    pid, data = started.result()
    assert pid != parent
    assert data == b"x" * 3_000_000  # more than a pipe holds: read while the child writes
    assert started.result() == (pid, data)


def test_an_error_built_by_its_init_comes_back_with_its_message() -> None:
    problems = [Problem("wells", "column 'well_id' is missing", "map it in the manifest")]
    expected = str(LayerError(problems))

    def task() -> None:
        raise LayerError(problems)

    started = start_aside(task)
    with pytest.raises(LayerError) as caught:
        started.result()
    assert str(caught.value) == expected
    assert list(caught.value.problems) == problems
    with pytest.raises(LayerError):  # asked again: the same error
        started.result()


def test_a_killed_child_means_the_task_is_done_here() -> None:
    parent = os.getpid()

    def task() -> int:
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return os.getpid()

    started = start_aside(task)
    assert started.forked
    assert started.result() == parent


def test_cancel_stops_a_running_child_at_once() -> None:
    started = start_aside(lambda: time.sleep(30))
    began = time.perf_counter()
    started.cancel()
    assert time.perf_counter() - began < 5.0
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def test_with_another_thread_running_the_task_runs_here_when_asked() -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        calls: list[int] = []
        started = start_aside(lambda: calls.append(os.getpid()) or len(calls))
        assert not started.forked
        assert calls == []  # not before the result is asked for, as in a serial run
        assert started.result() == 1
        assert calls == [os.getpid()]
    finally:
        stop.set()
        other.join()


def test_the_rendered_page_is_the_written_page(ruleset, tmp_path: Path) -> None:
    frames = synthetic_frames(120, seed=2)
    parcels = frames["parcels"].assign(result=["fail", "pass", "review", "required"] * 30)
    written = overview.write_overview(tmp_path / "o.png", parcels, ruleset=ruleset, dpi=80)
    rendered = overview.render_overview(parcels, ruleset=ruleset, fmt="png", dpi=80)
    assert written.read_bytes() == rendered
    assert rendered.startswith(b"\x89PNG")
    pdf = overview.render_overview(parcels, ruleset=ruleset, fmt="pdf", dpi=80)
    assert pdf.startswith(b"%PDF")


def test_render_refuses_a_format_it_cannot_write(ruleset) -> None:
    parcels = synthetic_frames(10, seed=2)["parcels"].assign(result="pass")
    with pytest.raises(
        OutputError, match=r"overview map overview\.svg: use a \.png or \.pdf name\."
    ):
        overview.render_overview(parcels, ruleset=ruleset, fmt="svg")
