"""Model weights from the Hugging Face hub: on disk or not, how big, fetched with progress.

huggingface_hub 2.4 downloads each file to a process-unique temporary name and deletes it when
the transfer fails, so an interrupted 2 GiB download starts again from zero. Here each file is
fetched with the hub's own `http_get` into `blobs/<etag>.incomplete` (kept between runs, resumed
with a Range request), under the hub's per-blob lock, and moved to `blobs/<etag>` once its size
(and, for LFS files, its SHA-256) match, and the snapshot is laid out from names checked first
(hub_cache.py: a hub answering `ETag: "../../../x"` writes nothing).
Progress comes from the `tqdm_class` hook `http_get` calls once per chunk; raising from it is
how a download is cancelled (the chunk in hand is not written, so the partial file stays exact).
Plain HTTP rather than Xet: Xet transfers cannot be resumed from a partial file.
huggingface_hub is imported here only, when a hub model is chosen.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Self, cast
from urllib.parse import urlsplit

from ..errors import ModelDownloadError as ModelDownloadError  # noqa: PLC0414 - re-exported
from ..scripted import SCRIPTED_PREFIX
from .hub_cache import (
    BLOB_NAME,
    COMMIT_NAME,
    INCOMPLETE_SUFFIX,
    checked_file_path,
    hub_name,
    link_snapshot,
    present_bytes,
)
from .model_names import SHORT_NAMES, resolve_model

# mlx_lm.utils.DEFAULT_ALLOW_PATTERNS: what `mlx_lm.load` fetches (mlx_lm may not be installed
# when a download is asked for; a test keeps the two equal).
MLX_LM_ALLOW_PATTERNS = [
    "*.json",
    "model*.safetensors",
    "*.py",
    "tokenizer.model",
    "*.tiktoken",
    "tiktoken.model",
    "*.txt",
    "*.jsonl",
    "*.jinja",
]
DEFAULT_REVISION = "main"
PROGRESS_INTERVAL_SECONDS = 0.1

DownloadState = Literal["downloading", "done", "cancelled", "failed"]


class DownloadCancelled(Exception):
    """The person stopped the download; what arrived is kept for the next run."""


@dataclass(frozen=True)
class DownloadProgress:
    """One report: bytes on disk of `total`, the rate of this run, and the time left (the
    download that reports it knows its model)."""

    bytes: int
    total: int
    rate: float | None
    eta_seconds: float | None
    state: DownloadState

    @property
    def fraction(self) -> float:
        return self.bytes / self.total if self.total else 1.0


@dataclass(frozen=True)
class ModelFile:
    """One file of the snapshot; `present` bytes of it are already here (all, some, none)."""

    path: str
    size: int
    on_disk: bool
    present: int = 0


@dataclass(frozen=True)
class DownloadPlan:
    """The files `mlx_lm.load` needs at one commit, and which of them are already here."""

    spec: str
    repo_id: str
    revision: str
    commit: str
    files: tuple[ModelFile, ...]

    @property
    def total_bytes(self) -> int:
        return sum(file.size for file in self.files)

    @property
    def missing_bytes(self) -> int:
        return sum(file.size - file.present for file in self.files)


ProgressCallback = Callable[[DownloadProgress], None]
StopCheck = Callable[[], bool]


def hub_repo(spec: str) -> str | None:
    """The hub repo id `spec` names, or None for a local folder or a scripted model."""
    if spec.startswith(SCRIPTED_PREFIX):
        return None
    source = resolve_model(spec)
    return None if source.is_local else source.location


def hub_endpoint() -> str:
    """`HF_ENDPOINT` as it is now (the hub client read it once, at import)."""
    from huggingface_hub import constants

    return (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def require_hub_client() -> None:
    """huggingface_hub comes with the model runtime (mlx-lm needs it), not with the bundled
    daemon; without it nothing can be looked up or fetched, and the message says how to fix it."""
    try:
        import huggingface_hub  # noqa: F401
    except ImportError:
        from ..runtime import install_command

        command = shlex.join(install_command("mlx"))
        raise ModelDownloadError(
            f"downloading models needs huggingface_hub, part of the model runtime: {command}"
        ) from None


def local_snapshot(repo_id: str, *, cache_dir: str | Path | None = None) -> Path | None:
    """The complete cached snapshot of `repo_id` at `main`, without touching the network."""
    require_hub_client()
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import IncompleteSnapshotError, LocalEntryNotFoundError

    try:
        folder = snapshot_download(
            repo_id,
            cache_dir=cache_dir,
            allow_patterns=MLX_LM_ALLOW_PATTERNS,
            local_files_only=True,
        )
    except (LocalEntryNotFoundError, IncompleteSnapshotError):
        return None
    return Path(folder)


def model_on_disk(spec: str, *, cache_dir: str | Path | None = None) -> bool:
    """True when loading `spec` needs no download (a local folder, a script, a cached repo)."""
    repo_id = hub_repo(spec)
    return repo_id is None or local_snapshot(repo_id, cache_dir=cache_dir) is not None


def plan_download(
    spec: str, *, cache_dir: str | Path | None = None, revision: str = DEFAULT_REVISION
) -> DownloadPlan:
    """Ask the hub for the files of `spec` and their sizes (one request)."""
    repo_id = hub_repo(spec)
    if repo_id is None:
        raise ModelDownloadError(f"model {spec!r} is not on the hub; there is nothing to download")
    require_hub_client()
    from huggingface_hub import HfApi

    endpoint = hub_endpoint()
    try:
        info = HfApi(endpoint=endpoint).model_info(repo_id, revision=revision, files_metadata=True)
    except Exception as error:  # noqa: BLE001 - every hub failure becomes one line
        raise ModelDownloadError(describe_hub_error(error, spec, repo_id, endpoint)) from None
    from huggingface_hub.utils import filter_repo_objects  # type: ignore[attr-defined]

    siblings = {sibling.rfilename: sibling for sibling in info.siblings or []}
    wanted = filter_repo_objects(list(siblings), allow_patterns=MLX_LM_ALLOW_PATTERNS)
    if not info.sha or not wanted:
        raise ModelDownloadError(
            f"{repo_id} on {endpoint} has no model files (config.json, *.safetensors); " + WAY_OUT
        )
    commit = hub_name(info.sha, COMMIT_NAME, "a commit id", endpoint)
    storage = _storage(repo_id, cache_dir)
    files = []
    for path in wanted:
        sibling = siblings[path]
        checked_file_path(path, endpoint)
        size = sibling.size if isinstance(sibling.size, int) and sibling.size >= 0 else 0
        # The hub's blob name: an LFS file's SHA-256, else its git blob id (what HEAD sends).
        etag = sibling.lfs.sha256 if sibling.lfs is not None else sibling.blob_id
        if etag:
            hub_name(etag, BLOB_NAME, f"a blob name for {path}", endpoint)
        on_disk = (storage / "snapshots" / commit / path).exists()
        present = size if on_disk else present_bytes(storage, etag, size)
        files.append(ModelFile(path, size, on_disk, present))
    return DownloadPlan(spec, repo_id, revision, commit, tuple(files))


def download_model(
    spec: str,
    *,
    cache_dir: str | Path | None = None,
    on_progress: ProgressCallback | None = None,
    should_stop: StopCheck | None = None,
    plan: DownloadPlan | None = None,
) -> Path:
    """Fetch what is missing of `spec`, resuming partial files; return the snapshot folder.

    Raises `DownloadCancelled` when `should_stop()` turns true (checked once per chunk) and
    `ModelDownloadError` with one actionable line for everything else.
    """
    plan = plan or plan_download(spec, cache_dir=cache_dir)
    endpoint = hub_endpoint()
    meter = _Meter(plan, on_progress, should_stop or (lambda: False))
    try:
        blobs = {}
        for file in plan.files:
            if not file.on_disk:
                meter.start_file(file)
                blobs[file.path] = _fetch_blob(plan, file, endpoint, cache_dir, meter)
                meter.file_done(file)
        folder = link_snapshot(_storage(plan.repo_id, cache_dir), plan.revision, plan.commit, blobs)
    except DownloadCancelled:
        meter.finish("cancelled")
        raise
    except ModelDownloadError:
        meter.finish("failed")
        raise
    except Exception as error:  # noqa: BLE001 - every hub failure becomes one line
        meter.finish("failed")
        message = describe_hub_error(error, spec, plan.repo_id, endpoint)
        raise ModelDownloadError(message) from None
    meter.finish("done")
    return folder


def format_size(count: float) -> str:
    """Bytes as a person reads them: 812 KiB, 2.3 GiB."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit in ("B", "KiB") else f"{count:.1f} {unit}"
        count /= 1024
    raise AssertionError("unreachable")


