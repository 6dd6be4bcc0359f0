"""A local stand-in for the Hugging Face hub: serves model folders the way the hub does.

Enough of the hub for huggingface_hub 2.4's downloads: the model info API
(`/api/models/{repo}/revision/{rev}?blobs=True`), the tree listing, and `/{repo}/resolve/{rev}/
{file}` with the headers the client reads (`X-Repo-Commit`, `ETag`, `X-Linked-Etag`,
`X-Linked-Size`) and Range requests. It records every request and the bytes it sent, and can
drop a connection part-way through a file or send a file slowly.

The editor tests start it on its own (`python tests/hub_server.py --help`): it prints its URL,
then one JSON line per request, so a test in another language can see what the client asked.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

COMMIT = "0123456789abcdef0123456789abcdef01234567"
REPO = "owner/tiny"
WEIGHTS = "model.safetensors"
WEIGHTS_BYTES = 300_000
CHUNK_BYTES = 16 * 1024
LFS_MIN_BYTES = 1024  # files this big are served as LFS files, like weights on the hub


@dataclass
class Served:
    method: str
    path: str
    range: str | None
    status: int
    body_bytes: int
    authorized: bool = False


@dataclass
class HubServer:
    """Repos are folders; faults are set per file name by the test."""

    repos: dict[str, Path]
    requests: list[Served] = field(default_factory=list)
    drop_after: dict[str, list[int]] = field(default_factory=dict)  # bytes, one per GET
    seconds_per_piece: float = 0.0
    piece_bytes: int = 64 * 1024
    url: str = ""
    cdn_host: str | None = None  # LFS files redirect there, like the hub's CDN
    etags: dict[str, str] = field(default_factory=dict)  # a hostile ETag per file name
    commit: str = COMMIT  # what the model info names as the commit
    listed_names: dict[str, str] = field(default_factory=dict)  # a file listed under another name

    def gets(self, name: str) -> list[Served]:
        return [r for r in self.requests if r.method == "GET" and r.path.endswith("/" + name)]

    def files(self, repo: str) -> dict[str, Path]:
        folder = self.repos[repo]
        return {
            str(path.relative_to(folder)): path
            for path in sorted(folder.rglob("*"))
            if path.is_file()
        }


def entry(name: str, path: Path) -> dict[str, object]:
    data = path.read_bytes()
    blob_id = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    item: dict[str, object] = {"size": len(data), "blobId": blob_id}
    if len(data) >= LFS_MIN_BYTES:
        item["lfs"] = {
            "sha256": hashlib.sha256(data).hexdigest(),
            "size": len(data),
            "pointerSize": 134,
        }
    return {"rfilename": name, **item}


def _handler(hub: HubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return None

        def handle(self) -> None:
            try:
                super().handle()
            except (ConnectionResetError, BrokenPipeError):  # the client went away
                self.close_connection = True

        def do_HEAD(self) -> None:
            self._serve(body=False)

        def do_GET(self) -> None:
            self._serve(body=True)

        def _record(self, status: int, sent: int) -> Served:
            served = Served(
                self.command,
                urlsplit(self.path).path,
                self.headers.get("Range"),
                status,
                sent,
                "authorization" in {name.lower() for name in self.headers},
            )
            hub.requests.append(served)
            return served

        def _not_found(self, code: str) -> None:
            self._record(404, 0)
            body = json.dumps({"error": code}).encode()
            self.send_response(404)
            self.send_header("X-Error-Code", code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _json(self, payload: object) -> None:
            body = json.dumps(payload).encode()
            self._record(200, len(body))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _serve(self, *, body: bool) -> None:
            path = unquote(urlsplit(self.path).path)
            if path.startswith("/api/models/"):
                parts = path[len("/api/models/") :].split("/")
                repo = "/".join(parts[:2])
                if repo not in hub.repos:
                    return self._not_found("RepoNotFound")
                files = hub.files(repo)
                siblings = [
                    entry(hub.listed_names.get(name, name), file) for name, file in files.items()
                ]
                if parts[2:3] == ["revision"]:
                    return self._json({"id": repo, "sha": hub.commit, "siblings": siblings})
                return self._json(
                    [
                        {
                            "type": "file",
                            "path": s["rfilename"],
                            "size": s["size"],
                            "oid": s["blobId"],
                            **(
                                {
                                    "lfs": {
                                        "oid": s["lfs"]["sha256"],  # type: ignore[index]
                                        "size": s["size"],
                                        "pointerSize": 134,
                                    }
                                }
                                if "lfs" in s
                                else {}
                            ),
                        }
                        for s in siblings
                    ]
                )
            parts = path.lstrip("/").split("/")
            from_cdn = parts[0] == "cdn"
            if from_cdn:
                repo, name = "/".join(parts[1:3]), "/".join(parts[3:])
            else:
                repo, name = "/".join(parts[:2]), "/".join(parts[4:])
            if repo not in hub.repos or not (from_cdn or parts[2:3] == ["resolve"]):
                return self._not_found("RepoNotFound")
            file = hub.files(repo).get(name)
            if file is None:
                return self._not_found("EntryNotFound")
            data = file.read_bytes()
            item = entry(name, file)
            if hub.cdn_host and "lfs" in item and not from_cdn:
                port = self.server.server_address[1]
                self.send_response(302)
                self.send_header("Location", f"http://{hub.cdn_host}:{port}/cdn/{repo}/{name}")
                self.send_header("X-Repo-Commit", COMMIT)
                self.send_header("ETag", f'"{item["blobId"]}"')
                self.send_header("X-Linked-Etag", f'"{item["lfs"]["sha256"]}"')  # type: ignore[index]
                self.send_header("X-Linked-Size", str(len(data)))
                self.send_header("Content-Length", "0")
                self.end_headers()
                self._record(302, 0)
                return None
            start = 0
            requested = self.headers.get("Range")
            if body and requested and requested.startswith("bytes="):
                start = int(requested[len("bytes=") :].split("-")[0])
            status = 206 if start else 200
            self.send_response(status)
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("ETag", f'"{hub.etags.get(name, item["blobId"])}"')
            if "lfs" in item:
                linked = hub.etags.get(name, item["lfs"]["sha256"])  # type: ignore[index]
                self.send_header("X-Linked-Etag", f'"{linked}"')
                self.send_header("X-Linked-Size", str(len(data)))
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Length", str(len(data) - start))
            if start:
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            self.end_headers()
            if not body:
                self._record(status, 0)
                return None
            served = self._record(status, 0)  # in arrival order; the count grows as bytes go
            drops = hub.drop_after.get(name)
            limit = drops.pop(0) if drops else None
            try:
                for offset in range(start, len(data), hub.piece_bytes):
                    piece = data[offset : offset + hub.piece_bytes]
                    if limit is not None and served.body_bytes + len(piece) > limit:
                        piece = piece[: limit - served.body_bytes]
                        served.body_bytes = limit
                        self.wfile.write(piece)
                        self.wfile.flush()
                        self.close_connection = True
                        break
                    served.body_bytes += len(piece)
                    self.wfile.write(piece)
                    if hub.seconds_per_piece:
                        time.sleep(hub.seconds_per_piece)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
            return None

    return Handler


@contextmanager
def serve_hub(repos: dict[str, Path]) -> Iterator[HubServer]:
    hub = HubServer(repos)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    server.daemon_threads = True
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()


def write_model_folder(folder: Path, *, weights_bytes: int = 300_000) -> Path:
    """A model folder with the files `mlx_lm.load` fetches and one it does not."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text('{"model_type": "qwen3"}\n', encoding="utf-8")
    (folder / "tokenizer_config.json").write_text("{}\n", encoding="utf-8")
    weights = random.Random(weights_bytes).randbytes(weights_bytes)
    (folder / "model.safetensors").write_bytes(weights)
    (folder / "README.md").write_text("not fetched\n", encoding="utf-8")
    return folder


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    """The hub client pointed at a local hub, online, with small chunks so progress is seen."""
    from huggingface_hub import constants

    from counterfoil.models.hub import download

    folder = write_model_folder(tmp_path / "repo", weights_bytes=WEIGHTS_BYTES)
    with serve_hub({REPO: folder}) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
        monkeypatch.setattr(constants, "DOWNLOAD_CHUNK_SIZE", CHUNK_BYTES)
        monkeypatch.setattr(download, "PROGRESS_INTERVAL_SECONDS", 0.0)
        yield server


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "hub-cache"


