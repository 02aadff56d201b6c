"""``python -m judge run|estimate`` as a user runs it: subprocesses against the fake server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from data.io import read_table, save_dataset
from data.paths import data_dirs
from data.schema import Dataset
from judge.cli import main
from tests.judge.fake_openai import FakeOpenAI, expected_p_first
from tests.judge.judge_runs import judge_options

REPO = Path(__file__).resolve().parents[2]


def tiny_dataset() -> Dataset:
    ctx = pd.DataFrame({"context_id": ["d0", "d1"], "text": ["First article.", "Second article."]})
    cands = pd.DataFrame(
        {
            "context_id": ["d0", "d0", "d0", "d1", "d1", "d1"],
            "candidate_id": ["x", "y", "z", "x", "y", "z"],
            "text": ["Short one.", "A longer summary.", "Another.", "Fine.", "Bad.", "Okay-ish."],
        }
    )
    return Dataset(name="tiny", contexts=ctx, candidates=cands)


@pytest.fixture
def env(tmp_path):
    out = {**os.environ, "JUDGESCOPE_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    out.pop("OPENAI_API_KEY", None)
    out.pop("OPENAI_BASE_URL", None)
    return out


@pytest.fixture
def folder(tmp_path):
    return save_dataset(tiny_dataset(), tmp_path / "tiny")


def cli(args, env, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "judge", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def assert_one_line_error(proc, pattern):
    assert proc.returncode == 2, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert pattern in lines[0], lines[0]


def test_run_writes_comparisons_and_resumes(folder, tmp_path, env):
    out = tmp_path / "comparisons.csv"
    with FakeOpenAI() as fake:
        judge = judge_options(folder, "liusie-c1", base_url=fake.base_url)
        args = ["run", *judge, "--backend", "openai", "--out", str(out)]
        proc = cli(args, env)
        assert proc.returncode == 0, proc.stderr
        assert "12 new" in proc.stderr and "fake-model/liusie-c1" in proc.stderr
        assert "12/12" in proc.stderr  # tqdm bar on stderr
        df = read_table(out, "comparisons")
        assert len(df) == 12 and df["p_first"].notna().all()
        spec = __import__("judge.templates", fromlist=["x"]).builtin_templates()["liusie-c1"]
        spec = spec.for_attribute("coherence")
        ds = tiny_dataset()
        text = {(r.context_id, r.candidate_id): r.text for r in ds.candidates.itertuples()}
        ctx = dict(zip(ds.contexts["context_id"], ds.contexts["text"], strict=True))
        for r in df.itertuples():
            prompt = spec.render(
                context=ctx[r.context_id],
                a=text[(r.context_id, r.first_id)],
                b=text[(r.context_id, r.second_id)],
            )
            assert r.p_first == pytest.approx(expected_p_first(prompt), abs=1e-9)
        n_calls = fake.n_chat_calls
        # the store is the default one under JUDGESCOPE_CACHE: same command, nothing asked
        again = cli(args + ["--quiet"], env)
        assert again.returncode == 0, again.stderr
        assert "12 from the store, 0 new" in again.stderr
        assert fake.n_chat_calls == n_calls
        # estimate now sees every call cached
        est = cli(["estimate", *judge, "--json"], env)
        assert est.returncode == 0, est.stderr
        got = json.loads(est.stdout)
        assert got["n_prompts"] == 12 and got["n_cached"] == 12 and got["prompt_tokens"] == 0
        assert got["price_usd"] is None  # not in the price table
    assert (tmp_path / "cache" / "runs.sqlite").exists()


def test_run_samples_and_absolute(folder, tmp_path, env):
    with FakeOpenAI() as fake:

        def run(template, *extra):
            return cli(
                ["run", *judge_options(folder, template, base_url=fake.base_url), *extra], env
            )

        out = tmp_path / "c.parquet"
        proc = run(
            "summeval-abc",
            *("--selection", "no-repeat", "--budget", "2", "--samples", "3"),
            *("--temperature", "0.7", "--out", str(out), "-q"),
        )
        assert proc.returncode == 0, proc.stderr
        df = read_table(out, "comparisons")
        assert len(df) == 2 * 2 * 3 and set(df["judge"]) == {"fake-model/summeval-abc/t0.7-p1"}
        out = tmp_path / "r.csv"
        proc = run("geval", "--mode", "expected", "--out", str(out), "-q")
        assert proc.returncode == 0, proc.stderr
        ratings = read_table(out, "ratings")
        assert len(ratings) == 6 and ratings["score"].between(1, 5).all()


def test_estimate_prints_price(folder, env, tmp_path):
    prices = tmp_path / "prices.csv"
    prices.write_text("# mine\nmodel,input_usd_per_1m,output_usd_per_1m\nfake-model,1000,2000\n")
    proc = cli(["estimate", *judge_options(folder), "--prices", str(prices), "--json"], env)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["n_prompts"] == 12 and got["n_cached"] == 0 and got["output_tokens"] == 12
    want = (got["prompt_tokens"] * 1000 + 12 * 2000) / 1e6
    assert got["price_usd"] == pytest.approx(want)
    text = cli(["estimate", *judge_options(folder, model="gpt-4o-mini")], env)
    assert text.returncode == 0 and "approximate" in text.stdout and "$" in text.stdout


# ---------------------------------------------------------------------------------------
# bad input: one line, exit code 2, nothing spent
# ---------------------------------------------------------------------------------------
def test_bad_input_subprocess(folder, tmp_path, env):
    out = str(tmp_path / "o.csv")
    with FakeOpenAI() as fake:
        url = fake.base_url

        def run(template, model="fake-model", *extra):
            args = judge_options(folder, template, model, url)
            return cli(["run", *args, "--backend", "openai", "--out", out, *extra], env)

        assert_one_line_error(
            run("liusie-c3"), "unknown template 'liusie-c3'; did you mean liusie-c"
        )
        assert_one_line_error(run("liusie-c2", "gpt-nope"), "'gpt-nope' is not served")
        assert_one_line_error(run("hanna-ep4", "fake-model", "--domain", "story"), "{reference}")
        assert fake.n_chat_calls == 0
    # the server is gone now
    assert_one_line_error(run("liusie-c2"), "cannot reach the endpoint")
    assert not Path(out).exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dataset", "/nonexistent/folder"], "no such folder"),
        (["--benchmark", "no-such-benchmark"], "no-such-benchmark"),
        (["--selection", "no-repeat", "--budget", "99"], "context 'd0' (3 candidates)"),
        (["--selection", "random"], "budget"),
        (["--contexts", "nope"], "not in dataset"),
    ],
)
def test_bad_input_in_process(args, message, folder, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("JUDGESCOPE_CACHE", str(tmp_path / "cache"))
    full = [
        "estimate",
        "--attribute",
        "coherence",
        "--template",
        "liusie-c2",
        "--model",
        "m",
        "--no-store",
    ]
    if not any(a in ("--dataset", "--benchmark") for a in args):
        full += ["--dataset", str(folder)]
    code = main(full + args)
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and message in err, err


def test_missing_required_option_is_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["run", "--dataset", "x", "--attribute", "a", "--template", "t", "--model", "m"])
    assert info.value.code == 2
    assert "--out" in capsys.readouterr().err


def test_estimate_and_run_on_the_offline_demo(capsys, monkeypatch, tmp_path):
    """--benchmark demo: the dataset every user has, with no data folder at all."""
    monkeypatch.setenv("JUDGESCOPE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("JUDGESCOPE_DATA", str(tmp_path / "no-data-here"))
    args = ["--benchmark", "demo", "--attribute", "consistency", "--template", "liusie-c1"]
    code = main(["estimate", *args, "--model", "gpt-4o-mini", "--contexts", "2", "--json"])
    got = json.loads(capsys.readouterr().out)
    assert code == 0
    assert got["n_prompts"] == 2 * 6 * 5 and got["n_cached"] == 0  # 6 candidates per context
    with FakeOpenAI(models=("fake-judge",)) as fake:
        out = tmp_path / "demo.csv"
        code = main(
            [
                "run",
                *args,
                "--model",
                "fake-judge",
                "--base-url",
                fake.base_url,
                "--contexts",
                "1",
                "--out",
                str(out),
            ]
        )
        assert code == 0
        table = pd.read_csv(out)
        assert len(table) == 30 and len(fake.answered_prompts) == 30
        assert set(table["context_id"]) == {"news01"}


def test_estimate_real_summeval_when_present(capsys, monkeypatch, tmp_path):
    """The brief's example on the real SummEval data (runs whenever ../shared/data has it)."""
    if not any((d / "summeval_bartscore").is_dir() for d in data_dirs()):
        pytest.skip("SummEval data not available")
    monkeypatch.setenv("JUDGESCOPE_CACHE", str(tmp_path / "cache"))
    code = main(
        [
            "estimate",
            "--benchmark",
            "summeval",
            "--attribute",
            "coherence",
            "--template",
            "liusie-c2",
            "--model",
            "gpt-4o-mini",
            "--selection",
            "no-repeat",
            "--budget",
            "40",
            "--json",
        ]
    )
    got = json.loads(capsys.readouterr().out)
    assert code == 0
    # 100 documents x 40 comparisons, less a few pairs of identical summaries (same prompt)
    assert 3900 <= got["n_prompts"] <= 4000 and got["n_cached"] == 0
    assert got["output_tokens"] == got["n_prompts"]
    assert got["price_usd"] == pytest.approx(
        (got["prompt_tokens"] * 0.15 + got["output_tokens"] * 0.60) / 1e6
    )


