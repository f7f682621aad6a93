//! Pure parsers over byte slices. Nothing here touches files, terminals or
//! the command line: every function takes `&[u8]` and returns typed values
//! or a [`ParseError`] carrying the byte position and the reason.

pub mod error;
pub mod jvm;
pub mod memory;
pub mod names;
pub mod text;
pub use error::ParseError;

// Log segments.
pub mod batch;
pub mod bytes;
pub mod codec;
pub mod crc;
pub mod framing;
pub mod legacy;
pub mod record;
pub mod varint;
pub mod walk;
// Offset and time indexes.
pub mod index;
pub mod seek;
// Transaction index, producer snapshots, metadata and internal-topic records.
pub mod internal;
pub mod metadata;
pub mod snapshot;
pub mod txnindex;
// Checkpoint files, meta.properties, partition.metadata.
pub mod checkpoint;
// What `klf digest` ships.
pub mod digest;
pub mod props;
pub mod quorum_state;
// Kafka's own log files (server.log, controller.log, state-change.log).
pub mod kafka_log;
