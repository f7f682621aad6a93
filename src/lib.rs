//! klf: offline forensics for Apache Kafka log directories.
//!
//! The library reads what brokers wrote to disk (segments, indexes,
//! checkpoints, snapshots, the metadata log) without a running cluster, and
//! answers what is in a file, which leader epochs wrote which offsets, where
//! replicas part, what Kafka's truncation will cut, and what the cluster
//! loses with it: counted once, with how sure we can be that it had been
//! committed.
//!
//! ```
//! use klf::engine::{diff_capture, DiffRequest};
//!
//! // A capture: the log directories of a cluster's brokers, copied after
//! // an unclean leader election (committed with klf's tests).
//! let capture = klf::engine::input::discover(&[concat!(
//!     env!("CARGO_MANIFEST_DIR"),
//!     "/testdata/kafka/unclean"
//! )]);
//! let run = diff_capture(&capture, &DiffRequest::default(), &|| {});
//! let p = &run.partitions[0];
//! assert_eq!(p.diff.reference.broker, 3); // the leader the metadata log names
//! assert_eq!(p.loss.records, 150); // on no replica once all follow it
//! assert_eq!(p.loss.committed_proven, 150); // below a checkpointed high watermark
//! assert_eq!(p.loss.held_by, [1, 2]); // copy these before they rejoin
//! ```
//!
//! Layers, each using only those before it: [`mod@format`] (pure parsers
//! over byte slices and file names), [`model`] (plain data: what a capture
//! holds, and what is computed from it), [`capture`] (paths to model
//! values: discovery, mapping files read-only, archives, the metadata log,
//! consumer group commits) and [`analysis`] (pure functions over the
//! model: diff, truncation, loss, timeline, check rules), [`engine`] (every
//! pipeline: what the commands run). [`render`] (facts to text, JSON,
//! JUnit and the report's HTML) reads only `format` and `model`: it prints
//! what the engine computed. Each item has one home, the module that
//! defines it (no re-exports across layers). The binary (`src/cli`) uses
//! only `engine`, `render` and `model`: opening what the user
//! named is [`engine::input`], writing files [`engine::output`].
//! `tests/it/layers.rs` keeps it so.

pub mod analysis;
pub mod capture;
pub mod engine;
pub mod format;
pub mod model;
pub mod render;