def format_duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def format_progress(progress: DownloadProgress) -> str:
    """`downloading 38 % of 2.3 GiB, 12.0 MiB/s, 1 min 20 s left`."""
    percent = int(progress.fraction * 100)
    parts = [f"downloading {percent} % of {format_size(progress.total)}"]
    if progress.rate:
        parts.append(f"{format_size(progress.rate)}/s")
    if progress.eta_seconds is not None and progress.state == "downloading":
        parts.append(f"{format_duration(progress.eta_seconds)} left")
    return ", ".join(parts)


WAY_OUT = (
    f"choose another model ({', '.join(SHORT_NAMES)}), a local model folder, "
    "a model server endpoint, or scripted:PATH for the demo"
)


def describe_hub_error(error: BaseException, spec: str, repo_id: str, endpoint: str) -> str:
    """One line: what went wrong with the hub, and what the person can do instead."""
    from huggingface_hub import errors

    name = spec if spec == repo_id else f"{spec} ({repo_id})"
    if isinstance(error, errors.OfflineModeIsEnabled):
        return (
            f"model {name} is not on disk and downloads are off (HF_HUB_OFFLINE is set): "
            f"unset it to download, or {WAY_OUT}"
        )
    if isinstance(error, errors.GatedRepoError):
        return (
            f"model {name} is gated: accept its terms on the hub and log in with `hf auth login`, "
            f"or {WAY_OUT}"
        )
    if isinstance(error, errors.RevisionNotFoundError):
        return f"model {name} has no revision main on {endpoint}; {WAY_OUT}"
    if isinstance(error, errors.RepositoryNotFoundError):
        return f"model {name} was not found on {endpoint}; check the name, or {WAY_OUT}"
    if isinstance(error, errors.HfHubHTTPError):
        status = error.response.status_code if error.response is not None else "?"
        return f"the hub at {endpoint} answered {status} for model {name}; try again later, or {WAY_OUT}"
    if isinstance(error, ValueError):
        return f"model {name} cannot be fetched: {error}; {WAY_OUT}"
    if isinstance(error, OSError) and not _is_network_error(error):
        return f"could not save model {name}: {error}"
    reason = (str(error).strip().splitlines() or [type(error).__name__])[0][:160]
    return (
        f"could not reach {endpoint} to download model {name} ({reason}); what arrived is kept "
        f"and the next try resumes; check the network, or {WAY_OUT}"
    )


