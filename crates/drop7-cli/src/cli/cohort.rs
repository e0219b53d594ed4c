//! Cohort tools over record files (`drop7 play --out`): `merge` joins the
//! shards of one run, `summary` describes a cohort, `compare` pairs two
//! cohorts seed by seed. Record files are streamed; memory does not grow with
//! the number of games (see [`Dist`] for the quantile sketch and its error).

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use drop7::formats::{GameRecord, seed_hex};
use drop7::records::{
    RecordLines, identity_difference, parse_record_line, parse_shard, record_seed, shard_range,
};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rayon::prelude::*;
use serde_json::json;

use super::same::{both_name, same_file};

/// Reads the records of `path` one by one; errors name the file and line.
/// An empty file is refused.
fn for_each_record(path: &Path, f: impl FnMut(u64, GameRecord) -> Result<()>) -> Result<u64> {
    let line = for_each_record_or_none(path, f)?;
    if line == 0 {
        bail!("{} is empty: no game records", path.display());
    }
    Ok(line)
}

/// [`for_each_record`], but an empty file is fine (0 records).
fn for_each_record_or_none(
    path: &Path,
    mut f: impl FnMut(u64, GameRecord) -> Result<()>,
) -> Result<u64> {
    let shown = path.display();
    let file = File::open(path).with_context(|| format!("cannot open {shown}"))?;
    let mut lines = RecordLines::new(BufReader::with_capacity(1 << 16, file));
    let mut line = 0u64;
    while let Some(l) = lines
        .next_line()
        .with_context(|| format!("cannot read {shown}"))?
    {
        line = l.number;
        let text = l
            .text()
            .ok_or_else(|| anyhow!("{shown} line {line}: {}", super::not_utf8(l.bytes)))?;
        if !l.complete {
            bail!(
                "{shown} line {line}: incomplete last record (no newline): an interrupted run? finish it with play --resume"
            );
        }
        let rec = parse_record_line(text).map_err(|e| anyhow!("{shown} line {line}: {e}"))?;
        f(line, rec)?;
    }
    Ok(line)
}

/// Where a file written whole (temporary file, then rename) really goes:
/// `out` itself, or the file a symlink at `out` points to (the link is kept).
/// Refuses anything but a regular file or a new name (a directory, FIFO or
/// device would be replaced by the rename). `label` names the option
/// (`"--plot "`, or `""` for a positional argument).
pub(crate) fn output_target(label: &str, out: &Path) -> Result<PathBuf> {
    let shown = out.display();
    let meta = match std::fs::symlink_metadata(out) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out.to_path_buf()),
        Err(e) => return Err(e).with_context(|| format!("cannot inspect {label}{shown}")),
    };
    if meta.file_type().is_symlink() {
        if names_a_descriptor(out) {
            bail!(
                "{label}{shown} names an open file descriptor (a link through /dev or /proc, such as /dev/stdout), not a file: replacing the file behind it would lose what was written there; name the file itself (nothing was written)"
            );
        }
        let real = std::fs::canonicalize(out).map_err(|e| {
            // A link to a pipe or socket (`/dev/stdout` in a pipeline) has
            // a target, with no path to resolve to.
            if std::fs::metadata(out).is_ok_and(|m| !m.is_file()) {
                anyhow!("{label}{shown} is not a regular file (a symlink to a pipe, socket or device): nothing was written")
            } else {
                anyhow!("{label}{shown} is a symlink whose target cannot be resolved ({e}): nothing was written")
            }
        })?;
        let m = std::fs::metadata(&real)
            .with_context(|| format!("cannot inspect {}", real.display()))?;
        if !m.is_file() {
            bail!(
                "{label}{shown} is not a regular file (a symlink to {}): nothing was written",
                real.display()
            );
        }
        return Ok(real);
    }
    if !meta.is_file() {
        bail!("{label}{shown} is not a regular file: nothing was written");
    }
    Ok(out.to_path_buf())
}

/// Whether the symlink `out`, or a link it leads through, lies in `/dev` or
/// under `/proc`: `/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1` (a
/// process's descriptor, whose file a rename would replace: `merge --force
/// /dev/stdout >> FILE` would lose FILE's lines). A link in `/dev/shm` and
/// a regular file anywhere are not.
fn names_a_descriptor(out: &Path) -> bool {
    let mut link = out.to_path_buf();
    // At most 40 links, as the kernel follows (ELOOP beyond).
    for _ in 0..40 {
        let parent = match link.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if let Ok(dir) = std::fs::canonicalize(&parent)
            && (dir == Path::new("/dev") || dir.starts_with("/proc"))
        {
            return true;
        }
        match std::fs::read_link(&link) {
            Ok(next) => link = parent.join(next),
            Err(_) => return false,
        }
    }
    false
}

/// Refuses a file that another drop7 holds locked (a `play --out` or
/// `--trace` being written): replacing it would lose that run's records.
pub(crate) fn refuse_locked(label: &str, out: &Path) -> Result<()> {
    use fs4::fs_std::FileExt;
    if File::open(out).is_ok_and(|f| matches!(FileExt::try_lock_shared(&f), Ok(false))) {
        bail!(
            "{label}{} is being written by another drop7 (locked): nothing was changed",
            out.display()
        );
    }
    Ok(())
}

/// Refuses to replace an existing non-empty `out` whose first bytes do not
/// look like this command's own output (`ours`, e.g. an SVG picture or a
/// bench report): an output name that is by mistake a record file or any
/// other data is kept. A previous output of the same kind is replaced, as
/// a rerun expects.
pub(crate) fn refuse_foreign(
    label: &str,
    out: &Path,
    what: &str,
    ours: impl Fn(&[u8]) -> bool,
) -> Result<()> {
    use std::io::Read;
    let Ok(file) = File::open(out) else {
        return Ok(());
    };
    let mut head = Vec::with_capacity(256);
    if file.take(256).read_to_end(&mut head).is_err() || head.is_empty() {
        return Ok(());
    }
    let start = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(head.len());
    if !ours(&head[start..]) {
        bail!(
            "{label}{} exists and is not {what}: nothing was written (remove it or choose another name)",
            out.display()
        );
    }
    Ok(())
}

/// Whether `head` (an existing file's first bytes) begins an SVG picture.
pub(crate) fn looks_svg(head: &[u8]) -> bool {
    head.starts_with(b"<svg") || head.starts_with(b"<?xml")
}

/// Refuses a `--plot` name that does not end in `.svg` (the picture is SVG),
/// or that is not a regular file.
fn check_plot(plot: &Path) -> Result<()> {
    let svg = plot
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
    if !svg {
        bail!(
            "--plot {}: the picture is SVG: give a FILE.svg name (nothing was written)",
            plot.display()
        );
    }
    // A missing folder is named now, before any file is read.
    if let Some(why) = missing_folder(plot) {
        bail!(
            "cannot create --plot {}: {why} (nothing was written)",
            plot.display()
        );
    }
    output_target("--plot ", plot).map(|_| ())
}

/// Why a file cannot be made at `path` because of its folder: the folder is
/// missing or is not a folder (`None` when it is one, or `path` has none).
pub(crate) fn missing_folder(path: &Path) -> Option<String> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty())?;
    if dir.is_dir() {
        return None;
    }
    Some(format!(
        "{} {}",
        dir.display(),
        if dir.exists() {
            "is not a folder"
        } else {
            "is not an existing folder"
        }
    ))
}

/// After [`check_plot`] and the check that the picture is none of the
/// inputs: an existing `--plot` file must be an earlier picture, not other
/// data, and not one being written by another drop7.
fn check_plot_replaceable(plot: &Path) -> Result<()> {
    refuse_locked("--plot ", plot)?;
    refuse_foreign("--plot ", plot, "an SVG picture", looks_svg)
}

/// Writes a whole text report to stdout; a failure says so.
fn write_stdout(text: &[u8]) -> Result<()> {
    let mut o = io::stdout().lock();
    o.write_all(text)
        .and_then(|()| o.flush())
        .context("writing to stdout")
}

/// Writes `write`'s output to a temporary file beside `out`, then renames it
/// over `out` (a reader never sees a half-written file; on error `out` is
/// unchanged).
pub(crate) fn write_whole(
    label: &str,
    out: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> Result<()>,
) -> Result<()> {
    let shown = out.display();
    if let Some(why) = missing_folder(out) {
        bail!("cannot create {label}{shown}: {why} (nothing was written)");
    }
    let real = output_target(label, out)?;
    let dir = match real.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = real
        .file_name()
        .ok_or_else(|| anyhow!("{shown} is not a file name"))?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        // Errors name the option and the user's path, not the temporary file.
        let file = File::create(&tmp).with_context(|| format!("cannot create {label}{shown}"))?;
        let mut w = BufWriter::with_capacity(1 << 16, file);
        write(&mut w)?;
        w.flush()
            .with_context(|| format!("writing {label}{shown}"))?;
        w.get_ref()
            .sync_all()
            .with_context(|| format!("writing {label}{shown}"))?;
        std::fs::rename(&tmp, &real).with_context(|| format!("cannot rename onto {shown}"))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Opens and locks an existing `out` (the lock `play --out` holds while it
/// writes); refuses a file locked by another drop7. The lock lasts as long
/// as the returned file.
fn lock_existing(out: &Path) -> Result<Option<File>> {
    use fs4::fs_std::FileExt;
    let real = output_target("", out)?;
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&real)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot open {}", out.display())),
    };
    match file.try_lock_exclusive() {
        Ok(true) => Ok(Some(file)),
        Ok(false) => bail!(
            "{} is being written by another drop7 (locked): nothing was changed",
            out.display()
        ),
        Err(e) => Err(e).with_context(|| format!("cannot lock {}", out.display())),
    }
}

/// Refuses an output (`out_label` `out`: `OUT`, `--plot`) that is the same
/// file as one of the `inputs` (label, path), under any name (`./x/../f`, a
/// symlink, a hard link), before anything is read or written: `harm` says
/// what writing it would do.
fn refuse_output_is_input(
    out_label: &str,
    out: &Path,
    inputs: &[(&str, &Path)],
    harm: &str,
) -> Result<()> {
    if let Some((label, input)) = inputs.iter().find(|(_, p)| same_file(out, p)) {
        bail!(
            "{}: {harm} (nothing was written)",
            both_name(out_label, out, label, input)
        );
    }
    Ok(())
}

fn refuse_existing(out: &Path, force: bool) -> Result<()> {
    // A file that a running `play` holds is named as such first: --force
    // would not help there.
    refuse_locked("", out)?;
    if !force && std::fs::metadata(out).is_ok_and(|m| m.len() > 0) {
        bail!(
            "{} exists and is not empty: add --force to overwrite it (nothing was changed)",
            out.display()
        );
    }
    Ok(())
}

// ---------------------------------------------------------------- merge

/// Options of `drop7 merge`.
#[derive(Args, Debug)]
#[command(after_help = "Example:\n  \
    for i in 1 2 3; do drop7 play --games 300 --shard $i/3 --out part$i.jsonl; done\n  \
    drop7 merge all.jsonl part1.jsonl part2.jsonl part3.jsonl")]
pub struct MergeArgs {
    /// The merged record file (written whole: temporary file, then rename).
    out: PathBuf,
    /// The shard files (`play --shard I/N --out …`), in any order.
    #[arg(required = true)]
    shards: Vec<PathBuf>,
    /// Overwrite a non-empty OUT.
    #[arg(long)]
    force: bool,
}

/// What the first pass learnt about one shard file.
struct ShardFile {
    path: PathBuf,
    index: u64,
    count: u64,
}

