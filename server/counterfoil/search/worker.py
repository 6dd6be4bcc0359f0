"""The Python search engine's matcher, run as its own process so the time limit can stop it.

Python's `re` backtracks: `(a+)+$` against a line of forty `a`s and a `!` runs for hours, and
no thread can interrupt a match in progress. So the gate reads each file (under its own read
rules) and sends the text here; this process only matches and answers, and the gate kills it
when the search's time is up. Run as `python -I -S worker.py`, standard library only.

Protocol, all on stdin and stdout: one JSON line `{"pattern", "flags", "max_hits"}`; then per
file a line with its length in bytes (-1 for a file that is skipped) and that many bytes (a
file that is not UTF-8 is skipped here). Only a file with hits is answered, as one JSON line `[file index, [[line number,
line], ...]]` (at most `max_hits + 1` lines), sent at once; at the end of the input, one line
`{"answered": number of files}`. Files without hits cost no write and no wake-up of the gate.
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
    index = -1
    for index, header in enumerate(iter(source.readline, b"")):
        size = int(header)
        if size < 0:
            continue
        try:
            text = source.read(size).decode("utf-8")
        except UnicodeDecodeError:  # not text: searched by neither engine
            continue
        if pattern.search(text) is None:
            continue
        hits: list[tuple[int, str]] = []
        for number, line in enumerate(text.split("\n"), start=1):
            if pattern.search(line):
                hits.append((number, line))
                if len(hits) >= limit:
                    break
        answers.write(json.dumps([index, hits]) + "\n")
        answers.flush()
    answers.write(json.dumps({"answered": index + 1}) + "\n")
    answers.flush()


if __name__ == "__main__":
    main()
