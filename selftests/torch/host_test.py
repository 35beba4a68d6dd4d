#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""kcoll_torch on the host, without the kcoll module (make check-torch).

1. `import kcoll_torch` registers backend "kcoll" with torch.distributed.
2. init_process_group("kcoll", init_method="env://") on 2 ranks (two
   processes, a TCPStore on 127.0.0.1) fails on both ranks, within the
   time limit, with kcoll's message that the module is not loaded: the
   ranks tell each other through the store, so none waits for the other.

Prints "N passed, M failed"; exits 1 on any failure.
"""
import datetime
import os
import socket
import subprocess
import sys
import time

passed = failed = 0


def check(ok, what):
    global passed, failed
    print(("ok: " if ok else "FAIL: ") + what, flush=True)
    if ok:
        passed += 1
    else:
        failed += 1


def rank_main():
    import torch.distributed as dist
    import kcoll_torch  # noqa: F401  (registers the backend)
    try:
        dist.init_process_group("kcoll", init_method="env://",
                                timeout=datetime.timedelta(seconds=60))
    except RuntimeError as e:
        print("ERROR:", str(e).splitlines()[0], flush=True)
        sys.exit(3)
    print("CREATED", flush=True)
    sys.exit(0)


def main():
    import torch.distributed as dist
    import kcoll_torch
    check(getattr(dist.Backend, "KCOLL", None) == "KCOLL" and "KCOLL" in dist.Backend._plugins,
          "import kcoll_torch registers backend 'kcoll'")
    check(dist.Backend("kcoll") == "kcoll", "Backend('kcoll') parses")
    check(hasattr(kcoll_torch, "ProcessGroupKcoll"), "ProcessGroupKcoll is exposed")
    if os.path.exists("/dev/kcoll"):
        print("skip: /dev/kcoll exists here, the no-module test needs a host without it")
        print(f"{passed} passed, {failed} failed")
        return failed == 0
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    t0 = time.monotonic()
    for r in range(2):
        env = dict(os.environ, RANK=str(r), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port))
        procs.append(subprocess.Popen([sys.executable, __file__, "--rank"], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True))
    for r, p in enumerate(procs):
        try:
            out, _ = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
        print(f"rank {r} (exit {p.returncode}): {out.strip()}")
        check(p.returncode == 3, f"rank {r}: init_process_group('kcoll') raised RuntimeError")
        check("kcoll module is not loaded" in out and "modprobe kcoll" in out,
              f"rank {r}: the error carries kcoll's message about loading the module")
    dt = time.monotonic() - t0
    check(dt < 60, f"both ranks failed at once ({dt:.1f} s), not at the store's timeout")
    print(f"{passed} passed, {failed} failed")
    return failed == 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--rank"]:
        rank_main()
    sys.exit(0 if main() else 1)