/// Runs `drop7 merge`: checks the shards are one run's, disjoint and complete,
/// then writes their records in seed order without the `shard` field.
pub fn run_merge(args: &MergeArgs) -> Result<()> {
    let inputs: Vec<(&str, &Path)> = args
        .shards
        .iter()
        .map(|p| ("the shard", p.as_path()))
        .collect();
    refuse_output_is_input(
        "OUT",
        &args.out,
        &inputs,
        "the merged file would replace that shard",
    )?;
    output_target("", &args.out)?;
    refuse_existing(&args.out, args.force)?;
    let given: Vec<&Path> = args.shards.iter().map(PathBuf::as_path).collect();
    refuse_given_twice(&given, "each shard is merged once")?;
    // Each shard is read twice (checked, then copied): a pipe (`<(zcat …)`)
    // would be empty the second time.
    for path in &args.shards {
        if let Ok(m) = std::fs::metadata(path)
            && !m.is_file()
        {
            bail!(
                "shard {} is not a regular file (merge reads each shard twice; a pipe or device cannot be): give a file (nothing was written)",
                path.display()
            );
        }
    }
    let mut reference: Option<(GameRecord, String)> = None;
    let mut total_shards: Option<u64> = None;
    let mut files: Vec<ShardFile> = Vec::new();
    let mut empty: Vec<String> = Vec::new();
    for path in &args.shards {
        let shown = path.display().to_string();
        let mut this: Option<(u64, u64, u32)> = None; // (i, n, first seed)
        let mut count = 0u64;
        let lines = for_each_record_or_none(path, |line, rec| {
            let at = format!("{shown} line {line}");
            let Some(games) = rec.cohort_games else {
                if let Some(round) = &rec.round {
                    bail!(
                        "{at}: a scripted-round record (round {round}, from `play --round`), not a cohort shard: merge joins the shard files of one `play --shard I/N` run (summary and compare read round records)"
                    );
                }
                bail!(
                    "{at}: the record has no cohortGames (written by an older drop7); cannot merge it"
                );
            };
            if let Some(why) = too_many_games(games) {
                bail!("{at}: {why}");
            }
            let shard = rec.shard.as_deref().unwrap_or("1/1");
            let (i, n) = parse_shard(shard).map_err(|e| anyhow!("{at}: {e}"))?;
            match &reference {
                None => reference = Some((rec.clone(), at.clone())),
                Some((r, where_)) => {
                    if let Some((field, found, want)) = identity_difference(r, &rec) {
                        let (found, want) = (super::shown(&found), super::shown(&want));
                        bail!(
                            "{at} belongs to another run: {field} is {found} there but {want} in {where_}"
                        );
                    }
                }
            }
            match total_shards {
                None => total_shards = Some(n),
                // (A record without `shard` is of a whole cohort: 1/1.)
                Some(1) if n != 1 => bail!(
                    "{at} is shard {shard} but an earlier file holds a whole cohort (no shard field, or 1/1: a merged or unsharded run): merge joins the shards of one split"
                ),
                Some(m) if m != n && n == 1 => bail!(
                    "{at} holds a whole cohort (no shard field, or 1/1: a merged or unsharded run) but the files before it are shards of {m}: merge joins the shards of one split"
                ),
                Some(m) if m != n => bail!(
                    "{at} is shard {shard} but other shards are of {m}: shards of different splits"
                ),
                _ => {}
            }
            let seed = record_seed(&rec).map_err(|e| anyhow!("{at}: {e}"))?;
            match this {
                None => this = Some((i, n, seed)),
                Some((ti, _, _)) if ti != i => {
                    bail!("{at} is shard {i}/{n} but the file's first record is shard {ti}/{n}")
                }
                _ => {}
            }
            let start = parse_hex(rec.cohort_seed_start.as_deref())
                .ok_or_else(|| anyhow!("{at}: bad cohortSeedStart"))?;
            let range = shard_range(games, i, n);
            let want = seed_hex(start.wrapping_add((range.start + count) as u32));
            if count >= range.end - range.start {
                bail!(
                    "{at}: shard {i}/{n} has more records than its {}",
                    super::count(range.end - range.start, "game")
                );
            }
            if rec.seed != want {
                bail!(
                    "{at} is game {} but shard {i}/{n}'s game {} is {want} (a gap or a foreign record)",
                    rec.seed,
                    count + 1
                );
            }
            count += 1;
            Ok(())
        })?;
        if lines == 0 {
            // A shard of no games (e.g. shard 1/3 of 2 games) writes an empty
            // file; the gap check below still names any seed not covered.
            empty.push(shown);
            continue;
        }
        let (i, _, _) = this.expect("a non-empty file has a first record");
        files.push(ShardFile {
            path: path.clone(),
            index: i,
            count,
        });
    }
    let Some((reference, _)) = reference else {
        let names: Vec<String> = args
            .shards
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        bail!(
            "{} {} empty: no game records to merge (nothing was written)",
            names.join(", "),
            if names.len() == 1 { "is" } else { "are" }
        );
    };
    for shown in &empty {
        eprintln!("note: {shown} is empty: it adds no games");
    }
    let n = total_shards.unwrap_or(1);
    let games = reference.cohort_games.unwrap_or(0);
    let start = parse_hex(reference.cohort_seed_start.as_deref()).unwrap_or(0);
    files.sort_by_key(|f| f.index);
    for w in files.windows(2) {
        if w[0].index == w[1].index {
            bail!(
                "{} and {} are both shard {}/{n}: overlapping shards",
                w[0].path.display(),
                w[1].path.display(),
                w[0].index
            );
        }
    }
    let mut missing = Vec::new();
    let mut it = files.iter().peekable();
    for i in 1..=n {
        let range = shard_range(games, i, n);
        let have = match it.peek() {
            Some(f) if f.index == i => it.next().map_or(0, |f| f.count),
            _ => 0,
        };
        let want = range.end - range.start;
        if have < want {
            let first = start.wrapping_add((range.start + have) as u32);
            let last = start.wrapping_add((range.end - 1) as u32);
            missing.push(format!(
                "shard {i}/{n}: seeds {}..{} ({})",
                seed_hex(first),
                seed_hex(last),
                super::count(want - have, "game")
            ));
        }
    }
    if !missing.is_empty() {
        bail!(
            "missing games: {} (nothing was written)",
            missing.join("; ")
        );
    }
    // A running `play --out OUT` holds an exclusive lock on OUT: refuse to
    // replace it, and hold the lock ourselves until the rename is done.
    let _lock = lock_existing(&args.out)?;
    write_whole("", &args.out, |w| {
        for f in &files {
            for_each_record(&f.path, |_, mut rec| {
                rec.shard = None;
                serde_json::to_writer(&mut *w, &rec)?;
                w.write_all(b"\n")?;
                Ok(())
            })
            .with_context(|| format!("writing {}", args.out.display()))?;
        }
        Ok(())
    })?;
    // (A failed write is an error, not a panic: `merge … > /dev/full`; the
    // merged file is complete by now.)
    let mut out = io::stdout().lock();
    writeln!(
        out,
        "merged     {} from {} into {}",
        super::count(games, "game"),
        super::count(args.shards.len(), "shard file"),
        args.out.display()
    )
    .and_then(|()| out.flush())
    .context("writing to stdout")?;
    Ok(())
}

fn parse_hex(s: Option<&str>) -> Option<u32> {
    drop7::formats::parse_seed(s?).ok()
}

// ---------------------------------------------------------------- statistics

/// A streaming distribution: exact count, mean (a compensated sum over n:
/// exact and correctly rounded for integer values while their sum stays
/// below 2^53), sample standard deviation (Welford), min and max, and
/// quantiles from a count per value.
/// Values below 2^24 (16,777,216) are kept exactly; larger values share a
/// bucket per 24 significant bits, which stands for the mean of the values
/// in it (exact when they are equal, else within the bucket: relative error
/// below 2^-23 ≈ 1.2e-7), so memory is one map entry per distinct
/// (bucketed) value, never one per game (a 1,000,000-game center cohort has
/// a few thousand distinct scores), and a quantile or bootstrap mean never
/// leaves [min, max] (a cohort of equal scores 16,777,217 has that median
/// and interval, not 16,777,216).
/// Fractional values (milliseconds, mean chain depths) are kept to 0.001.
#[derive(Clone, Debug, Default)]
pub struct Dist {
    n: u64,
    /// Welford's running mean (for `m2` only; [`Dist::mean`] is the sum's).
    wmean: f64,
    m2: f64,
    /// The values' sum and its Neumaier compensation.
    sum: f64,
    sum_comp: f64,
    /// The sum of the values' keys (value × `scale`, an integer below 2^53),
    /// exact; it gives the mean while no value has more decimals than the
    /// scale keeps (`keys_inexact` is then false): the correctly rounded
    /// mean of the decimals as written (0.0478, not 0.047799999999999995).
    key_sum: i128,
    keys_inexact: bool,
    min: f64,
    max: f64,
    counts: BTreeMap<i64, Bucket>,
    scale: f64,
}

/// The values of a [`Dist`] that share one key: how many, and (for a key
/// of 2^24 or more, where values are bucketed) their sum and extremes.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    count: u64,
    sum: f64,
    lo: f64,
    hi: f64,
}

/// A value as its shortest exact decimal (68840.25, 34109), all digits
/// from 2^53 up (18446744073709551616, not 18446744073709552000).
fn exact(v: f64) -> String {
    if v.abs() < 9_007_199_254_740_992.0 {
        format!("{v}")
    } else {
        format!("{v:.0}")
    }
}

fn round_key(v: i64) -> i64 {
    let a = v.unsigned_abs();
    if a < 1 << 24 {
        return v;
    }
    let shift = 64 - a.leading_zeros() - 24;
    let r = ((a >> shift) << shift) as i64;
    // 2^63 itself is i64::MIN, its own key (`wrapping_neg` keeps it).
    if v < 0 { r.wrapping_neg() } else { r }
}

impl Dist {
    /// An integer-valued distribution.
    pub fn integers() -> Dist {
        Dist {
            scale: 1.0,
            ..Dist::default()
        }
    }

    /// A distribution of milliseconds (quantiles to the microsecond).
    pub fn millis() -> Dist {
        Dist {
            scale: 1000.0,
            ..Dist::default()
        }
    }

    /// Adds one value.
    pub fn add(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.wmean;
        self.wmean += d / self.n as f64;
        self.m2 += d * (x - self.wmean);
        let t = self.sum + x;
        self.sum_comp += if self.sum.abs() >= x.abs() {
            (self.sum - t) + x
        } else {
            (x - t) + self.sum
        };
        self.sum = t;
        let k = (x * self.scale).round();
        if k.abs() < 9_007_199_254_740_992.0 && k / self.scale == x {
            self.key_sum += k as i128;
        } else {
            self.keys_inexact = true;
        }
        if self.n == 1 || x < self.min {
            self.min = x;
        }
        if self.n == 1 || x > self.max {
            self.max = x;
        }
        let b = self
            .counts
            .entry(round_key((x * self.scale).round() as i64))
            .or_insert(Bucket {
                count: 0,
                sum: 0.0,
                lo: x,
                hi: x,
            });
        b.count += 1;
        b.sum += x;
        b.lo = b.lo.min(x);
        b.hi = b.hi.max(x);
    }

    /// The value a key stands for: the key itself below 2^24 (exact
    /// integers, or values to 0.001), else the mean of its bucket's values
    /// (kept within their extremes).
    fn value(&self, key: i64, b: &Bucket) -> f64 {
        if key.unsigned_abs() < 1 << 24 {
            key as f64 / self.scale
        } else {
            (b.sum / b.count as f64).clamp(b.lo, b.hi)
        }
    }

