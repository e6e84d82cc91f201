"""The testbed: dcfair scenarios on real Linux TCP, in network namespaces (docs/testbed.md).

Rules:

- Everything the testbed creates carries its name prefix (default ``dcf-``): namespaces
  ``<prefix>h0 ..``, ``<prefix>sw``; every link lives inside them (veths are created directly
  in their namespaces), so deleting the namespaces (and ending the processes still inside them)
  removes everything. ``down`` finds them by prefix, with or without the state file, so it also
  cleans up after a crash.
- Each module has one job: :mod:`.netns` runs iproute2 and friends; :mod:`.bed` builds and
  removes a testbed; :mod:`.mapping` turns a scenario into a plan (pure, no root needed);
  :mod:`.switch` starts the switch (the ``dcfair-switch`` binary, or a Linux bridge as a
  baseline); :mod:`.traffic` runs iperf3 and the incast generator (:mod:`.incast`, a stand-alone
  script) and reads their output; :mod:`.run` ties them together and writes the simulator's
  result files.
- Invalid input (a scenario key the testbed cannot reproduce, a congestion control the kernel
  does not offer) raises ``InvalidInput`` naming the key: the command line exits 2.
"""
