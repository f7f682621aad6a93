//! Selections of `klf dump` (`--offsets`, `--since`, `--until`, `--key`,
//! `--producer-id`, `--transactional-id`, `--count`): what is asked for, resolved against each log (offsets
//! counted back from its end), found in each segment with its indexes
//! ([`pick_of`]), and counted so that a log the selection matches nothing
//! of can be named with what it holds ([`Logs`]).

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::capture::segment::SegmentFile;
use crate::capture::vfs;
use crate::format::names::{base_offset_of, parse_partition_dir_name};
use crate::format::seek::{Extent, Pick, Wanted};
use crate::model::dump::{Item, Kind};

use super::open::Inputs;
use super::walk::Expansion;

/// One end of `--offsets`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// None given: the start or the end of the log.
    Open,
    /// An offset.
    At(i64),
    /// `-N`: N offsets before the log end offset.
    FromEnd(i64),
}

/// `--offsets A..B`: B excluded, either end open or counted back from the
/// log end offset (`-N`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetRange {
    /// A.
    pub first: Bound,
    /// B.
    pub end: Bound,
    /// As given.
    pub text: String,
}

impl OffsetRange {
    /// Whether an end counts back from the log end offset.
    pub fn is_relative(&self) -> bool {
        matches!(self.first, Bound::FromEnd(_)) || matches!(self.end, Bound::FromEnd(_))
    }

    /// `[first, end)` for a log whose log end offset is `log_end` (an
    /// offset counted back past the start is the start, 0).
    pub fn resolve(&self, log_end: i64) -> (i64, i64) {
        let back = |n: i64| log_end.saturating_sub(n).max(0);
        let first = match self.first {
            Bound::Open => i64::MIN,
            Bound::At(a) => a,
            Bound::FromEnd(n) => back(n),
        };
        let end = match self.end {
            Bound::Open => i64::MAX,
            Bound::At(b) => b,
            Bound::FromEnd(n) => back(n),
        };
        (first, end)
    }
}

/// `--offsets`: `A..B`, `A..` or `..B`, B excluded; `-N` for N before the
/// log end offset.
pub fn parse_offsets(s: &str) -> Result<OffsetRange, String> {
    let (a, b) = s.split_once("..").ok_or_else(|| {
        format!("{s:?}: give offsets as A..B (B excluded), A.., ..B, or -N.. for the last N")
    })?;
    let end = |x: &str| -> Result<Bound, String> {
        if x.is_empty() {
            return Ok(Bound::Open);
        }
        let bad = || {
            format!(
                "{x:?} is not an offset (in {s:?}; give A..B, A.., ..B, or -N.. for the last N)"
            )
        };
        match x.strip_prefix('-') {
            Some(n) if !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()) => {
                n.parse::<i64>().map(Bound::FromEnd).map_err(|_| bad())
            }
            Some(_) => Err(bad()),
            None if x.bytes().all(|c| c.is_ascii_digit()) => {
                x.parse::<i64>().map(Bound::At).map_err(|_| bad())
            }
            None => Err(bad()),
        }
    };
    let (first, last) = (end(a)?, end(b)?);
    let backwards = match (first, last) {
        (Bound::At(a), Bound::At(b)) => a > b,
        (Bound::FromEnd(a), Bound::FromEnd(b)) => a < b,
        _ => false,
    };
    if backwards {
        return Err(format!("{s:?}: the first offset is past the end"));
    }
    Ok(OffsetRange {
        first,
        end: last,
        text: s.to_string(),
    })
}

