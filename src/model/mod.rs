//! Plain data the layers pass around: what a capture holds once it is read
//! (the inventory of brokers and replicas, replica logs as batch summaries,
//! the controller's partition history, consumer group commits, high
//! watermark checkpoints, records). No I/O and no analysis here: `capture`
//! fills these in, `analysis` reasons over them, `render` prints them.

pub mod capture;
pub mod dump;
pub mod evidence;
pub mod history;
pub mod log;
pub mod records;

pub use capture::*;
pub use evidence::{GroupCommit, HighWatermarkFact, ReadProblem};
pub use history::{ControllerView, Election, PartitionHistory};
pub use log::{BatchSummary, ReplicaLog};
pub use records::{Bytes, LostRecord, SalvagedRecord, UnreadBatch};
pub mod impact;
pub use impact::{ConfigFact, CoordinatorTxn, LatestCommit, ProducerStateView, ProducerView};