def _is_network_error(error: BaseException) -> bool:
    import httpx2

    return isinstance(error, (httpx2.TransportError, ConnectionError))


def _storage(repo_id: str, cache_dir: str | Path | None) -> Path:
    from huggingface_hub import constants
    from huggingface_hub.file_download import repo_folder_name

    root = Path(cache_dir if cache_dir is not None else constants.HF_HUB_CACHE).expanduser()
    return root / repo_folder_name(repo_id=repo_id, repo_type="model")


def _fetch_blob(
    plan: DownloadPlan,
    file: ModelFile,
    endpoint: str,
    cache_dir: str | Path | None,
    meter: _Meter,
) -> str:
    """Bring one file into `blobs/<etag>`, continuing a partial file left by an earlier run;
    return the blob's name."""
    from huggingface_hub import constants, get_hf_file_metadata, hf_hub_url
    from huggingface_hub.file_download import repo_folder_name
    from huggingface_hub.utils import (  # type: ignore[attr-defined]
        WeakFileLock,
        build_hf_headers,
    )

    url = hf_hub_url(plan.repo_id, file.path, revision=plan.commit, endpoint=endpoint)
    metadata = get_hf_file_metadata(url, endpoint=endpoint)
    if metadata.etag is None:
        raise ModelDownloadError(f"{endpoint} sent no ETag for {file.path}; is it a hub?")
    etag = hub_name(metadata.etag, BLOB_NAME, f"the ETag of {file.path}", endpoint)
    storage = _storage(plan.repo_id, cache_dir)
    blob = storage / "blobs" / etag
    locks = Path(cache_dir if cache_dir is not None else constants.HF_HUB_CACHE).expanduser()
    lock = locks / ".locks" / repo_folder_name(repo_id=plan.repo_id, repo_type="model")
    lock.mkdir(parents=True, exist_ok=True)
    blob.parent.mkdir(parents=True, exist_ok=True)
    with WeakFileLock(lock / f"{etag}.lock"):
        if blob.exists():
            return etag
        partial = blob.with_name(blob.name + INCOMPLETE_SUFFIX)
        expected = metadata.size if metadata.size is not None else file.size
        if partial.exists() and partial.stat().st_size > expected:
            partial.unlink()
        with partial.open("ab") as output:
            resume = output.tell()
            meter.resumed(resume)
            if resume < expected:
                headers = build_hf_headers()
                if urlsplit(metadata.location).netloc != urlsplit(url).netloc:
                    headers.pop("authorization", None)  # a signed CDN address takes no token
                _http_get(
                    metadata.location,
                    output,
                    resume_size=resume,
                    headers=headers,
                    expected_size=expected,
                    displayed_filename=file.path,
                    tqdm_class=cast(Any, meter.bar_class()),
                )
        _check_blob(partial, etag, expected, file.path)
        os.replace(partial, blob)
    return etag


