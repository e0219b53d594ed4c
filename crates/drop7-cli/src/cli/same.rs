//! Whether two paths name one file: an output refused because it is one of
//! the inputs (`merge OUT`, `--plot`) or the other output (`--trace` and
//! `--out`), whatever the spelling (`./x/../f`, a symlink, a hard link).

use std::path::{Path, PathBuf};

/// At most this many symlinks are followed to resolve a dangling one.
const MAX_LINKS: usize = 40;

/// Whether `a` and `b` name the same file: the same device and inode when
/// both exist (on unix; so a symlink, `./x/../f` or a hard link is caught),
/// else the same resolved path (a file not created yet: its folder resolved,
/// then its name; a dangling symlink: the name it points to).
pub fn same_file(a: &Path, b: &Path) -> bool {
    // (An existing file and one that does not exist never resolve alike.)
    file_key(a) == file_key(b)
}

/// What [`same_file`] compares, computed once per path (for many paths:
/// equal keys name the same file).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FileKey {
    /// Device and inode of an existing file.
    Id(u64, u64),
    /// The resolved path of one that does not exist (yet).
    Path(PathBuf),
}

/// The [`FileKey`] of `p`.
pub fn file_key(p: &Path) -> FileKey {
    match identity(p) {
        Some((dev, ino)) => FileKey::Id(dev, ino),
        None => FileKey::Path(resolved(p)),
    }
}

#[cfg(unix)]
fn identity(p: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn identity(_: &Path) -> Option<(u64, u64)> {
    None
}

/// `p` as an absolute path without `.`, `..` or symlinks, as far as the
/// file system can tell: its longest existing ancestor resolved, then the
/// names below it (a file in folders not created yet); `p` itself when no
/// ancestor resolves.
fn resolved(p: &Path) -> PathBuf {
    let mut p = p.to_path_buf();
    for _ in 0..MAX_LINKS {
        if let Ok(c) = p.canonicalize() {
            return c;
        }
        // A dangling symlink: a writer opening it creates its target.
        match std::fs::read_link(&p) {
            Ok(target) => {
                p = match p.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            Err(_) => break,
        }
    }
    let mut names = Vec::new();
    let mut at = p.as_path();
    while let (Some(dir), Some(name)) = (at.parent(), at.file_name()) {
        names.push(name);
        at = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(mut d) = at.canonicalize() {
            d.extend(names.iter().rev());
            return d;
        }
    }
    p.clone()
}

/// The refusal of two arguments naming one file: `A and B name the same file
/// P` when both were spelt alike, else `A P and B Q name the same file`.
/// `a` and `b` are labels (`--trace`, `OUT`, `shard`).
pub fn both_name(a: &str, a_path: &Path, b: &str, b_path: &Path) -> String {
    if a_path.as_os_str() == b_path.as_os_str() {
        format!("{a} and {b} name the same file {}", a_path.display())
    } else {
        format!(
            "{a} {} and {b} {} name the same file",
            a_path.display(),
            b_path.display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_file_under_any_name() {
        let dir = std::env::temp_dir().join(format!("drop7-same-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("x")).unwrap();
        let (a, b) = (dir.join("a"), dir.join("b"));
        std::fs::write(&a, "a").unwrap();
        std::fs::write(&b, "b").unwrap();
        let dotted = dir.join("x").join("..").join("a");
        assert!(same_file(&a, &dotted));
        assert!(!same_file(&a, &b));
        // Not created yet: the same resolved name.
        let new = dir.join("new");
        assert!(same_file(&new, &dir.join("x/../new")));
        assert!(!same_file(&new, &dir.join("x/new")));
        assert!(!same_file(&new, &a));
        #[cfg(unix)]
        {
            let link = dir.join("link");
            std::os::unix::fs::symlink(&a, &link).unwrap();
            assert!(same_file(&a, &link));
            let hard = dir.join("hard");
            std::fs::hard_link(&a, &hard).unwrap();
            assert!(same_file(&hard, &a));
            let dangling = dir.join("dangling");
            std::os::unix::fs::symlink("new", &dangling).unwrap();
            assert!(same_file(&dangling, &new));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_message_names_both_arguments() {
        let (p, q) = (Path::new("p.jsonl"), Path::new("./p.jsonl"));
        assert_eq!(
            both_name("--trace", p, "--out", p),
            "--trace and --out name the same file p.jsonl"
        );
        assert_eq!(
            both_name("OUT", q, "shard", p),
            "OUT ./p.jsonl and shard p.jsonl name the same file"
        );
    }
}