    /// The mean (NaN for no values): the exact sum of the keys over n × scale
    /// while every value is a key (integers, and fractional values with at
    /// most the scale's decimals: 0.0478, not 0.047799999999999995), else the
    /// compensated sum over n, so a cohort's mean score is the correctly
    /// rounded quotient (20.875, not Welford's 20.874999999999996).
    ///
    /// Kept within the exact `[min, max]`: the compensation and the division
    /// round once each, so equal fractional values (three ms of 0.1) could
    /// otherwise give a mean one ulp outside them (0.10000000000000002).
    pub fn mean(&self) -> f64 {
        let denominator = self.n as f64 * self.scale;
        let m = if !self.keys_inexact
            && self.key_sum.unsigned_abs() < 1 << 53
            && denominator < 9_007_199_254_740_992.0
        {
            // Both exact: one rounding, of the exact mean of the keys.
            self.key_sum as f64 / denominator
        } else {
            (self.sum + self.sum_comp) / self.n as f64
        };
        if self.n == 0 {
            m
        } else {
            m.clamp(self.min, self.max)
        }
    }

    /// Sample standard deviation (n − 1); `None` (undefined) for fewer than
    /// two values.
    pub fn sd(&self) -> Option<f64> {
        (self.n >= 2).then(|| (self.m2 / (self.n - 1) as f64).sqrt())
    }

    fn kth(&self, k: u64) -> f64 {
        match self.kth_key(k) {
            Some((v, b)) => self.value(v, b),
            None => self.max,
        }
    }

    /// The key and bucket of the k-th smallest value (0-based).
    fn kth_key(&self, k: u64) -> Option<(i64, &Bucket)> {
        let mut seen = 0;
        for (&v, b) in &self.counts {
            seen += b.count;
            if k < seen {
                return Some((v, b));
            }
        }
        None
    }

    /// Quantile `p` in [0, 1] (to 0.0001) with linear interpolation between
    /// order statistics (h = (n − 1)·p; numpy's default, R's type 7); see
    /// [`type7`].
    pub fn quantile(&self, p: f64) -> f64 {
        if self.n == 0 {
            return f64::NAN;
        }
        // Fractional values are kept to 1/scale: a quantile could round
        // just outside the exact extremes, which it never leaves.
        self.quantile_of_keys(p).clamp(self.min, self.max)
    }

    /// [`Dist::quantile`] of the kept (keyed) values, n > 0.
    fn quantile_of_keys(&self, p: f64) -> f64 {
        let (lo, rem) = type7_position(self.n, p);
        if rem == 0 || lo + 1 >= self.n {
            return self.kth(lo);
        }
        match (self.kth_key(lo), self.kth_key(lo + 1)) {
            // Exact keys (values to 1/scale): interpolate the integers and
            // divide once, so 1.929 and 1.930 at g = 0.02 give 1.92902.
            (Some((ka, _)), Some((kb, _)))
                if ka.unsigned_abs().max(kb.unsigned_abs()) < 1 << 24 =>
            {
                type7(ka as f64, kb as f64, rem, self.scale)
            }
            _ => type7(self.kth(lo), self.kth(lo + 1), rem, 1.0),
        }
    }

    /// Percentile-bootstrap means: `resamples` resamples of n values drawn
    /// with replacement from the (bucketed) values, each from its own
    /// ChaCha8 stream of `seed` (reproducible on any thread count); sorted.
    pub fn bootstrap_means(&self, resamples: u32, seed: u64) -> Vec<f64> {
        // (cumulative count up to and including value i, value i): one
        // cache line holds both halves of a draw's lookup.
        let mut acc = 0u64;
        let table: Vec<(u64, f64)> = self
            .counts
            .iter()
            .map(|(&v, b)| {
                acc += b.count;
                (acc, self.value(v, b))
            })
            .collect();
        let n = self.n;
        if n == 0 {
            return Vec::new();
        }
        // Draw u in 0..n picks value i, the first whose cumulative count
        // exceeds u. A guide table finds i in a step or two instead of a
        // binary search (the same i: `guide[u >> shift]` is the index for
        // the bucket's smallest u, and i is at or after it): with one
        // bucket per distinct value or two, a resample of a cohort with
        // many distinct scores (paired deltas) is several times faster.
        let distinct = table.len() as u64;
        let shift = (n / distinct.max(1)).max(1).ilog2();
        let guide: Vec<u32> = (0..=(n - 1) >> shift)
            .map(|j| table.partition_point(|&(c, _)| c <= j << shift) as u32)
            .collect();
        // A long bootstrap (about 10^8 draws take a second or more) shows
        // its resamples on stderr when that is a terminal.
        let bar = (u64::from(resamples).saturating_mul(n) >= 100_000_000).then(|| {
            indicatif::ProgressBar::new(u64::from(resamples)).with_style(
                indicatif::ProgressStyle::with_template(
                    "bootstrap of {msg} [{elapsed_precise}] {wide_bar} {pos}/{len} resamples",
                )
                .expect("a valid template"),
            )
        });
        if let Some(bar) = &bar {
            bar.set_message(super::count(n, "value"));
        }
        let progress = bar.as_ref();
        let mut means: Vec<f64> = (0..resamples)
            .into_par_iter()
            .map(|r| {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                rng.set_stream(u64::from(r));
                let mut sum = 0.0;
                for _ in 0..n {
                    let u = ((u128::from(rng.next_u64()) * u128::from(n)) >> 64) as u64;
                    let mut i = guide[(u >> shift) as usize] as usize;
                    // Two steps without a branch (the usual case: the
                    // draws' loads then overlap instead of waiting on a
                    // mispredicted loop exit each), then the rare rest.
                    // The last entry's count is n > u: i stays in range.
                    i += usize::from(table[i].0 <= u);
                    i += usize::from(table[i].0 <= u);
                    while table[i].0 <= u {
                        i += 1;
                    }
                    sum += table[i].1;
                }
                if let Some(p) = progress {
                    p.inc(1);
                }
                sum / n as f64
            })
            .collect();
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        means.sort_by(f64::total_cmp);
        means
    }

    fn json(&self) -> serde_json::Value {
        if self.n == 0 {
            return serde_json::Value::Null;
        }
        json!({
            "n": self.n,
            "mean": self.mean(),
            "sd": self.sd(),
            "min": self.min,
            "p25": self.quantile(0.25),
            "median": self.quantile(0.5),
            "p75": self.quantile(0.75),
            "p95": self.quantile(0.95),
            "p99": self.quantile(0.99),
            "max": self.max,
        })
    }
}

/// The order statistic below h = (n − 1)·p (0-based) and h's fraction in
/// units of 1/10,000, from p in [0, 1] taken to 0.0001 (every caller's p
/// is a whole number of those), in integers: no rounding of h.
fn type7_position(n: u64, p: f64) -> (u64, u64) {
    debug_assert!(
        (0.0..=1.0).contains(&p) && (p * 10_000.0 - (p * 10_000.0).round()).abs() < 1e-6,
        "quantile p {p} is not a whole number of 0.0001 in [0, 1]"
    );
    let q = (p.clamp(0.0, 1.0) * 10_000.0).round() as u128;
    let h = u128::from(n.saturating_sub(1)) * q;
    ((h / 10_000) as u64, (h % 10_000) as u64)
}

/// (a + g·(b − a)) / scale for g = rem / 10,000, as (a·(10,000 − rem) +
/// b·rem) / (10,000·scale): one rounding for integer a and b below 2^39, so
/// p99 of 5 and 6 at g = 0.61 is 5.61, not 5.609999999999999 (and keys
/// 1929 and 1930 at scale 1000 and g = 0.02 give 1.92902). The same value
/// as the type-7 formula up to that rounding, and never outside
/// [a, b] / scale.
fn type7(a: f64, b: f64, rem: u64, scale: f64) -> f64 {
    let g = rem as f64;
    ((a * (10_000.0 - g) + b * g) / (10_000.0 * scale)).clamp(a.min(b) / scale, a.max(b) / scale)
}

/// Type-7 quantile of sorted values.
fn sorted_quantile(sorted: &[f64], p: f64) -> f64 {
    let (lo, rem) = type7_position(sorted.len() as u64, p);
    let lo = lo as usize;
    if rem == 0 || lo + 1 >= sorted.len() {
        return sorted[lo];
    }
    type7(sorted[lo], sorted[lo + 1], rem, 1.0)
}

/// A `--bootstrap-seed`: decimal or `0x` hex, 0..2^64 − 1.
fn parse_bootstrap_seed(text: &str) -> std::result::Result<u64, String> {
    drop7::formats::parse_decimal_or_hex(text)
        .ok_or_else(|| format!("{text:?} is not a seed: decimal or 0x hex, 0..2^64-1"))
}

/// The fixed seed of every bootstrap (override with `--bootstrap-seed`).
const BOOTSTRAP_SEED: u64 = 0xD7_C0_40_27;

// ---------------------------------------------------------------- summary

/// Options of `drop7 summary`.
#[derive(Args, Debug)]
#[command(after_help = "Example:\n  \
    drop7 play --games 1000 --out center.jsonl && drop7 summary center.jsonl")]
pub struct SummaryArgs {
    /// Record files of one run (`play --out`, `merge`).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Bootstrap resamples for the 95 % confidence interval of the mean score
    /// (1000 to 1000000).
    #[arg(
        long,
        default_value_t = 2000,
        value_name = "B",
        allow_negative_numbers = true
    )]
    resamples: u32,
    /// Seed of the bootstrap's random streams (fixed: results are
    /// reproducible); decimal or 0x hex, 0..2^64-1.
    #[arg(long, default_value_t = BOOTSTRAP_SEED, value_name = "SEED", allow_negative_numbers = true, value_parser = parse_bootstrap_seed)]
    bootstrap_seed: u64,
    /// Also draw the score distribution (ECDF) as an SVG picture.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
}

/// A set of seeds as disjoint ranges: a cohort's contiguous seeds take one
/// entry, not one per game.
#[derive(Default)]
struct SeedSet(BTreeMap<u64, u64>);

impl SeedSet {
    /// Adds `seed`; false if it was already in.
    fn insert(&mut self, seed: u32) -> bool {
        let s = u64::from(seed);
        let before = self.0.range(..=s).next_back().map(|(&a, &b)| (a, b));
        if let Some((_, end)) = before
            && end > s
        {
            return false;
        }
        let after = self.0.get(&(s + 1)).copied();
        let start = match before {
            Some((a, end)) if end == s => a,
            _ => s,
        };
        let end = match after {
            Some(e) => {
                self.0.remove(&(s + 1));
                e
            }
            None => s + 1,
        };
        self.0.insert(start, end);
        true
    }
}

impl SeedSet {
    /// The ranges of `count` seeds from `start` (wrapping past 0xffffffff)
    /// not in the set, as `[from, to)` in seed order.
    fn missing(&self, start: u32, count: u64) -> Vec<(u64, u64)> {
        const ALL: u64 = 1 << 32;
        let (s, e) = (u64::from(start), u64::from(start) + count.min(ALL));
        let parts = if e <= ALL {
            vec![(s, e)]
        } else {
            vec![(s, ALL), (0, e - ALL)]
        };
        let mut gaps = Vec::new();
        for (lo, hi) in parts {
            let mut at = lo;
            for (&a, &b) in &self.0 {
                if b <= at {
                    continue;
                }
                if a >= hi {
                    break;
                }
                if a > at {
                    gaps.push((at, a));
                }
                at = b;
            }
            if at < hi {
                gaps.push((at, hi));
            }
        }
        gaps
    }
}

/// At most this many ranges of missing seeds are named in a note.
const MAX_GAPS_SHOWN: usize = 3;

