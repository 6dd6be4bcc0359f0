"""Receipt log figures for 100,000 receipts, each side by side from one run.

- full verify vs a bare `json.loads` of every line of the same file (target: at most 3x);
- opening with a current head vs full verify (target: at least 50x faster);
- peak RSS of a fresh process after opening the log (target: at most 64 MB);
- durable appends per second (locked, chained, fsynced, head replaced) next to a plain
  `write` + `flush` of the same lines.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from counterfoil import EffectReceipt, ReceiptStore, verify_receipt_log
from counterfoil.receipt_fields import ReceiptEvidence
from counterfoil.receipts.chain import ChainState, take_lines
from counterfoil.receipts.head import write_head
from counterfoil.receipts.record import encode_line
from workload import sized

LOG_RECEIPTS = sized(100_000, 2_000)
APPENDS = sized(300, 20)
OPEN_REPEATS = sized(20, 2)


def receipt(number: int) -> EffectReceipt:
    """A receipt as the workspace writes it, evidence included."""
    evidence: dict[str, object] = {
        "run_id": "4f1c0a9e2b7d4c7e9a51c3f2d8e6b0a1",
        "time": "2026-11-30T03:00:00.000Z",
        "approval": {
            "decision": "approved",
            "by": "person",
            "via": "cli",
            "shown_sha256": "ab" * 32,
            "modified": False,
        },
    }
    if number % 2:
        evidence |= {"base_sha256": "cd" * 32, "result_sha256": "ef" * 32}
        return EffectReceipt(
            f"call-{number}",
            "edit_file",
            {"path": "app.py", "old": "value * 1", "new": f"value * {number}"},
            "ok",
            "edited app.py",
            ("app.py",),
            ReceiptEvidence.from_record(evidence),
        )
    evidence |= {
        "argv": ["python", "-m", "pytest", "-q"],
        "cwd": "/home/person/project",
        "exit_status": 0,
        "duration_seconds": 0.412,
        "output_sha256": "01" * 32,
        "output_truncated": False,
    }
    return EffectReceipt(
        f"call-{number}",
        "run_command",
        {"argv": ["python", "-m", "pytest", "-q"]},
        "ok",
        "status: 0\noutput:\n" + "." * 60 + " [100%]\n1 passed in 0.01s\n",
        (),
        ReceiptEvidence.from_record(evidence),
    )


def write_log(path: Path, count: int) -> None:
    """All but the last line written directly, then the head record a store would have written
    after them (a log with evidence and no head is refused); the last line through the store,
    as a log in use has it."""
    link = ""
    with path.open("wb") as handle:
        for number in range(1, count):
            line, link = encode_line(receipt(number), link)
            handle.write(line + b"\n")
    state = ChainState()
    fd = os.open(path, os.O_RDONLY)
    try:
        take_lines(state, fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)
    write_head(path, state.head(0))
    ReceiptStore(path, signer=None).put(receipt(count))


def bare_loads_seconds(path: Path) -> float:
    started = time.perf_counter()
    with path.open("rb") as handle:
        for line in handle:
            json.loads(line)
    return time.perf_counter() - started


def best_open_seconds(path: Path) -> float:
    best = float("inf")
    for _ in range(OPEN_REPEATS):
        started = time.perf_counter()
        store = ReceiptStore(path, signer=None)
        best = min(best, time.perf_counter() - started)
        assert len(store) == LOG_RECEIPTS
    return best


def peak_rss_after_open_mb(path: Path) -> tuple[float, float]:
    """Peak RSS of a fresh interpreter before and after opening the log (Linux: KiB)."""
    script = (
        "import resource, sys\n"
        "from counterfoil import ReceiptStore\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "store = ReceiptStore(sys.argv[1], signer=None)\n"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(before, after, len(store))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)], capture_output=True, text=True, check=True
    )
    before, after, count = done.stdout.split()
    assert int(count) == LOG_RECEIPTS
    scale = 1024 * 1024 if sys.platform == "darwin" else 1024
    return int(before) / scale, int(after) / scale


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "receipts.jsonl"
        write_log(log, LOG_RECEIPTS)
        size_mb = log.stat().st_size / 1e6

        loads_seconds = bare_loads_seconds(log)
        started = time.perf_counter()
        report = verify_receipt_log(log)
        verify_seconds = time.perf_counter() - started
        assert report.ok and report.count == LOG_RECEIPTS, report.error

        open_seconds = best_open_seconds(log)
        rss_before_mb, rss_after_mb = peak_rss_after_open_mb(log)

        fresh = ReceiptStore(Path(folder) / "appends.jsonl", signer=None)
        started = time.perf_counter()
        for number in range(1, APPENDS + 1):
            fresh.put(receipt(number))
        append_seconds = time.perf_counter() - started

        lines = [json.dumps(receipt(n).to_dict()) + "\n" for n in range(1, APPENDS + 1)]
        started = time.perf_counter()
        with (Path(folder) / "plain.jsonl").open("a") as handle:
            for line in lines:
                handle.write(line)
                handle.flush()
        plain_seconds = time.perf_counter() - started

    verify_over_loads = verify_seconds / loads_seconds
    open_speedup = verify_seconds / open_seconds
    appends_per_second = APPENDS / append_seconds
    plain_per_second = APPENDS / plain_seconds
    rows = [
        (f"log size (MB), {LOG_RECEIPTS:,} receipts with evidence", f"{size_mb:.1f}"),
        ("bare json.loads of every line (s)", f"{loads_seconds:.3f}"),
        ("verify_receipt_log: full verify (s)", f"{verify_seconds:.3f}"),
        ("  full verify / bare json.loads (target <= 3)", f"{verify_over_loads:.2f}"),
        (
            f"ReceiptStore(path) with a current head (s, best of {OPEN_REPEATS})",
            f"{open_seconds:.5f}",
        ),
        ("  full verify / open with head (target >= 50)", f"{open_speedup:.0f}"),
        ("peak RSS of a fresh process, before opening (MB)", f"{rss_before_mb:.1f}"),
        ("peak RSS after opening (MB, target <= 64)", f"{rss_after_mb:.1f}"),
        ("appends/s: locked, chained, fsynced, head replaced", f"{appends_per_second:.0f}"),
        ("appends/s: plain write + flush, same lines", f"{plain_per_second:.0f}"),
    ]
    for name, value in [("figure", "value"), *rows]:
        print(f"{name:<56} {value:>12}")
    print(
        json.dumps(
            {
                "log_receipts": LOG_RECEIPTS,
                "log_mb": round(size_mb, 1),
                "bare_loads_seconds": round(loads_seconds, 3),
                "verify_seconds": round(verify_seconds, 3),
                "verify_over_loads": round(verify_over_loads, 2),
                "open_with_head_seconds": round(open_seconds, 5),
                "open_speedup_over_verify": round(open_speedup),
                "peak_rss_after_open_mb": round(rss_after_mb, 1),
                "appends_per_second": round(appends_per_second),
                "plain_appends_per_second": round(plain_per_second),
            }
        )
    )


if __name__ == "__main__":
    main()
