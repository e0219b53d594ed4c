//! Output files and streams of the cohort tools: `--plot`, `merge OUT` and
//! `bench --out` never replace a symlink, FIFO, device or directory, nor an
//! input (`merge`'s shards, `bench`'s roots and leaf files); `merge`
//! respects a running writer's lock and accepts empty shards; `summary`
//! refuses a game counted twice; stdout failures say so.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{drop7, mkfifo, ok_output as ok, s};

/// Runs a command that must fail (status 1) with one `error: …` line
/// containing every `needle`.
fn fails(args: &[&str], needles: &[&str]) -> String {
    let out = drop7(args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "drop7 {args:?}: {err}");
    let line = err.lines().last().unwrap_or_default().to_string();
    assert!(line.starts_with("error: "), "drop7 {args:?}: {err}");
    for n in needles {
        assert!(line.contains(n), "drop7 {args:?}: {line:?} lacks {n:?}");
    }
    line
}

fn scratch(name: &str) -> PathBuf {
    common::scratch_in("outputs", name)
}

fn cohort(dir: &Path) -> PathBuf {
    let f = dir.join("c.jsonl");
    ok(&["play", "--games", "4", "--policy", "random", "--out", s(&f)]);
    f
}

/// A copy of `f` beside it (`compare` refuses one file given twice).
fn copy_of(f: &Path) -> PathBuf {
    let c = f.with_file_name("copy.jsonl");
    std::fs::copy(f, &c).unwrap();
    c
}

#[test]
fn plot_and_merge_refuse_what_is_not_a_regular_file() {
    let dir = scratch("special");
    let c = cohort(&dir);
    // Not .svg: refused before anything is written.
    let png = dir.join("center.png");
    fails(
        &["summary", s(&c), "--plot", s(&png)],
        &["--plot", "center.png", "SVG"],
    );
    fails(
        &["compare", s(&c), s(&copy_of(&c)), "--plot", s(&png)],
        &["center.png", "SVG"],
    );
    assert!(!png.exists());
    // A directory named like a picture is not replaced.
    let d = dir.join("d.svg");
    std::fs::create_dir(&d).unwrap();
    fails(
        &["summary", s(&c), "--plot", s(&d)],
        &["--plot", "d.svg is not a regular file"],
    );
    assert!(d.is_dir());
    // A FIFO stays a FIFO (no reader: opening it would block).
    let fifo = dir.join("f.svg");
    mkfifo(&fifo);
    fails(
        &["compare", s(&c), s(&copy_of(&c)), "--plot", s(&fifo)],
        &["f.svg is not a regular file"],
    );
    fails(
        &["merge", "--force", s(&fifo), s(&c)],
        &["f.svg is not a regular file"],
    );
    // A whole cohort (a merged file) among shards: said as such (it said
    // "other shards are of 1").
    let parts: Vec<PathBuf> = (1..=2)
        .map(|i| {
            let p = dir.join(format!("part{i}.jsonl"));
            let sh = format!("{i}/2");
            ok(&[
                "play",
                "--games",
                "4",
                "--shard",
                &sh,
                "--out",
                s(&p),
                "--quiet",
            ]);
            p
        })
        .collect();
    let whole = dir.join("whole.jsonl");
    ok(&["merge", s(&whole), s(&parts[0]), s(&parts[1])]);
    let mixed = dir.join("mixed.jsonl");
    fails(
        &["merge", s(&mixed), s(&whole), s(&parts[0])],
        &["part1.jsonl line 1 is shard 1/2 but an earlier file holds a whole cohort"],
    );
    fails(
        &["merge", s(&mixed), s(&parts[0]), s(&whole)],
        &[
            "whole.jsonl line 1 holds a whole cohort",
            "the files before it are shards of 2",
        ],
    );
    // A shard is read twice: a pipe as a shard is refused (it was read as
    // empty the second time), and so is OUT linked to a pipe.
    let merged = dir.join("m.jsonl");
    fails(
        &["merge", s(&merged), s(&c), s(&fifo)],
        &[
            "shard",
            "f.svg is not a regular file (merge reads each shard twice",
        ],
    );
    let to_pipe = dir.join("to-pipe.jsonl");
    std::os::unix::fs::symlink(&fifo, &to_pipe).unwrap();
    fails(
        &["merge", "--force", s(&to_pipe), s(&c)],
        &["to-pipe.jsonl is not a regular file"],
    );
    assert!(!merged.exists());
    fails(
        &["bench", "--suite", "engine", "--quick", "--out", s(&fifo)],
        &["--out", "f.svg is not a regular file"],
    );
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    // A device is not replaced (the refusal comes before any write).
    fails(
        &["merge", "--force", "/dev/null", s(&c)],
        &["/dev/null is not a regular file"],
    );
    // A symlink is kept; the file it points to gets the picture.
    let real = dir.join("real.svg");
    std::fs::write(&real, "<svg>old</svg>").unwrap();
    let link = dir.join("link.svg");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    ok(&["summary", s(&c), "--plot", s(&link)]);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(std::fs::read_to_string(&real).unwrap().starts_with("<svg"));
    // A symlink to a directory is refused.
    let dlink = dir.join("dlink.svg");
    std::os::unix::fs::symlink(&d, &dlink).unwrap();
    fails(
        &["summary", s(&c), "--plot", s(&dlink)],
        &["dlink.svg is not a regular file"],
    );
}

