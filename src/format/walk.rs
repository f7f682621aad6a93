//! One walk over a segment's entries: the loop every reader of a `.log`
//! runs, written once.
//!
//! A [`Walk`] wraps any [`Entries`] (a [`SegmentIter`] over bytes in
//! memory, a reader of a file mapped or read a window at a time) and hands
//! out one [`Step`] at a time: a framed entry, the bytes a resync skipped,
//! an entry that does not frame, one whose checksum fails, the torn tail
//! the segment ends on, or a read that failed. It applies, the same way for
//! every reader:
//!
//! - the **checksum policy** ([`Checksums`]): not checked, checked and the
//!   walk stopped at the first batch whose checksum fails (Kafka's
//!   recovery truncates there), or checked and marked, the walk going on;
//! - **resync** ([`Walk::resync`]): after damage, the walk scans forward
//!   for the next plausible entry and goes on there, saying what it
//!   skipped; without it, damage ends the walk;
//! - the **offsets asked for** ([`Walk::from`], [`Walk::to`]): batches
//!   whose last offset is below `from` are passed over (counted, not
//!   handed out), and the walk ends at the first batch whose base offset
//!   is at or past `to`; a reader's own choice of batches
//!   ([`Walk::keep`]) passes over the others the same way;
//! - **bytes that changed while read are not evidence**: a checksum that
//!   fails in a file that changed since it was opened is a failed read
//!   ([`Step::Io`]), never damage.
//!
//! The walk lends each entry (it borrows the reader's window), so it is
//! read with `while let Some(step) = walk.next()`:
//!
//! ```
//! use klf::format::batch::{encode_batch, SegmentIter};
//! use klf::format::walk::{Checksums, Step, Walk};
//!
//! let seg = encode_batch(0, 0, 0, 0, 0, 0, (-1, -1, -1), 0, &[]);
//! let mut walk = Walk::new(SegmentIter::new(&seg)).checksums(Checksums::Stop);
//! let mut batches = 0;
//! while let Some(step) = walk.next() {
//!     match step {
//!         Step::Batch(_) => batches += 1,
//!         Step::BadCrc(b, e) => println!("{}: {}", b.position(), e.reason),
//!         Step::Bad(e) => println!("{}: {}", e.pos, e.reason),
//!         Step::Skipped(s) => println!("skipped [{}, {})", s.from, s.to),
//!         Step::Tail(t) => println!("{}: {}", t.position, t.describe()),
//!         Step::Io(e) => println!("cannot read: {e}"),
//!     }
//! }
//! assert_eq!(batches, 1);
//! ```

use std::io;

use super::batch::{Batch, Entries, EntryError, SegmentIter, Skipped, Tail};
use super::ParseError;

/// What the walk does with each entry's checksum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Checksums {
    /// Not checked: every entry that frames is a [`Step::Batch`].
    #[default]
    Unchecked,
    /// Checked: the first entry whose checksum fails is a
    /// [`Step::BadCrc`] and ends the walk (unless resync is on), as Kafka's
    /// recovery truncates the log there. Batches passed over below
    /// [`Walk::from`] are checked too: the walk stops at them.
    Stop,
    /// Checked: an entry whose checksum fails is a [`Step::BadCrc`] and the
    /// walk goes on.
    Mark,
}

/// One step of a [`Walk`].
#[derive(Debug)]
pub enum Step<'a> {
    /// A framed entry (a v2 batch or a legacy message), its checksum
    /// matching or not checked.
    Batch(Batch<'a>),
    /// A framed entry whose checksum fails (or that is too short to carry
    /// one), with why; only under [`Checksums::Stop`] (the walk ends after
    /// it unless resync is on: it then goes on with the entry after it) or
    /// [`Checksums::Mark`].
    BadCrc(Batch<'a>, ParseError),
    /// Bytes a resync skipped after a [`Step::Bad`]; the walk goes on at
    /// the end of the range.
    Skipped(Skipped),
    /// An entry that does not frame. The walk ends unless resync is on.
    Bad(ParseError),
    /// The torn tail the segment ends on (the last step).
    Tail(Tail),
    /// A read that failed, or bytes that changed while read (the last
    /// step). Nothing is known about the bytes from here on.
    Io(io::Error),
}

/// Where the walk stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Reading,
    /// After a [`Step::Bad`] with resync on: the next step is the resync.
    Resync,
    Over,
}

