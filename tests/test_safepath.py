"""The path door (whileai_core.safepath): a red-team pass's findings, each as a test.

- Check-then-open races: a folder inside the root swapped for a symlink to outside while reads
  and writes go on (the red team got 40 outside reads of 600, 49 outside outputs, 42 outside temp
  files and a replaced outside file): a fixed number of iterations, zero outside reads or writes.
- Special files: a FIFO is refused at once (it used to block forever); a device is never
  replaced, with or without overwrite.
- Hard links to outside files are refused under a confined root.
- Size and time limits, with the fix in the message.
- Writes: the temp file lives in the target's folder; `out="."` is refused (it used to put a temp
  file in the root's parent).
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import threading
import time

import pytest

from whileai_core import safepath
from whileai_core.errors import ArgumentError, ConfigError, RowsError
from whileai_core.safepath import Limits, Root, user_path

INSIDE, OUTSIDE = b"inside\n", b"OUTSIDE\n"


def _with_timeout(fn, seconds=10.0):
    """Run fn in a thread; fail (instead of hanging the suite) if it blocks."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"blocked for more than {seconds} s"
    if "error" in box:
        raise box["error"]
    return box["value"]


@pytest.fixture()
def world(tmp_path):
    root = tmp_path / "root"
    (root / "d").mkdir(parents=True)
    (root / "d" / "f.jsonl").write_bytes(INSIDE)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.jsonl").write_bytes(OUTSIDE)
    return root, outside


# --- the swap race ---------------------------------------------------------------------------

ITERATIONS = 400
MIN_SWAPS = 50


