"""benchmarks/gpu_check.sh's Python parts on CPU, so the GPU check cannot rot unseen.

gpu_throughput.py in its --dry-run (smoke) mode with every measurement on, gpu_report.py's
table from its figures, and the profiler summary and table arithmetic on made-up CUDA figures
(the profile itself needs CUDA).
"""

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
pytest.importorskip("torch")
pytest.importorskip("transformers")

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name):
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))  # gpu_throughput imports bench_judge_throughput
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def gt():
    return _load("gpu_throughput")


@pytest.fixture(scope="module")
def report():
    return _load("gpu_report")


def test_kernel_classes(gt):
    assert gt.kernel_class("flash_fwd_kernel<Flash_fwd_kernel_traits<128>>") == "attention"
    assert gt.kernel_class("fmha_cutlassF_bf16_aligned_64x64_rf_sm80") == "attention"
    assert gt.kernel_class("pytorch_flash::flash_fwd_splitkv_kernel") == "attention"
    assert gt.kernel_class("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n") == "gemm"
    assert gt.kernel_class("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT") == "gemm"
    assert gt.kernel_class("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn") == "gemm"
    assert gt.kernel_class("void at::native::vectorized_elementwise_kernel<4>") == "other"
    assert gt.kernel_class("Memcpy HtoD (Pageable -> Device)") == "other"


def test_profile_summary_shares_and_busy_union(gt):
    kernels = [
        ("sm90_xmma_gemm_x", 0.0, 60.0),
        ("flash_fwd_kernel", 50.0, 80.0),  # overlaps the GEMM by 10 us: counted once in busy
        ("elementwise_kernel", 100.0, 110.0),
    ]
    out = gt.profile_summary(kernels, wall_us=200.0)
    assert out["n_kernels"] == 3 and out["kernel_ms"] == pytest.approx(0.1)
    assert out["gemm_share"] == pytest.approx(0.6)
    assert out["attention_share"] == pytest.approx(0.3)
    assert out["other_share"] == pytest.approx(0.1)
    assert out["gpu_busy_share"] == pytest.approx(90 / 200)
    assert out["top_kernels"][0] == ["sm90_xmma_gemm_x", 0.06]
    empty = gt.profile_summary([], wall_us=10.0)
    assert empty["gemm_share"] is None and empty["gpu_busy_share"] == 0


def test_batch_sizes_option(gt):
    assert gt.parse_args(["--batch-sizes", "32,128"]).batch_sizes == [32, 128]
    assert gt.parse_args(["--batch-size", "8"]).batch_sizes == [8]
    for bad in ("0", "a,b", ""):
        with pytest.raises(SystemExit):
            gt.parse_args(["--batch-sizes", bad])


def test_smoke_run_writes_figures_and_one_table(gt, report, tmp_path, capsys):
    figures = tmp_path / "gpu_figures.json"
    gt.main(
        ["--dry-run", "--batch-sizes", "2,8", "--reference", "--profile", "--matmul", "64"]
        + ["--min-seconds", "0.05", "--baseline-pairs", "3", "--json", str(figures)]
    )
    data = json.loads(figures.read_text())
    assert data["env"]["smoke"] and data["env"]["card"] == "cpu"
    assert [(r["model"], r["batch"]) for r in data["rows"]] == [
        ("t5-xl", 2),
        ("t5-xl", 8),
        ("llama-7b", 2),
        ("llama-7b", 8),
    ]
    for row in data["rows"]:
        assert row["n_errors"] == 0 and row["n_comparisons"] == 24
        assert row["comparisons_per_s"] > 0 and row["plain_forward_per_s"] > 0
        assert row["profile"] == {"skipped": "no CUDA"}
    llama = [r for r in data["rows"] if r["model"] == "llama-7b"]
    assert llama[0]["tokens_per_comparison"] < llama[0]["prompt_tokens"]  # prefixes shared
    assert data["matmul"]["n"] == 64 and data["matmul"]["tflops"] > 0

    log = tmp_path / "tests.log"
    log.write_text("....\n=== 3 passed, 24 skipped in 18.48s ===\n")
    capsys.readouterr()
    text = report.main([str(figures), "--tests-log", str(log), "--out", str(tmp_path)])
    assert capsys.readouterr().out.strip() == text.strip()
    assert (tmp_path / "gpu_report.md").read_text() == text
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert len(table) == 2 + 4 and table[0].startswith("| model | batch | comparisons/s")
    assert "skipped: no CUDA" in table[2] and "SMOKE RUN" in text
    assert "Tests: 3 passed, 24 skipped in 18.48s" in text


def test_table_arithmetic_on_cuda_like_figures(report):
    row = {
        "model": "llama-7b",
        "batch": 128,
        "comparisons_per_s": 256.0,
        "n_errors": 0,
        "tflops": 311.5,
        "share_of_peak": 0.315,
        "vs_one_at_a_time": 5.8,
        "plain_forward_per_s": 64.0,
        "vs_plain_forward": 4.0,
        "peak_memory_gib": 86.4,
        "tokens_per_comparison": 94.0,
        "flops_per_comparison": 770e12 / 606.0,
        "profile": {
            "gemm_share": 0.5,
            "attention_share": 0.2,
            "other_share": 0.3,
            "gpu_busy_share": 0.75,
        },
    }
    env = {
        "card": "NVIDIA H200",
        "torch": "2.11.0",
        "cuda": "13.0",
        "transformers": "5.17.0",
        "dtype": "bfloat16",
        "date": "2026-11-28",
        "peak_bf16_tflops": 989.0,
        "job": {"n_contexts": 10, "n_candidates": 16},
        "smoke": False,
    }
    data = {"env": env, "rows": [row], "matmul": {"n": 8192, "dtype": "bfloat16", "tflops": 770.0}}
    text = report.render(data, "12 passed")
    cells = [c.strip() for c in text.splitlines()[4 + 2].strip("|").split("|")]
    assert cells[:6] == ["llama-7b", "128", "256.0", "312", "31.5 %", "42.2 %"]  # 256 / 606
    assert cells[6:] == ["5.8×", "64.0", "4.00×", "86.4 GiB", "50.0% / 20.0% / 30.0%", "75.0 %"]
    assert "FLOP floor 606 comparisons/s" in text and "NVIDIA H200" in text
    assert "SMOKE" not in text and "(CUDA 13.0)" in text
    assert report.tests_line("garbage\n") == "no pytest summary line found"
