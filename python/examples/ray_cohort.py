"""Play a cohort of Drop7 games across a Ray cluster.

Each Ray task plays one shard of consecutive seeds with ``drop7.play`` on
one thread; the shards come back in seed order and are written as JSON lines,
the same records as ``drop7 play --out`` for the same seeds, every field but
the wall-clock ones (the games share nothing, so the split does not change
any result).

    python examples/ray_cohort.py --policy random --seed-start 1 --games 10000 --out games.jsonl

``--address`` connects to a running cluster (``ray start --head`` on the
head node); without it ``ray.init()`` starts a local one on this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import stat
import sys
import tempfile
import time

import drop7


def play_shard(policy: str, seeds: list, max_moves: int, driver: str) -> list:
    """One Ray task: the records of `seeds` (list of dicts, seed order)."""
    return drop7.play(policy, seeds, threads=1, max_moves=max_moves, driver=driver)


def parse_seed(text: str) -> int:
    return int(text, 16) if text.lower().startswith("0x") else int(text)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--policy", default="center", help="center, random, greedy, fair or fair:dDsS")
    p.add_argument("--seed-start", type=parse_seed, default=1, help="first seed (decimal or 0x hex)")
    p.add_argument("--games", type=int, default=1000)
    p.add_argument("--max-moves", type=int, default=drop7.DEFAULT_MAX_MOVES)
    p.add_argument("--driver", default="headless", choices=["headless", "stream"])
    p.add_argument("--shards", type=int, default=0, help="tasks [default: 4 per cluster CPU]")
    p.add_argument("--address", default=None, help="Ray cluster address [default: a local cluster]")
    p.add_argument("--out", required=True, help="JSON-lines output file")
    p.add_argument("--force", action="store_true",
                   help="overwrite a non-empty --out (as drop7 play --force)")
    a = p.parse_args(argv)
    if a.games < 1:
        p.error("--games must be at least 1")
    if not 0 <= a.seed_start < 2**32:
        p.error(f"--seed-start must be 0..0xffffffff (a 32-bit seed), got {a.seed_start}")
    if a.shards < 0:
        p.error("--shards must be 0 (4 per cluster CPU) or more")
    if os.path.isdir(a.out):
        p.error(f"--out {a.out} is a directory, not a file (nothing was changed)")
    if os.path.exists(a.out) and not os.path.isfile(a.out):
        p.error(f"--out {a.out} is not a regular file (a device, FIFO or socket): the records are "
                "renamed over --out at the end, so give a file name (drop7 play --out writes to "
                "such a file in place) (nothing was changed)")
    if not a.force and os.path.exists(a.out) and os.path.getsize(a.out) > 0:
        p.error(f"--out {a.out} exists and is not empty: add --force to overwrite it "
                "(nothing was changed)")
    try:  # policy, move cap and driver checked here, not as a traceback from every Ray task
        drop7.play(a.policy, [], max_moves=a.max_moves, driver=a.driver)
    except ValueError as e:
        p.error(str(e))
    try:  # after the checks: a bad argument is named even without Ray
        import ray
    except ImportError as e:
        p.error(f"Ray is not installed ({e}): pip install 'ray[default]'")
    # The records go to a temporary file beside --out (beside the file a
    # symlink names), renamed over it at the end: a folder that cannot be
    # written is found before the run, and an existing --out is replaced whole
    # or not at all. SIGTERM (a scheduler's cancel) ends the run as Ctrl-C
    # does, so the temporary file is removed either way.
    target = os.path.realpath(a.out)
    a.empty_at_start = os.path.isfile(target) and os.path.getsize(target) == 0
    try:
        tmp = tempfile.NamedTemporaryFile(
            "w", dir=os.path.dirname(target),
            prefix=f".{os.path.basename(target)}.", suffix=".partial", delete=False)
    except OSError as e:
        p.error(f"--out {a.out}: cannot write a file there ({e.strerror or e}) (nothing was changed)")
    on_sigterm()
    a.records_written = a.records_placed = False
    try:
        return run(a, ray, tmp, target)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        tmp.close()
        if os.path.exists(tmp.name):
            if a.records_written and not a.records_placed:
                # an unexpected error after the run: keep them
                print(f"error: the records are kept in {tmp.name}", file=sys.stderr)
            else:  # unfinished, or a second name of the placed records (os.link)
                os.unlink(tmp.name)


def on_sigterm():
    """SIGTERM (a scheduler's cancel) ends the run as Ctrl-C does: through
    the cleanup in `main` (Ray installs its own handler, so this is
    installed again after `ray.init` and `ray.shutdown`)."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def run(a, ray, tmp, target: str) -> int:
    """Plays the cohort of the checked arguments `a` on Ray and writes its
    records to `tmp`, then renames it over `target` (``a.out`` resolved)."""
    shard_task = ray.remote(num_cpus=1)(play_shard)

    ray.init(address=a.address, include_dashboard=False, log_to_driver=False)
    on_sigterm()
    cpus = int(ray.cluster_resources().get("CPU", 0))
    if cpus < 1:  # e.g. an autoscaling cluster before its first worker
        print("warning: the Ray cluster has no CPUs yet: the tasks wait until it has some "
              "(Ctrl-C stops the run)", file=sys.stderr)
    shards = max(1, min(a.games, a.shards or 4 * max(cpus, 1)))
    seeds = [(a.seed_start + i) % 2**32 for i in range(a.games)]  # wrap as drop7 play does
    bounds = [a.games * k // shards for k in range(shards + 1)]
    t0 = time.perf_counter()
    futures = [
        shard_task.remote(a.policy, seeds[lo:hi], a.max_moves, a.driver)
        for lo, hi in zip(bounds, bounds[1:])
    ]
    records = [r for shard in ray.get(futures) for r in shard]
    if cpus < 1:  # the CPUs the run got in the end (named in the summary)
        cpus = int(ray.cluster_resources().get("CPU", 0))
    # Every record names the whole cohort, as every shard of `drop7 play
    # --shard I/N` does (drop7.play names the seeds it was given).
    for r in records:
        r["cohortSeedStart"] = f"0x{a.seed_start:08x}"
        r["cohortGames"] = a.games
    elapsed = time.perf_counter() - t0
    try:
        with tmp as f:
            for r in records:
                f.write(json.dumps(r, separators=(",", ":")) + "\n")
            f.flush()
            os.fsync(f.fileno())  # on disk before the rename makes them --out
    except OSError as e:  # a full disk: one line, not a traceback
        ray.shutdown()
        print(f"error: cannot write the records beside --out {a.out} ({e.strerror or e}); "
              "nothing was changed", file=sys.stderr)
        return 1
    a.records_written = True
    moves = sum(r["moves"] for r in records)
    mean = sum(r["score"] for r in records) / len(records)
    print(f"{len(records)} games in {shards} Ray tasks on {cpus} CPUs: mean score {mean:.1f}, "
          f"{moves} moves, {elapsed:.2f} s", file=sys.stderr)
    ray.shutdown()
    on_sigterm()
    try:
        # The mode of a new file (a temporary file is made owner-only), or
        # the replaced file's.
        umask = os.umask(0)
        os.umask(umask)
        mode = os.stat(target).st_mode & 0o7777 if os.path.isfile(target) else 0o666 & ~umask
        try:
            os.chmod(tmp.name, mode)
        except OSError:  # a file system without modes (vfat, some CIFS mounts)
            pass
        placed, why = place(tmp.name, target, a.force, a.empty_at_start)
    except OSError as e:  # e.g. --out made a directory meanwhile, a full disk
        verb = "replaced" if os.path.lexists(target) else "made"
        placed, why = keep_beside(tmp.name, target), f"could not be {verb} ({e})"
    a.records_placed = placed != tmp.name
    if placed != target:
        kept = " and is kept" if os.path.lexists(target) else ""
        print(f"error: --out {a.out} {why}{kept}; the {len(records)} records are in {placed}",
              file=sys.stderr)
        return 1
    return 0


def place(tmp_name: str, target: str, force: bool, empty_at_start: bool) -> tuple:
    """Moves the finished records file `tmp_name` to `target`; returns
    `(target, None)`. A `target` that another process holds locked (a
    running `drop7 play --out`) is kept even with `force`, as `drop7 play
    --force` keeps it; without `force`, so is a `target` that another process
    made during the run (a non-empty one, or an empty one locked while its
    first game runs). Then the records go to a new file beside it:
    `(that file, why)`. Raises `OSError` if a file system call fails."""
    if force:
        if replace_if_unlocked(tmp_name, target, only_if_empty=False):
            return target, None
        return keep_beside(tmp_name, target), "is locked by another process (a running drop7 play?)"
    changed = "was written or locked by another process during the run (no --force)"
    if empty_at_start and replace_if_unlocked(tmp_name, target, only_if_empty=True):
        return target, None
    try:
        os.link(tmp_name, target)  # creates `target` only if it is still absent
        return target, None
    except FileExistsError:
        # (NFS can report a link it made as existing: then it is ours. A
        # dangling symlink made meanwhile "exists" too, and is kept.)
        try:
            if os.path.samestat(os.stat(tmp_name), os.stat(target)):
                return target, None
        except FileNotFoundError:
            pass
    except OSError:  # a file system without hard links: check, then rename
        if not os.path.lexists(target):
            os.replace(tmp_name, target)
            return target, None
    return keep_beside(tmp_name, target), changed


def keep_beside(tmp_name: str, target: str) -> str:
    """Renames `tmp_name` to a new `TARGET.XXXXXXXX.jsonl` beside `target`
    (never over an earlier run's kept records) and returns that name; if that
    fails too, the records stay in `tmp_name`, which is returned."""
    try:
        fd, kept = tempfile.mkstemp(
            dir=os.path.dirname(target), prefix=f"{os.path.basename(target)}.", suffix=".jsonl")
        os.close(fd)
        os.replace(tmp_name, kept)
        return kept
    except OSError:
        return tmp_name


def replace_if_unlocked(tmp_name: str, target: str, only_if_empty: bool) -> bool:
    """Renames `tmp_name` over `target` unless another process holds
    `target` flock-locked (`drop7 play --out` locks its file for the whole
    run) or, with `only_if_empty`, `target` is no longer an empty regular
    file; where flock works the lock is held across the rename, so no
    `drop7 play` can start writing into the file being replaced. Without
    `only_if_empty` (--force) a file that cannot be opened is replaced."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock to check, and an open file cannot be replaced
        fcntl = None
    nonblock = getattr(os, "O_NONBLOCK", 0)  # a FIFO made there meanwhile must not block
    try:
        try:  # for writing where possible: NFS grants an exclusive flock only then
            fd = os.open(target, os.O_RDWR | nonblock)
        except PermissionError:
            fd = os.open(target, os.O_RDONLY | nonblock)
    except OSError:  # absent, or cannot be opened: no lock to check; only --force replaces it
        if only_if_empty:
            return False
        os.replace(tmp_name, target)
        return True
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return False
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # held: a drop7 play --out is running
                return False
            except OSError:  # no locks on this file system (ENOLCK, ...): nothing to check
                pass
        if not os.path.samestat(st, os.stat(target)) or (only_if_empty and st.st_size != 0):
            return False
        if fcntl is not None:
            os.replace(tmp_name, target)
            return True
    finally:
        os.close(fd)
    os.replace(tmp_name, target)  # (no fcntl: checked above, renamed once closed)
    return True


if __name__ == "__main__":
    sys.exit(main())