#[test]
fn merge_respects_a_running_writers_lock() {
    use fs4::fs_std::FileExt;
    let dir = scratch("lock");
    let c = cohort(&dir);
    let out = dir.join("all.jsonl");
    std::fs::write(&out, "being written\n").unwrap();
    // The lock `play --out` holds while it writes.
    let held = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&out)
        .unwrap();
    assert!(held.try_lock_exclusive().unwrap());
    fails(
        &["merge", "--force", s(&out), s(&c)],
        &["all.jsonl is being written by another drop7 (locked)"],
    );
    // Without --force too: the lock is named, not "add --force" (which
    // would not help).
    fails(
        &["merge", s(&out), s(&c)],
        &["all.jsonl is being written by another drop7 (locked)"],
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "being written\n");
    drop(held);
    ok(&["merge", "--force", s(&out), s(&c)]);
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        std::fs::read_to_string(&c).unwrap()
    );
}

/// `merge OUT` naming one of its shards, under any name (the same path, a
/// symlink, `./x/../p`, a hard link), with or without `--force`, is refused
/// naming both, and the shard is kept.
#[test]
fn merge_refuses_an_out_that_is_a_shard() {
    let dir = scratch("merge-same");
    std::fs::create_dir(dir.join("x")).unwrap();
    let p = |i: u32| dir.join(format!("p{i}.jsonl"));
    let shards = [p(1), p(2), p(3)];
    for i in 1..=3 {
        let sh = format!("{i}/3");
        ok(&[
            "play",
            "--games",
            "6",
            "--policy",
            "random",
            "--shard",
            &sh,
            "--out",
            s(&p(i)),
        ]);
    }
    let before: Vec<Vec<u8>> = (1..=3).map(|i| std::fs::read(p(i)).unwrap()).collect();
    let link = dir.join("link.jsonl");
    std::os::unix::fs::symlink(p(1), &link).unwrap();
    let hard = dir.join("hard.jsonl");
    std::fs::hard_link(p(3), &hard).unwrap();
    let dotted = dir.join("x").join("..").join("p2.jsonl");
    for (out, shard) in [
        (p(1), p(1)),
        (link, p(1)),
        (dotted, p(2)),
        (hard.clone(), p(3)),
    ] {
        for force in [true, false] {
            let mut a = vec!["merge"];
            if force {
                a.push("--force");
            }
            a.push(s(&out));
            a.extend(shards.iter().map(|f| s(f)));
            let err = fails(
                &a,
                &[
                    "name the same file",
                    "would replace that shard",
                    "nothing was written",
                ],
            );
            assert!(err.contains(s(&shard)) && err.contains(s(&out)), "{err}");
            assert!(!err.contains("--force"), "{err}");
        }
    }
    for i in 1..=3 {
        assert_eq!(std::fs::read(p(i)).unwrap(), before[i as usize - 1]);
    }
    assert_eq!(std::fs::read(&hard).unwrap(), before[2]);
    ok(&[
        "merge",
        s(&dir.join("all.jsonl")),
        s(&p(1)),
        s(&p(2)),
        s(&p(3)),
    ]);
}

