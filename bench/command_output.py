"""Peak memory of run_command's bounded streaming vs subprocess.run(capture_output=True).

run_bounded also runs streaming its output into the content store (the first 10 MB kept as
one object), as the workspace does.

Each variant runs in a fresh Python process on the same command (one that prints 200 MB);
the figure is that process's peak resident memory (ru_maxrss), measured side by side.
"""

from __future__ import annotations

import json
import subprocess
import sys

from workload import sized

MEGABYTES = sized(200, 12)  # the stored variant keeps the first 10 MB
PRINTER = (
    "import sys\n"
    "chunk = 'z' * (1 << 20)\n"
    f"for _ in range({MEGABYTES}):\n"
    "    sys.stdout.write(chunk)\n"
)
VARIANTS = {
    "baseline (python, nothing run)": "pass",
    "run_bounded (counterfoil)": (
        "from pathlib import Path\n"
        "from counterfoil.commands.runner import run_bounded\n"
        "result = run_bounded([sys.executable, '-c', PRINTER], Path('.'), 120)\n"
        "assert result.dropped_chars > 0\n"
    ),
    "run_bounded + content store (10 MB kept)": (
        "import tempfile\n"
        "from pathlib import Path\n"
        "from counterfoil.commands.runner import run_bounded\n"
        "from counterfoil.receipts.content import ObjectStream\n"
        "with tempfile.TemporaryDirectory() as folder, ObjectStream(Path(folder)) as stream:\n"
        "    result = run_bounded([sys.executable, '-c', PRINTER], Path('.'), 120,\n"
        "                         output_sink=stream.write)\n"
        "    stream.finish()\n"
        "assert stream.truncated and stream.size == 10 * 1024 * 1024\n"
    ),
    "subprocess.run(capture_output=True)": (
        "import subprocess\n"
        "result = subprocess.run([sys.executable, '-c', PRINTER], capture_output=True)\n"
        "assert len(result.stdout) > 0\n"
    ),
}


def measure(body: str) -> tuple[float, float]:
    program = (
        "import resource, sys, time\n"
        f"PRINTER = {PRINTER!r}\n"
        "started = time.perf_counter()\n"
        f"{body}\n"
        "elapsed = time.perf_counter() - started\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, elapsed)\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    ).stdout.split()
    return int(output[0]) / 1024, float(output[1])


def main() -> None:
    results = {name: measure(body) for name, body in VARIANTS.items()}
    print(f"A command printing {MEGABYTES} MB; peak RSS of the calling process")
    print(f"{'variant':<42} {'peak RSS MiB':>12} {'seconds':>8}")
    for name, (peak, seconds) in results.items():
        print(f"{name:<42} {peak:>12.1f} {seconds:>8.2f}")
    bounded = results["run_bounded (counterfoil)"][0]
    stored = results["run_bounded + content store (10 MB kept)"]
    captured = results["subprocess.run(capture_output=True)"][0]
    baseline = results["baseline (python, nothing run)"][0]
    ratio = captured / bounded
    print(
        f"subprocess.run uses {ratio:.1f}x the peak memory of run_bounded "
        f"({captured - baseline:.0f} MiB vs {bounded - baseline:.1f} MiB above baseline)"
    )
    print(
        json.dumps(
            {
                "output_mb": MEGABYTES,
                "baseline_peak_mib": round(baseline, 1),
                "run_bounded_peak_mib": round(bounded, 1),
                "capture_output_peak_mib": round(captured, 1),
                "peak_ratio_capture_over_bounded": round(ratio, 2),
                "run_bounded_seconds": round(results["run_bounded (counterfoil)"][1], 2),
                "run_bounded_stored_peak_mib": round(stored[0], 1),
                "run_bounded_stored_seconds": round(stored[1], 2),
                "capture_output_seconds": round(
                    results["subprocess.run(capture_output=True)"][1], 2
                ),
            }
        )
    )


if __name__ == "__main__":
    main()