/// The note of a summary of part of a cohort (records carrying
/// `cohortGames`): how many of its games are here and which seeds are
/// missing; `None` when every game is here or the records do not say.
fn incomplete_note(seen: &SeedSet, reference: &GameRecord) -> Option<String> {
    let games = reference.cohort_games?;
    let gaps = cohort_gaps(seen, reference)?;
    if gaps.is_empty() {
        return None;
    }
    let absent: u64 = gaps.iter().map(|(a, b)| b - a).sum();
    let named: Vec<String> = gaps
        .iter()
        .take(MAX_GAPS_SHOWN)
        .map(|&(a, b)| {
            if b - a == 1 {
                seed_hex(a as u32)
            } else {
                format!(
                    "{}..{} ({})",
                    seed_hex(a as u32),
                    seed_hex((b - 1) as u32),
                    super::count(b - a, "game")
                )
            }
        })
        .collect();
    let mut named = named.join(", ");
    if gaps.len() > MAX_GAPS_SHOWN {
        let more = gaps.len() - MAX_GAPS_SHOWN;
        named = format!("{named} and {more} more {}", super::noun(more, "range"));
    }
    Some(format!(
        "note: {} of the cohort's {} (cohortGames) are here; missing seeds {named}",
        games.saturating_sub(absent),
        super::count(games, "game"),
    ))
}

/// The seed ranges of the cohort (`cohortSeedStart`, `cohortGames` of
/// `reference`) that `seen` lacks; `None` when the records do not say.
fn cohort_gaps(seen: &SeedSet, reference: &GameRecord) -> Option<Vec<(u64, u64)>> {
    let games = reference.cohort_games?;
    let start = parse_hex(reference.cohort_seed_start.as_deref())?;
    Some(seen.missing(start, games))
}

/// Which game a record is of: a seed's, or a scripted round's (two rounds
/// may share a generator seed: the round's id tells them apart, and a
/// round is paired with the same round).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum GameKey {
    Seed(u32),
    Round(String, u32),
}

impl GameKey {
    fn of(rec: &GameRecord, seed: u32) -> GameKey {
        match &rec.round {
            Some(id) => GameKey::Round(id.clone(), seed),
            None => GameKey::Seed(seed),
        }
    }
}

impl std::fmt::Display for GameKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GameKey::Seed(seed) => write!(f, "seed {}", seed_hex(*seed)),
            GameKey::Round(id, _) => write!(f, "round {id:?}"),
        }
    }
}

/// The games already counted: seeds as ranges (a cohort of millions in a
/// few entries), rounds by id and seed with the file and line first seen.
#[derive(Default)]
struct GamesSeen {
    seeds: SeedSet,
    rounds: HashMap<(String, u32), (usize, u64)>,
}

impl GamesSeen {
    /// Adds the game of file `file`, line `line`; `Err(None)` for a seed
    /// seen before (its first line is looked up again), `Err(Some(at))`
    /// for a round seen before at `at` (file index, line).
    fn insert(
        &mut self,
        key: &GameKey,
        file: usize,
        line: u64,
    ) -> Result<(), Option<(usize, u64)>> {
        match key {
            GameKey::Seed(seed) => {
                if self.seeds.insert(*seed) {
                    Ok(())
                } else {
                    Err(None)
                }
            }
            GameKey::Round(id, seed) => match self.rounds.entry((id.clone(), *seed)) {
                std::collections::hash_map::Entry::Occupied(e) => Err(Some(*e.get())),
                std::collections::hash_map::Entry::Vacant(v) => {
                    v.insert((file, line));
                    Ok(())
                }
            },
        }
    }

    /// Where a repeated game, seen again at line `line` of the last of
    /// `files`, was first seen: `FILE line N` (`line N` with `one_file`).
    fn first(
        &self,
        files: &[PathBuf],
        key: &GameKey,
        at: Option<(usize, u64)>,
        line: u64,
        one_file: bool,
    ) -> String {
        let found = match (key, at) {
            (_, Some(first)) => Some(first),
            (GameKey::Seed(seed), None) => first_with_seed(files, *seed, line),
            (GameKey::Round(..), None) => None,
        };
        match found {
            Some((_, n)) if one_file => format!("line {n}"),
            Some((file, n)) => format!("{} line {n}", files[file].display()),
            // Seeds are kept as a set: the place is found by reading the
            // files again, which a pipe (`<(zcat …)`) cannot be.
            None => "an earlier line or file (a pipe among the inputs cannot be read again to say where)"
                .to_string(),
        }
    }
}

/// The first file (index) and line holding `seed` before line `line` of the
/// last of `files` (for the duplicate message).
fn first_with_seed(files: &[PathBuf], seed: u32, line: u64) -> Option<(usize, u64)> {
    let last = files.len().checked_sub(1)?;
    for (i, path) in files.iter().enumerate() {
        // A pipe cannot be read again (and opening a named one whose writer
        // is gone would wait for ever): the place stays unsaid.
        if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
            continue;
        }
        let mut found = None;
        let _ = for_each_record_or_none(path, |n, rec| {
            if i == last && n >= line {
                bail!("not before");
            }
            if found.is_none() && record_seed(&rec).is_ok_and(|s| s == seed) {
                found = Some(n);
                bail!("found");
            }
            Ok(())
        });
        if let Some(n) = found {
            return Some((i, n));
        }
    }
    None
}

/// Refuses a file given twice in `files`, also under another path to the
/// same file (`./h.jsonl`, a symlink or hard link): `why` says what would go
/// wrong.
fn refuse_given_twice(files: &[&Path], why: &str) -> Result<()> {
    // Each file's identity once (a thousand shards: a thousand lookups).
    let mut seen: std::collections::HashMap<super::same::FileKey, usize> =
        std::collections::HashMap::new();
    for (k, path) in files.iter().enumerate() {
        let key = super::same::file_key(path);
        if let Some(&j) = seen.get(&key) {
            if files[j].as_os_str() == path.as_os_str() {
                bail!("{} is given twice: {why}", path.display());
            }
            bail!(
                "{} is given twice (also as {}): {why}",
                path.display(),
                files[j].display()
            );
        }
        seen.insert(key, k);
    }
    Ok(())
}

/// Why `rec`'s seed is not one of the games its `cohortSeedStart` and
/// `cohortGames` name (seeds start..start+games, wrapping past 0xffffffff),
/// or why those fields cannot say (a missing or unreadable
/// `cohortSeedStart`, no games); `None` when the seed is one of them, or when
/// the record names no cohort (scripted rounds, older records) or its seed is
/// unreadable (the callers report that first).
fn outside_cohort(rec: &GameRecord) -> Option<String> {
    let games = rec.cohort_games?;
    if let Some(why) = too_many_games(games) {
        return Some(why);
    }
    let Some(start) = parse_hex(rec.cohort_seed_start.as_deref()) else {
        return Some(match &rec.cohort_seed_start {
            None => format!("the record has cohortGames {games} but no cohortSeedStart"),
            Some(s) => format!("bad cohortSeedStart {s:?} (expected a seed such as 0x00000001)"),
        });
    };
    let seed = record_seed(rec).ok()?;
    if games == 0 {
        return Some(format!(
            "seed {} is not a game of its cohort: cohortGames 0 names no games (an edited or foreign record)",
            rec.seed
        ));
    }
    if u64::from(seed.wrapping_sub(start)) < games {
        return None;
    }
    let last = start.wrapping_add(games.saturating_sub(1).min(u64::from(u32::MAX)) as u32);
    Some(format!(
        "seed {} is not a game of its cohort: cohortSeedStart {} and cohortGames {games} name seeds {}..{} (an edited or foreign record)",
        rec.seed,
        seed_hex(start),
        seed_hex(start),
        seed_hex(last),
    ))
}

/// `cohortGames` above the 2^32 seeds there are (no run writes it: `play`
/// refuses more games): why, naming the value.
fn too_many_games(games: u64) -> Option<String> {
    (games > 1 << 32).then(|| {
        format!(
            "cohortGames {games} is more than the 2^32 seeds there are (an edited or foreign record)"
        )
    })
}

/// Checks that records are of one run: the first record seen is the
/// reference, and every later one must have its driver and identity fields
/// (see [`identity_difference`]). `summary` checks across its files,
/// `compare` within each of its two files.
struct OneRun {
    reference: Option<(GameRecord, String)>,
    /// What to do about two drivers (the end of that message).
    drivers_advice: &'static str,
}

impl OneRun {
    fn new(drivers_advice: &'static str) -> OneRun {
        OneRun {
            reference: None,
            drivers_advice,
        }
    }

    /// Checks `rec`, read at `shown` line `line`: its seed inside its own
    /// cohort (when it names one), then its run against the reference.
    fn check(&mut self, shown: &str, line: u64, rec: &GameRecord) -> Result<()> {
        if let Some(why) = outside_cohort(rec) {
            bail!("{shown} line {line}: {why}");
        }
        let Some((r, where_)) = &self.reference else {
            self.reference = Some((rec.clone(), format!("{shown} line {line}")));
            return Ok(());
        };
        if r.driver != rec.driver {
            bail!(
                "{shown} line {line} was played with driver {} but {where_} with \
                 driver {}: two drivers play different games from the same seeds, \
                 so these are not one cohort; {}",
                super::shown(&rec.driver),
                super::shown(&r.driver),
                self.drivers_advice
            );
        }
        if let Some((field, found, want)) = identity_difference(r, rec) {
            let (found, want) = (super::shown(&found), super::shown(&want));
            bail!(
                "{shown} line {line} belongs to another run: {field} is {found} there but {want} in {where_}"
            );
        }
        Ok(())
    }
}

/// The fewest bootstrap resamples `summary` and `compare` take: with fewer,
/// the percentiles they read (2.5 % and 97.5 %, or 5 %) rest on a handful
/// of resamples, and a single one gives an interval that can exclude the
/// mean.
const MIN_RESAMPLES: u32 = 1000;

/// The most bootstrap resamples: 8 MB of resampled means (beyond this the
/// percentiles move by far less than the figures' last digit).
const MAX_RESAMPLES: u32 = 1_000_000;

fn check_resamples(resamples: u32) -> Result<()> {
    if resamples < MIN_RESAMPLES {
        bail!(
            "--resamples must be at least {MIN_RESAMPLES} (got {resamples}): the bootstrap's percentiles need that many"
        );
    }
    if resamples > MAX_RESAMPLES {
        bail!("--resamples must be at most {MAX_RESAMPLES} (got {resamples})");
    }
    Ok(())
}

/// Below this many games (or pairs) a percentile bootstrap's 95 % interval
/// covers noticeably less than 95 % (it is about √((n−1)/n) too narrow and
/// uses normal rather than Student's t quantiles), so the text also gives
/// Student's t interval (always in the JSON).
const SMALL_COHORT: u64 = 30;

/// The quantile `p` of Student's t distribution with `n − 1` degrees of
/// freedom (`n` ≥ 2), from statrs.
fn t_quantile(p: f64, n: u64) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    StudentsT::new(0.0, 1.0, (n - 1) as f64)
        .expect("one degree of freedom at least")
        .inverse_cdf(p)
}

