"""Issue 13 benchmark: audit appends per second from 4 writer processes, fsync on.

Three stores in one run, each written by 4 real processes appending ``--records``
records each through the real writer, all with fsync on:

* PostgreSQL: a throwaway cluster with ``fsync=on`` (``tests.pgcluster``),
  ``StoreAuditLog(fsync=True)``: each append is one round trip, the record sealed
  on the server in one statement under the log's advisory lock, then a wait for
  the WAL flush outside it (target: >= 1,000 appends/s); for comparison the
  same with one writer (``pg-1``), the previous design (``pg-2rt``: lock and
  head in one round trip, sealed on the client, inserted in a second) and the
  first one (``pg-xact``: one transaction holding the lock to its synchronous
  commit);
* SQLite: ``StoreAuditLog`` on a WAL file with ``synchronous = FULL``;
* the file log: ``AuditLog(fsync=True)``, ``flock`` + ``write`` + ``fsync``.

The writers open their log first and start together (a go file), so the time
is the appends alone. Then the chain is verified (every record, one chain).
Rounds are interleaved (``--rounds``, default 3) and medians printed, with
PostgreSQL's ratio to the two baselines; exits 1 when the PostgreSQL target is
missed or a chain does not verify.

    python benchmarks/fleet_audit.py [--records 500] [--writers 4] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from tests.pgcluster import Cluster  # noqa: E402

from shellgate.audit import verify  # noqa: E402
from shellgate.store.audit import open_reader, verify_store  # noqa: E402

TARGET_PG_APPENDS_S = 1_000

WRITER = """
import os, sys, time
from pathlib import Path
kind, where, me, n, go = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
if kind == "file":
    from shellgate.audit import AuditLog
    log = AuditLog(Path(where), fsync=True)
elif kind == "pg-xact":  # the first design, for comparison: one transaction, lock to commit
    from shellgate.audit._chain import GENESIS
    from shellgate.store import audit_log as al
    from shellgate.store.db import Database

    class OneTransaction(al.StoreAuditLog):
        def _append_pg(self, body):
            with self._xdb.transaction() as tx:
                tx.lock(self._lock_name)
                head = tx.one(al._HEAD_SEQ, (self.log,))
                seq, prev = (int(head[0]), str(head[1])) if head else (0, GENESIS)
                digest, row = self._row(body, seq + 1, prev)
                tx.execute(al._INSERT, row)
            return digest

    log = OneTransaction(where, "bench", fsync=True)
    log._xdb = Database(where, fsync=True)  # synchronous_commit on for the whole transaction
else:
    from shellgate.store.audit_log import StoreAuditLog
    log = StoreAuditLog(where, "bench", fsync=True)  # pg-1 too: one writer alone
    if kind == "pg-2rt":  # the previous design: sealed on the client, two round trips
        log._server_seal = False
record = {"type": "decision", "subject": me, "tenant": "default", "tool": "bash",
          "command": "git status --short", "decision": "allow", "reason": "rule 12",
          "layer": "casbin", "segments": [{"command": "git status --short", "decision": "allow"}]}
Path(go + "." + me).touch()
while not os.path.exists(go):
    time.sleep(0.001)
for i in range(n):
    log.append({**record, "call_id": f"{me}-{i}"})
log.close()
"""


def run_writers(kind: str, where: str, writers: int, records: int, tmp: Path) -> float:
    """Appends/s of ``writers`` processes appending ``records`` each to one log."""
    go = tmp / f"go-{kind}"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, kind, where, f"w{k}", str(records),
                          str(go)], env=env)
        for k in range(writers)
    ]
    deadline = time.monotonic() + 120
    while not all((tmp / f"go-{kind}.w{k}").exists() for k in range(writers)):
        if time.monotonic() > deadline or any(p.poll() not in (None, 0) for p in procs):
            raise SystemExit(f"{kind}: a writer did not start")
        time.sleep(0.005)
    start = time.perf_counter()
    go.touch()
    for proc in procs:
        if proc.wait(timeout=600) != 0:
            raise SystemExit(f"{kind}: a writer failed")
    elapsed = time.perf_counter() - start
    return writers * records / elapsed


def _check(kind: str, where: str, log: str) -> tuple[bool, int, str]:
    if kind == "file":
        result = verify(Path(where))
    else:
        with open_reader(where) as db:
            result = verify_store(db, log)
    return result.ok, result.records, str(result.reason)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=500, help="appends per writer")
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (medians)")
    args = parser.parse_args()
    total = args.writers * args.records
    ok = True
    rates: dict[str, list[float]] = {
        "pg-1": [], "postgresql": [], "pg-2rt": [], "pg-xact": [], "sqlite": [], "file": []}
    with tempfile.TemporaryDirectory() as tmp_name, Cluster(fsync=True) as cluster:
        tmp = Path(tmp_name)
        for r in range(args.rounds):  # interleaved, so machine noise hits every store alike
            round_dir = tmp / str(r)
            round_dir.mkdir()
            stores = {
                "pg-1": (cluster.create_database(f"one{r}"), 1),
                "postgresql": (cluster.create_database(f"bench{r}"), args.writers),
                "pg-2rt": (cluster.create_database(f"twort{r}"), args.writers),
                "pg-xact": (cluster.create_database(f"xact{r}"), args.writers),
                "sqlite": (f"sqlite://{round_dir / 'audit.db'}", args.writers),
                "file": (str(round_dir / "audit.jsonl"), args.writers),
            }
            for kind, (where, writers) in stores.items():
                rates[kind].append(run_writers(kind, where, writers, args.records, round_dir))
                good, records, reason = _check(kind, where, "bench")
                expected = args.records if kind == "pg-1" else total
                if not good or records != expected:
                    ok = False
                    print(f"{kind}: chain BROKEN or short: {records} records, {reason}")
            load = Path("/proc/loadavg").read_text().split()[0]
            print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.0f}/s" for k, v in rates.items())
                  + f" (load {load})")
    med = {kind: statistics.median(values) for kind, values in rates.items()}
    print(f"medians over {args.rounds} rounds, {args.writers} writers x {args.records} records, "
          "fsync on, every chain verified intact:" if ok else "medians (a chain did NOT verify):")
    print(f"  postgresql {med['postgresql']:.0f} appends/s (1 writer alone: {med['pg-1']:.0f}/s)")
    print(f"  postgresql, previous design (client seal, 2 round trips): "
          f"{med['pg-2rt']:.0f} appends/s")
    print(f"  postgresql, first design (xact lock held to a synchronous commit): "
          f"{med['pg-xact']:.0f} appends/s")
    print(f"  sqlite     {med['sqlite']:.0f} appends/s")
    print(f"  file       {med['file']:.0f} appends/s")
    print(f"  postgresql / sqlite = {med['postgresql'] / med['sqlite']:.2f}x; "
          f"postgresql / file = {med['postgresql'] / med['file']:.2f}x")
    print(f"{os.cpu_count()} CPUs (other work on the machine slows all stores)")
    met = med["postgresql"] >= TARGET_PG_APPENDS_S
    print(f"target >= {TARGET_PG_APPENDS_S} appends/s on PostgreSQL: "
          f"{'met' if met else 'MISSED'} ({med['postgresql']:.0f})")
    return 0 if ok and met else 1


if __name__ == "__main__":
    raise SystemExit(main())
