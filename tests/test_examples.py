"""examples/: every example runs as documented and makes what it says."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO


def test_quickstart(tmp_path):
    from PIL import Image

    out = tmp_path / "qs"
    p = subprocess.run([sys.executable, str(REPO / "examples" / "quickstart.py"), str(out)], cwd=tmp_path,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert "HCF: jain_index" in p.stdout and f"wrote {out / 'quickstart.png'}" in p.stdout
    im = Image.open(out / "quickstart.png")
    assert im.size[0] > 500 and im.size[1] > 200
    assert (out / "hcf" / "timeseries.csv").exists()
    assert (out / "sweep" / "sweep.parquet").exists() and (out / "sweep" / "report.html").exists()


def test_ai_jobs(tmp_path):
    from PIL import Image

    out = tmp_path / "aj"
    p = subprocess.run([sys.executable, str(REPO / "examples" / "ai_jobs.py"), str(out), "--quick"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert f"wrote {out / 'ai_jobs.csv'} and {out / 'ai_jobs.png'}" in p.stdout
    import pandas as pd

    t = pd.read_csv(out / "ai_jobs.csv")
    assert set(t["fabric"]) == {"TCP, ECMP", "TCP, sprayed", "NDP"} and len(t) == 9
    # the contiguous job shares no link with the others: alone and shared are the same run
    assert (t[t["job"] == "packed"]["slowdown"].round(3) == 1.0).all(), t
    assert Image.open(out / "ai_jobs.png").size[0] > 500
