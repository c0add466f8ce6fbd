#!/bin/sh
# make bench: installs what the comparison needs, then runs bench.py.
#   - Debian's python3-numpy for /usr/bin/python3 and time for /usr/bin/time
#     (apt-get, when missing);
#   - @duckdb/node-api from tools/bench/package-lock.json (npm ci, when missing).
# Usage: tools/bench/run.sh BIN [bench.py flags]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=$1; shift
if ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
	echo "bench: installing python3-numpy (apt-get)"
	sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get install -y -q python3-numpy >/dev/null || { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q python3-numpy >/dev/null; }
fi
if [ ! -x /usr/bin/time ]; then
	echo "bench: installing time (apt-get), for peak RSS"
	sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get install -y -q time >/dev/null || { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q time >/dev/null; }
fi
if [ ! -f "$here/node_modules/@duckdb/node-api/package.json" ]; then
	echo "bench: installing @duckdb/node-api (npm ci)"
	npm ci --prefix "$here" --no-audit --no-fund --loglevel=error
fi
exec /usr/bin/python3 "$here/bench.py" --bin "$bin" "$@"