/// What a dump reads of each segment: the offsets and times asked for,
/// a key, a count, and `--max-bytes`.
#[derive(Debug, Clone)]
pub struct Selection {
    /// The offsets and times asked for (`--offsets`, `--since`,
    /// `--until`).
    pub want: Wanted,
    /// Only records with this key (`--key`).
    pub key: Option<Vec<u8>>,
    /// Only batches of these producer ids (`--producer-id`, and those
    /// `--transactional-id` resolves to).
    pub producers: Option<Vec<i64>>,
    /// At most this many records (batches without `--deep-iteration`) per
    /// file (`--count`).
    pub count: Option<u64>,
    /// Only this many bytes of each `.log` (`--max-bytes`).
    pub max_bytes: i32,
}

impl Default for Selection {
    fn default() -> Self {
        Selection {
            want: Wanted::default(),
            key: None,
            producers: None,
            count: None,
            max_bytes: i32::MAX,
        }
    }
}

impl Selection {
    /// Whether it asks for a part of each segment (`--offsets`,
    /// `--since`, `--until`, `--key`, `--producer-id`, `--count`).
    pub fn selects(&self) -> bool {
        !self.want.is_all()
            || self.key.is_some()
            || self.producers.is_some()
            || self.count.is_some()
    }
}

/// Where `sel` lies in the segment of `inputs` (found with its `.index`
/// and `.timeindex`), `--max-bytes` applied; with `tally`, what it shows
/// is counted there.
pub fn pick_of(inputs: &Inputs, sel: &Selection, tally: Option<&Arc<AtomicU64>>) -> Pick {
    let log = inputs.log();
    let end = (sel.max_bytes.max(0) as u64).min(log.len());
    let span = (!sel.want.is_all()).then(|| {
        crate::format::seek::span(
            log,
            inputs.index_bytes(),
            inputs.timeindex_bytes(),
            inputs.base(),
            &sel.want,
        )
    });
    let mut pick = Pick::new(span, end, sel.key.clone(), sel.count);
    if let Some(p) = &sel.producers {
        pick = pick.of_producers(p);
    }
    match tally {
        Some(t) => pick.tallied(t.clone()),
        None => pick,
    }
}

/// The producer ids `transactional_id` used, from the `__transaction_state`
/// of the capture each of `logs` (segment paths) lies in: the log
/// directory holding its partition directory, else the folder of broker
/// directories holding that (the id's coordinator partition may be on
/// another broker). `Err` says why there are none: no
/// `__transaction_state` there (a file given alone), or none of its
/// records names the id.
pub fn producers_of_transactional_id(
    logs: &[&str],
    transactional_id: &str,
) -> Result<Vec<i64>, String> {
    use crate::capture::discover::{discover, holds_log_directories};
    use crate::capture::transactions::transaction_log;
    let mut roots: Vec<(std::path::PathBuf, Option<std::path::PathBuf>)> = Vec::new();
    for l in logs {
        // only a segment in a partition directory of a log directory: a
        // file elsewhere is alone (no folder above it is searched)
        let Some(part_dir) = Path::new(l).parent() else {
            continue;
        };
        let named_like_partition = part_dir
            .file_name()
            .is_some_and(|n| parse_partition_dir_name(&n.to_string_lossy()).is_ok());
        let Some(log_dir) = part_dir.parent() else {
            continue;
        };
        let log_dir = if log_dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            log_dir
        };
        if !named_like_partition || !holds_log_directories(log_dir) {
            continue;
        }
        let above = log_dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty() && holds_log_directories(p))
            .map(Path::to_path_buf);
        let r = (log_dir.to_path_buf(), above);
        if !roots.contains(&r) {
            roots.push(r);
        }
    }
    let mut found: Vec<i64> = Vec::new();
    let mut looked: Vec<String> = Vec::new();
    let mut held: Vec<String> = Vec::new();
    let mut present = false;
    let mut read: BTreeSet<std::path::PathBuf> = BTreeSet::new();
    for (log_dir, above) in &roots {
        let mut here = Vec::new();
        for root in std::iter::once(log_dir).chain(above) {
            if !here.is_empty() || !read.insert(root.clone()) {
                continue;
            }
            looked.push(root.display().to_string());
            let capture = discover(&[root]);
            let view = transaction_log(&capture, &|_| None);
            if !view.topic_present {
                continue;
            }
            present = true;
            here = view.producers_of(transactional_id);
            if here.is_empty() {
                held.extend(view.ids.iter().map(|t| t.transactional_id.clone()));
            }
        }
        found.extend(here);
    }
    found.sort_unstable();
    found.dedup();
    if !found.is_empty() {
        return Ok(found);
    }
    if looked.is_empty() {
        return Err("no segment given lies in a partition directory of a broker log directory: a file given alone cannot be told by transactional id (its capture's __transaction_state is not known); give its --producer-id".to_string());
    }
    held.sort();
    held.dedup();
    if !present {
        return Err(format!(
            "no __transaction_state partition in the capture the segments are in (looked in {}): a file given alone cannot be told by transactional id; give its --producer-id",
            looked.join(", ")
        ));
    }
    const SHOWN: usize = 20;
    let more = held.len().saturating_sub(SHOWN);
    held.truncate(SHOWN);
    Err(format!(
        "the __transaction_state of the capture (looked in {}) holds no record of it{}",
        looked.join(", "),
        if held.is_empty() {
            String::new()
        } else {
            format!(
                "; it holds {}{}",
                held.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            )
        }
    ))
}

