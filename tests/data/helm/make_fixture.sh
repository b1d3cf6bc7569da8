#!/usr/bin/env bash
# Writes a real HELM run folder for the importer's tests, offline.
#
# crfm-helm is installed in a throwaway venv under /tmp (never a project dependency).
# The runs are a tiny local scenario with two prompt variants, loaded as a HELM plugin
# (tiny_helm_plugin.py beside this script: no download), answered by HELM's own
# `simple/model1` model, each instance also evaluated lower-cased and with typos (HELM's
# perturbations). Only the files the importer reads, and stats.json (the aggregates HELM
# reports, which the tests compare with), are kept.
#
#   bash tests/data/helm/make_fixture.sh             # writes tests/data/helm/runs/
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${VENV:-/tmp/venv-helm}"
[ -x "$VENV/bin/helm-run" ] || { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q crfm-helm; }
WORK="$(mktemp -d /tmp/helm-fixture.XXXX)"
cd "$WORK"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1
PYTHONPATH="$HERE" "$VENV/bin/helm-run" --plugins tiny_helm_plugin \
    --run-entries "tiny:variant=plain,model=simple/model1" "tiny:variant=answer,model=simple/model1" \
    --suite v1 --max-eval-instances 10 -o "$WORK/out" > "$WORK/log.txt" 2>&1 \
    || { tail -40 "$WORK/log.txt"; exit 1; }
rm -rf "$HERE/runs" && mkdir -p "$HERE/runs/v1"
for run in "$WORK"/out/runs/v1/*:*/; do
    name="$(basename "$run")"
    mkdir -p "$HERE/runs/v1/$name"
    cp "$run"/run_spec.json "$run"/per_instance_stats.json "$run"/stats.json "$HERE/runs/v1/$name/"
done
"$VENV/bin/pip" show crfm-helm | sed -n 's/^Version: /crfm-helm /p' > "$HERE/VERSION"
python3 --version >> "$HERE/VERSION"
find "$HERE/runs" -type f | sort
