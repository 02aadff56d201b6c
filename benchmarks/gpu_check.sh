#!/usr/bin/env bash
# The judge's GPU check in one command (issue 25): the CUDA tests, the throughput job at two
# batch sizes for both architectures with a plain-forward reference and a profiler summary,
# an 8192^3 matmul ceiling, and ONE markdown table at the end.
#
#   bash benchmarks/gpu_check.sh [--smoke] [OUT_DIR]
#
# Writes tests.log, throughput.log, gpu_figures.json and gpu_report.md into OUT_DIR (default:
# $OUT when set, else /tmp/gpu_check). Installs nothing (a GPU machine may have no network):
# runs with $PYTHON if set, else the repo's .venv if its torch works (and, outside --smoke,
# sees CUDA), else python3. --smoke: tiny models on CPU in about a minute, to check the script;
# the CUDA-only parts say "skipped: no CUDA". About 3-4 minutes on an H200 (budget: 6; the
# steps are cut at 200 s and 360 s, so the whole stays inside a 10-minute device command).
# Knobs: N_CONTEXTS (10), BATCH_SIZES (32,128), MATMUL_N (8192).
set -u -o pipefail

SMOKE=0
DEST=""
for arg in "$@"; do
    case "$arg" in
        --smoke) SMOKE=1 ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        -*) echo "unknown option $arg (use --smoke, or give an output folder)" >&2; exit 2 ;;
        *) DEST="$arg" ;;
    esac
done
DEST="${DEST:-${OUT:-/tmp/gpu_check}}"
cd "$(dirname "$0")/.." || exit 2
mkdir -p "$DEST" || exit 2
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false

# ---- which python: its torch must import (and see CUDA outside --smoke)
if [ "$SMOKE" = 1 ]; then need="import torch, transformers, pytest"
else need="import torch, transformers, pytest; assert torch.cuda.is_available()"; fi
PY=""
for cand in ${PYTHON:-} .venv/bin/python python3; do
    if [ -x "$(command -v "$cand" 2>/dev/null)" ] && "$cand" -c "$need" 2>/dev/null; then
        PY="$cand"; break
    fi
done
if [ -z "$PY" ]; then
    echo "no python with torch, transformers and pytest$([ "$SMOKE" = 0 ] && echo ' and a CUDA device') found" \
         "(tried: ${PYTHON:-} .venv/bin/python python3); set PYTHON=..., or use --smoke on CPU" >&2
    exit 2
fi
"$PY" -c "import sys, torch, transformers; print('python', sys.version.split()[0], '| torch', torch.__version__, '| CUDA', torch.version.cuda, '| transformers', transformers.__version__, '| device:', torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'cpu')"
command -v nvidia-smi >/dev/null && nvidia-smi -L
echo "output folder: $DEST"
status=0

# ---- 1. tests. --confcutdir: the suite-wide conftest needs the benchmark data folder, which
# these tests do not use and which a GPU machine does not have.
if [ "$SMOKE" = 1 ]; then
    tests=(tests/judge/test_hf_cuda.py)
else
    tests=(tests/judge/test_hf_cuda.py tests/judge/test_hf_backend.py tests/judge/test_logprobs.py)
fi
echo; echo "== tests: ${tests[*]}"
timeout 200 "$PY" -m pytest -q -p no:cacheprovider --confcutdir=tests/judge -rs "${tests[@]}" \
    2>&1 | tee "$DEST/tests.log"
test_rc=${PIPESTATUS[0]}
[ "$test_rc" = 0 ] || { echo "!! tests exited with $test_rc (see $DEST/tests.log)"; status=1; }

# ---- 2. throughput at two batch sizes, plain-forward reference, profiler, matmul ceiling
if [ "$SMOKE" = 1 ]; then
    job=(--dry-run --batch-sizes 4,16 --matmul 256)
else
    job=(--n-contexts "${N_CONTEXTS:-10}" --batch-sizes "${BATCH_SIZES:-32,128}"
         --matmul "${MATMUL_N:-8192}")
fi
echo; echo "== throughput: ${job[*]}"
rm -f "$DEST/gpu_figures.json"
timeout 360 "$PY" benchmarks/gpu_throughput.py "${job[@]}" --reference --profile \
    --json "$DEST/gpu_figures.json" 2>&1 | tee "$DEST/throughput.log"
bench_rc=${PIPESTATUS[0]}
[ "$bench_rc" = 0 ] || { echo "!! gpu_throughput.py exited with $bench_rc (see $DEST/throughput.log)"; status=1; }

# ---- 3. the table
echo; echo "== report"
if [ -f "$DEST/gpu_figures.json" ]; then
    "$PY" benchmarks/gpu_report.py "$DEST/gpu_figures.json" --tests-log "$DEST/tests.log" \
        --out "$DEST" || status=1
else
    echo "no figures were written: see $DEST/throughput.log"; status=1
fi
exit $status
