#!/usr/bin/env bash
# Build the HPCC authors' ns-3 fork (github alibaba-edu/High-Precision-Congestion-Control,
# folder simulation/, ns-3.17 based) out of tree, for validation/hpcc/run.py.
#
# usage: DCFAIR_HPCC_FORK=/path/to/checkout validation/hpcc/build.sh [OUTDIR]
#   DCFAIR_HPCC_FORK  the user's checkout of the fork (the folder that holds simulation/)
#   OUTDIR            where to build (default out/peers/hpcc); the sources are copied to
#                     OUTDIR/simulation, patched with validation/hpcc/patches/*.patch, and
#                     built there with the optimized profile.  The checkout is not modified.
#   DCFAIR_PYTHON2    optional: a Python 2.7 interpreter (waf 1.7 and the ns-3.17 wscripts
#                     are Python 2 only).  Otherwise python2.7 / python2 / pyenv's 2.7 are tried.
#   DCFAIR_HPCC_JOBS  optional: parallel compile jobs (default 2)
#   DCFAIR_HPCC_ALL_MODULES=1  build every ns-3 module (default: only what scratch/third needs)
# exit 2: DCFAIR_HPCC_FORK unset or not a checkout of the fork; 1: any other failure.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${1:-out/peers/hpcc}"
JOBS="${DCFAIR_HPCC_JOBS:-2}"

if [ -z "${DCFAIR_HPCC_FORK:-}" ]; then
    echo "build.sh: DCFAIR_HPCC_FORK is not set." >&2
    echo "  Set it to a checkout of github.com/alibaba-edu/High-Precision-Congestion-Control" >&2
    echo "  (the folder that contains simulation/), e.g." >&2
    echo "  DCFAIR_HPCC_FORK=\$HOME/src/High-Precision-Congestion-Control $0 ${OUT}" >&2
    exit 2
fi
SRC="$(cd "$DCFAIR_HPCC_FORK" 2>/dev/null && pwd || true)"
if [ -z "$SRC" ] || [ ! -f "$SRC/simulation/waf" ] || [ ! -f "$SRC/simulation/scratch/third.cc" ] \
   || [ ! -f "$SRC/simulation/src/point-to-point/model/rdma-hw.cc" ]; then
    echo "build.sh: DCFAIR_HPCC_FORK=$DCFAIR_HPCC_FORK is not a checkout of the HPCC fork" >&2
    echo "  (expected simulation/waf, simulation/scratch/third.cc and" >&2
    echo "   simulation/src/point-to-point/model/rdma-hw.cc under it)." >&2
    exit 2
fi

# --- a Python 2 for waf ---------------------------------------------------------
is_py2() { "$1" -c 'import sys; sys.exit(0 if sys.version_info[0] == 2 else 1)' >/dev/null 2>&1; }
PY2="${DCFAIR_PYTHON2:-}"
if [ -n "$PY2" ] && ! is_py2 "$PY2"; then
    echo "build.sh: DCFAIR_PYTHON2=$PY2 is not a working Python 2 interpreter" >&2; exit 1
fi
if [ -z "$PY2" ]; then
    for c in python2.7 python2 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/2.7*/bin/python /usr/bin/python2.7; do
        if [ -x "$(command -v "$c" 2>/dev/null || echo "$c")" ] && is_py2 "$c"; then PY2="$c"; break; fi
    done
fi
if [ -z "$PY2" ]; then
    echo "build.sh: no Python 2.7 found (waf 1.7 / ns-3.17 need it)." >&2
    echo "  Install one (e.g. 'pyenv install 2.7.18', or python2.7 from your distribution)" >&2
    echo "  and/or point DCFAIR_PYTHON2 at it." >&2
    exit 1
fi
echo "build.sh: python2 = $PY2 ($("$PY2" --version 2>&1))"
echo "build.sh: compiler = $(${CXX:-g++} --version | head -1)"

# --- copy + patch (fresh copy whenever the checkout commit or the patches change) --
COMMIT="$(git -C "$SRC" rev-parse HEAD 2>/dev/null || echo unknown)"
DIRTY="$(git -C "$SRC" status --porcelain --untracked-files=no -- simulation 2>/dev/null | head -1 || true)"
PATCHES=( "$HERE"/patches/*.patch )
[ -e "${PATCHES[0]}" ] || PATCHES=()
STAMP="$COMMIT ${DIRTY:+dirty} $(cat /dev/null "${PATCHES[@]}" | sha256sum | cut -c1-16)"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
if [ ! -f "$OUT/.dcfair-stamp" ] || [ "$(cat "$OUT/.dcfair-stamp")" != "$STAMP" ] || [ -n "$DIRTY" ]; then
    echo "build.sh: copying $SRC/simulation -> $OUT/simulation"
    rm -rf "$OUT/simulation" "$OUT/.dcfair-stamp"
    mkdir -p "$OUT/simulation"
    (cd "$SRC/simulation" && tar --exclude=./build --exclude=./.lock-waf* -cf - .) | (cd "$OUT/simulation" && tar -xf -)
    for p in "${PATCHES[@]}"; do
        echo "build.sh: applying $(basename "$p")"
        patch -d "$OUT" -p1 --forward --batch < "$p"
    done
    echo "$STAMP" > "$OUT/.dcfair-stamp"
fi
echo "$COMMIT${DIRTY:+ (with local changes)}" > "$OUT/FORK_COMMIT"

# --- configure + build -----------------------------------------------------------
cd "$OUT/simulation"
# The fork's waf-tools/cflags.py already leaves out -Werror; the optimized profile
# gives -O3 -march=native.  Only the modules scratch/third.cc uses are built unless
# DCFAIR_HPCC_ALL_MODULES=1 (the scratch program links against every enabled module).
MODS="--enable-modules=core,network,internet,point-to-point,applications"
[ "${DCFAIR_HPCC_ALL_MODULES:-0}" = 1 ] && MODS=""
CONF_KEY="optimized $MODS $PY2"
if [ ! -f build/c4che/_cache.py ] || [ "$(cat .dcfair-configured 2>/dev/null)" != "$CONF_KEY" ]; then
    echo "build.sh: ./waf configure -d optimized $MODS"
    "$PY2" ./waf configure -d optimized $MODS
    echo "$CONF_KEY" > .dcfair-configured
fi
echo "build.sh: ./waf build -j$JOBS"
nice -n 10 "$PY2" ./waf build -j"$JOBS"

BIN="$(ls -1 build/scratch/*third* 2>/dev/null | grep -v '\.o$' | head -1 || true)"
if [ -z "$BIN" ] || [ ! -x "$BIN" ]; then
    echo "build.sh: build finished but no scratch/third binary under $OUT/simulation/build/scratch" >&2
    exit 1
fi
echo "build.sh: OK: $OUT/simulation/$BIN (fork commit $COMMIT)"
echo "build.sh: run with: python3 validation/hpcc/run.py --build $OUT"
