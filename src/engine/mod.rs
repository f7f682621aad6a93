//! Every pipeline once: open a capture, gather its evidence (metadata log,
//! checkpoints, consumer group commits), read each partition's replicas
//! (the window where they can differ, or every batch), diff them and
//! compute what the partition loses. `klf diff`, `klf report` and `klf
//! check` run these, so they name the same reference replica and count the
//! same loss; an embedder calls them the same way.

pub mod check;
pub mod diff;
pub mod digest;
pub mod dump;
pub mod elect;
pub mod evidence;
pub mod impact;
pub mod input;
pub mod machine;
pub mod output;
pub mod records;
pub mod report;
pub mod salvage;
pub mod timeline;
pub mod transactions;

pub use diff::{
    diff_capture, diff_partition_replicas, DiffRequest, DiffRun, PartitionResult, ReadMode,
};
pub use evidence::{broker_ids, Evidence};
