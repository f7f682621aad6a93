//! A replica's batches as a stream in log order, read again from its
//! segment files after their own checks (headers only, no checksums: those
//! were verified), a chunk at a time: what the order-dependent rules and
//! the cross-replica comparison read, without holding every batch.

use std::collections::VecDeque;
use std::path::PathBuf;

use crate::analysis::check::BatchAt;
use crate::capture::replica::summarize;
use crate::capture::segment::SegmentFile;
use crate::format::walk::{Step, Walk};

/// Batches read from a segment at a time: bounds what a stream holds.
const CHUNK: usize = 4096;

/// One segment of a replica as its own checks left it: the batches from
/// the start of its file to `end` are the readable ones.
#[derive(Debug, Clone)]
pub struct SegmentPlan {
    /// Index of the file among the replica's segment files.
    pub file: usize,
    /// The `.log` file.
    pub path: PathBuf,
    /// Where the readable batches end (the first damaged batch, or the
    /// file's length).
    pub end: u64,
}

/// Batches in log order, taken one at a time.
pub trait Batches {
    /// The next batch, without taking it.
    fn peek(&mut self) -> Option<&BatchAt>;
    /// Takes the next batch.
    fn next_batch(&mut self) -> Option<BatchAt>;
    /// A file that could not be read: (file, what failed), once.
    fn failed(&mut self) -> Option<(PathBuf, String)> {
        None
    }
}

/// Batches held in memory (a small replica's, kept from its scan).
pub struct HeldBatches(pub VecDeque<BatchAt>);

impl Batches for HeldBatches {
    fn peek(&mut self) -> Option<&BatchAt> {
        self.0.front()
    }

    fn next_batch(&mut self) -> Option<BatchAt> {
        self.0.pop_front()
    }
}

impl Batches for ReplicaBatches {
    fn peek(&mut self) -> Option<&BatchAt> {
        ReplicaBatches::peek(self)
    }

    fn next_batch(&mut self) -> Option<BatchAt> {
        ReplicaBatches::next_batch(self)
    }

    fn failed(&mut self) -> Option<(PathBuf, String)> {
        self.failed.take()
    }
}

/// The batches of a replica, in log order.
pub struct ReplicaBatches {
    plans: Vec<SegmentPlan>,
    seg: usize,
    pos: u64,
    buf: VecDeque<BatchAt>,
    /// A file that could not be read again: (file, what failed).
    pub failed: Option<(PathBuf, String)>,
}

impl ReplicaBatches {
    /// A stream over `plans`, in order.
    pub fn new(plans: Vec<SegmentPlan>) -> Self {
        ReplicaBatches {
            plans,
            seg: 0,
            pos: 0,
            buf: VecDeque::new(),
            failed: None,
        }
    }

    /// The next batch, without taking it.
    pub fn peek(&mut self) -> Option<&BatchAt> {
        if self.buf.is_empty() {
            self.refill();
        }
        self.buf.front()
    }

    /// Takes the next batch.
    pub fn next_batch(&mut self) -> Option<BatchAt> {
        if self.buf.is_empty() {
            self.refill();
        }
        self.buf.pop_front()
    }

    fn refill(&mut self) {
        while self.buf.is_empty() && self.seg < self.plans.len() && self.failed.is_none() {
            let plan = &self.plans[self.seg];
            if let Some(d) = crate::capture::digest::segment(&plan.path) {
                // a digest's summaries, up to where the segment's checks
                // stopped
                match d {
                    Ok(d) => self.buf.extend(
                        d.batches
                            .iter()
                            .filter(|b| b.position >= self.pos && b.position < plan.end)
                            .map(|b| BatchAt {
                                summary: crate::capture::digest::summary(b),
                                place: (plan.file, b.position),
                            }),
                    ),
                    Err(e) => {
                        self.failed = Some((plan.path.clone(), e.to_string()));
                        return;
                    }
                }
                self.seg += 1;
                self.pos = 0;
                continue;
            }
            let file = match SegmentFile::open(&plan.path) {
                Ok(f) => f,
                Err(e) => {
                    self.failed = Some((plan.path.clone(), e.to_string()));
                    return;
                }
            };
            let mut walk = Walk::new(file.reader(self.pos, plan.end));
            let mut done = true;
            while let Some(step) = walk.next() {
                match step {
                    Step::Batch(b) => {
                        self.buf.push_back(BatchAt {
                            summary: summarize(&b),
                            place: (plan.file, b.position()),
                        });
                        if self.buf.len() >= CHUNK {
                            done = false;
                            break;
                        }
                    }
                    Step::Io(e) => {
                        self.failed = Some((plan.path.clone(), e.to_string()));
                        return;
                    }
                    // the segment's own checks stopped before any damage
                    Step::Bad(_) | Step::BadCrc(..) | Step::Skipped(_) | Step::Tail(_) => break,
                }
            }
            if done {
                self.seg += 1;
                self.pos = 0;
            } else {
                self.pos = walk.position();
            }
        }
    }
}
