#!/usr/bin/env python3
"""Check of the FairQ ns-2 module's ACK rewrite (fairq.h R1, R4, R7, R8), from probe logs.

Runs ``check.tcl`` twice in the ns binary with the module (``--ns``, else
``$DCFAIR_NS2_MODULES``, else ``out/peers/ns2/bin/ns``):

1. as it is: every rule below must hold, and both branches of the rewrite must be exercised
   (some ACKs lowered, some left alone because they already advertise less than the share);
2. with ``--tamper 1`` (the port's floor raised to 4000 bytes behind this script's back):
   the check must FAIL. A check that cannot fail proves nothing.

Rules checked, from the probes before and after the switch (``probe_*.txt``: name time uid
size seqno flags conn has_wnd wnd wscale), with expectations computed here from the
configuration check.tcl documents (T = 0.25 x 15000 = 3750 bytes, timer frozen, so the
port's window W stays T; floor one MSS = 1460, ceiling 65535 per flow):

- n(t) = SYN-ACKs (flags SYN|ACK) that entered the switch towards the FairQ port by time t;
- w(t) = floor(clamp(T, n x 1460, n x 65535) / n);
- every ACK carrying a window that enters the switch from the port leaves it with
  field' = field if (field << wscale) <= w, else w >> wscale; every other field unchanged;
  so the window is lowered to the share and never raised;
- every data packet that crosses the switch leaves it with every probed field unchanged.

Exit status 0 when (1) passes and (2) fails; 1 otherwise.
"""

from __future__ import annotations

import argparse
import bisect
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]
T_BYTES = 0.25 * 15000
MSS = 1460
MAX_W = 65535
SYN, ACK = 0x02, 0x10


def read(path: Path):
    rows = []
    for line in path.read_text().splitlines():
        f = line.split()
        rows.append({"t": float(f[1]), "uid": int(f[2]), "size": int(f[3]), "seqno": int(f[4]), "flags": int(f[5]),
                     "conn": int(f[6]), "has_wnd": int(f[7]), "wnd": int(f[8]), "wscale": int(f[9])})
    return rows


def share(n: int) -> int:
    w = min(max(T_BYTES, n * MSS), n * MAX_W)
    return int(w // n)


def check(out: Path) -> list:
    errors = []
    ack_in, ack_out = read(out / "probe_ack_in.txt"), read(out / "probe_ack_out.txt")
    data_in, data_out = read(out / "probe_data_in.txt"), read(out / "probe_data_out.txt")
    synack_times = sorted(r["t"] for r in data_in if r["flags"] & SYN and r["flags"] & ACK)
    out_by_uid = {r["uid"]: r for r in ack_out}
    lowered = kept = 0
    for r in ack_in:
        o = out_by_uid.get(r["uid"])
        if o is None:
            errors.append(f"ACK uid {r['uid']} entered the switch and never left it")
            continue
        exp = dict(r)
        if r["flags"] & ACK and r["has_wnd"]:
            n = bisect.bisect_right(synack_times, r["t"])
            if n > 0:
                w = share(n)
                if w < (r["wnd"] << r["wscale"]):
                    exp["wnd"] = w >> r["wscale"]
                    lowered += 1
                else:
                    kept += 1
            if o["wnd"] << o["wscale"] > r["wnd"] << r["wscale"]:
                errors.append(f"ACK uid {r['uid']}: window raised from {r['wnd'] << r['wscale']} to "
                              f"{o['wnd'] << o['wscale']}")
        for k in ("size", "seqno", "flags", "conn", "has_wnd", "wnd", "wscale"):
            if o[k] != exp[k]:
                errors.append(f"ACK uid {r['uid']} at t={r['t']:.6f}: {k} is {o[k]}, expected {exp[k]} "
                              f"(in: {r[k]})")
                break
    data_by_uid = {r["uid"]: r for r in data_out}
    crossed = 0
    for r in data_in:
        o = data_by_uid.get(r["uid"])
        if o is None:
            continue
        crossed += 1
        for k in ("size", "seqno", "flags", "conn", "has_wnd", "wnd", "wscale"):
            if o[k] != r[k]:
                errors.append(f"data uid {r['uid']}: {k} changed from {r[k]} to {o[k]}")
                break
    if lowered == 0:
        errors.append("no ACK was lowered: the rewrite branch was not exercised")
    if kept == 0:
        errors.append("no ACK advertised less than the share: the never-raise branch was not exercised")
    if crossed == 0:
        errors.append("no data packet crossed the switch")
    print(f"  ACKs checked {len(ack_in)} (lowered {lowered}, left alone {kept}), data packets checked {crossed}, "
          f"SYN-ACKs {len(synack_times)}, errors {len(errors)}")
    for e in errors[:5]:
        print("   ", e)
    return errors


def ns_binary(arg: str | None) -> str:
    for c in (arg, os.environ.get("DCFAIR_NS2_MODULES"), str(REPO / "out" / "peers" / "ns2" / "bin" / "ns")):
        if c and Path(c).is_file():
            return c
    sys.exit("check.py: no ns binary with the FairQ module (--ns, DCFAIR_NS2_MODULES or out/peers/ns2/bin/ns)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ns", help="ns binary with the FairQ module")
    ap.add_argument("--keep", help="keep the probe logs under this directory")
    a = ap.parse_args()
    ns = ns_binary(a.ns)
    base = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="fairq-check-"))
    results = {}
    for tamper in (0, 1):
        out = base / f"tamper{tamper}"
        out.mkdir(parents=True, exist_ok=True)
        r = subprocess.run([ns, str(HERE / "check.tcl"), "--out", str(out), "--tamper", str(tamper)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stderr[-2000:])
            print(f"check.tcl --tamper {tamper} exited {r.returncode}")
            return 1
        print(f"run {'as built' if not tamper else 'tampered (must fail)'}:")
        results[tamper] = check(out)
    ok = not results[0] and bool(results[1])
    print("PASS" if ok else "FAIL",
          "(the rule holds as built, and the tampered run is caught)" if ok else "")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
