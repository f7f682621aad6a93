//! The metering of the bytes a dump reads, for a progress bar: a segment
//! read through [`Metered`] moves the bar as its batches are read.

use crate::format::batch::{Batch, Entries, EntryError, SegmentIter, SegmentSource, Skipped, Tail};

/// Where the bytes a dump reads are shown: a progress bar.
pub trait Progress {
    /// The bar's position now.
    fn position(&self) -> u64;
    /// Moves the bar to `at`.
    fn set_position(&self, at: u64);
}

/// The metering of one file's reading: the bar, and the bytes of the
/// files dumped before it.
#[derive(Clone, Copy)]
pub struct Meter<'p> {
    /// The bar (none: nothing is metered).
    pub progress: Option<&'p dyn Progress>,
    /// The bytes of the files dumped before this one.
    pub done: u64,
}

impl<'p> Meter<'p> {
    /// `log`, read with the bar moving as its batches are read.
    pub fn metered<'a>(&self, log: &'a dyn SegmentSource) -> Metered<'a>
    where
        'p: 'a,
    {
        Metered {
            inner: log,
            progress: self.progress,
            base: self.done,
            step: METER_STEP,
        }
    }
}

/// A segment whose reading moves a progress bar: the bar stands at the
/// bytes of the files before it (`base`) and the position read in it.
pub struct Metered<'a> {
    inner: &'a dyn SegmentSource,
    progress: Option<&'a dyn Progress>,
    base: u64,
    /// Bytes read between two moves of the bar.
    step: u64,
}

/// Bytes read between two moves of the bar.
const METER_STEP: u64 = 1 << 20;

impl SegmentSource for Metered<'_> {
    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn entries(&self, start: u64, end: u64) -> Box<dyn Entries + '_> {
        let inner = self.inner.entries(start, end);
        match self.progress {
            None => inner,
            Some(bar) => Box::new(MeteredEntries {
                inner,
                bar,
                base: self.base,
                step: self.step,
                shown: 0,
            }),
        }
    }
}

struct MeteredEntries<'a> {
    inner: Box<dyn Entries + 'a>,
    bar: &'a dyn Progress,
    base: u64,
    step: u64,
    /// The position last shown.
    shown: u64,
}

impl MeteredEntries<'_> {
    fn meter(&mut self) {
        let at = self.inner.position();
        if at >= self.shown + self.step {
            self.shown = at;
            // a second reading of the file (the table's) never moves it back
            if self.base + at > self.bar.position() {
                self.bar.set_position(self.base + at);
            }
        }
    }
}

impl Entries for MeteredEntries<'_> {
    fn next_entry(&mut self) -> Option<Result<Batch<'_>, EntryError>> {
        self.meter();
        self.inner.next_entry()
    }
    fn resync(&mut self) -> Result<Option<Skipped>, EntryError> {
        self.inner.resync()
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
    fn page_in(&self) -> Option<fn(&[u8])> {
        self.inner.page_in()
    }
    fn again(&self) -> Option<Batch<'_>> {
        self.inner.again()
    }
    fn unchanged(&self) -> std::io::Result<()> {
        self.inner.unchanged()
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::path::Path;

    use super::*;
    use crate::capture::segment::SegmentFile;
    use crate::format::walk::{Step, Walk};

    /// A bar that is only a position.
    struct Bar(Cell<u64>);

    impl Progress for Bar {
        fn position(&self) -> u64 {
            self.0.get()
        }
        fn set_position(&self, at: u64) {
            self.0.set(at);
        }
    }

    #[test]
    fn the_bar_moves_with_the_bytes_read_in_a_segment() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/kafka/divergence/broker-2/diverge-0/00000000000000000000.log");
        let log = SegmentFile::open(&path).unwrap();
        // where the run leaves it after the files before
        let bar = Bar(Cell::new(1000));
        let metered = Metered {
            inner: &log,
            progress: Some(&bar),
            base: 1000,
            step: 1,
        };
        // the bar stands at the files before, then at each batch read
        let mut positions = Vec::new();
        let mut walk = Walk::new(metered.entries(0, metered.len()));
        let mut starts = Vec::new();
        while let Some(Step::Batch(b)) = walk.next() {
            starts.push(b.position());
            positions.push(bar.position());
        }
        assert!(starts.len() > 3);
        let want: Vec<u64> = std::iter::once(1000)
            .chain(starts[1..].iter().map(|p| 1000 + p))
            .collect();
        assert_eq!(positions, want);
        // the position after the last batch is where the next read starts
        assert_eq!(walk.position(), log.len());
    }
}
