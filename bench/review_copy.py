"""What the copy a reviewed command runs on costs, beside a whole-tree `shutil.copytree`.

A generated tree: 2,000 source files in 20 folders, a `__pycache__` beside each folder, a
`.venv` of 5,000 small files, a `.git` of 1,000 objects, and one sparse 128 MiB disk image
holding 64 KiB of data. Round by round, side by side: the review copy (`ReviewCopy`: caches
left out, `.venv` and `.git` shared read-only, holes kept) and `shutil.copytree` of the whole
root (what review did before). The figures are medians of the time and the disk blocks the
copy takes. Prints a table, then one JSON line of the figures. `--quick`: a tree a tenth the size
(a 1 MiB image), one round.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from counterfoil.commands.tree.review import ReviewCopy
from counterfoil.commands.tree.snapshot import TreeRules
from workload import sized

ROUNDS = sized(5, 1)
FOLDERS = sized(20, 2)  # source folders (each with a __pycache__) and .venv folders per 10
FILES = 100  # per folder
OBJECTS = sized(1000, 100)  # in .git
IMAGE_BYTES = sized(128, 1) * 1024 * 1024


def generate(root: Path) -> None:
    for folder in range(FOLDERS):
        path = root / f"pkg{folder:02}"
        (path / "__pycache__").mkdir(parents=True)
        for index in range(FILES):
            (path / f"mod{index:03}.py").write_text(f"VALUE = {folder * 1000 + index}\n")
            (path / "__pycache__" / f"mod{index:03}.cpython-311.pyc").write_bytes(b"\0" * 2048)
    for folder in range(FOLDERS * 5 // 2):
        path = root / ".venv" / "lib" / f"dist{folder:02}"
        path.mkdir(parents=True)
        for index in range(FILES):
            (path / f"m{index:03}.py").write_text("x = 1\n" * 20)
    objects = root / ".git" / "objects"
    objects.mkdir(parents=True)
    for index in range(OBJECTS):
        (objects / f"{index:040x}").write_bytes(os.urandom(512))
    with (root / "disk.img").open("wb") as image:
        image.truncate(IMAGE_BYTES)
        image.seek(IMAGE_BYTES // 2)
        image.write(os.urandom(64 * 1024))


def disk_bytes(folder: Path) -> int:
    total = 0
    for path, folders, files in os.walk(folder):
        for name in files + folders:
            total += os.lstat(os.path.join(path, name)).st_blocks * 512
    return total


def review_copy(root: Path) -> tuple[float, int]:
    started = time.perf_counter()
    review = ReviewCopy(root, TreeRules())
    seconds = time.perf_counter() - started
    try:
        return seconds, disk_bytes(review.copy)
    finally:
        review.remove()


def whole_copy(root: Path) -> tuple[float, int]:
    target = Path(tempfile.mkdtemp(prefix="counterfoil-bench-")) / "root"
    started = time.perf_counter()
    shutil.copytree(root, target, symlinks=True)
    seconds = time.perf_counter() - started
    try:
        return seconds, disk_bytes(target)
    finally:
        shutil.rmtree(target.parent)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="counterfoil-bench-") as folder:
        root = Path(folder)
        generate(root)
        review = [review_copy(root) for _ in range(ROUNDS)]
        whole = [whole_copy(root) for _ in range(ROUNDS)]
    figures = {
        "review_copy_ms": round(statistics.median(s for s, _ in review) * 1000, 1),
        "review_copy_mib": round(statistics.median(b for _, b in review) / 2**20, 1),
        "whole_copy_ms": round(statistics.median(s for s, _ in whole) * 1000, 1),
        "whole_copy_mib": round(statistics.median(b for _, b in whole) / 2**20, 1),
    }
    print(f"{'copy':<28}{'time':>10}{'on disk':>12}")
    print(
        f"{'review (this)':<28}{figures['review_copy_ms']:>8} ms{figures['review_copy_mib']:>8} MiB"
    )
    print(
        f"{'shutil.copytree (before)':<28}{figures['whole_copy_ms']:>8} ms"
        f"{figures['whole_copy_mib']:>8} MiB"
    )
    print(json.dumps(figures, sort_keys=True))


if __name__ == "__main__":
    main()
