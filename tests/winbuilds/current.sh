#!/usr/bin/env bash
# current.sh TOP: engine/src/rules/winbuild_data.inc is what tools/winbuilds/gen_table.py makes of winbuilds.psv.
set -eu
top=$1
diff -u "$top/engine/src/rules/winbuild_data.inc" \
	<(python3 "$top/tools/winbuilds/gen_table.py" "$top/third_party/evtx-etw-resources/winbuilds.psv" -)
echo "winbuild_data.inc: current"
