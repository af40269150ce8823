#!/usr/bin/env bash
# Create .venv-peers/TOOL for one peer of `make bench-peers`: CPU torch 2.13.0 first, then the
# peer's pinned requirements under constraints.txt (which keeps that torch). Idempotent: a venv
# whose .stamp holds the hash of its requirement files is left alone; changed pins rebuild it. A failed install writes its reason to .install-failed
# (which the driver reports) and exits 0, so one peer that can't install doesn't stop the others.
set -u
tool=$1
here=$(cd "$(dirname "$0")" && pwd)
dir=.venv-peers/$tool
want=$(cat "$here/constraints.txt" "$here/requirements-$tool"*.txt | sha256sum | cut -c1-16)
[ "$(cat "$dir/.stamp" 2>/dev/null)" = "$want" ] && exit 0
[ -f "$dir/.stamp" ] && rm -rf "$dir"  # the pins changed: start from a fresh venv
mkdir -p "$dir"
log="$dir/install.log"
rm -f "$dir/.install-failed"
fail() { { echo "$1"; tail -n 5 "$log"; } > "$dir/.install-failed"; echo "$tool: install failed: $1 (see $log)"; exit 0; }
echo "$tool: creating $dir (CPU torch 2.13.0, then $tool)"
{ [ -x "$dir/bin/python" ] || ${PYTHON:-python3} -m venv "$dir"; } >"$log" 2>&1 || fail "python -m venv failed"
pip="$dir/bin/python -m pip install --disable-pip-version-check"
$pip torch==2.13.0 >>"$log" 2>&1 || fail "pip install torch==2.13.0 failed"
if [ -f "$here/requirements-$tool-nodeps.txt" ]; then
  $pip --no-deps -c "$here/constraints.txt" -r "$here/requirements-$tool-nodeps.txt" >>"$log" 2>&1 \
    || fail "pip install of requirements-$tool-nodeps.txt failed"
fi
$pip -c "$here/constraints.txt" -r "$here/requirements-$tool.txt" >>"$log" 2>&1 \
  || fail "pip install of requirements-$tool.txt failed"
got=$("$dir/bin/python" -c 'import torch; print(torch.__version__)' 2>>"$log") || fail "torch does not import"
case "$got" in 2.13.0+cpu) ;; *) fail "pip replaced torch: found $got, expected 2.13.0+cpu" ;; esac
echo "$want" > "$dir/.stamp"
echo "$tool: ready"
