//! Plain data the layers pass around: what a capture holds once it is read
//! (the inventory of brokers and replicas, replica logs as batch summaries,
//! the controller's partition history, consumer group commits, high
//! watermark checkpoints, records), and what the analyses and pipelines
//! make of it (a partition's diff and loss, timelines, impact, findings,
//! elections, the report's page). No I/O and no analysis here: `capture`
//! fills the first in, `analysis` and `engine` compute the rest, `render`
//! and `report` print them.

pub mod broker_log;
pub mod capture;
pub mod check;
pub mod diff;
pub mod digest;
pub mod dump;
pub mod elect;
pub mod evidence;
pub mod history;
pub mod impact;
pub mod log;
pub mod loss;
pub mod records;
pub mod report;
pub mod time;
pub mod timeline;
pub mod transactions;
pub mod truncation;

pub use capture::*;
pub use evidence::{GroupCommit, HighWatermarkFact, ReadProblem, ReplicaProblem};
pub use history::{ControllerView, Election, PartitionHistory};
pub use impact::{ConfigFact, CoordinatorTxn, LatestCommit, ProducerStateView, ProducerView};
pub use log::{BatchSummary, ReplicaLog};
pub use records::{Bytes, LostRecord, SalvagedRecord, UnreadBatch};