def test_a_folder_swapped_for_a_symlink_never_leads_out(world):
    """A folder inside the root is swapped for a link to outside, over and over, while the door
    reads d/f.jsonl and writes d/new.jsonl and d/f.jsonl (overwrite): every read is the inside
    file or a refusal, nothing is written outside, and the outside file is untouched."""
    root, outside = world
    door = Root(root)
    stop = threading.Event()
    swaps = [0]

    def put_back():  # whatever a write made at d/ in a gap goes; the real folder returns
        while True:
            try:
                os.rename(root / "d.real", root / "d")
                return
            except OSError:
                if (root / "d").is_symlink():
                    os.unlink(root / "d")
                else:
                    shutil.rmtree(root / "d", ignore_errors=True)

    def swapper():
        while not stop.is_set():
            os.rename(root / "d", root / "d.real")
            try:
                os.symlink(outside, root / "d")
                swaps[0] += 1
                time.sleep(0)
                os.unlink(root / "d")
            except OSError:  # a write made a fresh d/ in the gap before the link went in
                pass
            put_back()

    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    reads = {"inside": 0, "outside": 0, "refused": 0}
    writes = {"done": 0, "refused": 0}
    try:
        # at least ITERATIONS rounds, and more until the swapper has run MIN_SWAPS times (a
        # loaded machine schedules its thread less often), within a minute
        deadline = time.monotonic() + 60
        i = 0
        while i < ITERATIONS or (swaps[0] < MIN_SWAPS and time.monotonic() < deadline):
            i += 1
            try:
                data = door.locate("d/f.jsonl", argument="rows").read_bytes("rows")
                reads["inside" if data == INSIDE else "outside"] += 1
            except ArgumentError:
                reads["refused"] += 1
            for name, overwrite in ((f"new-{i}.jsonl", False), ("f.jsonl", True)):
                try:
                    door.locate(f"d/{name}", argument="out", writes="jsonl").write_bytes(
                        INSIDE, overwrite=overwrite)
                    writes["done"] += 1
                except (ArgumentError, ConfigError):
                    writes["refused"] += 1
    finally:
        stop.set()
        thread.join(10)
    assert reads["outside"] == 0, reads
    assert sorted(p.name for p in outside.iterdir()) == ["f.jsonl"]   # no output, no temp file
    assert (outside / "f.jsonl").read_bytes() == OUTSIDE
    assert swaps[0] >= MIN_SWAPS, f"the swapper ran {swaps[0]} times: the race was not exercised"
    # the door still works once the folder holds still
    assert door.locate("d/f.jsonl", argument="rows").read_bytes("rows") == INSIDE
    door.locate("d/after.jsonl", argument="out", writes="jsonl").write_bytes(INSIDE)
    assert (root / "d" / "after.jsonl").read_bytes() == INSIDE
    leftovers = [p.name for p in (root / "d").iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_a_symlinked_last_component_is_refused_and_not_replaced(world):
    root, outside = world
    (root / "link.jsonl").symlink_to(outside / "f.jsonl")
    door = Root(root)
    with pytest.raises(ArgumentError, match="is a symlink that leads outside the workspace root"):
        door.locate("link.jsonl", argument="rows").read_bytes("rows")
    with pytest.raises(ConfigError, match="exists and is a symlink, not a regular file; it is "
                                          "never replaced, with or without overwrite"):
        door.locate("link.jsonl", argument="out", writes="jsonl").write_bytes(b"x", overwrite=True)
    assert (outside / "f.jsonl").read_bytes() == OUTSIDE
    assert (root / "link.jsonl").is_symlink()


# --- special files ---------------------------------------------------------------------------

def test_a_fifo_is_refused_at_once(world):
    root, _ = world
    os.mkfifo(root / "pipe.jsonl")
    door = Root(root)
    with pytest.raises(ArgumentError, match="is a FIFO .named pipe., not a regular file"):
        _with_timeout(lambda: door.locate("pipe.jsonl", argument="rows").read_bytes("rows"))
    # the CLI's door too (a user's own path)
    with pytest.raises(ArgumentError, match="is a FIFO"):
        _with_timeout(lambda: user_path(root / "pipe.jsonl").read_bytes("rows"))


def test_a_fifo_swapped_in_after_the_look_is_refused_without_blocking(world, monkeypatch):
    """The look (fstatat) sees a regular file; by the open it is a FIFO: O_NONBLOCK makes the
    open return, and fstat on the handle refuses it."""
    root, _ = world
    (root / "p.jsonl").write_bytes(INSIDE)
    real_lstat = safepath._lstat_mode

    def look_then_swap(name, dir_fd):
        mode = real_lstat(name, dir_fd)
        if name == "p.jsonl":
            os.unlink(root / "p.jsonl")
            os.mkfifo(root / "p.jsonl")
        return mode

    monkeypatch.setattr(safepath, "_lstat_mode", look_then_swap)
    with pytest.raises(ArgumentError, match="is a FIFO"):
        _with_timeout(lambda: Root(root).locate("p.jsonl", argument="rows").read_bytes("rows"))


def test_a_socket_is_refused(world, tmp_path):
    root, _ = world
    path = root / "s.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        with pytest.raises(ArgumentError, match="is a socket, not a regular file"):
            Root(root).locate("s.sock", argument="rows").read_bytes("rows")


def test_a_device_is_never_read_or_replaced(tmp_path):
    """A character device (the null device's numbers, made here when we may; /dev/zero read
    otherwise) is refused before it is opened, and never replaced, even with overwrite."""
    dev = tmp_path / "dev-null"
    try:
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs root; /dev/zero is read-tested below")
    for overwrite in (False, True):
        with pytest.raises(ConfigError, match="exists and is a character device"):
            safepath.write_text(dev, "x", overwrite=overwrite)
        assert stat.S_ISCHR(os.lstat(dev).st_mode)
    root = Root(tmp_path)
    with pytest.raises(ConfigError, match="character device"):
        root.locate("dev-null", argument="out", writes="folder").write_bytes(b"x", overwrite=True)
    assert stat.S_ISCHR(os.lstat(dev).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["dev-null"]      # no temp file left


def test_dev_zero_is_refused_before_it_is_read():
    # it grew the server to 3.7 GB as a tokenizer file (the red-team's finding 1)
    with pytest.raises(ArgumentError, match="is a character device, not a regular file"):
        _with_timeout(lambda: user_path("/dev/zero").read_bytes("tokenizer"))


# --- hard links ------------------------------------------------------------------------------

def test_a_hard_link_is_refused_under_a_confined_root_only(world):
    root, outside = world
    os.link(outside / "f.jsonl", root / "hard.jsonl")
    with pytest.raises(ArgumentError, match="has 2 hard links; the workspace refuses"):
        Root(root).locate("hard.jsonl", argument="rows").read_bytes("rows")
    # a user's own path confines nothing, so a hard link is just a file there
    assert user_path(root / "hard.jsonl").read_bytes("rows") == OUTSIDE


# --- limits ----------------------------------------------------------------------------------

def test_the_size_limit_names_the_fix(world):
    root, _ = world
    (root / "big.jsonl").write_bytes(b"x" * (3 << 20))                # 3 MB
    door = Root(root, limits=Limits(max_mb={"rows": 2, "tokenizer": 1, "config": 1}))
    with pytest.raises(ArgumentError) as err:
        door.locate("big.jsonl", argument="rows").read_bytes("rows")
    text = str(err.value)
    assert "is 3.0 MB, over the 2 MB limit for rows" in text
    assert "WHILEAI_MAX_ROWS_MB=4" in text and "--max-file-mb rows=4" in text
    assert door.locate("d/f.jsonl", argument="rows").read_bytes("rows") == INSIDE


def test_a_file_that_grows_past_the_limit_while_read_is_refused(world, monkeypatch):
    root, _ = world
    path = root / "growing.jsonl"
    path.write_bytes(b"x" * 1000)
    door = Root(root, limits=Limits(max_mb={"rows": 3000 / (1 << 20), "tokenizer": 1,
                                            "config": 1}))
    real_readv = os.readv

    def readv_and_grow(fd, buffers):
        with open(path, "ab") as fh:                              # another writer appends
            fh.write(b"y" * 1000)
        return real_readv(fd, buffers)

    monkeypatch.setattr(safepath, "_CHUNK", 500)
    monkeypatch.setattr(os, "readv", readv_and_grow)
    with pytest.raises(ArgumentError, match="over the .* MB limit for rows"):
        door.locate("growing.jsonl", argument="rows").read_bytes("rows")


def test_the_read_timeout_names_the_fix(world, monkeypatch):
    root, _ = world
    (root / "slow.jsonl").write_bytes(b"x" * 64)
    monkeypatch.setattr(safepath, "_CHUNK", 8)                  # 8 reads of 8 bytes
    door = Root(root, limits=Limits(timeout_s=1e-9))
    with pytest.raises(ArgumentError, match=r"reading took longer than 1e-09 s .* "
                                            r"WHILEAI_READ_TIMEOUT_S=<seconds>"):
        door.locate("slow.jsonl", argument="rows").read_bytes("rows")


def test_limits_from_the_environment():
    limits = Limits.from_env({"WHILEAI_MAX_ROWS_MB": "7", "WHILEAI_READ_TIMEOUT_S": "3"},
                             max_mb={"config": 2})
    assert limits.max_mb["rows"] == 7 and limits.max_mb["config"] == 2
    assert limits.timeout_s == 3 and limits.max_bytes("rows") == 7 << 20
    for bad in ({"WHILEAI_MAX_ROWS_MB": "nan"}, {"WHILEAI_MAX_ROWS_MB": "-1"},
                {"WHILEAI_READ_TIMEOUT_S": "soon"}):
        with pytest.raises(ArgumentError, match="must be a positive number"):
            Limits.from_env(bad)
    with pytest.raises(ArgumentError, match="unknown kind of file 'images'"):
        Limits.from_env({}, max_mb={"images": 1})


# --- writes ----------------------------------------------------------------------------------

def test_the_root_itself_is_never_a_write_target(world, tmp_path):
    root, _ = world
    before = sorted(p.name for p in tmp_path.iterdir())
    for value in (".", "./", str(root)):
        with pytest.raises(ConfigError, match="is a directory, not a file"):
            Root(root).locate(value, argument="out", writes="folder").write_bytes(
                b"x", overwrite=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == before         # no temp in the parent


def test_an_existing_folder_or_fifo_is_never_replaced(world):
    root, _ = world
    os.mkfifo(root / "pipe")
    door = Root(root)
    for name, kind in (("d", "a directory"), ("pipe", "a FIFO")):
        with pytest.raises(ConfigError, match=f"exists and is {kind}"):
            door.locate(name, argument="out", writes="folder").write_bytes(b"x", overwrite=True)
    assert (root / "d").is_dir() and stat.S_ISFIFO(os.lstat(root / "pipe").st_mode)


def test_a_write_makes_its_temp_file_beside_the_target(world, monkeypatch):
    root, outside = world
    seen = []
    real_open = os.open

    def spy(path, flags, mode=0o777, *, dir_fd=None):
        if flags & os.O_CREAT:
            seen.append((path, os.readlink(f"/proc/self/fd/{dir_fd}") if dir_fd else None))
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", spy)
    Root(root).locate("d/sub/out.jsonl", argument="out", writes="jsonl").write_bytes(b"{}\n")
    assert len(seen) == 1 and seen[0][1] == str(root / "d" / "sub")
    assert seen[0][0].startswith(".out.jsonl.") and seen[0][0].endswith(".tmp")
    assert (root / "d" / "sub" / "out.jsonl").read_bytes() == b"{}\n"


# --- the error voice of the caller -----------------------------------------------------------

def test_rows_errors_stay_rows_errors(world):
    from whileai_core import load_rows

    root, _ = world
    os.mkfifo(root / "pipe.jsonl")
    with pytest.raises(RowsError, match="is a FIFO"):
        _with_timeout(lambda: load_rows("pipe.jsonl", root=Root(root)))
    with pytest.raises(ArgumentError, match="contains '..'"):
        load_rows("../outside/f.jsonl", root=Root(root))
    (root / "rows.jsonl").write_text('{"task_id": "a", "reward": 1}\n')
    assert load_rows("rows.jsonl", root=Root(root)).n_rows == 1
