"""The llama.cpp server process behind `--engine llama.cpp`, run as a script by `llamacpp_server`.

It imports only `xllamacpp` (llama.cpp's own server, prebuilt) and the standard library, so it
runs wherever the parent's Python finds that wheel. The parent writes an API key on the first
line of stdin (never on the command line, where other users could read it); the server listens
on a free loopback port and accepts only that key. Once the model is loaded one JSON line is
printed, `{"url": …}`, or `{"error": …}` and exit status 2. The process then lives until its
stdin closes, which also happens when the parent dies, so no server outlives Counterfoil.
"""

from __future__ import annotations

import argparse
import json
import sys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--context", type=int, required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--batch", type=int, required=True)
    arguments = parser.parse_args()
    key = sys.stdin.readline().strip()

    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = arguments.model
    params.n_ctx = arguments.context
    params.n_batch = arguments.batch
    params.n_ubatch = arguments.batch
    params.port = 0  # the system picks a free port; the server reports it
    params.hostnames = ["127.0.0.1"]
    params.api_keys = [key]
    params.cors_origins = "http://127.0.0.1"  # no web page elsewhere may call it
    params.ui = False
    params.cpuparams.n_threads = arguments.threads
    params.cpuparams_batch.n_threads = arguments.threads
    params.n_parallel = 1
    params.use_jinja = True
    params.verbosity = 1  # errors and warnings only: the first error is the parent's message
    params.cache_prompt = True
    try:
        server = xllamacpp.Server(params)
    except Exception as error:  # noqa: BLE001 - the reason is in llama.cpp's log
        print(json.dumps({"error": str(error)}), flush=True)
        raise SystemExit(2) from None
    print(json.dumps({"url": str(server.listening_address)}), flush=True)
    sys.stdin.read()  # until the parent closes it, or dies
    del server


if __name__ == "__main__":
    main()
