#!/usr/bin/env bash
# agree.sh: runs agree.mjs over the valid and invalid corpora and the shipped rules.
# usage: agree.sh RULECHECK PROJECT_DIR
set -euo pipefail
rulecheck=$1
top=$2
shopt -s nullglob
files=("$top"/tests/rules/valid/*.yaml "$top"/tests/rules/invalid/*.yaml "$top"/rules/*.yaml "$top"/rules/providers/*.yaml)
exec node "$top/tests/schema/agree.mjs" "$rulecheck" "$top/schemas/rules.schema.json" "${files[@]}"
