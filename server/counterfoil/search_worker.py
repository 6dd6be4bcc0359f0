"""The Python search engine's matcher, run as its own process so the time limit can stop it.

Python's `re` backtracks: `(a+)+$` against a line of forty `a`s and a `!` runs for hours, and
no thread can interrupt a match in progress. So the gate reads each file (under its own read
rules) and sends the text here; this process only matches and answers, and the gate kills it
when the search's time is up. Run as `python -I -S search_worker.py`, standard library only.

Protocol, all on stdin and stdout: one JSON line `{"pattern", "flags", "max_hits"}`; then per
file a line with its length in bytes (-1 for a file that is skipped) and that many bytes of
UTF-8 text; the answer per file is one JSON line, the list of `[line number, line]` that match
(at most `max_hits + 1` of them).
"""

from __future__ import annotations

import json
import re
import sys


def main() -> None:
    source, answers = sys.stdin.buffer, sys.stdout
    request = json.loads(source.readline())
    pattern = re.compile(request["pattern"], request["flags"])
    limit = int(request["max_hits"]) + 1
    while header := source.readline():
        size = int(header)
        hits: list[tuple[int, str]] = []
        if size >= 0:
            text = source.read(size).decode("utf-8")
            if pattern.search(text) is not None:
                for number, line in enumerate(text.split("\n"), start=1):
                    if pattern.search(line):
                        hits.append((number, line))
                        if len(hits) >= limit:
                            break
        answers.write(json.dumps(hits) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
