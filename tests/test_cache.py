"""The response cache: content addressing, persistence, crash safety."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankstats_collectors.cache import CacheError, ResponseCache

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(st.dictionaries(st.text(max_size=6), JSON, max_size=5))
def test_key_ignores_key_order_and_is_sha256(parts):
    import hashlib

    reordered = dict(reversed(list(parts.items())))
    key = ResponseCache.key(parts)
    assert key == ResponseCache.key(reordered)
    canonical = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert key == hashlib.sha256(canonical.encode()).hexdigest()


def test_key_changes_with_any_part():
    base = {"model": "m", "revision": "abc", "prompt": "Q", "max_new_tokens": 5}
    keys = {ResponseCache.key(base)}
    for name, value in [
        ("model", "n"),
        ("revision", "abd"),
        ("prompt", "Q "),
        ("max_new_tokens", 6),
    ]:
        keys.add(ResponseCache.key({**base, name: value}))
    assert len(keys) == 5


def test_key_rejects_what_json_cannot_hold():
    with pytest.raises(TypeError):
        ResponseCache.key({"x": float("nan")})
    with pytest.raises(TypeError):
        ResponseCache.key({"x": {1, 2}})
    with pytest.raises(TypeError):
        ResponseCache.key(["not", "a", "mapping"])


def test_put_get_persist(tmp_path):
    path = tmp_path / "sub" / "cache.jsonl"
    cache = ResponseCache(path)
    assert len(cache) == 0 and not path.exists()
    cache.put("k1", {"response": "a", "score": 1.0})
    cache.put("k2", {"response": "b"})
    cache.put("k1", {"response": "c"})  # the last record wins
    reopened = ResponseCache(path)
    assert len(reopened) == 2 and "k1" in reopened and "k3" not in reopened
    assert reopened.get("k1") == {"response": "c"} and reopened.get("k3") is None
    reopened.get("k2")["response"] = "changed"  # get returns a copy
    assert reopened.get("k2") == {"response": "b"}
    with pytest.raises(TypeError):
        cache.put("k", ["not a dict"])


def test_torn_last_line_is_dropped_and_cut(tmp_path):
    path = tmp_path / "cache.jsonl"
    cache = ResponseCache(path)
    cache.put("a", {"response": "x"})
    with open(path, "a") as handle:
        handle.write('{"key": "b", "record": {"resp')
    reopened = ResponseCache(path)
    assert len(reopened) == 1
    reopened.put("c", {"response": "z"})
    assert [json.loads(line)["key"] for line in path.read_text().splitlines()] == ["a", "c"]
    assert len(ResponseCache(path)) == 2


def test_damage_before_the_last_line_is_an_error(tmp_path):
    path = tmp_path / "cache.jsonl"
    path.write_text('{"key": "a", "record": {}}\nnot json\n{"key": "b", "record": {}}\n')
    with pytest.raises(CacheError, match=r"line 2: not a cache record"):
        ResponseCache(path)


WRITER = """
import sys, time
from rankstats_collectors.cache import ResponseCache
cache = ResponseCache(sys.argv[1])
i = 0
while True:
    cache.put(ResponseCache.key({"i": i}), {"response": "r" * 200, "i": i})
    i += 1
"""


def test_killed_writer_loses_at_most_the_record_in_flight(tmp_path):
    path = tmp_path / "cache.jsonl"
    process = subprocess.Popen([sys.executable, "-c", WRITER, str(path)])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (not path.exists() or path.stat().st_size < 20000):
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    written = path.read_bytes()
    complete = written.count(b"\n")
    cache = ResponseCache(path)
    assert len(cache) == complete > 0
    assert all(cache.get(ResponseCache.key({"i": i}))["i"] == i for i in range(complete))


HOLDER = """
import sys, time
from rankstats_collectors.cache import ResponseCache
cache = ResponseCache(sys.argv[1])
with cache.locked():
    cache.put("held", {"by": "the other process"})
    print("locked", flush=True)
    time.sleep(60)
"""


def test_one_process_writes_a_cache_at_a_time(tmp_path):
    from rankstats_collectors.cache import CacheBusyError

    path = tmp_path / "cache.jsonl"
    mine = ResponseCache(path)
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout.readline().strip() == "locked"
        with pytest.raises(CacheBusyError, match="being written by another process"):
            mine.put("k", {"response": "x"})
        with pytest.raises(CacheBusyError, match=r"waited 0\.2 s"):
            with mine.locked(timeout=0.2):
                pass
        assert "k" not in mine and "held" not in mine
    finally:
        os.kill(process.pid, signal.SIGKILL)  # a killed holder releases the lock
        process.wait()
        process.stdout.close()
    mine.put("k", {"response": "x"})  # taking the lock reads what the other process wrote
    assert mine.get("held") == {"by": "the other process"} and len(mine) == 2
    assert len(ResponseCache(path)) == 2


def test_the_same_process_takes_its_own_lock_again(tmp_path):
    path = tmp_path / "cache.jsonl"
    first, second = ResponseCache(path), ResponseCache(path)
    with first.locked():
        second.put("a", {"n": 1})  # another object on the same file, same process: no wait
        with first.locked():
            first.put("b", {"n": 2})
    assert "a" in first and len(ResponseCache(path)) == 2
