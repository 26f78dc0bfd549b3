#!/usr/bin/env bash
# The wheel as a user gets it: a fresh virtualenv with one line's pyspark and the lmspark wheel,
# then wheel_check.py. Usage: run_wheel_test.sh <line> <pyspark version> <wheel>
set -euo pipefail
line=$1 version=$2 wheel=$(realpath "$3")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d -t lmspark-wheel-XXXXXX)
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q --upgrade pip
"$work/venv/bin/pip" install -q "pyspark==$version" "$wheel"
cd "$work"  # away from the source tree, so that the installed package is the one imported
"$work/venv/bin/python" "$here/wheel_check.py" "$line"
