"""Child processes that never outlive dcfair.

Rules:
- :func:`die_with_parent` runs in a child (a pool worker's initializer, or ``preexec_fn`` of a
  ``subprocess.Popen``): on Linux it asks the kernel to send SIGKILL when the parent dies
  (``PR_SET_PDEATHSIG``; kept across ``exec``), so a ``kill -9`` of dcfair leaves no worker,
  switch or traffic generator running. Elsewhere it does nothing.
- It returns whether the parent was already gone when it was called (the signal cannot come
  then): the caller exits at once.
"""

from __future__ import annotations

import os
import signal


def die_with_parent(parent: int) -> bool:
    """Asks for SIGKILL at the death of the parent ``parent``; True if it is already gone."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: nothing to ask for
        pass
    return os.getppid() != parent


def child_of_this_process():
    """A ``preexec_fn`` for ``subprocess.Popen``: the child dies with this process."""
    parent = os.getpid()

    def preexec() -> None:
        if die_with_parent(parent):
            os._exit(1)

    return preexec