/// A `--plot` picture naming one of the record files read (a record file
/// called `.svg`, a symlink, a hard link) is refused before anything is
/// written, naming both, and the records are kept.
#[test]
fn a_plot_over_a_record_file_is_refused() {
    let dir = scratch("plot-same");
    let c = cohort(&dir);
    let sv = dir.join("sv.svg");
    std::fs::copy(&c, &sv).unwrap();
    let records = std::fs::read(&c).unwrap();
    let err = fails(
        &["summary", s(&sv), "--plot", s(&sv)],
        &[
            "--plot and the record file name the same file",
            "sv.svg",
            "nothing was written",
        ],
    );
    assert!(err.contains("would replace its records"), "{err}");
    let dotted = dir.join(".").join("sv.svg");
    fails(
        &["summary", s(&c), s(&sv), "--plot", s(&dotted)],
        &["--plot", "the record file", "sv.svg", "name the same file"],
    );
    fails(
        &["compare", s(&c), s(&sv), "--plot", s(&sv)],
        &["--plot and CANDIDATE name the same file", "sv.svg"],
    );
    fails(
        &["compare", s(&sv), s(&c), "--plot", s(&dotted)],
        &["--plot", "and BASE", "sv.svg", "name the same file"],
    );
    let hard = dir.join("hard.svg");
    std::fs::hard_link(&c, &hard).unwrap();
    fails(
        &["summary", s(&c), "--plot", s(&hard)],
        &["hard.svg and the record file", "c.jsonl name the same file"],
    );
    let link = dir.join("link.svg");
    std::os::unix::fs::symlink(&c, &link).unwrap();
    fails(
        &["compare", s(&sv), s(&c), "--plot", s(&link)],
        &["link.svg and CANDIDATE", "name the same file"],
    );
    assert_eq!(std::fs::read(&sv).unwrap(), records);
    assert_eq!(std::fs::read(&c).unwrap(), records);
    // Another picture name is fine.
    ok(&["summary", s(&sv), "--plot", s(&dir.join("ok.svg"))]);
}

/// `bench --out` naming one of its input files (under any spelling), read
/// by the suite run or not, is refused before anything is measured: the
/// file is unchanged.
#[test]
fn bench_refuses_an_out_that_is_an_input() {
    let dir = scratch("bench-input");
    let roots = dir.join("roots.txt");
    let leaf = dir.join("leaf.jsonl");
    std::fs::write(
        &roots,
        "s 0000000000000000000000000000000000000000008888888 4 5 1 0\n",
    )
    .unwrap();
    std::fs::write(&leaf, "{}\n").unwrap();
    let dotted = dir.join(".").join("roots.txt");
    for (suite, out, needles) in [
        (
            "search",
            &dotted,
            ["--out", "--roots-file", "name the same file"],
        ),
        (
            "engine",
            &roots,
            ["--out", "--roots-file", "name the same file"],
        ),
        (
            "engine",
            &leaf,
            ["--out", "--leaf-file", "name the same file"],
        ),
    ] {
        fails(
            &[
                "bench",
                "--quick",
                "--suite",
                suite,
                "--roots-file",
                s(&roots),
                "--leaf-file",
                s(&leaf),
                "--out",
                s(out),
            ],
            &needles,
        );
    }
    assert_eq!(
        std::fs::read_to_string(&roots).unwrap(),
        "s 0000000000000000000000000000000000000000008888888 4 5 1 0\n"
    );
    assert_eq!(std::fs::read_to_string(&leaf).unwrap(), "{}\n");
}

