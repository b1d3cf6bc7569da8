#!/usr/bin/env bash
# Writes real lm-evaluation-harness output for the importer's tests, offline.
#
# lm-eval is installed in a throwaway venv under /tmp (never a project dependency).
# The model is lm-eval's own `dummy` model (random log-likelihoods, seeded by lm-eval's
# default --seed 0); the task is a two-variant multiple-choice task over local JSON
# (tiny_prompt_1, tiny_prompt_2), so no download is needed.
#
#   bash tests/data/lm_eval/make_fixture.sh            # writes tests/data/lm_eval/out/
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${VENV:-/tmp/venv-lmeval}"
[ -x "$VENV/bin/lm_eval" ] || { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q lm-eval; }
WORK="$(mktemp -d /tmp/lmeval-fixture.XXXX)"
OUT="$HERE/out"
rm -rf "$OUT" && mkdir -p "$OUT"

python3 - "$WORK" <<'PY'
import json, sys, pathlib
work = pathlib.Path(sys.argv[1])
docs = [{"question": f"What is {a} + {b}?", "choices": [str(a + b), str(a + b + 1), str(a - b)],
         "label": 0} for a, b in [(1, 2), (3, 4), (5, 1), (2, 2), (7, 3), (4, 4), (9, 1), (6, 2)]]
(work / "tiny.json").write_text("\n".join(json.dumps(d) for d in docs) + "\n")
for n, text in ((1, "Question: {{question}}\nAnswer:"), (2, "Q: {{question}}\nA:")):
    (work / f"tiny_prompt_{n}.yaml").write_text(f"""task: tiny_prompt_{n}
dataset_path: json
dataset_kwargs:
  data_files:
    test: {work / 'tiny.json'}
test_split: test
output_type: multiple_choice
doc_to_text: "{text.replace(chr(10), chr(92) + 'n')}"
doc_to_choice: "{{{{choices}}}}"
doc_to_target: label
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
""")
PY

export HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 HF_DATASETS_CACHE="$WORK/hf" TOKENIZERS_PARALLELISM=false
run() { "$VENV/bin/lm_eval" --model dummy --include_path "$WORK" --tasks tiny_prompt_1,tiny_prompt_2 "$@"; }

# 1. the usual layout: OUT/folder/<org>__<model>/results_<date>.json and
#    samples_<task>_<date>.jsonl. The dummy model ignores its arguments; `pretrained=` only
#    names it. org/dummy-a runs twice (two dated runs of one model: the `repeats` option).
#    The console tables lm-eval prints are kept.
run --model_args pretrained=org/dummy-a --output_path "$OUT/folder" --log_samples \
    > "$OUT/console_dummy-a.md" 2> "$WORK/stderr1"
run --model_args pretrained=org/dummy-b --output_path "$OUT/folder" --log_samples --seed 1 \
    > "$OUT/console_dummy-b.md" 2> "$WORK/stderr2"
sleep 1
run --model_args pretrained=org/dummy-a --output_path "$OUT/folder" --log_samples --seed 2 \
    > "$OUT/console_dummy-a_rerun.md" 2> "$WORK/stderr3"
# 2. --output_path FILE.json: 0.4.9 and later write FILE_<date>.json beside it.
run --model_args pretrained=org/dummy-a --output_path "$OUT/named/run.json" \
    > /dev/null 2> "$WORK/stderr4"

"$VENV/bin/pip" show lm-eval | sed -n 's/^Version: /lm-eval /p' > "$HERE/VERSION"
python3 --version >> "$HERE/VERSION"
find "$OUT" -type f | sort
