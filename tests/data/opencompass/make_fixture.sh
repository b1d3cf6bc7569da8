#!/usr/bin/env bash
# Writes real OpenCompass output for the importer's tests, offline.
#
# opencompass is installed in a throwaway venv under /tmp (never a project dependency);
# its wheel of pyarrow needs NumPy 2 while opencompass pins NumPy 1, hence pyarrow<18.
# The config (tiny_config.py) evaluates a local JSON-lines dataset (tiny.jsonl) in two
# prompt templates, as the datasets tiny_plain and tiny_qa, with EMEvaluator; the model is
# FixedAnswers (tiny_oc_model.py), a BaseModel answering from a fixed table (OpenCompass
# ships no mock model, and its Hugging Face and API models need weights or a network).
# --dump-eval-details keeps each example's correctness in the results files.
#
#   bash tests/data/opencompass/make_fixture.sh        # writes tests/data/opencompass/out/
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${VENV:-/tmp/venv-opencompass}"
[ -x "$VENV/bin/opencompass" ] || { python3 -m venv "$VENV" \
    && "$VENV/bin/pip" install -q opencompass "pyarrow<18"; }
WORK="$(mktemp -d /tmp/opencompass-fixture.XXXX)"
cp "$HERE/tiny.jsonl" "$WORK/"
cd "$WORK"
PYTHONPATH="$HERE" HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 "$VENV/bin/opencompass" \
    "$HERE/tiny_config.py" -w "$WORK/out" --debug --dump-eval-details > "$WORK/log.txt" 2>&1 \
    || { tail -40 "$WORK/log.txt"; exit 1; }
rm -rf "$HERE/out" && mkdir -p "$HERE/out"
# keep the results, predictions and summaries; the dumped config names this machine's paths
for run in "$WORK"/out/*/; do
    name="$(basename "$run")"
    mkdir -p "$HERE/out/$name"
    cp -r "$run/results" "$run/predictions" "$run/summary" "$HERE/out/$name/"
done
"$VENV/bin/pip" show opencompass | sed -n 's/^Version: /opencompass /p' > "$HERE/VERSION"
python3 --version >> "$HERE/VERSION"
find "$HERE/out" -type f | sort
