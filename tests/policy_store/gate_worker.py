"""A gate in its own process: ``python -m tests.policy_store.gate_worker CONFIG COMMAND``.

It opens a real :class:`~shellgate.gate.Gate` on CONFIG (live reload on), decides
COMMAND in a tight loop and prints one line per change of answer:
``<unix time>\\t<policy version>\\t<answer>\\t<checks since the last line>``, where
the answer lists every segment's ``effect:rule``. ``ready`` first; it stops when
stdin closes.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

from shellgate.config import load_config
from shellgate.gate import Gate
from shellgate.models import CallInfo


def main() -> None:
    config = load_config(Path(sys.argv[1]))
    command = sys.argv[2]
    gate = Gate(config)
    workspace = str(config.executor.workspace)
    call_args = {"tool": "bash", "command": command, "subject": "agent", "tenant": "default",
                 "session": "w", "workdir": workspace, "workspace": workspace}
    done = threading.Event()

    def until_stdin_closes() -> None:
        sys.stdin.read()
        done.set()

    threading.Thread(target=until_stdin_closes, daemon=True).start()
    print("ready", flush=True)
    last: tuple[object, str] | None = None
    count = 0
    while not done.is_set():
        verdict = gate.decider.decide(CallInfo(**call_args))
        answer = ",".join(f"{s.decision.effect}:{s.decision.rule}" for s in verdict.segments)
        now = (verdict.policy_version, answer)
        count += 1
        if now != last:
            print(f"{time.time():.6f}\t{now[0]}\t{answer}\t{count}", flush=True)
            last, count = now, 0
    print(f"{time.time():.6f}\t{last[0] if last else None}\t{last[1] if last else ''}\t{count}",
          flush=True)
    gate.decider.close()


if __name__ == "__main__":
    main()
