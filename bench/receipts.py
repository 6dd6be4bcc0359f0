"""Receipt log figures: open-and-verify time for 100,000 receipts, and appends per second.

Appends are measured next to a plain `file.write` of the same lines (no lock, no fsync, no
chain), so the cost of durability and verification shows as a ratio from one run.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from counterfoil import EffectReceipt, ReceiptStore, verify_receipt_log
from counterfoil.receipts import CHAIN_KEY, chain_link

LOG_RECEIPTS = 100_000
APPENDS = 300


def receipt(number: int) -> EffectReceipt:
    if number % 2:
        return EffectReceipt(
            f"call-{number}",
            "edit_file",
            {"path": "app.py", "old": "value * 1", "new": f"value * {number}"},
            "ok",
            "edited app.py",
            ("app.py",),
        )
    return EffectReceipt(
        f"call-{number}",
        "run_command",
        {"argv": ["python", "-m", "pytest", "-q"]},
        "ok",
        "status: 0\noutput:\n" + "." * 60 + " [100%]\n1 passed in 0.01s\n",
    )


def write_chained_log(path: Path, count: int) -> None:
    link = ""
    with path.open("w", encoding="utf-8") as handle:
        for number in range(1, count + 1):
            item = receipt(number)
            link = chain_link(link, item.receipt_id)
            handle.write(
                json.dumps({**item.to_dict(), CHAIN_KEY: link}, separators=(",", ":")) + "\n"
            )


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "receipts.jsonl"
        write_chained_log(log, LOG_RECEIPTS)
        size_mb = log.stat().st_size / 1e6

        started = time.perf_counter()
        store = ReceiptStore(log)
        open_seconds = time.perf_counter() - started
        assert len(store) == LOG_RECEIPTS

        started = time.perf_counter()
        report = verify_receipt_log(log)
        verify_seconds = time.perf_counter() - started
        assert report.ok and report.count == LOG_RECEIPTS

        fresh = ReceiptStore(Path(folder) / "appends.jsonl")
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

    appends_per_second = APPENDS / append_seconds
    plain_per_second = APPENDS / plain_seconds
    print(f"{'figure':<52} {'value':>12}")
    print(f"{'log size (MB), 100,000 receipts':<52} {size_mb:>12.1f}")
    print(f"{'ReceiptStore(path): open + verify every line (s)':<52} {open_seconds:>12.2f}")
    print(f"{'verify_receipt_log(path) (s)':<52} {verify_seconds:>12.2f}")
    print(f"{'receipts verified per second':<52} {LOG_RECEIPTS / verify_seconds:>12.0f}")
    print(
        f"{'appends/s: locked, chained, fsynced (ReceiptStore.put)':<52} "
        f"{appends_per_second:>12.0f}"
    )
    print(f"{'appends/s: plain write + flush, same lines':<52} {plain_per_second:>12.0f}")
    print(
        json.dumps(
            {
                "log_receipts": LOG_RECEIPTS,
                "log_mb": round(size_mb, 1),
                "open_and_verify_seconds": round(open_seconds, 3),
                "verify_seconds": round(verify_seconds, 3),
                "appends_per_second": round(appends_per_second),
                "plain_appends_per_second": round(plain_per_second),
                "plain_over_durable_append_ratio": round(plain_per_second / appends_per_second, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
