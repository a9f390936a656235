#!/usr/bin/env bash
# agree.sh: runs agree.mjs over the valid and invalid corpora and the shipped rules.
# usage: agree.sh RULECHECK PROJECT_DIR
set -euo pipefail
rulecheck=$1
top=$2
if ! command -v node >/dev/null; then
	echo "agree.sh: node is not installed (./run.sh --test installs it)" >&2
	exit 1
fi
if [[ ! -d "$top/tests/schema/node_modules/ajv" ]]; then
	echo "agree.sh: tests/schema/node_modules is missing: run 'npm ci' in tests/schema (./run.sh --test does)" >&2
	exit 1
fi
shopt -s nullglob
files=("$top"/tests/rules/valid/*.yaml "$top"/tests/rules/invalid/*.yaml "$top"/rules/*.yaml "$top"/rules/providers/*.yaml)
exec node "$top/tests/schema/agree.mjs" "$rulecheck" "$top/schemas/rules.schema.json" "${files[@]}"