/// What the walk makes of an entry it read, before it hands out anything.
enum Got {
    /// The entries ended (a tail, or their end).
    End,
    Io(io::Error),
    Bad(ParseError),
    /// The entry is handed out.
    Batch,
    /// The entry is handed out with its failed checksum.
    BadCrc(ParseError),
    /// The entry lies at or past the end offset: the walk ends.
    PastEnd,
    /// Passed over (below the start offset, or not kept).
    Passed,
}

/// Which batches a reader wants (see [`Walk::keep`]).
type Keep = Box<dyn Fn(&Batch<'_>) -> bool + Send + Sync>;

/// The rules applied to each entry (apart from the entries, which lend
/// it).
#[derive(Default)]
struct Rules {
    resync: bool,
    checksums: Checksums,
    from: Option<i64>,
    to: Option<i64>,
    keep: Option<Keep>,
    passed: u64,
    passed_end: Option<i64>,
    reached_to: bool,
}

impl std::fmt::Debug for Rules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rules")
            .field("resync", &self.resync)
            .field("checksums", &self.checksums)
            .field("from", &self.from)
            .field("to", &self.to)
            .field("keep", &self.keep.is_some())
            .field("passed", &self.passed)
            .field("passed_end", &self.passed_end)
            .field("reached_to", &self.reached_to)
            .finish()
    }
}

impl Rules {
    fn judge(&mut self, b: &Batch<'_>) -> Got {
        // A stopping walk stops at a bad checksum wherever it is, batches
        // passed over included; a marking one checks only what it hands
        // out.
        if self.checksums == Checksums::Stop {
            if let Err(e) = b.check_crc() {
                return Got::BadCrc(e);
            }
        }
        if self.from.is_some_and(|from| b.last_offset() < from) {
            self.passed += 1;
            let end = b.last_offset().saturating_add(1);
            self.passed_end = Some(self.passed_end.map_or(end, |e| e.max(end)));
            return Got::Passed;
        }
        if self.to.is_some_and(|to| b.offset_field() >= to) {
            self.reached_to = true;
            return Got::PastEnd;
        }
        if self.keep.as_ref().is_some_and(|keep| !keep(b)) {
            return Got::Passed;
        }
        if self.checksums == Checksums::Mark {
            if let Err(e) = b.check_crc() {
                return Got::BadCrc(e);
            }
        }
        Got::Batch
    }
}

/// One walk over the entries of a segment; see the module docs.
#[derive(Debug)]
pub struct Walk<E> {
    entries: E,
    rules: Rules,
    state: State,
}

impl<E: Entries> Walk<E> {
    /// Walks `entries`: every entry that frames, checksums not checked,
    /// damage ending the walk.
    pub fn new(entries: E) -> Self {
        Walk {
            entries,
            rules: Rules::default(),
            state: State::Reading,
        }
    }

    /// With `on`, damage (an entry that does not frame; under
    /// [`Checksums::Stop`], a checksum that fails) does not end the walk:
    /// it resumes at the next plausible entry, the skipped bytes a
    /// [`Step::Skipped`].
    pub fn resync(mut self, on: bool) -> Self {
        self.rules.resync = on;
        self
    }

    /// What to do with checksums (see [`Checksums`]).
    pub fn checksums(mut self, policy: Checksums) -> Self {
        self.rules.checksums = policy;
        self
    }

    /// Batches whose last offset is below `offset` are passed over: not
    /// handed out, counted ([`Walk::passed`]).
    pub fn from(mut self, offset: i64) -> Self {
        self.rules.from = Some(offset);
        self
    }

    /// The walk ends (quietly) at the first batch whose base offset (a
    /// legacy message's offset) is at or past `offset`.
    pub fn to(mut self, offset: i64) -> Self {
        self.rules.to = Some(offset);
        self
    }