/// One log of a run under a selection: the `.log` files of one folder (a
/// partition directory), or a KRaft snapshot alone.
pub struct Log {
    /// What stderr calls it: the folder, or its file when it has one.
    pub name: String,
    /// Its files, in the order dumped.
    pub files: Vec<String>,
    /// What it shows.
    pub tally: Arc<AtomicU64>,
    /// The selection in it (offsets counted back from its end resolved).
    pub want: Wanted,
    /// `--offsets` as resolved for it, when counted back from its end:
    /// first, end, and the log's end offset.
    pub resolved: Option<(i64, i64, i64)>,
}

/// The name of a path's last component.
fn file_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

impl Log {
    /// Its newest file: the highest base offset in a name, the last of
    /// those.
    pub fn newest(&self) -> Option<&String> {
        self.files
            .iter()
            .enumerate()
            .max_by_key(|(i, f)| (base_offset_of(&file_name(f)).unwrap_or(-1), *i))
            .map(|(_, f)| f)
    }

    /// Whether the selection showed nothing of it.
    pub fn unmatched(&self) -> bool {
        self.tally.load(Ordering::Relaxed) == 0
    }

    /// What it holds: the first batch of its first file and the end of
    /// its newest; `None` when one cannot be read (its dump said why).
    pub fn holds(&self) -> Option<(Extent, Extent)> {
        let first = file_extent(self.files.first()?)?;
        let last = file_extent(self.newest()?)?;
        Some((first, last))
    }
}

/// The logs of a run, and the log of each file dumped.
#[derive(Default)]
pub struct Logs {
    /// The logs, in the order their first files are dumped.
    pub logs: Vec<Log>,
    /// For each PATH, for each of its files, its log.
    of: Vec<Vec<Option<usize>>>,
}

/// The log a file belongs to: the folder of a `.log`, a KRaft snapshot
/// itself; None for a file that holds no batches.
fn log_key(item: &Item) -> Option<String> {
    if item.kind != Kind::Log {
        return None;
    }
    if !item.path.ends_with(".log") {
        return Some(item.path.clone());
    }
    let parent = Path::new(&item.path)
        .parent()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    Some(if parent.is_empty() {
        ".".to_string()
    } else {
        parent
    })
}

/// The ends of a `.log` or KRaft snapshot file, read with its `.index`;
/// None when it cannot be opened (which its dump reports).
pub fn file_extent(path: &str) -> Option<Extent> {
    let p = Path::new(path);
    let log = SegmentFile::open(p).ok()?;
    let base = base_offset_of(&file_name(path)).unwrap_or(0);
    let index = path
        .ends_with(".log")
        .then(|| vfs::open(&p.with_extension("index")).ok())
        .flatten();
    Some(crate::format::seek::extent(&log, index.as_deref(), base))
}