class PrintedRequests(list[Served]):
    """The request log, also printed as JSON lines as requests arrive (for the CLI)."""

    _printing = threading.Lock()  # one whole line at a time from the server's threads

    def append(self, served: Served) -> None:
        super().append(served)
        line = {"method": served.method, "path": served.path, "range": served.range}
        with self._printing:
            sys.stdout.write(json.dumps({**line, "status": served.status}) + "\n")
            sys.stdout.flush()


def main(argv: list[str] | None = None) -> None:
    """Serve one model folder (written fresh into FOLDER) until killed; print the URL first."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("folder", type=Path, help="where to write the served model folder")
    parser.add_argument("--repo", default=REPO, help=f"the repo id it is served as ({REPO})")
    parser.add_argument("--weights-bytes", type=int, default=WEIGHTS_BYTES)
    parser.add_argument("--piece-bytes", type=int, default=64 * 1024)
    parser.add_argument(
        "--seconds-per-piece", type=float, default=0.0, help="a pause after each piece sent"
    )
    options = parser.parse_args(argv)
    folder = write_model_folder(options.folder, weights_bytes=options.weights_bytes)
    with serve_hub({options.repo: folder}) as hub:
        hub.requests = PrintedRequests()
        hub.piece_bytes = options.piece_bytes
        hub.seconds_per_piece = options.seconds_per_piece
        print(hub.url, flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            sys.exit(0)


if __name__ == "__main__":
    main()
