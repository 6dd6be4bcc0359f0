"""Model downloads with the real huggingface_hub client against a local hub on 127.0.0.1."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.support.hub_server import REPO, WEIGHTS, WEIGHTS_BYTES, HubServer, cache, hub

from counterfoil.models.hub.download import (
    MLX_LM_ALLOW_PATTERNS,
    DownloadCancelled,
    DownloadProgress,
    ModelDownloadError,
    download_model,
    model_on_disk,
    plan_download,
)

__all__ = ["cache", "hub"]  # fixtures


@pytest.fixture
def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def partial_files(cache: Path) -> list[Path]:
    return sorted(cache.rglob("*.incomplete"))


def stop_after(bytes_seen: int, events: list[DownloadProgress]) -> Callable[[], bool]:
    return lambda: bool(events) and events[-1].bytes >= bytes_seen


def test_allow_patterns_are_the_ones_mlx_lm_loads() -> None:
    utils = pytest.importorskip("mlx_lm.utils")
    assert utils.DEFAULT_ALLOW_PATTERNS == MLX_LM_ALLOW_PATTERNS


def test_plan_lists_the_files_mlx_lm_loads_with_their_sizes(hub: HubServer, cache: Path) -> None:
    plan = plan_download(REPO, cache_dir=cache)

    assert [file.path for file in plan.files] == ["config.json", WEIGHTS, "tokenizer_config.json"]
    assert plan.total_bytes == plan.missing_bytes == WEIGHTS_BYTES + 24 + 3
    assert plan.commit and not model_on_disk(REPO, cache_dir=cache)


def test_download_reports_progress_to_the_total_and_leaves_a_loadable_snapshot(
    hub: HubServer, cache: Path
) -> None:
    events: list[DownloadProgress] = []

    folder = download_model(REPO, cache_dir=cache, on_progress=events.append)

    assert (folder / WEIGHTS).read_bytes() == (hub.repos[REPO] / WEIGHTS).read_bytes()
    assert not (folder / "README.md").exists()
    assert [event.bytes for event in events] == sorted(event.bytes for event in events)
    assert events[-1].state == "done" and events[-1].bytes == events[-1].total
    assert any(0 < event.bytes < event.total for event in events)
    assert events[-1].rate is not None and events[-1].eta_seconds == 0
    assert model_on_disk(REPO, cache_dir=cache)
    assert plan_download(REPO, cache_dir=cache).missing_bytes == 0
    assert partial_files(cache) == []


def test_cancel_stops_the_download_and_keeps_what_arrived(hub: HubServer, cache: Path) -> None:
    events: list[DownloadProgress] = []

    with pytest.raises(DownloadCancelled):
        download_model(
            REPO, cache_dir=cache, on_progress=events.append, should_stop=stop_after(100, events)
        )

    assert events[-1].state == "cancelled"
    [partial] = partial_files(cache)
    assert 0 < partial.stat().st_size < WEIGHTS_BYTES
    assert not model_on_disk(REPO, cache_dir=cache)


def test_rerun_after_cancel_fetches_only_the_rest_with_a_range_request(
    hub: HubServer, cache: Path
) -> None:
    events: list[DownloadProgress] = []
    with pytest.raises(DownloadCancelled):
        download_model(
            REPO, cache_dir=cache, on_progress=events.append, should_stop=stop_after(100, events)
        )
    kept = partial_files(cache)[0].stat().st_size
    first_run = len(hub.gets(WEIGHTS))
    assert plan_download(REPO, cache_dir=cache).missing_bytes == WEIGHTS_BYTES - kept + 3
    resumed: list[DownloadProgress] = []

    folder = download_model(REPO, cache_dir=cache, on_progress=resumed.append)

    [second] = hub.gets(WEIGHTS)[first_run:]
    assert second.range == f"bytes={kept}-" and second.status == 206
    assert second.body_bytes == WEIGHTS_BYTES - kept
    assert resumed[0].bytes >= kept
    assert (folder / WEIGHTS).read_bytes() == (hub.repos[REPO] / WEIGHTS).read_bytes()


def test_a_wrong_name_is_one_message_with_the_way_out(hub: HubServer, cache: Path) -> None:
    with pytest.raises(ModelDownloadError) as raised:
        download_model("owner/no-such-model", cache_dir=cache)

    message = str(raised.value)
    assert "owner/no-such-model was not found on " + hub.url in message
    assert "local model folder" in message and "scripted:PATH" in message
    assert "\n" not in message and message.count("not found") == 1


def test_offline_mode_says_the_model_is_not_on_disk_and_how_to_go_on(
    hub: HubServer, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)

    with pytest.raises(ModelDownloadError, match="HF_HUB_OFFLINE") as raised:
        plan_download("qwen3-4b", cache_dir=cache)

    assert "Qwen/Qwen3-4B-MLX-4bit" in str(raised.value) and hub.requests == []


def test_an_unreachable_hub_is_one_message(
    cache: Path, monkeypatch: pytest.MonkeyPatch, unused_port: int
) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{unused_port}")

    with pytest.raises(ModelDownloadError, match="could not reach http://127.0.0.1") as raised:
        plan_download(REPO, cache_dir=cache)

    assert "\n" not in str(raised.value)


def test_a_connection_dropped_once_is_resumed_in_the_same_run(hub: HubServer, cache: Path) -> None:
    hub.drop_after[WEIGHTS] = [100_000]

    folder = download_model(REPO, cache_dir=cache)

    first, second = hub.gets(WEIGHTS)
    assert first.body_bytes == 100_000
    assert second.range is not None and second.status == 206
    assert (folder / WEIGHTS).read_bytes() == (hub.repos[REPO] / WEIGHTS).read_bytes()


def test_a_connection_that_keeps_dropping_fails_once_and_the_rerun_resumes(
    hub: HubServer, cache: Path
) -> None:
    hub.drop_after[WEIGHTS] = [100_000] + [0] * 10  # the hub client retries five times

    with pytest.raises(ModelDownloadError) as raised:
        download_model(REPO, cache_dir=cache)

    message = str(raised.value)
    assert message.startswith("could not reach ") and "next try resumes" in message
    kept = partial_files(cache)[0].stat().st_size
    assert kept > 0
    hub.drop_after.clear()
    served = len(hub.gets(WEIGHTS))

    folder = download_model(REPO, cache_dir=cache)

    [resumed] = hub.gets(WEIGHTS)[served:]
    assert resumed.range == f"bytes={kept}-" and resumed.body_bytes == WEIGHTS_BYTES - kept
    assert (folder / WEIGHTS).read_bytes() == (hub.repos[REPO] / WEIGHTS).read_bytes()


def test_a_damaged_partial_file_is_refused_and_removed(hub: HubServer, cache: Path) -> None:
    events: list[DownloadProgress] = []
    with pytest.raises(DownloadCancelled):
        download_model(
            REPO, cache_dir=cache, on_progress=events.append, should_stop=stop_after(100, events)
        )
    [partial] = partial_files(cache)
    partial.write_bytes(b"\xff" * partial.stat().st_size)

    with pytest.raises(ModelDownloadError, match="arrived damaged"):
        download_model(REPO, cache_dir=cache)

    assert partial_files(cache) == []
    assert model_on_disk(REPO, cache_dir=cache) is False
    download_model(REPO, cache_dir=cache)
    assert model_on_disk(REPO, cache_dir=cache)


def test_local_folders_and_scripted_models_need_no_download(tmp_path: Path) -> None:
    assert model_on_disk(str(tmp_path))
    assert model_on_disk("scripted:responses.jsonl")
    with pytest.raises(ModelDownloadError, match="nothing to download"):
        plan_download(str(tmp_path))


def test_the_hub_client_alone_starts_an_interrupted_file_again_from_zero(
    hub: HubServer, cache: Path
) -> None:
    """Why downloads keep their own partial files: huggingface_hub 2.4 deletes its temporary
    file when a transfer fails, so the next `hf_hub_download` fetches every byte again."""
    from huggingface_hub import hf_hub_download

    hub.drop_after[WEIGHTS] = [100_000] + [0] * 10
    with pytest.raises(Exception):  # noqa: B017 - the hub client's own error
        hf_hub_download(REPO, WEIGHTS, cache_dir=cache, endpoint=hub.url)
    assert partial_files(cache) == []
    hub.drop_after.clear()
    served = len(hub.gets(WEIGHTS))

    hf_hub_download(REPO, WEIGHTS, cache_dir=cache, endpoint=hub.url)

    [again] = hub.gets(WEIGHTS)[served:]
    assert again.range is None and again.body_bytes == WEIGHTS_BYTES


def test_weights_redirected_to_a_cdn_are_fetched_there_without_the_token(
    hub: HubServer, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    hub.cdn_host = "localhost"

    folder = download_model(REPO, cache_dir=cache)

    [from_cdn] = hub.gets(WEIGHTS)
    assert from_cdn.path.startswith("/cdn/") and not from_cdn.authorized
    assert any(r.authorized for r in hub.requests if r.path.startswith("/api/"))
    assert (folder / WEIGHTS).read_bytes() == (hub.repos[REPO] / WEIGHTS).read_bytes()


def files_outside(folder: Path, cache: Path) -> set[Path]:
    return {path for path in folder.rglob("*") if cache not in (path, *path.parents)}


@pytest.mark.parametrize("etag", ["../../../escaped", "..", "/tmp/escaped", "a" * 39, "G" * 40])
def test_an_etag_that_is_not_a_blob_name_is_refused_before_it_touches_a_path(
    hub: HubServer, cache: Path, tmp_path: Path, etag: str
) -> None:
    hub.etags[WEIGHTS] = etag
    outside = files_outside(tmp_path, cache)

    with pytest.raises(ModelDownloadError, match="is not one; nothing was saved"):
        download_model(REPO, cache_dir=cache)

    assert files_outside(tmp_path, cache) == outside
    assert not list(cache.rglob("*escaped*"))


def test_a_commit_id_that_is_not_hex_is_refused(hub: HubServer, cache: Path) -> None:
    hub.commit = "../../outside"

    with pytest.raises(ModelDownloadError, match="as a commit id"):
        plan_download(REPO, cache_dir=cache)

    assert not cache.exists() or not any(cache.rglob("outside"))


@pytest.mark.parametrize("name", ["../escaped.json", "/etc/escaped.json", "a/../../escaped.json"])
def test_a_listed_file_path_that_leaves_the_snapshot_is_refused(
    hub: HubServer, cache: Path, name: str
) -> None:
    hub.listed_names["config.json"] = name

    with pytest.raises(ModelDownloadError, match="leaves the model's folder"):
        plan_download(REPO, cache_dir=cache)


def test_the_snapshot_is_laid_out_as_the_hub_client_reads_it(hub: HubServer, cache: Path) -> None:
    folder = download_model(REPO, cache_dir=cache)

    assert folder.parent.name == "snapshots" and folder.name == hub.commit
    assert (folder.parent.parent / "refs" / "main").read_text() == hub.commit
    assert (folder / WEIGHTS).is_symlink()
    assert model_on_disk(REPO, cache_dir=cache)
