#!/usr/bin/env bash
# Build htsim's NDP binary (datacenter/htsim_ndp, from datacenter/main_ndp.cpp) for
# validation/htsim_ndp/run.py.  Fetches nothing from the internet.
#
# usage: validation/htsim_ndp/build.sh [HTSIM_SRC]
#   HTSIM_SRC  an htsim checkout (the folder that holds sim/).  Default:
#              /work/scratch/htsim_ndp/src, extracted (git archive of sim/) from the local
#              git mirror $HTSIM_MIRROR (default /work/.mirror/Broadcom+csg-htsim) at
#              $HTSIM_COMMIT when it does not exist yet.
#   HTSIM_COMMIT  default 841d9e7be46bb968eece766aa4b6c044c7799f67
#
# Builds in the checkout, as htsim's README does (cd sim && make): only libhtsim.a and
# datacenter/htsim_ndp, with `nice make -j1`.  patches/*.patch beside this script are applied
# once (none are needed at the default commit).  Idempotent: a second call only re-runs make,
# which has nothing to do.  Prints the binary's path on the last line.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
COMMIT="${HTSIM_COMMIT:-841d9e7be46bb968eece766aa4b6c044c7799f67}"
MIRROR="${HTSIM_MIRROR:-/work/.mirror/Broadcom+csg-htsim}"
SRC="${1:-/work/scratch/htsim_ndp/src}"

if [ ! -f "$SRC/sim/datacenter/main_ndp.cpp" ]; then
    if [ -e "$SRC" ] && [ -n "$(ls -A "$SRC" 2>/dev/null)" ]; then
        echo "build.sh: $SRC exists but is not an htsim checkout (no sim/datacenter/main_ndp.cpp)" >&2
        exit 2
    fi
    GITDIR="$MIRROR"
    [ -d "$MIRROR/repo" ] && GITDIR="$MIRROR/repo"   # the mirror keeps its bare repository in repo/
    if ! git --git-dir="$GITDIR" cat-file -e "$COMMIT^{commit}" 2>/dev/null; then
        echo "build.sh: no commit $COMMIT in the mirror $GITDIR" >&2
        exit 2
    fi
    echo "build.sh: extracting sim/ of $COMMIT from $GITDIR -> $SRC"
    mkdir -p "$SRC"
    # git archive of sim/ and the top-level files only: the mirror lacks some large blobs
    # under experiments/, so a full checkout of the commit fails.
    git --git-dir="$GITDIR" archive --format=tar "$COMMIT" sim LICENSE README.md | tar -x -C "$SRC"
    echo "$COMMIT" > "$SRC/HTSIM_COMMIT"
fi

if [ -f "$SRC/HTSIM_COMMIT" ]; then
    HEAD_COMMIT="$(cat "$SRC/HTSIM_COMMIT")"
else
    HEAD_COMMIT="$(git -C "$SRC" rev-parse HEAD 2>/dev/null || echo unknown)"
fi
if [ "$HEAD_COMMIT" != "$COMMIT" ]; then
    echo "build.sh: warning: $SRC is at $HEAD_COMMIT, not $COMMIT" >&2
fi

shopt -s nullglob
for p in "$HERE"/patches/*.patch; do
    if patch -d "$SRC" -p1 -R --dry-run --batch --silent < "$p" >/dev/null 2>&1; then
        echo "build.sh: $(basename "$p") already applied"
    else
        echo "build.sh: applying $(basename "$p")"
        patch -d "$SRC" -p1 --forward --batch < "$p"
    fi
done

echo "build.sh: compiler: $(${CXX:-g++} --version | head -1)"
echo "build.sh: make libhtsim.a"
nice make -j1 -C "$SRC/sim" libhtsim.a
echo "build.sh: make htsim_ndp"
nice make -j1 -C "$SRC/sim/datacenter" htsim_ndp

BIN="$SRC/sim/datacenter/htsim_ndp"
[ -x "$BIN" ] || { echo "build.sh: build finished but $BIN is missing" >&2; exit 1; }
echo "build.sh: OK (htsim commit $HEAD_COMMIT)"
echo "$BIN"
