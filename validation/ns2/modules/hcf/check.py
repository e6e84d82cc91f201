#!/usr/bin/env python3
"""Runs check.tcl (the unit check of Queue/HCF) through the module build of ns-2.35.

    python3 validation/ns2/modules/hcf/check.py [--ns PATH] [--keep DIR]

1. the check itself: every PASS/FAIL line of check.tcl; it must exit 0 with no FAIL;
2. a negative control: the same check with Algorithm 1's LP rule switched off
   (--zero_on_lp 0) must fail, and fail where the hand-computed case says (case rule-zero-lp:
   a4 overtakes a3 in flow A), which shows that the checks can fail.

The binary is --ns, else $DCFAIR_NS2_MODULES, else out/peers/ns2/bin/ns (validation/ns2/build.py).
Exit status 0 when both hold, 1 otherwise, 2 when the binary is missing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]
CHECK = HERE / "check.tcl"


def run(ns: str, workdir: Path, extra) -> subprocess.CompletedProcess:
    workdir.mkdir(parents=True, exist_ok=True)
    return subprocess.run([ns, str(CHECK), "--dir", str(workdir), *extra], capture_output=True, text=True,
                          timeout=600)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ns", help="the ns binary (default: $DCFAIR_NS2_MODULES or out/peers/ns2/bin/ns)")
    ap.add_argument("--keep", help="keep the traces in this directory")
    ap.add_argument("--quiet", action="store_true", help="print only failures and the verdict")
    args = ap.parse_args(argv)
    ns = args.ns or os.environ.get("DCFAIR_NS2_MODULES") or str(REPO / "out" / "peers" / "ns2" / "bin" / "ns")
    if not (Path(ns).is_file() and os.access(ns, os.X_OK)):
        print(f"check.py: no ns binary at {ns}: build it with python3 validation/ns2/build.py", file=sys.stderr)
        return 2

    ok = True
    with tempfile.TemporaryDirectory(prefix="hcf-check-") as tmp:
        base = Path(args.keep) if args.keep else Path(tmp)
        r = run(ns, base / "check", [])
        lines = r.stdout.splitlines()
        for line in lines:
            if not args.quiet or not line.startswith("PASS"):
                print(line)
        fails = [x for x in lines if x.startswith("FAIL")]
        passes = [x for x in lines if x.startswith("PASS")]
        if r.returncode != 0 or fails or not passes:
            ok = False
            print(f"check.py: the check failed (exit {r.returncode}, {len(fails)} FAIL){': ' + r.stderr.strip()[-500:] if r.stderr.strip() else ''}")

        # negative control
        r2 = run(ns, base / "control", ["--zero_on_lp", "0"])
        lines2 = r2.stdout.splitlines()
        want = ["FAIL rule-zero-lp: no reordering within a flow",
                "FAIL rule-zero-lp: departure order: A1 A2 B1 A4 A3"]
        found = [w for w in want if any(x.startswith(w) for x in lines2)]
        if r2.returncode == 1 and len(found) == len(want):
            print("PASS negative control: with --zero_on_lp 0 the check fails as computed by hand "
                  f"({sum(x.startswith('FAIL') for x in lines2)} FAIL lines, among them: a4 overtakes a3)")
        else:
            ok = False
            print(f"FAIL negative control: with --zero_on_lp 0 expected exit 1 and {want}; got exit "
                  f"{r2.returncode} and {[x for x in lines2 if x.startswith('FAIL')][:5]}")
    print(f"check.py: {'OK' if ok else 'FAILED'} ({len(passes)} checks passed in the check run; ns = {ns})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