/// Runs `drop7 summary`.
pub fn run_summary(args: &SummaryArgs) -> Result<()> {
    check_resamples(args.resamples)?;
    if let Some(plot) = &args.plot {
        check_plot(plot)?;
        let inputs: Vec<(&str, &Path)> = args
            .files
            .iter()
            .map(|p| ("the record file", p.as_path()))
            .collect();
        refuse_output_is_input(
            "--plot",
            plot,
            &inputs,
            "the picture would replace its records",
        )?;
        check_plot_replaceable(plot)?;
    }
    let files: Vec<&Path> = args.files.iter().map(PathBuf::as_path).collect();
    refuse_given_twice(&files, "its games would count twice")?;
    let mut one_run = OneRun::new("summarise each driver's files on their own");
    let mut games = 0u64;
    let mut censored = 0u64;
    // External engines' tallies (`engineFailures`, `illegalChoices`): total
    // and games with any; `None` when no record carries them.
    let mut failures: Option<(u64, u64)> = None;
    let mut illegal: Option<(u64, u64)> = None;
    let mut reasons: BTreeMap<&'static str, u64> = BTreeMap::new();
    let (mut score, mut moves, mut clears, mut reveals) = (
        Dist::integers(),
        Dist::integers(),
        Dist::integers(),
        Dist::integers(),
    );
    let (mut chain_max, mut chain_mean, mut work) =
        (Dist::integers(), Dist::millis(), Dist::integers());
    let (mut p50, mut p95, mut p99) = (Dist::millis(), Dist::millis(), Dist::millis());
    let mut seen = GamesSeen::default();
    for (k, path) in args.files.iter().enumerate() {
        let shown = path.display().to_string();
        for_each_record(path, |line, rec| {
            let seed = record_seed(&rec).map_err(|e| anyhow!("{shown} line {line}: {e}"))?;
            // Another run's record first: with its own seeds it would also
            // look like a game counted twice, which is not the reason.
            one_run.check(&shown, line, &rec)?;
            let key = GameKey::of(&rec, seed);
            if let Err(at) = seen.insert(&key, k, line) {
                let first = seen.first(&args.files[..=k], &key, at, line, false);
                bail!(
                    "{shown} line {line}: {key} already at {first}: a game counted twice (a file given twice or a repeated record)"
                );
            }
            games += 1;
            censored += u64::from(rec.censored);
            for (tally, n) in [
                (&mut failures, rec.engine_failures),
                (&mut illegal, rec.illegal_choices),
            ] {
                if let Some(n) = n {
                    let t = tally.get_or_insert((0, 0));
                    t.0 += u64::from(n);
                    t.1 += u64::from(n > 0);
                }
            }
            *reasons.entry(rec.terminal_reason.as_str()).or_insert(0) += 1;
            score.add(rec.score as f64);
            moves.add(f64::from(rec.moves));
            clears.add(f64::from(rec.clears));
            reveals.add(rec.reveals as f64);
            chain_max.add(f64::from(rec.chain_max_depth));
            if let Some(c) = rec.chain_mean_depth {
                chain_mean.add(c);
            }
            if let Some(w) = rec.work {
                work.add(w as f64);
            }
            for (d, v) in [
                (&mut p50, rec.decision_ms_p50),
                (&mut p95, rec.decision_ms_p95),
                (&mut p99, rec.decision_ms_p99),
            ] {
                if let Some(v) = v {
                    d.add(v);
                }
            }
            Ok(())
        })?;
    }
    let (reference, _) = one_run.reference.expect("files are non-empty");
    // Part of a cohort is summarised as it is (a shard, a run still going),
    // but said so: its figures are not the cohort's.
    if let Some(note) = incomplete_note(&seen.seeds, &reference) {
        eprintln!("{note}");
    }
    // One game has no spread: no sd, and no interval (a bootstrap of one
    // value would only repeat it).
    let ci = (score.n >= 2).then(|| {
        let boot = score.bootstrap_means(args.resamples, args.bootstrap_seed);
        (sorted_quantile(&boot, 0.025), sorted_quantile(&boot, 0.975))
    });
    // Student's t interval: mean ± t(0.975, n − 1)·sd/√n.
    let t_ci = score.sd().map(|sd| {
        let half = t_quantile(0.975, score.n) * sd / (score.n as f64).sqrt();
        (score.mean() - half, score.mean() + half)
    });
    if let Some(plot) = &args.plot {
        plot_ecdf(plot, &cohort_name(&args.files), &score, &reference, ci)?;
    }
    if args.json {
        // What a pipeline needs to tell a whole cohort from a part (the
        // note above goes to stderr) and which run it is.
        let missing = cohort_gaps(&seen.seeds, &reference)
            .map(|gaps| gaps.iter().map(|(a, b)| b - a).sum::<u64>());
        let files: Vec<String> = args.files.iter().map(|f| f.display().to_string()).collect();
        let v = json!({
            "files": files,
            "games": games,
            "cohortSeedStart": reference.cohort_seed_start,
            "cohortGames": reference.cohort_games,
            "missingGames": missing,
            "table": reference.table,
            "maxWork": reference.max_work,
            "censored": censored,
            "terminalReasons": reasons,
            "engineFailures": failures.map(|(n, g)| json!({"total": n, "games": g})),
            "illegalChoices": illegal.map(|(n, g)| json!({"total": n, "games": g})),
            "policy": reference.policy,
            "driver": reference.driver,
            "ruleset": reference.ruleset,
            // Scripted rounds: each round's own cap, so none for the set.
            "maxMoves": reference.max_moves.filter(|_| reference.round.is_none()),
            "score": {
                "mean": score.mean(),
                "ci95Low": ci.map(|c| c.0),
                "ci95High": ci.map(|c| c.1),
                "tCi95Low": t_ci.map(|c| c.0),
                "tCi95High": t_ci.map(|c| c.1),
                "median": score.quantile(0.5),
                "sd": score.sd(),
                "p25": score.quantile(0.25),
                "p75": score.quantile(0.75),
                "min": score.min,
                "max": score.max,
                "resamples": args.resamples,
                "bootstrapSeed": args.bootstrap_seed,
            },
            "moves": moves.json(),
            "clears": clears.json(),
            "reveals": reveals.json(),
            "chainMaxDepth": chain_max.json(),
            "chainMeanDepth": chain_mean.json(),
            "work": work.json(),
            "decisionMsP50": p50.json(),
            "decisionMsP95": p95.json(),
            "decisionMsP99": p99.json(),
        });
        let mut o = Vec::new();
        serde_json::to_writer_pretty(&mut o, &v)?;
        writeln!(o)?;
        return write_stdout(&o);
    }
    let mut o = Vec::new();
    writeln!(
        o,
        "cohort     {}, policy {}, driver {}, move cap {}",
        super::count(games, "game"),
        super::shown(&reference.policy),
        super::shown(&reference.driver),
        match (reference.max_moves, &reference.round) {
            // Scripted rounds (`play --round`): each round file sets its own.
            (_, Some(_)) => "per round".to_string(),
            (Some(m), None) => m.to_string(),
            (None, None) => "not recorded".to_string(),
        }
    )?;
    let reasons_text: Vec<String> = reasons.iter().map(|(k, v)| format!("{k} {v}")).collect();
    writeln!(
        o,
        "stopped    {} (censored {censored})",
        reasons_text.join(", ")
    )?;
    if censored > 0 {
        writeln!(
            o,
            "censored   {censored} of {} stopped at the move cap (a score is then a lower bound): the score figures below are lower bounds too",
            super::count(games, "game")
        )?;
    }
    // A D7P engine's (or a round's) fallbacks: games where drop7 played the
    // first legal column for the policy are not the policy's own games.
    // (Shown for a D7P engine's records, which carry `engineFailures`, and
    // whenever a choice was replaced; not for a round of a built-in policy,
    // whose records all say 0 illegal choices.)
    if failures.is_some() || illegal.is_some_and(|(n, _)| n > 0) {
        let (f, fg) = failures.unwrap_or((0, 0));
        let (i, ig) = illegal.unwrap_or((0, 0));
        writeln!(
            o,
            "fallbacks  engine failures {f} (in {fg} of {}), illegal choices {i} (in {}){}",
            super::count(games, "game"),
            super::count(ig, "game"),
            if f + i > 0 {
                ": the first legal column was played for each, so those games are not wholly the policy's"
            } else {
                ""
            }
        )?;
    }
    match (ci, score.sd()) {
        (Some((lo, hi)), Some(sd)) => writeln!(
            o,
            "score      mean {:.1} (95% CI {lo:.1}..{hi:.1}, bootstrap {}), median {:.1}, sd {sd:.1}",
            score.mean(),
            super::count(args.resamples, "resample"),
            score.quantile(0.5),
        )?,
        _ => writeln!(
            o,
            "score      mean {:.1}, median {:.1} (no sd and no 95% CI from {}: 2 games at least are needed)",
            score.mean(),
            score.quantile(0.5),
            super::count(score.n, "game")
        )?,
    }
    if let Some((lo, hi)) = t_ci.filter(|_| score.n < SMALL_COHORT) {
        writeln!(
            o,
            "caution    from {} a bootstrap interval covers less than 95%: Student's t gives {lo:.1}..{hi:.1}",
            super::count(score.n, "game")
        )?;
    }
    writeln!(
        o,
        // Quartiles of integer scores are multiples of 0.25: shown exactly
        // (68840.25, not 68840.2; 34109, not 34109.0).
        "           min {:.0}, p25 {}, p75 {}, max {:.0}",
        score.min,
        exact(score.quantile(0.25)),
        exact(score.quantile(0.75)),
        score.max
    )?;
    writeln!(
        o,
        "{:<10} {:>12} {:>12} {:>12} {:>12} {:>12}",
        "per game", "mean", "p50", "p95", "p99", "max"
    )?;
    let rows: [(&str, &Dist); 9] = [
        ("moves", &moves),
        ("clears", &clears),
        ("reveals", &reveals),
        ("chain max", &chain_max),
        ("chain mean", &chain_mean),
        ("work", &work),
        ("ms p50", &p50),
        ("ms p95", &p95),
        ("ms p99", &p99),
    ];
    for (name, d) in rows {
        if d.n == 0 {
            continue;
        }
        writeln!(
            o,
            "{name:<10} {:>12.2} {:>12.2} {:>12.2} {:>12.2} {:>12.2}",
            d.mean(),
            d.quantile(0.5),
            d.quantile(0.95),
            d.quantile(0.99),
            d.max
        )?;
    }
    if p50.n > 0 {
        writeln!(
            o,
            "(ms pXX rows: the distribution over games of each game's own decision-latency percentile)"
        )?;
    }
    note_plot(&mut o, args.plot.as_deref())?;
    write_stdout(&o)
}

/// The text output's last line names the picture written, if any.
fn note_plot(o: &mut Vec<u8>, plot: Option<&Path>) -> Result<()> {
    if let Some(p) = plot {
        writeln!(o, "plot       {}", p.display())?;
    }
    Ok(())
}

// ---------------------------------------------------------------- compare

/// Options of `drop7 compare`.
#[derive(Args, Debug)]
#[command(after_help = "Example:\n  \
    drop7 play --games 200 --out center.jsonl\n  \
    drop7 play --games 200 --policy random --out random.jsonl\n  \
    drop7 compare center.jsonl random.jsonl")]
pub struct CompareArgs {
    /// The baseline's record file.
    base: PathBuf,
    /// The candidate's record file (delta = candidate − base, game by game).
    candidate: PathBuf,
    /// Print JSON instead of the text.
    #[arg(long)]
    json: bool,
    /// Bootstrap resamples for the one-sided 95 % lower bound on the mean delta
    /// (1000 to 1000000).
    #[arg(
        long,
        default_value_t = 10_000,
        value_name = "B",
        allow_negative_numbers = true
    )]
    resamples: u32,
    /// Seed of the bootstrap's random streams (fixed: results are
    /// reproducible); decimal or 0x hex, 0..2^64-1.
    #[arg(long, default_value_t = BOOTSTRAP_SEED, value_name = "SEED", allow_negative_numbers = true, value_parser = parse_bootstrap_seed)]
    bootstrap_seed: u64,
    /// Also draw the paired deltas, sorted, with the bound and the floor, as an SVG picture.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
}