@pytest.mark.parametrize("fault", ["not-json", "text-plain", "null-message", "empty-choices"])
def test_run_finishes_past_malformed_replies_and_counts_them(
    fault, folder, tmp_path, capsys, monkeypatch
):
    """Issue 9: one malformed 200 reply used to end the run with 'error: Expecting value'."""
    monkeypatch.setenv("JUDGESCOPE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "o.csv"
    with FakeOpenAI() as fake:
        args = ["run", *judge_options(folder, "liusie-c1", base_url=fake.base_url)]
        args += ["--max-retries", "0", "--quiet", "--out", str(out)]
        fake.fault("Bad.", fault)  # d1's candidate y: its 4 ordered pairs always fail
        code = main(args)
        err = capsys.readouterr().err
        assert code == 0, err
        assert "Traceback" not in err and "error:" not in err
        assert "8 new" not in err and "12 new" in err
        code_name = "no-choices" if fault == "empty-choices" else "bad-response"
        assert f"4 model call(s) failed ({code_name} 4)" in err
        df = read_table(out, "comparisons")
        assert len(df) == 12 and df["p_first"].isna().sum() == 4
        assert df["raw"].dropna().str.startswith(f"[error] {code_name}:").sum() == 4
        # the next run asks the four failures again, once each, and nothing else
        fake.clear_faults()
        calls = fake.calls_by_prompt
        assert main(args) == 0
        err = capsys.readouterr().err
        assert "8 from the store, 4 new" in err and "failed" not in err
        again = fake.calls_by_prompt
    assert sorted((again - calls).values()) == [1, 1, 1, 1]
    assert all("Bad." in p for p in again - calls)
    assert read_table(out, "comparisons")["p_first"].notna().all()


def test_run_prints_the_results_notes_and_warnings(tmp_path, monkeypatch, capsys):
    """What the run tells the user comes from its result: the fallback from probabilities to
    samples as a warning, a context it skipped as a note."""
    monkeypatch.setenv("JUDGESCOPE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    ds = tiny_dataset()
    lonely = ds.candidates[
        (ds.candidates["context_id"] == "d0") | (ds.candidates["candidate_id"] == "x")
    ]
    folder = save_dataset(
        Dataset(name="lonely", contexts=ds.contexts, candidates=lonely), tmp_path / "d"
    )
    out = tmp_path / "out.csv"
    with FakeOpenAI(offer_logprobs=False) as fake:
        args = judge_options(folder, "liusie-c1", base_url=fake.base_url)
        code = main(["run", *args, "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert (
        "warning: fake-model offers no token probabilities; sampling 5 answers per pair instead"
        in err
    )
    assert "note: context 'd1' has 1 candidate(s); skipped" in err
    assert "wrote 30 rows" in err and len(read_table(out, "comparisons")) == 30
