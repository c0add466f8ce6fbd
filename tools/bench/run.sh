#!/bin/sh
# make bench: installs what the comparison needs, then runs bench.py.
#   - Debian's python3-numpy and python3-ujson for /usr/bin/python3, and
#     time for /usr/bin/time (apt-get, when missing);
#   - @duckdb/node-api and nodejs-polars from tools/bench/package-lock.json
#     (npm ci, when missing or older than the lock file).
# Usage: tools/bench/run.sh BIN [bench.py flags]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=$1; shift
if ! /usr/bin/python3 -c 'import numpy, ujson' 2>/dev/null; then
	echo "bench: installing python3-numpy python3-ujson (apt-get)"
	sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get install -y -q python3-numpy python3-ujson >/dev/null ||
		{ $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q python3-numpy python3-ujson >/dev/null; }
fi
if [ ! -x /usr/bin/time ]; then
	echo "bench: installing time (apt-get), for peak RSS"
	sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get install -y -q time >/dev/null || { $sudo apt-get update -q >/dev/null && $sudo apt-get install -y -q time >/dev/null; }
fi
stamp="$here/node_modules/.package-lock.json"
if [ ! -f "$stamp" ] || [ "$here/package-lock.json" -nt "$stamp" ] ||
	[ ! -f "$here/node_modules/nodejs-polars-linux-x64-gnu/package.json" ]; then
	echo "bench: installing @duckdb/node-api and nodejs-polars (npm ci)"
	npm ci --prefix "$here" --no-audit --no-fund --loglevel=error
fi
exec /usr/bin/python3 "$here/bench.py" --bin "$bin" "$@"
