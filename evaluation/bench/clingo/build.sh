#!/bin/bash
# `make clingo-debug`: the pinned clingo, built from its source with symbols (RelWithDebInfo) and
# two patches that count, only when their variable is set:
# - lookups.patch (GRINGO_LOOKUP_STATS=FILE), per predicate, the atoms clingo looks up by their full
#   value (a negated literal, or a positive one whose variables are all bound): each such test
#   makes a symbol, and a join that tests many pairs shows here as many lookups and few found;
# - rules.patch (GRINGO_RULE_STATS=FILE), per rule as clingo prints it, the calls, binder steps and
#   nanoseconds of its instantiation, appended after each ground (so forked workers count too).
# Writes build/clingo-debug/site (a `clingo` package to put first on PYTHONPATH); see
# docs/performance.md, "Where clingo's time goes", for how it is used.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out="$root/build/clingo-debug"
python=${PYTHON:-"$root/.venv/bin/python"}
version=$("$python" -c "import clingo; print(clingo.__version__)")
mkdir -p "$out"
"$python" -m pip download --quiet --no-deps --no-binary :all: "clingo==$version" -d "$out"
rm -rf "$out/src" "$out/site" "$out/wheel" && mkdir -p "$out/src"
tar -xzf "$out/clingo-$version.tar.gz" -C "$out/src" --strip-components 1
patch -d "$out/src" -p1 < "$here/lookups.patch"
patch -d "$out/src" -p1 < "$here/rules.patch"
"$python" -m pip wheel --quiet --no-deps -w "$out/wheel" \
    -C cmake.build-type=RelWithDebInfo -C build-dir="$out/cmake" "$out/src"
mkdir -p "$out/site" && (cd "$out/site" && "$python" -m zipfile -e "$out"/wheel/clingo-*.whl .)
echo "clingo $version with symbols, lookup and rule counts: PYTHONPATH=$out/site"
