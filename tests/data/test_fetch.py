"""``python -m data check|fetch``: one command that says what is missing and fetches it all."""

from __future__ import annotations

import io
import subprocess
import sys
import urllib.error
from pathlib import Path

import pytest

from data.benchmarks import benchmark_info, download
from data.benchmarks._sources import remote_file
from data.benchmarks.fetch import check_benchmarks, main
from data.schema import DataError

REPO = Path(__file__).resolve().parents[2]


def test_missing_files_of_a_large_benchmark_are_counted_by_folder(tmp_path):
    """SummEval reads 534 files: the error counts them all, one problem per folder."""
    from data import load_benchmark

    with pytest.raises(DataError) as err:
        load_benchmark("summeval", data_dir=tmp_path)
    n_files = len(benchmark_info("summeval").files)
    assert f"benchmark 'summeval': {n_files} file(s)" in str(err.value)
    counted = sum(int(p.split(": ")[1].split(" ")[0]) for p in err.value.problems)
    assert counted == n_files
    assert len(err.value.problems) < 10  # grouped, not one line per file
    assert "`python -m data fetch summeval`" in str(err.value)


def test_check_counts_present_missing_and_damaged(tmp_path):
    rel = "pandalm_testset/data/testset-v1.json"
    target = tmp_path / rel
    target.parent.mkdir(parents=True)
    target.write_bytes(b"not the file")
    (row,) = check_benchmarks(["pandalm"], tmp_path)
    assert row.n_files == 3
    assert len(row.check.found) == 0
    assert [m.relpath for m in row.check.missing] == [
        "pandalm_testset/data/gpt-3.5-turbo-testset-v1.json",
        "pandalm_testset/data/pandalm-7b-testset-v1.json",
    ]
    assert [r.relpath for r, _, _ in row.check.damaged] == [rel]
    assert not row.check.ok


def test_check_command_reports_and_exits_1_when_incomplete(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "data", "check", "hanna", "llmfao", "--data-dir", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1
    lines = out.stdout.splitlines()
    assert lines[1].split() == ["hanna", "2", "0", "2", "0"]
    assert lines[2].split() == ["llmfao", "1", "0", "1", "0"]
    assert "python -m data fetch hanna llmfao" in out.stdout


def test_check_on_the_shared_data_is_complete():
    rows = check_benchmarks()
    assert all(r.check.ok for r in rows), [
        (r.name, len(r.check.missing), len(r.check.damaged)) for r in rows if not r.check.ok
    ]


class _Response(io.BytesIO):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def test_fetch_downloads_every_missing_file_then_checks(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("JUDGESCOPE_OFFLINE", raising=False)
    monkeypatch.setenv("JUDGESCOPE_CACHE", str(tmp_path / "cache"))
    shared = Path(download.data_dirs()[0])
    payloads = {}
    for rel in benchmark_info("pandalm").files:
        payloads[remote_file(rel).url] = (shared / rel).read_bytes()

    def urlopen(request, timeout=None):
        if request.full_url not in payloads:
            raise urllib.error.HTTPError(request.full_url, 404, "Not Found", None, None)
        return _Response(payloads[request.full_url])

    monkeypatch.setattr(download.urllib.request, "urlopen", urlopen)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["fetch", "pandalm", "--data-dir", str(empty)]) == 0
    assert capsys.readouterr().out.splitlines()[1].split() == ["pandalm", "3", "3", "0", "0"]
    assert len(list((tmp_path / "cache" / "data").rglob("*.json"))) == 3
    # a second fetch finds them all and downloads nothing
    monkeypatch.setattr(download.urllib.request, "urlopen", None)
    assert main(["fetch", "pandalm", "--data-dir", str(empty)]) == 0


def test_fetch_offline_says_what_to_do(tmp_path, capsys):
    assert main(["fetch", "newsroom", "--data-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "benchmark(s) newsroom: 1 file(s)" in err
    assert "JUDGESCOPE_OFFLINE is set" in err


def test_unknown_benchmark_is_a_clear_message(capsys):
    assert main(["check", "no-such-set"]) == 1
    assert "unknown benchmark 'no-such-set'" in capsys.readouterr().err