def _http_get(url: str, output: Any, **options: Any) -> None:
    """The hub's `http_get`; a body that ends short is a network failure (the next run resumes)."""
    from huggingface_hub.file_download import http_get

    try:
        http_get(url, output, **options)
    except OSError as error:
        if not str(error).startswith("Consistency check failed"):
            raise
        raise ConnectionError("the connection ended before the file was complete") from None


def _check_blob(partial: Path, etag: str, size: int, name: str) -> None:
    """The bytes are the ones the hub named: their size, and their SHA-256 for an LFS file."""
    actual = partial.stat().st_size
    problem = None
    if actual != size:
        problem = f"{actual} bytes instead of {size}"
    elif len(etag) == 64:
        digest = hashlib.sha256()
        with partial.open("rb") as stream:
            while block := stream.read(1 << 20):
                digest.update(block)
        if digest.hexdigest() != etag:
            problem = "its SHA-256 does not match"
    if problem is not None:
        partial.unlink(missing_ok=True)
        raise ModelDownloadError(f"{name} arrived damaged ({problem}); run the download again")


class _SilentBar:
    """A progress bar that shows nothing (the layout step moves no bytes worth showing)."""

    def __init__(self, iterable: Any = None, *args: Any, **kwargs: Any) -> None:
        self.iterable = iterable
        self.total = kwargs.get("total")
        self.n = 0

    def __iter__(self) -> Any:
        return iter(self.iterable or ())

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, n: float | None = 1) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


class _Meter:
    """Counts bytes across files, rates this run's transfer, and stops it when asked."""

    def __init__(self, plan: DownloadPlan, on_progress: ProgressCallback | None, stop: StopCheck):
        self.plan = plan
        self.on_progress = on_progress
        self.stop = stop
        self.done = plan.total_bytes - plan.missing_bytes
        self.transferred = 0
        self.started = time.monotonic()
        self.last_sent = 0.0
        self._before_file = self.done

    def check_stop(self) -> None:
        if self.stop():
            raise DownloadCancelled(f"download of {self.plan.spec} cancelled")

    def start_file(self, file: ModelFile) -> None:
        self.check_stop()
        self._before_file = self.done - file.present

    def resumed(self, size: int) -> None:
        self.done = self._before_file + size
        self._emit("downloading", force=True)

    def advance(self, count: int) -> None:
        self.check_stop()
        self.done += count
        self.transferred += count
        self._emit("downloading")

    def file_done(self, file: ModelFile) -> None:
        self.done = self._before_file + file.size
        self._emit("downloading")

    def finish(self, state: DownloadState) -> None:
        self._emit(state, force=True)

    def bar_class(self) -> type:
        meter = self

        class Bar(_SilentBar):
            """What `http_get` believes is a tqdm bar: each chunk lands in the meter."""

            def update(self, n: float | None = 1) -> None:
                meter.advance(int(n or 0))

        return Bar

    def _emit(self, state: DownloadState, *, force: bool = False) -> None:
        now = time.monotonic()
        if self.on_progress is None or (
            not force and now - self.last_sent < PROGRESS_INTERVAL_SECONDS
        ):
            return
        self.last_sent = now
        total = self.plan.total_bytes
        elapsed = now - self.started
        rate = self.transferred / elapsed if self.transferred and elapsed > 0 else None
        left = max(total - self.done, 0)
        eta = left / rate if rate else (0.0 if not left else None)
        self.on_progress(DownloadProgress(min(self.done, total), total, rate, eta, state))