#[test]
fn merge_accepts_empty_shards() {
    let dir = scratch("empty");
    let shard = |i: u32| dir.join(format!("es{i}.jsonl"));
    for i in 1..=3 {
        let sh = format!("{i}/3");
        ok(&[
            "play",
            "--games",
            "2",
            "--policy",
            "random",
            "--shard",
            &sh,
            "--out",
            s(&shard(i)),
        ]);
    }
    assert_eq!(std::fs::metadata(shard(1)).unwrap().len(), 0);
    let all = dir.join("all.jsonl");
    let o = ok(&["merge", s(&all), s(&shard(1)), s(&shard(2)), s(&shard(3))]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("note: "));
    let single = dir.join("single.jsonl");
    ok(&[
        "play",
        "--games",
        "2",
        "--policy",
        "random",
        "--out",
        s(&single),
    ]);
    let strip = |p: &Path| -> Vec<serde_json::Value> {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                for k in ["wallMs", "decisionMsP50", "decisionMsP95", "decisionMsP99"] {
                    v.as_object_mut().unwrap().remove(k);
                }
                v
            })
            .collect()
    };
    assert_eq!(strip(&all), strip(&single));
    // A gap is still named with an empty shard given.
    fails(
        &["merge", s(&dir.join("m.jsonl")), s(&shard(1)), s(&shard(3))],
        &["missing games", "shard 2/3", "0x00000001"],
    );
    // Only empty files: nothing to merge.
    fails(
        &["merge", s(&dir.join("m.jsonl")), s(&shard(1))],
        &["es1.jsonl", "empty"],
    );
    assert!(!dir.join("m.jsonl").exists());
}

#[test]
fn summary_refuses_a_game_counted_twice() {
    let dir = scratch("dup");
    let c = cohort(&dir);
    fails(&["summary", s(&c), s(&c)], &["c.jsonl is given twice"]);
    let hard = dir.join("hard.jsonl");
    std::fs::hard_link(&c, &hard).unwrap();
    fails(
        &["summary", s(&c), s(&hard)],
        &["hard.jsonl is given twice (also as", "c.jsonl"],
    );
    let text = std::fs::read_to_string(&c).unwrap();
    let first = text.lines().next().unwrap();
    let rep = dir.join("rep.jsonl");
    std::fs::write(&rep, format!("{text}{first}\n")).unwrap();
    fails(
        &["summary", s(&rep)],
        &[
            "rep.jsonl line 5",
            "seed 0x00000001",
            "already at",
            "line 1",
        ],
    );
    let other = dir.join("other.jsonl");
    std::fs::write(&other, format!("{first}\n")).unwrap();
    fails(
        &["summary", s(&c), s(&other)],
        &["other.jsonl line 1", "already at", "c.jsonl line 1"],
    );
    // A pipe cannot be read again to find the first copy: said so (it
    // said `already at ? line 0`, or named the repeated line itself).
    let mut child = Command::new(env!("CARGO_BIN_EXE_drop7"))
        .args(["summary", "/dev/stdin", s(&c)])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("c.jsonl line 1: seed 0x00000001 already at an earlier line or file (a pipe among the inputs cannot be read again to say where)"),
        "{err}"
    );
    // A named pipe is not opened again either (that waited for ever for a
    // writer). A hang guard, not a timing check: 60 s.
    let fifo = dir.join("dup.fifo");
    mkfifo(&fifo);
    let writer = {
        let (fifo, text) = (fifo.clone(), format!("{text}{first}\n"));
        std::thread::spawn(move || std::fs::write(fifo, text))
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_drop7"))
        .args(["summary", s(&fifo)])
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            panic!("summary of a named pipe with a repeated game did not end");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    writer.join().unwrap().unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("dup.fifo line 5: seed 0x00000001 already at an earlier line or file"),
        "{err}"
    );
}

#[test]
fn stdout_failures_are_named() {
    let dir = scratch("full");
    let c = cohort(&dir);
    let c2 = copy_of(&c);
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    for args in [
        vec!["summary", s(&c)],
        vec!["summary", s(&c), "--json"],
        vec!["compare", s(&c), s(&c2)],
        vec!["compare", s(&c), s(&c2), "--json"],
        vec!["show", "--plain", "--seed", "1", "--policy", "random"],
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_drop7"))
            .args(&args)
            .stdout(full())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.starts_with("error: writing to stdout: "),
            "{args:?}: {err}"
        );
    }
}