    /// Only the batches `keep` says yes to are handed out; the others are
    /// passed over (after [`Walk::from`] and [`Walk::to`] had their say;
    /// not counted in [`Walk::passed`]). Under [`Checksums::Stop`] their
    /// checksums are checked too, as those below `from`.
    pub fn keep(mut self, keep: impl Fn(&Batch<'_>) -> bool + Send + Sync + 'static) -> Self {
        self.rules.keep = Some(Box::new(keep));
        self
    }

    /// The next step; `None` once the walk is over.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<Step<'_>> {
        // Everything that moves the entries happens in this loop, and what
        // it found is kept as owned values: the entry handed out is taken
        // again after it (see `Entries::again`), so that no borrow of the
        // entries outlives a step that reads on.
        let got = loop {
            match self.state {
                State::Over => return None,
                State::Resync => {
                    self.state = State::Over;
                    return match self.entries.resync() {
                        Ok(Some(s)) => {
                            self.state = State::Reading;
                            Some(Step::Skipped(s))
                        }
                        Ok(None) => None,
                        Err(EntryError::Io(e)) => Some(Step::Io(e)),
                        Err(EntryError::Bad(e)) => Some(Step::Bad(e)),
                    };
                }
                State::Reading => {}
            }
            let got = match self.entries.next_entry() {
                None => Got::End,
                Some(Err(EntryError::Io(e))) => Got::Io(e),
                Some(Err(EntryError::Bad(e))) => Got::Bad(e),
                Some(Ok(b)) => self.rules.judge(&b),
            };
            if !matches!(got, Got::Passed) {
                break got;
            }
        };
        match got {
            // never: the loop reads on past it
            Got::Passed => None,
            Got::End | Got::PastEnd => {
                self.state = State::Over;
                match got {
                    Got::End => self.entries.tail().map(Step::Tail),
                    _ => None,
                }
            }
            Got::Io(e) => {
                self.state = State::Over;
                Some(Step::Io(e))
            }
            Got::Bad(e) => {
                self.state = if self.rules.resync {
                    State::Resync
                } else {
                    State::Over
                };
                Some(Step::Bad(e))
            }
            Got::Batch => match self.entries.again() {
                Some(b) => Some(Step::Batch(b)),
                None => {
                    self.state = State::Over;
                    Some(Step::Io(lost()))
                }
            },
            Got::BadCrc(e) => {
                // bytes that changed under the reader are not evidence
                if let Err(io) = self.entries.unchanged() {
                    self.state = State::Over;
                    return Some(Step::Io(io));
                }
                if self.rules.checksums == Checksums::Stop && !self.rules.resync {
                    self.state = State::Over;
                }
                match self.entries.again() {
                    Some(b) => Some(Step::BadCrc(b, e)),
                    None => {
                        self.state = State::Over;
                        Some(Step::Io(lost()))
                    }
                }
            }
        }
    }

    /// Position of the next entry.
    pub fn position(&self) -> u64 {
        self.entries.position()
    }

    /// The entries from the current position that are already in memory,
    /// to look ahead (see [`Entries::ahead`]).
    pub fn ahead(&self) -> SegmentIter<'_> {
        self.entries.ahead()
    }

    /// What maps the bytes ahead into memory (see [`Entries::page_in`]).
    pub fn page_in(&self) -> Option<fn(&[u8])> {
        self.entries.page_in()
    }

    /// How many batches were passed over below [`Walk::from`].
    pub fn passed(&self) -> u64 {
        self.rules.passed
    }

    /// One past the greatest last offset of the batches passed over below
    /// [`Walk::from`] (`None`: none was).
    pub fn passed_end(&self) -> Option<i64> {
        self.rules.passed_end
    }

    /// Whether the walk ended at a batch at or past [`Walk::to`].
    pub fn reached_to(&self) -> bool {
        self.rules.reached_to
    }

    /// The entries walked.
    pub fn entries(&self) -> &E {
        &self.entries
    }
}

