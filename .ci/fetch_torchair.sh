#!/usr/bin/env bash
# CI: TorchAir's Python sources for the bridge tests, from the torch_npu wheel that matches
# the installed torch (downloaded, never installed), into .cache/torchair/. Fails CI when no
# copy can be had: the bridge tests would otherwise only skip.
set -euo pipefail
cd "$(dirname "$0")/.."
python=".venv/bin/python"
[ -x "$python" ] || python="python3"
"$python" .ci/fetch_torchair.py >/dev/null
echo "ci: TorchAir sources in .cache/torchair/"