/// `bench --out` and `--plot` replace a previous output of their own kind
/// (a rerun), but not a file of other data (a record file given by
/// mistake) nor one a running `play` holds locked; the file is kept.
#[test]
fn outputs_do_not_replace_other_data_or_a_locked_file() {
    use fs4::fs_std::FileExt;
    let dir = scratch("foreign");
    let c = cohort(&dir);
    let records = std::fs::read_to_string(&c).unwrap();
    let bench = |out: &Path| {
        drop7(&[
            "bench",
            "--suite",
            "engine",
            "--quick",
            "--games",
            "8",
            "--reference-games",
            "2",
            "--out",
            s(out),
        ])
    };
    let b = bench(&c);
    assert_eq!(b.status.code(), Some(1));
    let err = String::from_utf8_lossy(&b.stderr);
    assert!(
        err.contains("c.jsonl exists and is not a drop7 bench report"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&c).unwrap(), records);
    // A report is replaced by the next run's.
    let report = dir.join("bench.json");
    assert!(bench(&report).status.success());
    assert!(bench(&report).status.success());
    // A picture name holding other text is kept; an SVG is replaced.
    let other = dir.join("notes.svg");
    std::fs::write(&other, "my notes\n").unwrap();
    fails(
        &["summary", s(&c), "--plot", s(&other)],
        &["--plot", "notes.svg exists and is not an SVG picture"],
    );
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "my notes\n");
    let svg = dir.join("scores.svg");
    ok(&["summary", s(&c), "--plot", s(&svg)]);
    ok(&["summary", s(&c), "--plot", s(&svg)]);
    // Locked by a writer: refused, even an SVG or a report.
    for f in [&svg, &report] {
        let before = std::fs::read(f).unwrap();
        let held = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(f)
            .unwrap();
        assert!(held.try_lock_exclusive().unwrap());
        let run = if f == &svg {
            drop7(&["summary", s(&c), "--plot", s(f)])
        } else {
            bench(f)
        };
        assert_eq!(run.status.code(), Some(1));
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(
            err.contains("is being written by another drop7 (locked)"),
            "{err}"
        );
        assert_eq!(std::fs::read(f).unwrap(), before);
    }
}

/// A FIFO as `--out` is written only while a reader has it open (no
/// reader: refused at once, rather than records lost in its buffer and the
/// run blocked); a FIFO in a tape's place is refused even with --force.
#[test]
fn fifos_without_a_reader_are_refused() {
    let dir = scratch("fifo-out");
    let fifo = dir.join("records.jsonl");
    mkfifo(&fifo);
    fails(
        &["play", "--games", "2", "--out", s(&fifo)],
        &["--out", "records.jsonl is a FIFO with no reader"],
    );
    // With a reader, the records go through it.
    let reader = std::thread::spawn({
        let fifo = fifo.clone();
        move || std::fs::read_to_string(fifo).unwrap()
    });
    // (The reader's open blocks until the writer's; retry while it is not there yet.)
    let mut done = false;
    for _ in 0..200 {
        let o = drop7(&["play", "--games", "2", "--quiet", "--out", s(&fifo)]);
        if o.status.success() {
            done = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(done, "no run reached the FIFO's reader");
    assert_eq!(reader.join().unwrap().lines().count(), 2);
    let tapes = dir.join("tapes");
    std::fs::create_dir(&tapes).unwrap();
    mkfifo(&tapes.join("0x00000001.tape.json"));
    for force in [false, true] {
        let mut args = vec!["play", "--games", "1", "--tapes", s(&tapes)];
        if force {
            args.push("--force");
        }
        fails(&args, &["0x00000001.tape.json is not a regular file"]);
    }
    // A symlink in a tape's place is refused too: the tape would replace
    // the file it points to (here a record file outside the folder).
    let elsewhere = dir.join("records-elsewhere.jsonl");
    std::fs::write(&elsewhere, "kept\n").unwrap();
    let linked = dir.join("linked");
    std::fs::create_dir(&linked).unwrap();
    std::os::unix::fs::symlink(&elsewhere, linked.join("0x00000001.tape.json")).unwrap();
    fails(
        &["play", "--games", "1", "--tapes", s(&linked), "--force"],
        &["0x00000001.tape.json is a symlink"],
    );
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "kept\n");
}
