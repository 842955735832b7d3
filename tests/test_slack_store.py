"""The Slack thread map and answered-event claims in SQLite."""

from __future__ import annotations

import threading
from pathlib import Path

from web.slack.store import SlackStore, default_store_path


def test_thread_links_survive_a_restart(tmp_path: Path) -> None:
    store = SlackStore(tmp_path / "slack.sqlite")
    assert store.link("T1", "C1", "1.0") is None
    store.save_link("T1", "C1", "1.0", "agent-a", "it")
    store.save_link("T1", "C1", "1.0", "agent-a", "en")  # the language follows the last answer
    store.save_link("T1", "C2", "1.0", "agent-b", None)
    store.close()
    reopened = SlackStore(tmp_path / "slack.sqlite")
    assert reopened.link("T1", "C1", "1.0").agent_thread_id == "agent-a"
    assert reopened.link("T1", "C1", "1.0").language == "en"
    assert reopened.link("T1", "C2", "1.0").agent_thread_id == "agent-b"
    assert reopened.link("T1", "C1", "2.0") is None
    assert reopened.link("T2", "C1", "1.0") is None  # another workspace's channel C1 is another channel
    reopened.save_link("T2", "C1", "1.0", "agent-c", "id")
    assert reopened.link("T1", "C1", "1.0").agent_thread_id == "agent-a"
    assert reopened.link("T2", "C1", "1.0").agent_thread_id == "agent-c"


def test_a_key_is_claimed_exactly_once_even_under_concurrency(tmp_path: Path) -> None:
    store = SlackStore(tmp_path / "slack.sqlite")
    wins: list[bool] = []
    barrier = threading.Barrier(8)

    def claim() -> None:
        barrier.wait()
        wins.append(store.claim("event:Ev1"))

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(wins) == [False] * 7 + [True]
    assert store.claimed("event:Ev1") and not store.claimed("event:Ev2")
    store.close()
    assert SlackStore(tmp_path / "slack.sqlite").claim("event:Ev1") is False  # persisted across restarts


def test_prune_forgets_only_old_claims(tmp_path: Path) -> None:
    store = SlackStore(tmp_path / "slack.sqlite")
    store.claim("old")
    assert store.prune(older_than_s=3600) == 0
    assert store.prune(older_than_s=-1) == 1
    assert store.claim("old") is True


def test_default_path_follows_gpu_advisor_home(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GPU_ADVISOR_HOME", str(tmp_path))
    assert default_store_path() == tmp_path / "slack.sqlite"
