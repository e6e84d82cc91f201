"""A peer for the tests of dcfair.peers: it "simulates" a point by running dcfair's own engine,
so that its second opinions must equal dcfair's values exactly; points labelled ``six`` = 12
(outcast-case1's largest case) are a setting it "cannot run". ``DCFAIR_FAKE_PEER_MISSING=1``
makes it not installed; ``DCFAIR_FAKE_PEER_SEEDS=N`` makes it run the first N seeds only."""

import os

from dcfair import api
from dcfair.peers import Peer, Unsupported, register

PEER = register(Peer(
    name="fake",
    title="the fake peer (dcfair's own engine)",
    install="nothing to install: unset DCFAIR_FAKE_PEER_MISSING",
    missing=lambda: "DCFAIR_FAKE_PEER_MISSING is set" if os.environ.get("DCFAIR_FAKE_PEER_MISSING") else None,
    version=lambda: "1",
    seeds=int(os.environ["DCFAIR_FAKE_PEER_SEEDS"]) if os.environ.get("DCFAIR_FAKE_PEER_SEEDS") else None,
))


@PEER.reproduces("outcast-case1")
def run(job):
    if job.labels.get("six") == 12:
        raise Unsupported("the fake peer has no room for 12 flows")
    summary = api.run(text=job.text, origin=job.scenario, overrides=list(job.overrides), seed=job.seed, out=job.out)
    return summary["metrics"]