/// Runs `drop7 compare`.
pub fn run_compare(args: &CompareArgs) -> Result<()> {
    check_resamples(args.resamples)?;
    if let Some(plot) = &args.plot {
        check_plot(plot)?;
        refuse_output_is_input(
            "--plot",
            plot,
            &[("BASE", &args.base), ("CANDIDATE", &args.candidate)],
            "the picture would replace its records",
        )?;
        check_plot_replaceable(plot)?;
    }
    refuse_given_twice(
        &[&args.base, &args.candidate],
        "a cohort compared with itself only ties",
    )?;
    // Each file must hold one run (as `summary` requires); the two files
    // may be different runs (that is the point), checked pair by pair below.
    const ONE_DRIVER: &str = "compare cohorts played with one driver";
    // The base: one (score, line, paired, censored, move cap) per seed; its
    // driver and ruleset are those of its run (the same in every record).
    // The move cap is per record: a scripted round's is its file's.
    struct Base {
        score: u64,
        line: u64,
        paired: bool,
        censored: bool,
        /// drop7 played the first legal column for the policy at least once
        /// (`engineFailures` or `illegalChoices` above 0).
        fallback: bool,
        max_moves: Option<u32>,
    }
    let fell_back =
        |rec: &GameRecord| rec.engine_failures.unwrap_or(0) + rec.illegal_choices.unwrap_or(0) > 0;
    let mut base: HashMap<GameKey, Base> = HashMap::new();
    let bshown = args.base.display().to_string();
    let mut base_run = OneRun::new(ONE_DRIVER);
    for_each_record(&args.base, |line, rec| {
        let seed = record_seed(&rec).map_err(|e| anyhow!("{bshown} line {line}: {e}"))?;
        base_run.check(&bshown, line, &rec)?;
        let b = Base {
            score: rec.score,
            line,
            paired: false,
            censored: rec.censored,
            fallback: fell_back(&rec),
            max_moves: rec.max_moves,
        };
        let key = GameKey::of(&rec, seed);
        if let Some(old) = base.get(&key) {
            bail!("{bshown} line {line}: {key} already at line {}", old.line);
        }
        base.insert(key, b);
        Ok(())
    })?;
    let base_run = base_run.reference.map(|(r, _)| r);
    let cshown = args.candidate.display().to_string();
    let mut delta = Dist::integers();
    let (mut wins, mut ties, mut losses, mut unpaired_candidate) = (0u64, 0u64, 0u64, 0u64);
    // Pairs with a game stopped by the move cap: its score is a lower bound.
    let mut censored_pairs = 0u64;
    // Pairs with a game where drop7 played for the policy (a D7P engine's
    // failure or illegal choice): not wholly the policies' deltas.
    let mut fallback_pairs = 0u64;
    let mut candidate_run = OneRun::new(ONE_DRIVER);
    // The candidate's seeds, for its repeated records (paired or not: an
    // unpaired one repeated would count twice among the unpaired).
    let mut candidate_seen = GamesSeen::default();
    for_each_record(&args.candidate, |line, rec| {
        let seed = record_seed(&rec).map_err(|e| anyhow!("{cshown} line {line}: {e}"))?;
        candidate_run.check(&cshown, line, &rec)?;
        let key = GameKey::of(&rec, seed);
        if let Err(at) = candidate_seen.insert(&key, 0, line) {
            let first =
                candidate_seen.first(std::slice::from_ref(&args.candidate), &key, at, line, true);
            bail!("{cshown} line {line}: {key} already at {first}");
        }
        let Some((b, r)) = base.get_mut(&key).zip(base_run.as_ref()) else {
            unpaired_candidate += 1;
            return Ok(());
        };
        let base_driver = &r.driver;
        if *base_driver != rec.driver {
            // The driver makes the game: one seed is two different games.
            bail!(
                "{bshown} was played with driver {base_driver} but {cshown} with driver {} \
                 (seed {}: {bshown} line {}, {cshown} line {line}): the same seed is a different \
                 game under each driver, so seed-by-seed deltas mean nothing; compare cohorts \
                 played with one driver",
                rec.driver,
                rec.seed,
                b.line
            );
        }
        let show = |o: &Option<String>| o.clone().unwrap_or_else(|| "(absent)".into());
        let base_ruleset = &r.ruleset;
        if *base_ruleset != rec.ruleset {
            bail!(
                "{cshown} line {line}: seed {} has ruleset {} but {bshown} line {} has {}: not comparable",
                rec.seed,
                show(&rec.ruleset),
                b.line,
                show(base_ruleset)
            );
        }
        if b.max_moves != rec.max_moves {
            let m = |o: Option<u32>| o.map_or_else(|| "(absent)".into(), |v| v.to_string());
            bail!(
                "{cshown} line {line}: seed {} has maxMoves {} but {bshown} line {} has {}: not comparable",
                rec.seed,
                m(rec.max_moves),
                b.line,
                m(b.max_moves)
            );
        }
        b.paired = true;
        censored_pairs += u64::from(b.censored || rec.censored);
        fallback_pairs += u64::from(b.fallback || fell_back(&rec));
        // i128: scores are u64 (a difference of two may not fit an i64).
        let d = i128::from(rec.score) - i128::from(b.score);
        match d.cmp(&0) {
            std::cmp::Ordering::Greater => wins += 1,
            std::cmp::Ordering::Equal => ties += 1,
            std::cmp::Ordering::Less => losses += 1,
        }
        delta.add(d as f64);
        Ok(())
    })?;
    let unpaired_base = base.values().filter(|b| !b.paired).count() as u64;
    let pairs = delta.n;
    if pairs == 0 {
        bail!(
            "{bshown} and {cshown} share no game (seed, or round id and seed): nothing to compare"
        );
    }
    // One pair has no sd: no bound, no floor and no verdict (a bootstrap of
    // one value would only repeat it).
    let sd = delta.sd();
    let measured = sd.map(|sd| {
        let boot = delta.bootstrap_means(args.resamples, args.bootstrap_seed);
        let lower = sorted_quantile(&boot, 0.05);
        let floor = 1.645 * sd / (pairs as f64).sqrt();
        let above = delta.mean().abs() > floor;
        (lower, floor, above)
    });
    // Student's t bound: mean − t(0.95, n − 1)·sd/√n.
    let t_margin = sd.map(|sd| t_quantile(0.95, pairs) * sd / (pairs as f64).sqrt());
    let t_lower = t_margin.map(|m| delta.mean() - m);
    // From few pairs the text's caution and the plot give Student's t bound.
    let t_small = t_lower.filter(|_| pairs < SMALL_COHORT);
    let verdict = measured.map(|(_, _, above)| {
        if above {
            "above the floor"
        } else {
            "not above the floor: not a measurement"
        }
    });
    let median = delta.quantile(0.5);
    if let Some(plot) = &args.plot {
        let names = (
            cohort_name(std::slice::from_ref(&args.candidate)),
            cohort_name(std::slice::from_ref(&args.base)),
        );
        plot_deltas(
            plot,
            names,
            &delta,
            measured.map(|(l, f, _)| (l, f)),
            t_small,
        )?;
    }
    if args.json {
        let v = json!({
            "pairs": pairs,
            "unpaired": unpaired_base + unpaired_candidate,
            "unpairedBase": unpaired_base,
            "unpairedCandidate": unpaired_candidate,
            "meanDelta": delta.mean(),
            "medianDelta": median,
            "sdDelta": sd,
            "wins": wins,
            "ties": ties,
            "losses": losses,
            "censoredPairs": censored_pairs,
            "fallbackPairs": fallback_pairs,
            "lowerBound95": measured.map(|m| m.0),
            "lowerBound95T": t_lower,
            "detectionFloor": measured.map(|m| m.1),
            "aboveFloor": measured.map(|m| m.2),
            "verdict": verdict,
            "resamples": args.resamples,
            "bootstrapSeed": args.bootstrap_seed,
        });
        let mut o = Vec::new();
        serde_json::to_writer_pretty(&mut o, &v)?;
        writeln!(o)?;
        return write_stdout(&o);
    }
    let mut o = Vec::new();
    writeln!(
        o,
        "pairs      {} paired by {} ({unpaired_base} only in {bshown}, {unpaired_candidate} only in {cshown})",
        super::count(pairs, "game"),
        if base_run.as_ref().is_some_and(|r| r.round.is_some()) {
            "round id and seed"
        } else {
            "seed"
        }
    )?;
    match sd {
        Some(sd) => writeln!(
            o,
            "delta      candidate − base: mean {:.2}, median {median:.1}, sd {sd:.1}",
            delta.mean()
        )?,
        None => writeln!(
            o,
            "delta      candidate − base: mean {:.2}, median {median:.1}",
            delta.mean()
        )?,
    }
    writeln!(
        o,
        "record     {}, {}, {} (win = candidate scored more)",
        super::count(wins, "win"),
        super::count(ties, "tie"),
        super::count(losses, "loss")
    )?;
    if censored_pairs > 0 {
        writeln!(
            o,
            "censored   {censored_pairs} of {} {} a game stopped by the move cap (its score is a lower bound): their deltas are not whole-game deltas",
            super::count(pairs, "pair"),
            if censored_pairs == 1 { "has" } else { "have" }
        )?;
    }
    if fallback_pairs > 0 {
        writeln!(
            o,
            "fallbacks  {fallback_pairs} of {} {} a game where drop7 played the first legal column for the policy (engine failures or illegal choices): their deltas are not wholly the policies'",
            super::count(pairs, "pair"),
            if fallback_pairs == 1 { "has" } else { "have" }
        )?;
    }
    let (Some((lower, floor, above)), Some(verdict)) = (measured, verdict) else {
        writeln!(
            o,
            "bound      none: 2 pairs at least are needed for a bound, a detection floor and a verdict ({} here)",
            super::count(pairs, "pair")
        )?;
        note_plot(&mut o, args.plot.as_deref())?;
        return write_stdout(&o);
    };
    writeln!(
        o,
        "bound      mean delta ≥ {lower:.2} with 95% confidence (one-sided bootstrap, {})",
        super::count(args.resamples, "resample")
    )?;
    if let Some(t) = t_small {
        writeln!(
            o,
            "caution    from {} a bootstrap bound holds less than 95% of the time: Student's t gives mean delta ≥ {t:.2}",
            super::count(pairs, "pair")
        )?;
    }
    writeln!(
        o,
        "floor      {floor:.2} = 1.645·sd/√n: a true mean delta of this size is detected about half the time"
    )?;
    // Which way, in words: the sign of the mean delta is easy to misread.
    let direction = match (above, delta.mean() > 0.0) {
        (false, _) => "",
        (true, true) => ": the candidate scores higher than the base",
        (true, false) => ": the candidate scores lower than the base",
    };
    // From few pairs the floor (a normal quantile) is narrower than
    // Student's t: say so when t would not exclude a delta of 0 the other
    // way (the text only; the JSON keeps `aboveFloor` and `verdict`).
    let t_doubt = match t_margin {
        Some(m) if above && pairs < SMALL_COHORT && delta.mean().abs() <= m => {
            let (sign, bound) = if delta.mean() > 0.0 {
                ("≥", delta.mean() - m)
            } else {
                ("≤", delta.mean() + m)
            };
            format!(
                " (but from {} Student's t gives mean delta {sign} {bound:.2}, which does not exclude 0)",
                super::count(pairs, "pair")
            )
        }
        _ => String::new(),
    };
    writeln!(
        o,
        "verdict    |mean delta| {:.2} is {verdict}{direction}{t_doubt}",
        delta.mean().abs()
    )?;
    note_plot(&mut o, args.plot.as_deref())?;
    write_stdout(&o)
}

// ---------------------------------------------------------------- pictures

/// At most this many points per drawn line (a line over more games is thinned
/// evenly; the extremes are kept).
const MAX_POINTS: usize = 2000;

