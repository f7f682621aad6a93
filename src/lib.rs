//! klf: offline forensics for Apache Kafka log directories.
//!
//! The library reads what a broker wrote to disk (segments, indexes,
//! checkpoints, snapshots) without a running cluster, and answers what is in a
//! file, which leader epochs wrote which offsets, where replicas diverge and
//! what Kafka's truncation will cut.
//!
//! Layout: [`format`] holds pure parsers over byte slices; [`capture`] finds
//! files on disk and maps them read-only; [`analysis`] turns parsed data into
//! facts; [`render`] turns facts into text; [`report`] into an HTML page.

pub mod analysis;
pub mod capture;
pub mod engine;
pub mod format;
pub mod model;
pub mod render;
pub mod report;
