#!/bin/sh
# bench/testtime.sh: the wall time of `make test` (spec files in parallel,
# the short soak, cached luacheck) against the sequential way in the same
# run: one `busted spec` (every spec, the 2,000-scenario soak included),
# then luacheck without a cache and spec/tools/layers.lua, as `make test` did
# before; and, to tell the parallel runner's share from the soak's, one
# `busted --exclude-tags=soak spec`. ROUNDS rounds (3), the three
# alternating in each; median, min and CPU (user+sys) of each, and the load
# average around each round. Run from the tree's top: sh bench/testtime.sh
set -u
cd "$(dirname "$0")/.." || exit 1
rounds=${ROUNDS:-3}
lua=${LUA:-lua5.4}
build=build
[ "$lua" = lua5.4 ] || build=build/$lua
make LUA="$lua" all >/dev/null || exit 1
export LUA_PATH="$PWD/lua/?.lua;$PWD/lua/?/init.lua;$PWD/spec/?.lua;;"
export LUA_CPATH="$PWD/$build/?.so;;"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# one timed command: appends "wall cpu" to $tmp/<name>; fails the bench if
# the command fails (a red suite's time means nothing)
timed() {
  name=$1
  shift
  /usr/bin/time -f "%e %U %S" -o "$tmp/t" sh -c "$*" >"$tmp/$name.out" 2>&1 || {
    tail -20 "$tmp/$name.out"
    echo "bench/testtime.sh: '$*' failed" >&2
    exit 1
  }
  awk '{ printf "%.2f %.2f\n", $1, $2 + $3 }' "$tmp/t" >>"$tmp/$name"
}

load() { cut -d' ' -f1-3 /proc/loadavg; }

new="make --no-print-directory LUA=$lua test"
old="busted --lua=$lua --cpath='$build/?.so' spec &&
  luacheck -q --no-color lua spec bin examples bench doc && $lua spec/tools/layers.lua"
nosoak="busted --lua=$lua --cpath='$build/?.so' --exclude-tags=soak spec"

echo "make test vs sequential busted, $rounds rounds, $(nproc) online CPUs, $lua"
i=1
while [ "$i" -le "$rounds" ]; do
  before=$(load)
  # alternate which goes first
  if [ $((i % 2)) -eq 1 ]; then
    timed new "$new"; timed old "$old"; timed nosoak "$nosoak"
  else
    timed old "$old"; timed nosoak "$nosoak"; timed new "$new"
  fi
  echo "  round $i: make test $(tail -n 1 "$tmp/new" | cut -d' ' -f1) s," \
    "sequential $(tail -n 1 "$tmp/old" | cut -d' ' -f1) s," \
    "sequential without the soak $(tail -n 1 "$tmp/nosoak" | cut -d' ' -f1) s" \
    "(load average $before -> $(load))"
  i=$((i + 1))
done

# median and min of the walls, median CPU
stats() {
  sort -n "$tmp/$1" | awk '{ w[NR] = $1 } END { printf "median %.2f s, min %.2f s", w[int((NR + 1) / 2)], w[1] }'
  sort -k2,2n "$tmp/$1" | awk '{ c[NR] = $2 } END { printf ", CPU %.2f s", c[int((NR + 1) / 2)] }'
}
echo "  make test (parallel, short soak, cached luacheck): $(stats new)"
echo "  busted spec + luacheck + layers, sequential:       $(stats old)"
echo "  busted --exclude-tags=soak spec, sequential:       $(stats nosoak)"
awk -v a="$(sort -n "$tmp/new" | awk '{ w[NR] = $1 } END { print w[int((NR + 1) / 2)] }')" \
    -v b="$(sort -n "$tmp/old" | awk '{ w[NR] = $1 } END { print w[int((NR + 1) / 2)] }')" \
    'BEGIN { printf "  sequential / make test: %.1fx (target: make test <= 5 s on an idle machine)\n", b / a }'