/// The (bucketed) values of `d` in ascending order with their ranks, thinned
/// to at most [`MAX_POINTS`]: `(rank 0..n, value)`.
fn sorted_points(d: &Dist) -> Vec<(f64, f64)> {
    let n = d.n.max(1);
    let step = n.div_ceil(MAX_POINTS as u64);
    let mut pts = Vec::new();
    let mut rank = 0u64;
    for (&v, b) in &d.counts {
        let (value, c) = (d.value(v, b), b.count);
        // Every multiple of `step` inside [rank, rank + c), plus the last.
        let mut k = rank.div_ceil(step) * step;
        while k < rank + c {
            pts.push((k as f64, value));
            k += step;
        }
        rank += c;
        if rank == n {
            pts.push(((n - 1) as f64, value));
        }
    }
    pts
}

/// A tick label of an axis spanning `lo..hi`: as many decimals as ticks
/// about a tenth of the span apart need to differ (none from a span of 10),
/// in scientific notation once the axis reaches 10^7 (its labels would not
/// fit), and never `-0`.
fn tick_label(v: f64, lo: f64, hi: f64) -> String {
    let v = if v == 0.0 { 0.0 } else { v };
    let step = ((hi - lo) / 10.0).abs();
    let magnitude = lo.abs().max(hi.abs());
    // The decimal place of a tick step (0 for steps of 1 to 9.99…).
    let place = |x: f64| if x > 0.0 { x.log10().floor() as i32 } else { 0 };
    if magnitude >= 1e7 {
        if v == 0.0 {
            return "0".into();
        }
        let digits = (place(magnitude) - place(step)).clamp(0, 6) as usize;
        return format!("{v:.digits$e}");
    }
    let decimals = (-place(step)).clamp(0, 6) as usize;
    let text = format!("{v:.decimals$}");
    // A value that rounds to zero (-0.0001 shown to 3 decimals) is 0.
    if text
        .trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        return text.trim_start_matches('-').to_string();
    }
    text
}

fn plot_err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("drawing: {e}")
}

fn write_svg(out: &Path, svg: String) -> Result<()> {
    write_whole("--plot ", out, |w| {
        w.write_all(svg.as_bytes())
            .with_context(|| format!("writing {}", out.display()))
    })
}

/// Longest file name a plot title shows whole (a longer one keeps its start
/// and end around `…`).
const MAX_TITLE_NAME: usize = 40;

/// How a plot names a cohort: its files' names without their directories
/// (`center.jsonl`; `part1.jsonl, part2.jsonl`; more than three: the first
/// two and how many more).
fn cohort_name(files: &[PathBuf]) -> String {
    let short = |p: &PathBuf| {
        let name = p.file_name().map_or_else(
            || p.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let chars: Vec<char> = name.chars().collect();
        if chars.len() <= MAX_TITLE_NAME {
            return name;
        }
        let half = (MAX_TITLE_NAME - 1) / 2;
        let head: String = chars[..half].iter().collect();
        let tail: String = chars[chars.len() - half..].iter().collect();
        format!("{head}…{tail}")
    };
    match files {
        [] => String::new(),
        [a] => short(a),
        [a, b] => format!("{}, {}", short(a), short(b)),
        [a, b, c] => format!("{}, {}, {}", short(a), short(b), short(c)),
        [a, b, rest @ ..] => format!(
            "{}, {} and {} more {}",
            short(a),
            short(b),
            rest.len(),
            super::noun(rest.len(), "file")
        ),
    }
}

/// The font size of a plot title: 20 px, smaller for a long title (long
/// file names) so it stays inside the 900 px picture.
fn title_size(title: &str) -> u32 {
    // About 0.55 em per character in a sans-serif font, 860 px available.
    let chars = title.chars().count().max(1) as f64;
    (860.0 / (0.55 * chars)).clamp(10.0, 20.0) as u32
}

/// The score distribution of the cohort `name` as an empirical CDF, with
/// the mean's 95 % CI.
/// `ci` is `None` for a single game (no interval is drawn).
fn plot_ecdf(
    out: &Path,
    name: &str,
    score: &Dist,
    r: &GameRecord,
    ci: Option<(f64, f64)>,
) -> Result<()> {
    use plotters::prelude::*;
    let pts: Vec<(f64, f64)> = sorted_points(score)
        .into_iter()
        .map(|(k, v)| (v, (k + 1.0) / score.n as f64))
        .collect();
    // Games of (nearly) one score: a range around it, not a sliver at the edge.
    let (x0, x1) = (score.min, score.max);
    let pad = if x1 - x0 < 1.0 {
        (x0.abs() * 0.05).max(10.0)
    } else {
        (x1 - x0) * 0.03
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let title = format!(
            "{name}: scores of {}, {} ({}), mean {:.0}",
            super::count(score.n, "game"),
            super::shown(&r.policy),
            super::shown(&r.driver),
            score.mean()
        );
        let mut chart = ChartBuilder::on(&root)
            .caption(&title, ("sans-serif", title_size(&title)))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d((x0 - pad)..(x1 + pad), 0f64..1.02f64)
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .x_desc("final score")
            .y_desc("fraction of games scoring at most x")
            .x_label_formatter(&|x| tick_label(*x, x0 - pad, x1 + pad))
            .draw()
            .map_err(plot_err)?;
        // The steps run from the axis's left edge (at 0) to its right edge
        // (at 1), so that games of one score still show a step beside the
        // median and mean lines drawn over it.
        let mut steps = Vec::with_capacity(pts.len() * 2 + 2);
        steps.push((x0 - pad, 0.0));
        let mut last_y = 0.0;
        for &(x, y) in &pts {
            steps.push((x, last_y));
            steps.push((x, y));
            last_y = y;
        }
        steps.push((x1 + pad, last_y));
        chart
            .draw_series(LineSeries::new(steps, BLUE.stroke_width(2)))
            .map_err(plot_err)?
            .label("empirical CDF")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(2)));
        let median = score.quantile(0.5);
        chart
            .draw_series(LineSeries::new(
                vec![(median, 0.0), (median, 1.0)],
                BLACK.stroke_width(1),
            ))
            .map_err(plot_err)?
            .label(format!("median {median:.0}"))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK));
        if let Some(ci) = ci {
            // A visible band at least, centred on a (near) zero-width interval.
            let half = ((ci.1 - ci.0) / 2.0).max(pad * 0.025);
            let mid = (ci.0 + ci.1) / 2.0;
            chart
                .draw_series([Rectangle::new(
                    [(mid - half, 0.0), (mid + half, 1.0)],
                    RED.mix(0.25).filled(),
                )])
                .map_err(plot_err)?
                .label(format!("95% CI of the mean {:.0}..{:.0}", ci.0, ci.1))
                .legend(|(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 20, y + 5)], RED.mix(0.25).filled())
                });
        }
        let mean = score.mean();
        chart
            .draw_series(LineSeries::new(
                vec![(mean, 0.0), (mean, 1.0)],
                RED.stroke_width(2),
            ))
            .map_err(plot_err)?
            .label(format!("mean {mean:.0}"))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED.stroke_width(2)));
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()
            .map_err(plot_err)?;
        root.present().map_err(plot_err)?;
    }
    write_svg(out, svg)
}