/// How `--offsets` counted back from the end was resolved for one log.
pub struct Resolved<'a> {
    /// The log.
    pub log: &'a str,
    /// The first offset (`i64::MIN`: open).
    pub first: i64,
    /// The end offset, excluded (`i64::MAX`: open).
    pub end: i64,
    /// The log's end offset.
    pub log_end: i64,
}

impl Logs {
    /// The logs of the files of `expanded`, each with the selection `want`.
    pub fn of(expanded: &[Expansion], want: Wanted) -> Logs {
        let mut logs = Logs::default();
        let mut keys: Vec<String> = Vec::new();
        for e in expanded {
            let mut of = Vec::with_capacity(e.items.len());
            for item in &e.items {
                let at = log_key(item).map(|k| match keys.iter().position(|x| *x == k) {
                    Some(at) => at,
                    None => {
                        keys.push(k.clone());
                        logs.logs.push(Log {
                            name: k,
                            files: Vec::new(),
                            tally: Arc::new(AtomicU64::new(0)),
                            want,
                            resolved: None,
                        });
                        logs.logs.len() - 1
                    }
                });
                if let Some(at) = at {
                    logs.logs[at].files.push(item.path.clone());
                }
                of.push(at);
            }
            logs.of.push(of);
        }
        for l in &mut logs.logs {
            if let [one] = l.files.as_slice() {
                l.name = one.clone();
            }
        }
        logs
    }

    /// The log of file `i` of PATH `n`, with the run's selection in it.
    pub fn of_item(&self, n: usize, i: usize) -> Option<&Log> {
        let at = (*self.of.get(n)?.get(i)?)?;
        self.logs.get(at)
    }

    /// Sets the selection of each log: `want`, with the offsets of
    /// `range` counted back from the log's end offset (that of its newest
    /// file: its last readable batch's, or the base offset in its name
    /// when it holds none). What each became, for a note.
    pub fn resolve(&mut self, range: &OffsetRange, want: &Wanted) -> Vec<Resolved<'_>> {
        let mut out = Vec::new();
        for l in &mut self.logs {
            let Some(newest) = l.newest().cloned() else {
                continue;
            };
            let named_base = base_offset_of(&file_name(&newest));
            let end = file_extent(&newest)
                .and_then(|e| e.end)
                .map(|(o, _)| o)
                .or(named_base)
                .unwrap_or(0);
            let (first, last) = range.resolve(end);
            l.want = Wanted {
                first,
                end: last,
                ..*want
            };
            l.resolved = Some((first, last, end));
            out.push(Resolved {
                log: &l.name,
                first,
                end: last,
                log_end: end,
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_from_the_start_or_counted_back_from_the_end() {
        let r = |s: &str, end: i64| parse_offsets(s).map(|o| o.resolve(end));
        assert_eq!(r("100..110", 0), Ok((100, 110)));
        assert_eq!(r("100..", 0), Ok((100, i64::MAX)));
        assert_eq!(r("..110", 0), Ok((i64::MIN, 110)));
        assert_eq!(r("-100..", 250), Ok((150, i64::MAX)));
        assert_eq!(r("-100..-50", 250), Ok((150, 200)));
        assert_eq!(r("..-10", 250), Ok((i64::MIN, 240)));
        assert_eq!(r("-100..", 30), Ok((0, i64::MAX)), "at most the whole log");
        assert!(parse_offsets("-100..").unwrap().is_relative());
        assert!(!parse_offsets("1..2").unwrap().is_relative());
        for bad in ["5..3", "-5..-10", "x..", "1-2..", "100", "--5.."] {
            assert!(parse_offsets(bad).is_err(), "{bad}");
        }
    }
}