/// Entries that cannot give again the entry they just read (a wrapper
/// that does not forward [`Entries::again`]): a fault of the program,
/// reported as a failed read rather than a panic.
fn lost() -> io::Error {
    io::Error::other(
        "the entry just read cannot be framed again (a reader that does not forward `again`)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::batch::{encode_batch, TailKind};
    use crate::format::record::encode_record;

    fn batch(base: i64, n: i32) -> Vec<u8> {
        let mut recs = Vec::new();
        for i in 0..n {
            encode_record(&mut recs, i as i64, i, Some(b"k"), Some(b"v"), &[]);
        }
        encode_batch(
            base,
            0,
            0,
            n - 1,
            1000,
            1000 + n as i64 - 1,
            (-1, -1, -1),
            n,
            &recs,
        )
    }

    /// `(kind, position or offset)` of each step.
    fn steps<E: Entries>(mut w: Walk<E>) -> Vec<(&'static str, i64)> {
        let mut out = Vec::new();
        while let Some(s) = w.next() {
            out.push(match s {
                Step::Batch(b) => ("batch", b.offset_field()),
                Step::BadCrc(b, _) => ("crc", b.offset_field()),
                Step::Skipped(s) => ("skipped", s.to as i64),
                Step::Bad(e) => ("bad", e.pos as i64),
                Step::Tail(t) => ("tail", t.position as i64),
                Step::Io(_) => ("io", w.position() as i64),
            });
        }
        assert!(w.next().is_none(), "a walk that ended stays ended");
        out
    }

    /// Three batches of two records each: offsets 0-1, 2-3, 4-5.
    fn three() -> (Vec<u8>, [usize; 3]) {
        let (a, b, c) = (batch(0, 2), batch(2, 2), batch(4, 2));
        let at = [0, a.len(), a.len() + b.len()];
        ([a, b, c].concat(), at)
    }

    #[test]
    fn every_batch_then_the_end() {
        let (seg, _) = three();
        assert_eq!(
            steps(Walk::new(SegmentIter::new(&seg))),
            [("batch", 0), ("batch", 2), ("batch", 4)]
        );
    }

    #[test]
    fn torn_tail_is_the_last_step() {
        let (mut seg, _) = three();
        let len = seg.len();
        seg.extend_from_slice(&batch(6, 1)[..30]);
        let mut w = Walk::new(SegmentIter::new(&seg));
        let mut tail = None;
        while let Some(s) = w.next() {
            if let Step::Tail(t) = s {
                tail = Some(t);
            }
        }
        let t = tail.unwrap();
        assert_eq!(t.position, len as u64);
        assert!(matches!(t.kind, TailKind::Truncated { .. }));
        // a short tail too
        let (mut seg, _) = three();
        seg.extend_from_slice(&[0; 9]);
        assert_eq!(
            steps(Walk::new(SegmentIter::new(&seg))).last(),
            Some(&("tail", len as i64))
        );
    }

    #[test]
    fn bad_entry_ends_the_walk_or_resyncs() {
        let (mut seg, at) = three();
        // the second batch's size field below the minimum
        seg[at[1] + 8..at[1] + 12].copy_from_slice(&3i32.to_be_bytes());
        assert_eq!(
            steps(Walk::new(SegmentIter::new(&seg))),
            [("batch", 0), ("bad", at[1] as i64)]
        );
        assert_eq!(
            steps(Walk::new(SegmentIter::new(&seg)).resync(true)),
            [
                ("batch", 0),
                ("bad", at[1] as i64),
                ("skipped", at[2] as i64),
                ("batch", 4)
            ]
        );
    }

    #[test]
    fn resync_to_the_end() {
        let (mut seg, at) = three();
        seg[at[2] + 8..at[2] + 12].copy_from_slice(&0i32.to_be_bytes());
        assert_eq!(
            steps(Walk::new(SegmentIter::new(&seg)).resync(true)),
            [
                ("batch", 0),
                ("batch", 2),
                ("bad", at[2] as i64),
                ("skipped", seg.len() as i64)
            ]
        );
    }

    /// The three batches with the second one's last byte flipped.
    fn bad_crc() -> (Vec<u8>, [usize; 3]) {
        let (mut seg, at) = three();
        seg[at[2] - 1] ^= 0xff;
        (seg, at)
    }

    #[test]
    fn checksums_unchecked_marked_or_stopping() {
        let (seg, _) = bad_crc();
        let walk = || Walk::new(SegmentIter::new(&seg));
        assert_eq!(steps(walk()), [("batch", 0), ("batch", 2), ("batch", 4)]);
        assert_eq!(
            steps(walk().checksums(Checksums::Mark)),
            [("batch", 0), ("crc", 2), ("batch", 4)]
        );
        assert_eq!(
            steps(walk().checksums(Checksums::Stop)),
            [("batch", 0), ("crc", 2)]
        );
        assert_eq!(
            steps(walk().checksums(Checksums::Stop).resync(true)),
            [("batch", 0), ("crc", 2), ("batch", 4)]
        );
        let mut w = walk().checksums(Checksums::Stop);
        w.next();
        let Some(Step::BadCrc(b, e)) = w.next() else {
            panic!("no bad checksum")
        };
        assert_eq!(e.pos, b.position());
        assert!(e.reason.contains("CRC mismatch"), "{}", e.reason);
    }

    #[test]
    fn from_passes_over_and_to_ends() {
        let (seg, _) = three();
        let mut w = Walk::new(SegmentIter::new(&seg)).from(3);
        assert_eq!(
            std::iter::from_fn(|| w.next().map(|s| matches!(s, Step::Batch(_)))).count(),
            2
        );
        assert_eq!((w.passed(), w.passed_end()), (1, Some(2)));
        assert_eq!(
            steps(Walk::new(SegmentIter::new(&seg)).from(4)),
            [("batch", 4)]
        );
        let mut w = Walk::new(SegmentIter::new(&seg)).to(2);
        assert!(matches!(w.next(), Some(Step::Batch(_))));
        assert!(w.next().is_none());
        assert!(w.reached_to());
        assert_eq!(
            steps(Walk::new(SegmentIter::new(&seg)).from(2).to(4)),
            [("batch", 2)]
        );
        assert_eq!(steps(Walk::new(SegmentIter::new(&seg)).from(6)), []);
    }

    #[test]
    fn a_bad_checksum_below_from_stops_a_stopping_walk() {
        let (seg, _) = bad_crc();
        assert_eq!(
            steps(
                Walk::new(SegmentIter::new(&seg))
                    .from(4)
                    .checksums(Checksums::Stop)
            ),
            [("crc", 2)]
        );
        // marked: passed over like any other below `from`
        assert_eq!(
            steps(
                Walk::new(SegmentIter::new(&seg))
                    .from(4)
                    .checksums(Checksums::Mark)
            ),
            [("batch", 4)]
        );
    }

    #[test]
    fn keep_passes_over_what_it_does_not_want() {
        let (seg, _) = three();
        let walk = || Walk::new(SegmentIter::new(&seg));
        assert_eq!(
            steps(walk().keep(|b| b.offset_field() != 2)),
            [("batch", 0), ("batch", 4)]
        );
        // after `from`, and not counted with the batches below it
        let mut w = walk().from(2).keep(|b| b.offset_field() != 2);
        assert!(matches!(w.next(), Some(Step::Batch(b)) if b.offset_field() == 4));
        assert!(w.next().is_none());
        assert_eq!((w.passed(), w.passed_end()), (1, Some(2)));
        // `to` ends the walk first
        assert_eq!(steps(walk().to(2).keep(|b| b.offset_field() >= 2)), []);
        // a torn tail is still the last step when nothing is kept
        let (mut torn, _) = three();
        let len = torn.len();
        torn.extend_from_slice(&[0; 9]);
        assert_eq!(
            steps(Walk::new(SegmentIter::new(&torn)).keep(|_| false)),
            [("tail", len as i64)]
        );
    }

    #[test]
    fn keep_and_checksums() {
        let (seg, _) = bad_crc();
        let walk = || Walk::new(SegmentIter::new(&seg)).keep(|b| b.offset_field() != 2);
        // a stopping walk stops at the bad batch it would pass over
        assert_eq!(
            steps(walk().checksums(Checksums::Stop)),
            [("batch", 0), ("crc", 2)]
        );
        // a marking one checks only what it hands out
        assert_eq!(
            steps(walk().checksums(Checksums::Mark)),
            [("batch", 0), ("batch", 4)]
        );
        let w = Walk::new(SegmentIter::new(&seg))
            .checksums(Checksums::Mark)
            .keep(|b| b.offset_field() == 2);
        assert_eq!(steps(w), [("crc", 2)]);
    }

    /// Entries that fail the read after `ok` entries, or say the bytes
    /// changed.
    struct Faulty<'a> {
        inner: SegmentIter<'a>,
        ok: usize,
        changed: bool,
    }

    impl Entries for Faulty<'_> {
        fn next_entry(&mut self) -> Option<Result<Batch<'_>, EntryError>> {
            if self.ok == 0 {
                return Some(Err(EntryError::Io(io::Error::other("EIO"))));
            }
            self.ok -= 1;
            self.inner.next_entry()
        }
        fn resync(&mut self) -> Result<Option<Skipped>, EntryError> {
            Err(EntryError::Io(io::Error::other("EIO")))
        }
        fn tail(&self) -> Option<Tail> {
            self.inner.tail()
        }
        fn position(&self) -> u64 {
            self.inner.position()
        }
        fn ahead(&self) -> SegmentIter<'_> {
            self.inner.ahead()
        }
        fn again(&self) -> Option<Batch<'_>> {
            self.inner.again()
        }
        fn unchanged(&self) -> io::Result<()> {
            if self.changed {
                Err(io::Error::other("the file changed while klf read it"))
            } else {
                Ok(())
            }
        }
    }

    #[test]
    fn a_failed_read_is_the_last_step() {
        let (seg, at) = three();
        let faulty = |ok| Faulty {
            inner: SegmentIter::new(&seg),
            ok,
            changed: false,
        };
        assert_eq!(
            steps(Walk::new(faulty(1))),
            [("batch", 0), ("io", at[1] as i64)]
        );
        assert_eq!(steps(Walk::new(faulty(0)).resync(true)), [("io", 0)]);
        // a resync whose read fails
        let (mut bad, _) = three();
        bad[8..12].copy_from_slice(&0i32.to_be_bytes());
        let w = Walk::new(Faulty {
            inner: SegmentIter::new(&bad),
            ok: 5,
            changed: false,
        })
        .resync(true);
        assert_eq!(steps(w), [("bad", 0), ("io", 0)]);
    }

    #[test]
    fn a_bad_checksum_in_bytes_that_changed_is_a_failed_read() {
        let (seg, at) = bad_crc();
        for policy in [Checksums::Stop, Checksums::Mark] {
            let w = Walk::new(Faulty {
                inner: SegmentIter::new(&seg),
                ok: 9,
                changed: true,
            })
            .checksums(policy);
            assert_eq!(steps(w), [("batch", 0), ("io", at[2] as i64)]);
        }
    }

    #[test]
    fn ahead_and_position_are_the_readers() {
        let (seg, at) = three();
        let mut w = Walk::new(SegmentIter::new(&seg));
        assert!(matches!(w.next(), Some(Step::Batch(_))));
        assert_eq!(w.position(), at[1] as u64);
        assert_eq!(w.ahead().count(), 2);
        assert!(w.page_in().is_none());
        assert_eq!(w.entries().position(), at[1] as u64);
    }

    #[test]
    fn through_a_box_and_a_reference() {
        let (seg, _) = three();
        let boxed: Box<dyn Entries + '_> = Box::new(SegmentIter::new(&seg));
        assert_eq!(steps(Walk::new(boxed).from(2)).len(), 2);
        let mut it = SegmentIter::new(&seg);
        assert_eq!(steps(Walk::new(&mut it)).len(), 3);
    }

    /// A wrapper that does not forward `again`: a failed read, not a panic.
    struct Forgetful<'a>(SegmentIter<'a>);

    impl Entries for Forgetful<'_> {
        fn next_entry(&mut self) -> Option<Result<Batch<'_>, EntryError>> {
            self.0.next_entry()
        }
        fn resync(&mut self) -> Result<Option<Skipped>, EntryError> {
            Entries::resync(&mut self.0)
        }
        fn tail(&self) -> Option<Tail> {
            self.0.tail()
        }
        fn position(&self) -> u64 {
            self.0.position()
        }
        fn ahead(&self) -> SegmentIter<'_> {
            self.0.ahead()
        }
    }

    #[test]
    fn a_wrapper_that_cannot_give_again_fails_the_read() {
        let (seg, _) = three();
        let mut w = Walk::new(Forgetful(SegmentIter::new(&seg)));
        assert!(matches!(w.next(), Some(Step::Io(_))));
        assert!(w.next().is_none());
    }

    #[test]
    fn random_bytes_never_panic() {
        let (base, _) = three();
        let mut seed = 0x2545_f491u32;
        for round in 0..1500usize {
            let mut buf = base.clone();
            for _ in 0..(round % 5 + 1) {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                let i = seed as usize % buf.len();
                buf[i] = (seed >> 8) as u8;
            }
            buf.truncate(buf.len() - round % 11);
            let policy = [Checksums::Unchecked, Checksums::Stop, Checksums::Mark][round % 3];
            let w = Walk::new(SegmentIter::new(&buf))
                .checksums(policy)
                .resync(round % 2 == 0)
                .from((round % 4) as i64);
            let n = steps(w).len();
            assert!(n <= buf.len() + 1);
        }
    }
}