/// The paired deltas sorted ascending, with zero, the mean, the one-sided
/// 95 % lower bound and the detection floor (±) marked; `names` are the
/// (candidate, base) cohorts. `bound` (lower bound, floor) is `None` for a
/// single pair (neither is drawn); `t_lower`, Student's t lower bound, is
/// drawn (dashed, beside the bootstrap's) when given, for under 30 pairs.
fn plot_deltas(
    out: &Path,
    names: (String, String),
    delta: &Dist,
    bound: Option<(f64, f64)>,
    t_lower: Option<f64>,
) -> Result<()> {
    use plotters::prelude::*;
    // Each pair at the middle of its slot (one pair is not drawn on the axis).
    let pts: Vec<(f64, f64)> = sorted_points(delta)
        .into_iter()
        .map(|(k, v)| (k + 0.5, v))
        .collect();
    let n = delta.n as f64;
    let (lo, hi) = match bound {
        Some((lower, floor)) => (
            delta.min.min(-floor).min(lower),
            delta.max.max(floor).max(lower),
        ),
        None => (delta.min.min(0.0), delta.max.max(0.0)),
    };
    let (lo, hi) = match t_lower {
        Some(t) => (lo.min(t), hi.max(t)),
        None => (lo, hi),
    };
    let pad = ((hi - lo) * 0.05).max(1.0);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let title = format!(
            "Score deltas {} - {} (candidate - base), {}",
            names.0,
            names.1,
            super::count(delta.n, "pair")
        );
        let mut chart = ChartBuilder::on(&root)
            .caption(&title, ("sans-serif", title_size(&title)))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..n.max(1.0), (lo - pad)..(hi + pad))
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .x_desc("pairs, sorted by delta")
            // Whole numbers of pairs: no fractional ticks for a few pairs.
            .x_labels((delta.n as usize + 1).min(11))
            .y_desc("score delta")
            .x_label_formatter(&|x| {
                if x.fract() == 0.0 {
                    format!("{x:.0}")
                } else {
                    tick_label(*x, 0.0, n.max(1.0))
                }
            })
            .y_label_formatter(&|y| tick_label(*y, lo - pad, hi + pad))
            .draw()
            .map_err(plot_err)?;
        // The reference lines first, so that the deltas are drawn over them.
        let hline = |y: f64| vec![(0.0, y), (n.max(1.0), y)];
        chart
            .draw_series(LineSeries::new(hline(0.0), BLACK))
            .map_err(plot_err)?;
        chart
            .draw_series(LineSeries::new(hline(delta.mean()), GREEN.stroke_width(2)))
            .map_err(plot_err)?
            .label(format!("mean delta {:.1}", delta.mean()))
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], GREEN.stroke_width(2)));
        if let Some((lower, floor)) = bound {
            chart
                .draw_series(LineSeries::new(hline(lower), RED.stroke_width(2)))
                .map_err(plot_err)?
                .label(format!("95% lower bound {lower:.1}"))
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED.stroke_width(2)));
            if let Some(t) = t_lower {
                chart
                    .draw_series(DashedLineSeries::new(hline(t), 3, 3, RED.stroke_width(2)))
                    .map_err(plot_err)?
                    .label(format!(
                        "Student's t bound {t:.1} (from {})",
                        super::count(delta.n, "pair")
                    ))
                    .legend(|(x, y)| {
                        // Dashed in the legend too: two short strokes.
                        let stroke = RED.stroke_width(2);
                        EmptyElement::at((x, y))
                            + PathElement::new(vec![(0, 0), (7, 0)], stroke)
                            + PathElement::new(vec![(12, 0), (20, 0)], stroke)
                    });
            }
            for (i, y) in [floor, -floor].into_iter().enumerate() {
                let s = chart
                    .draw_series(DashedLineSeries::new(
                        hline(y),
                        6,
                        4,
                        MAGENTA.stroke_width(2),
                    ))
                    .map_err(plot_err)?;
                if i == 0 {
                    s.label(format!("detection floor ±{floor:.1}"))
                        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], MAGENTA));
                }
            }
        }
        // Few pairs: each one marked (a single pair draws no line).
        if pts.len() <= 50 {
            chart
                .draw_series(pts.iter().map(|&p| Circle::new(p, 4, BLUE.filled())))
                .map_err(plot_err)?;
        }
        chart
            .draw_series(LineSeries::new(pts, BLUE.stroke_width(2)))
            .map_err(plot_err)?
            .label("delta per pair")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(2)));
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()
            .map_err(plot_err)?;
        root.present().map_err(plot_err)?;
    }
    write_svg(out, svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plots_name_their_cohorts_by_file_name() {
        let p = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert_eq!(cohort_name(&p(&["/data/run/center.jsonl"])), "center.jsonl");
        assert_eq!(
            cohort_name(&p(&["a/p1.jsonl", "b/p2.jsonl"])),
            "p1.jsonl, p2.jsonl"
        );
        assert_eq!(
            cohort_name(&p(&["p1", "p2", "p3", "p4", "p5"])),
            "p1, p2 and 3 more files"
        );
        let long = format!("{}.jsonl", "x".repeat(60));
        let shown = cohort_name(&[PathBuf::from(&long)]);
        assert!(shown.chars().count() <= MAX_TITLE_NAME);
        assert!(shown.starts_with("xxx") && shown.ends_with("x.jsonl") && shown.contains('…'));
        assert_eq!(title_size("short"), 20);
        assert!(title_size(&"y".repeat(150)) < 20);
    }

    /// A failed write names the option and the user's path, never the
    /// temporary file beside it.
    #[test]
    fn a_failed_whole_write_names_the_flag_and_path() {
        let out = Path::new("no-such-folder-ux22b/x.svg");
        let e = write_whole("--plot ", out, |_| Ok(())).unwrap_err();
        let msg = format!("{e:#}");
        assert!(
            msg.starts_with("cannot create --plot no-such-folder-ux22b/x.svg: "),
            "{msg}"
        );
        assert!(!msg.contains(".tmp-"), "{msg}");
    }

    #[test]
    fn a_file_given_twice_is_refused_under_any_name() {
        let dir = std::env::temp_dir().join(format!("drop7-twice-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
        std::fs::write(&a, "").unwrap();
        std::fs::write(&b, "").unwrap();
        let dotted = dir.join(".").join("a.jsonl");
        assert!(refuse_given_twice(&[&a, &b], "why").is_ok());
        let e = refuse_given_twice(&[&a, &b, &dotted], "why").unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{} is given twice (also as {}): why",
                dotted.display(),
                a.display()
            )
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn missing_seeds_wrap_past_the_last_seed() {
        let mut seen = SeedSet::default();
        for s in [0xffff_fffe, 1, 3] {
            seen.insert(s);
        }
        assert_eq!(
            seen.missing(0xffff_fffe, 6),
            vec![(0xffff_ffff, 1 << 32), (0, 1), (2, 3)]
        );
        assert!(seen.missing(1, 1).is_empty());
        let mut r = GameRecord::default();
        assert_eq!(incomplete_note(&seen, &r), None, "no cohortGames: no note");
        r.cohort_games = Some(6);
        r.cohort_seed_start = Some("0xfffffffe".into());
        assert_eq!(
            incomplete_note(&seen, &r).unwrap(),
            "note: 3 of the cohort's 6 games (cohortGames) are here; missing seeds 0xffffffff, 0x00000000, 0x00000002"
        );
    }

    #[test]
    fn a_seed_outside_its_cohort_is_named() {
        let mut r = GameRecord {
            seed: "0x00000001".into(),
            ..GameRecord::default()
        };
        assert_eq!(
            outside_cohort(&r),
            None,
            "no cohort named: nothing to check"
        );
        r.cohort_games = Some(6);
        r.cohort_seed_start = Some("0xfffffffe".into());
        for inside in ["0xfffffffe", "0xffffffff", "0x00000000", "0x00000003"] {
            r.seed = inside.into();
            assert_eq!(outside_cohort(&r), None, "{inside}");
        }
        for outside in ["0x00000004", "0xfffffffd", "0x80000000"] {
            r.seed = outside.into();
            assert_eq!(
                outside_cohort(&r).unwrap(),
                format!(
                    "seed {outside} is not a game of its cohort: cohortSeedStart 0xfffffffe and cohortGames 6 name seeds 0xfffffffe..0x00000003 (an edited or foreign record)"
                )
            );
        }
        // A cohort of every seed has no seed outside it; more games than
        // seeds is refused.
        r.cohort_games = Some(1 << 32);
        assert_eq!(outside_cohort(&r), None);
        for games in [(1 << 32) + 1, u64::MAX] {
            r.cohort_games = Some(games);
            assert_eq!(
                outside_cohort(&r).unwrap(),
                format!(
                    "cohortGames {games} is more than the 2^32 seeds there are (an edited or foreign record)"
                )
            );
        }
        r.cohort_games = Some(0);
        assert!(
            outside_cohort(&r)
                .unwrap()
                .contains("cohortGames 0 names no games")
        );
        r.cohort_games = Some(6);
        r.cohort_seed_start = Some("zz".into());
        assert_eq!(
            outside_cohort(&r).unwrap(),
            "bad cohortSeedStart \"zz\" (expected a seed such as 0x00000001)"
        );
        r.cohort_seed_start = None;
        assert_eq!(
            outside_cohort(&r).unwrap(),
            "the record has cohortGames 6 but no cohortSeedStart"
        );
    }

    #[test]
    fn dist_quantiles_match_type_7() {
        let mut d = Dist::integers();
        for x in [1.0, 2.0, 3.0, 4.0, 10.0] {
            d.add(x);
        }
        assert_eq!(d.quantile(0.5), 3.0);
        assert_eq!(d.quantile(0.25), 2.0);
        assert!((d.quantile(0.9) - 7.6).abs() < 1e-12);
        assert_eq!(d.mean(), 4.0);
        assert!((d.sd().unwrap() - 3.535_533_905_932_737_6).abs() < 1e-12);
        let mut one = Dist::integers();
        one.add(68_327.0);
        assert_eq!(one.sd(), None, "the sd of one value is undefined");
        assert!(one.json()["sd"].is_null());
        assert_eq!(round_key(70_001), 70_001);
        assert_eq!(round_key(-(1 << 25) - 1), -(1 << 25));
        let a = d.bootstrap_means(200, 7);
        assert_eq!(a, d.bootstrap_means(200, 7));
        assert!(a[0] >= 1.0 && a[199] <= 10.0);
    }

    #[test]
    fn dist_mean_and_quantiles_are_correctly_rounded() {
        // 40 games of 10..=35 moves whose mean is 20.625: Welford's running
        // mean gives 20.624999999999993 here; the compensated sum is exact.
        let moves = [
            22, 17, 35, 20, 12, 25, 20, 15, 28, 19, 10, 26, 30, 14, 21, 18, 23, 16, 25, 27, 13, 20,
            33, 11, 24, 19, 22, 15, 26, 29, 17, 20, 21, 14, 18, 23, 25, 16, 12, 24,
        ];
        let mut d = Dist::integers();
        for m in moves {
            d.add(f64::from(m));
        }
        assert_eq!(d.mean(), 20.625);
        // h = 39 · 0.99 = 38.61 between the order statistics 5 and 6: 5.61.
        let mut e = Dist::integers();
        for x in (0..40).map(|i| if i < 39 { 5.0 } else { 6.0 }) {
            e.add(x);
        }
        assert_eq!(e.quantile(0.99), 5.61);
        assert_eq!(sorted_quantile(&[5.0, 6.0], 0.61), 5.61);
        // Milliseconds and mean chain depths interpolate their exact keys.
        let mut ms = Dist::millis();
        ms.add(1.929);
        ms.add(1.93);
        assert_eq!(ms.quantile(0.02), 1.92902);
        // Values to the microsecond: the mean of the decimals as written
        // (the compensated sum over n gave 0.047799999999999995 and
        // 5.6606000000000005 for such cohorts).
        let mut ms = Dist::millis();
        for x in [0.047, 0.048, 0.049, 0.047, 0.048] {
            ms.add(x);
        }
        assert_eq!(ms.mean(), 0.0478);
        // A value with more decimals than the keys keep: the compensated sum.
        ms.add(0.0475);
        assert_eq!(ms.mean(), (0.239 + 0.0475) / 6.0);
        // A fractional value kept to 0.001 never puts a quantile below the
        // exact minimum (1.0833 is kept as 1.083).
        let mut low = Dist::millis();
        for x in [1.0833, 1.0833, 2.5, 3.25] {
            low.add(x);
        }
        assert_eq!(low.quantile(0.25), 1.0833);
        assert_eq!(low.quantile(0.0), 1.0833);
        // Equal fractional values: the mean is the value, not one ulp off.
        for x in [0.1, 0.7, 0.003] {
            let mut same = Dist::millis();
            for _ in 0..3 {
                same.add(x);
            }
            assert_eq!(same.mean(), x);
        }
        assert_eq!(exact(68_840.25), "68840.25");
        assert_eq!(exact(34_109.0), "34109");
        assert_eq!(exact(2f64.powi(64)), "18446744073709551616");
        // A paired delta of -2^63 (a u64 score of 2^63 against 0) is its own key.
        assert_eq!(round_key(i64::MIN), i64::MIN);
        // Against the type-7 formula in exact rationals, on many n and p.
        for n in 1..60u64 {
            let sorted: Vec<f64> = (0..n).map(|i| (i * i % 17) as f64 - 8.0).collect();
            let mut sorted = sorted;
            sorted.sort_by(f64::total_cmp);
            let mut d = Dist::integers();
            for &x in &sorted {
                d.add(x);
            }
            for q in [0, 1, 250, 500, 750, 950, 975, 990, 9_999, 10_000] {
                let p = q as f64 / 10_000.0;
                let h = (n - 1) * q;
                let (lo, rem) = ((h / 10_000) as usize, (h % 10_000) as i64);
                let want = if rem == 0 {
                    sorted[lo]
                } else {
                    let (a, b) = (sorted[lo] as i64, sorted[lo + 1] as i64);
                    // Exact rational a + rem/10^4 (b − a), rounded once.
                    (a * 10_000 + rem * (b - a)) as f64 / 10_000.0
                };
                assert_eq!(d.quantile(p), want, "n {n}, p {p}");
                assert_eq!(sorted_quantile(&sorted, p), want, "n {n}, p {p}");
            }
        }
    }

    /// The bootstrap as first written (a binary search per draw), against
    /// which the guide-table lookup is checked.
    fn bootstrap_by_binary_search(d: &Dist, resamples: u32, seed: u64) -> Vec<f64> {
        let values: Vec<f64> = d.counts.iter().map(|(&v, b)| d.value(v, b)).collect();
        let cumulative: Vec<u64> = d
            .counts
            .values()
            .scan(0, |acc, b| {
                *acc += b.count;
                Some(*acc)
            })
            .collect();
        let mut means: Vec<f64> = (0..resamples)
            .map(|r| {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                rng.set_stream(u64::from(r));
                let mut sum = 0.0;
                for _ in 0..d.n {
                    let u = ((u128::from(rng.next_u64()) * u128::from(d.n)) >> 64) as u64;
                    sum += values[cumulative.partition_point(|&c| c <= u)];
                }
                sum / d.n as f64
            })
            .collect();
        means.sort_by(f64::total_cmp);
        means
    }

    /// Same resample means, bit for bit, as the binary search: few and many
    /// distinct values, a heavy value among rare ones, bucketed large values.
    #[test]
    fn bootstrap_guide_table_matches_binary_search() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        type Shape<'a> = &'a dyn Fn(&mut ChaCha8Rng, u64) -> f64;
        let shapes: [Shape; 4] = [
            &|r, _| (r.next_u64() % 5) as f64,
            &|r, _| (r.next_u64() % 1_000_000) as f64 - 500_000.0,
            &|r, i| {
                if i % 3 == 0 {
                    7.0
                } else {
                    (r.next_u64() % 100_000) as f64
                }
            },
            &|r, _| (r.next_u64() >> 20) as f64,
        ];
        for (k, shape) in shapes.iter().enumerate() {
            for n in [2u64, 3, 17, 1000, 5003] {
                let mut d = Dist::integers();
                for i in 0..n {
                    d.add(shape(&mut rng, i));
                }
                assert_eq!(
                    d.bootstrap_means(50, 3),
                    bootstrap_by_binary_search(&d, 50, 3),
                    "shape {k}, n {n}"
                );
            }
        }
    }
}
