"""``LazyModel``: loads once, on first use, from any number of threads; a failed load retries."""

from __future__ import annotations

import threading
import time

import pytest

from graphrag_integrations.core.encoders.models import LazyModel


def test_concurrent_first_use_loads_once() -> None:
    calls: list[int] = []

    def load() -> object:
        calls.append(1)
        time.sleep(0.05)  # long enough for every thread to arrive while loading
        return object()

    lazy = LazyModel(load)
    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.append(lazy.get())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1
    assert len(seen) == 8 and all(value is seen[0] for value in seen)
    assert lazy.loaded


def test_a_failed_load_keeps_nothing_and_the_next_use_retries() -> None:
    attempts: list[int] = []

    def load() -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise OSError("weights not found")
        return "weights"

    lazy = LazyModel(load)
    with pytest.raises(OSError, match="weights not found"):
        lazy.get()
    assert not lazy.loaded
    assert lazy.get() == "weights" and len(attempts) == 2


def test_set_replaces_loading() -> None:
    lazy: LazyModel[str] = LazyModel(lambda: pytest.fail("the loader must not run"))
    lazy.set("given")
    assert lazy.loaded and lazy.get() == "given"
