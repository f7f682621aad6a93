//! The code table: every finding code `klf check` emits, with its
//! severity, family, meaning and hint.

use crate::model::check::{CheckInfo, Family, Finding, Location, Severity};

macro_rules! checks {
    ($($name:ident = $code:literal, $sev:ident, $fam:ident, $meaning:literal, $hint:literal;)*) => {
        /// The stable codes, as constants.
        pub mod code {
            $(
                #[doc = $meaning]
                pub const $name: &str = $code;
            )*
        }
        /// Every finding code `klf check` emits: code, severity, family,
        /// meaning and hint. Codes are stable; new ones may be added.
        pub const CHECKS: &[CheckInfo] = &[
            $(CheckInfo {
                code: $code,
                severity: Severity::$sev,
                family: Family::$fam,
                meaning: $meaning,
                hint: $hint,
            },)*
        ];
    };
}

checks! {
    CAPTURE_WARNING = "capture-warning", Warning, Capture,
        "Discovery found something Kafka would not write or would refuse (unreadable or unexpected file, broken meta.properties, missing segment).",
        "Read the message; check how the capture was taken.";
    CHECKPOINT_UNREADABLE = "checkpoint-unreadable", Error, Capture,
        "A checkpoint file Kafka would fail to read (malformed line, bad count, bad number).",
        "Kafka fails to load this log directory (offset checkpoints) or the partition (leader-epoch-checkpoint) until the file is repaired or removed.";
    CHECKPOINT_ODDITY = "checkpoint-oddity", Info, Capture,
        "A checkpoint file Kafka reads, in a shape its writer never produces (missing final newline, duplicate entry).",
        "Usually a capture taken mid-write; compare with the broker's own copy.";
    NO_METADATA_LOG = "no-metadata-log", Info, Capture,
        "The capture holds no __cluster_metadata log (a ZooKeeper-mode cluster, or the metadata log was not copied): leaders, ISR history and topic settings are not in it.",
        "Lost records cannot be bounded by the ISR history, unclean elections and epochs the controller never assigned are not checked, and the truncation protocol is assumed; on a KRaft cluster, copy the metadata log too.";
    WRITE_INTERRUPTED = "write-interrupted", Info, Capture,
        "A `.tmp` file: a checkpoint or properties write that was never renamed into place (the broker stopped, or the capture was taken, mid-write).",
        "Kafka ignores it and uses the previous version of the file; expected after a crash.";
    FILE_TOO_LARGE = "file-too-large", Error, Capture,
        "A file over one of klf's caps, which no file Kafka writes reaches (a properties or state file over 1 MiB, a checkpoint with more than 1,000,000 entries or a line over 4 KiB): not read.",
        "klf goes on as if Kafka could not use the file (a leader-epoch-checkpoint's epochs come from the batches); look at what wrote it, and compare with the broker's own copy.";
    FILE_UNREADABLE = "file-unreadable", Error, Capture,
        "A segment or index file could not be opened or read.",
        "Check permissions and that the capture is complete.";
    RECORDS_UNREADABLE = "records-unreadable", Error, Segments,
        "A batch whose framing and checksum are sound but whose records klf could not read: it inflates past --max-decompressed-bytes, or a record does not parse. What those records say (in the metadata log: elections, ISR changes, topic settings) is missing from the answer.",
        "If the batch is real, read it again with a larger --max-decompressed-bytes; otherwise it was not written by Kafka as it stands.";
    BATCH_FRAMING = "batch-framing", Error, Segments,
        "An entry's size field or header is impossible (size below the minimum, header cut): the segment cannot be read past this point.",
        "Kafka's recovery truncates the segment here, losing every later batch of the segment; restore the segment from another replica.";
    BATCH_BAD_MAGIC = "batch-bad-magic", Error, Segments,
        "A batch with a magic byte other than 0, 1 or 2.",
        "The bytes are not a Kafka batch (overwritten or misaligned data); recovery truncates here.";
    BATCH_CRC_MISMATCH = "batch-crc-mismatch", Error, Segments,
        "A batch whose stored checksum (CRC-32C for v2, CRC-32 for v0/v1) does not match its bytes.",
        "The batch is corrupt on disk; Kafka's recovery truncates the segment here. Restore from an in-sync replica.";
    BATCH_HEADER_INVALID = "batch-header-invalid", Error, Segments,
        "A v2 batch header with impossible values (negative last offset delta or record count, more records than offsets).",
        "The batch was not written by Kafka as it stands; treat the segment as corrupt.";
    BATCH_OFFSET_ORDER = "batch-offset-order", Error, Segments,
        "A batch whose base offset is not above the last offset of the batch before it in the segment.",
        "Offsets must strictly increase; consumers and index lookups go wrong. Restore the segment from another replica.";
    SEGMENT_NAME_MISMATCH = "segment-name-mismatch", Error, Segments,
        "A segment holds offsets below the base offset in its file name.",
        "Index entries of this segment cannot be expressed; the file was renamed or written by something other than Kafka.";
    SEGMENT_OVERLAP = "segment-overlap", Error, Segments,
        "A segment starts at or below the last offset of the segment before it.",
        "Two segments claim the same offsets (a failed cleaner swap or a manual copy); Kafka reads the wrong one.";
    SEGMENT_TORN_TAIL = "segment-torn-tail", Warning, Segments,
        "Bytes after the last complete batch of the last segment: a write cut short by an unclean shutdown.",
        "Kafka's recovery drops these bytes on the next start; nothing acknowledged after the last complete batch survives.";
    SEGMENT_TORN_MIDDLE = "segment-torn-middle", Error, Segments,
        "Bytes after the last complete batch of a segment that is not the last one.",
        "A rolled segment should end on a batch boundary; data is missing in the middle of the log.";
    INDEX_MISSING = "index-missing", Info, Indexes,
        "A non-empty segment without its .index or .timeindex file.",
        "Kafka rebuilds a missing index on load; nothing to do unless the capture was meant to be complete.";
    INDEX_LENGTH_INVALID = "index-length-invalid", Error, Indexes,
        "An index file whose length is not a multiple of its entry size (8 for .index, 12 for .timeindex).",
        "Kafka's sanity check rejects the index; delete it and let Kafka rebuild it.";
    INDEX_PREALLOCATED = "index-preallocated", Info, Indexes,
        "Zero-filled slots after the last entry of an index that Kafka rebuilds when the broker next starts: the broker did not shut down cleanly (or was running when copied), and the segment is at or past its recovery point (or in the metadata log, which is always recovered).",
        "Normal for the active segment of a broker that crashed or was copied live; Kafka recovers the segment from the log on its next start. Nothing to do.";
    INDEX_UNTRIMMED = "index-untrimmed", Warning, Indexes,
        "Zero-filled slots after the last entry of an index that Kafka loads as it stands (the broker shut down cleanly, or the segment is before the recovery point): Kafka counts the slots as entries.",
        "Kafka trims an index when it rolls or closes the segment, so this file was not left by Kafka's own shutdown; lookups through it can start at the wrong place. Delete the index and let Kafka rebuild it.";
    INDEX_STALE_ENTRIES = "index-stale-entries", Info, Indexes,
        "Entries of an index Kafka rebuilds when the broker next starts (see index-preallocated), after the prefix that fits the log: leftovers of a truncation (Kafka moves an index's position back without clearing the bytes after it) or of a crash, outside the entry count Kafka keeps in memory.",
        "Kafka ignores them while running, trims them at a clean shutdown and rebuilds the index after a crash; nothing to do.";
    INDEX_NOT_MONOTONIC = "index-not-monotonic", Error, Indexes,
        "An index entry whose offset (or timestamp) does not increase over the previous entry.",
        "Lookups through this index go wrong; delete the index and let Kafka rebuild it.";
    INDEX_OUTSIDE_SEGMENT = "index-outside-segment", Error, Indexes,
        "An index entry pointing before the segment base, past the segment's last offset, or past the end of the .log file.",
        "Delete the index and let Kafka rebuild it; find out why the .log is shorter than its index.";
    INDEX_ENTRY_MISMATCH = "index-entry-mismatch", Error, Indexes,
        "An .index entry whose position is not the start of a batch or whose offset does not belong to the batches from there, or a .timeindex entry whose offset is not the end of a batch.",
        "Fetches that use this entry read from the wrong place; delete the index and let Kafka rebuild it.";
    TXN_INDEX_INVALID = "txn-index-invalid", Error, Indexes,
        "A .txnindex entry Kafka rejects (unknown version, last offset below the segment base) or that does not match the log (first offset after last offset, no control batch at the abort marker's offset).",
        "Consumers reading with isolation.level=read_committed get aborted records or lose committed ones; delete the .txnindex and let Kafka rebuild it by recovering the segment.";
    EPOCH_REGRESSION = "epoch-regression", Error, Epochs,
        "A batch carries a lower leader epoch than an earlier batch of the log.",
        "Leader epochs never decrease in a healthy log; truncation decisions based on epochs are unreliable here.";
    CHECKPOINT_MISSING = "checkpoint-missing", Warning, Epochs,
        "No readable leader-epoch-checkpoint although the batches carry leader epochs.",
        "Kafka rebuilds the epoch cache from the batches on recovery; check why the file is absent.";
    CHECKPOINT_NOT_MONOTONIC = "checkpoint-not-monotonic", Error, Epochs,
        "leader-epoch-checkpoint entries whose epoch or start offset does not increase.",
        "Kafka drops the earlier entries on load; the epoch cache does not match the log.";
    CHECKPOINT_PAST_LOG_END = "checkpoint-past-log-end", Warning, Epochs,
        "A leader-epoch-checkpoint entry starts past the log end offset (a checkpoint written before the log lost its tail).",
        "Kafka truncates such entries on load; the log lost data the checkpoint had seen.";
    EPOCH_MISSING_FROM_CHECKPOINT = "epoch-missing-from-checkpoint", Warning, Epochs,
        "Batches of a leader epoch that the leader-epoch-checkpoint does not list.",
        "The checkpoint lags the log (unclean shutdown, or a capture taken live); Kafka adds the epoch back when it recovers the segment.";
    EPOCH_START_MISMATCH = "epoch-start-mismatch", Error, Epochs,
        "The leader-epoch-checkpoint says an epoch starts at a different offset than its first batch.",
        "Follower truncation uses these start offsets; a wrong one makes Kafka keep or cut the wrong records.";
    CHECKPOINT_EPOCH_WITHOUT_BATCHES = "checkpoint-epoch-without-batches", Warning, Epochs,
        "A leader-epoch-checkpoint entry inside the log whose epoch no batch carries.",
        "The checkpoint and the log disagree about who led; check for truncation after the checkpoint was written.";
    HIGH_WATERMARK_MISSING = "high-watermark-missing", Info, Offsets,
        "The replica is not listed in replication-offset-checkpoint.",
        "Kafka starts it with a high watermark at the log start; nothing is known committed from this replica alone.";
    HIGH_WATERMARK_BELOW_LOG_START = "high-watermark-below-log-start", Info, Offsets,
        "The checkpointed high watermark is below the log start offset.",
        "Kafka raises it to the log start on load.";
    HIGH_WATERMARK_BEYOND_LOG_END = "high-watermark-beyond-log-end", Error, Offsets,
        "The checkpointed high watermark is above the log end offset: committed records this replica had are not on disk.",
        "The replica lost acknowledged data (unflushed writes at a crash, or a truncated capture); compare with the other replicas.";
    LOG_START_BEYOND_LOG_END = "log-start-beyond-log-end", Error, Offsets,
        "The log start offset is above the log end offset.",
        "The segments Kafka should hold are missing.";
    RECOVERY_POINT_MISSING = "recovery-point-missing", Info, Offsets,
        "The replica is not listed in recovery-point-offset-checkpoint.",
        "After an unclean shutdown Kafka recovers the whole log; normal for a partition created since the last checkpoint.";
    RECOVERY_POINT_BEHIND_LOG_END = "recovery-point-behind-log-end", Info, Offsets,
        "The recovery point lags the log end: segments from there on were not flushed when the checkpoint was written.",
        "After an unclean shutdown Kafka re-validates everything from the recovery point; normal on a live capture.";
    RECOVERY_POINT_BEYOND_LOG_END = "recovery-point-beyond-log-end", Warning, Offsets,
        "The recovery point is above the log end offset: data that was flushed is no longer in the log.",
        "Either the log was truncated after the checkpoint was written (a follower's truncation, normal for a live capture) or flushed data was lost.";
    LOG_MATCHING_VIOLATION = "log-matching-violation", Error, Replication,
        "Replicas hold different batches for the same offsets below the smallest high watermark, or the same base offset and epoch with different content.",
        "Committed data differs between replicas and Kafka's protocol cannot notice; find which replica holds what producers were acknowledged.";
    COMMITTED_RECORDS_LOST = "committed-records-lost", Error, Replication,
        "Records no replica will keep once every replica follows the leader, some of them proven committed: below a high watermark a replica checkpointed, or below an offset a consumer group committed (acknowledged writes lost; counted once per partition).",
        "Copy the partition directories of the replicas holding them now (`klf diff --explain` names them and the evidence): the records disappear when those replicas rejoin.";
    POSSIBLY_COMMITTED_RECORDS_LOST = "possibly-committed-records-lost", Error, Replication,
        "Records no replica will keep once every replica follows the leader that may have been committed: every member of an ISR the metadata log records held them, or no ISR history can rule it out (counted once per partition).",
        "Treat them as acknowledged until shown otherwise: copy the replicas holding them now and compare with what producers were told (`klf diff --records`).";
    UNCOMMITTED_RECORDS_LOST = "uncommitted-records-lost", Warning, Replication,
        "Records no replica will keep once every replica follows the leader, none of them committed: some ISR member never held them (acks=1 or unacknowledged writes; counted once per partition).",
        "Producers with acks=1 may have been told they succeeded; expected after a leader failover.";
    HANGING_TRANSACTION = "hanging-transaction", Error, Replication,
        "A transaction open on the new leader that no marker will close: its COMMIT/ABORT marker is cut, or its coordinator has finished with it. read_committed consumers stop at its first offset (the last stable offset) until it is aborted.",
        "Abort it with the command `klf impact` prints (kafka-transactions.sh abort --start-offset N). If the cut marker was COMMIT, aborting hides records the transaction committed: keep a copy of them first.";
    CONSUMER_GROUP_RESET = "consumer-group-reset", Warning, Replication,
        "A consumer group committed past where its lineage parts from the new log: a restarted consumer moves back to the divergence (leader epoch in the commit), resets by auto.offset.reset (none: it fails), and had consumed records no replica keeps.",
        "`klf impact` gives each auto.offset.reset's next offset, the records skipped and re-read, and the phantom records the group's downstream still holds.";
    CONSUMER_GROUP_SKIPS_RECORDS = "consumer-group-skips-records", Warning, Replication,
        "A consumer group's commit without a leader epoch lies inside the new log past the divergence: a restarted consumer fetches from it with no error, never seeing the new leader's records before it.",
        "Reset the group to the divergence offset `klf impact` names (kafka-consumer-groups --reset-offsets --to-offset N) to read them.";
    PRODUCER_SEQUENCES_CUT = "producer-sequences-cut", Warning, Replication,
        "An idempotent or transactional producer whose last acknowledged sequences are cut: the new leader answers its next batch with OUT_OF_ORDER_SEQUENCE_NUMBER, or, holding no state for it, accepts it and the gap goes undetected.",
        "A client since Kafka 2.5 recovers by bumping its epoch without resending the cut records: they are lost to the application although it was told they succeeded.";
    DIVERGENT_TAIL = "divergent-tail", Info, Replication,
        "A replica holds a tail that differs from the leader's log; Kafka will truncate it (whether that loses anything is the partition's *-records-lost finding).",
        "Expected after a leader failover; the partition's loss finding says what is lost and whether it was committed.";
    PROTOCOL_KEEPS_DIVERGENT = "protocol-keeps-divergent", Error, Replication,
        "Kafka's leader-epoch protocol will keep records that differ from the leader's: the replicas stay inconsistent.",
        "Usually a stale or missing leader-epoch-checkpoint; rebuild the replica from the leader.";
    REPLICA_EPOCH_AHEAD = "replica-epoch-ahead", Warning, Replication,
        "A replica's latest leader epoch is above the reference leader's.",
        "The capture may mix moments, or the reference is not the real leader; pass all brokers captured at once.";
    REPLICA_NOT_CAPTURED = "replica-not-captured", Warning, Replication,
        "A replica the metadata log assigns to the partition is not in the capture: its log may hold records no captured replica holds, and it may have acknowledged records.",
        "The loss may be larger and the committed bounds wider than shown; capture that broker's log directories too.";
    PREDICTION_DISAGREES_WITH_BROKER_LOG = "prediction-disagrees-with-broker-log", Error, Replication,
        "A broker's own log (server.log in the capture, or --logs) says it truncated a partition, after starting from the state the capture holds, at another offset than klf predicts.",
        "klf's answer for this partition is not what Kafka did: the log's line is the evidence (`klf diff` shows both); or the capture is not what the broker restarted from. Please report it with the two lines.";
    REPLICAS_DISJOINT = "replicas-disjoint", Warning, Replication,
        "The offset ranges of two replicas do not overlap.",
        "Nothing can be compared; the follower will be reset to the leader's log start.";
    TRUNCATION_DEPENDS_ON_PROTOCOL = "truncation-depends-on-protocol", Warning, Replication,
        "The capture does not say which truncation protocol the cluster runs (a ZooKeeper-mode broker keeps inter.broker.protocol.version in server.properties), and the two it may run truncate a replica at different offsets.",
        "Look up inter.broker.protocol.version in the brokers' server.properties and run again with --inter-broker-protocol.";
    TRUNCATION_UNRESOLVED = "truncation-unresolved", Warning, Replication,
        "The truncation prediction did not converge, or empties the replica.",
        "Read the partition with `klf diff --explain`.";
    REPLICA_BEHIND = "replica-behind", Info, Replication,
        "A replica is a prefix of the leader's log (a lagging follower).",
        "It catches up by fetching; nothing is lost.";
    PRODUCER_SNAPSHOT_INVALID = "producer-snapshot-invalid", Warning, Segments,
        "A producer .snapshot file Kafka refuses when it loads the log (version, CRC-32C, length; an empty one is a write cut short by a kill).",
        "Kafka logs it, deletes it and rebuilds producer state from an earlier snapshot and the log, so no record is lost; where retention removed the segments behind it, idempotent producers' sequence state for old producer ids may be gone.";
    PRODUCER_SEQUENCE_GAP = "producer-sequence-gap", Warning, Segments,
        "A producer's first batch after the latest snapshot does not continue the sequence the snapshot records.",
        "Records of an idempotent producer are missing between the snapshot and the log, or the snapshot is stale.";
    TRANSACTION_OPEN = "transaction-open", Info, Segments,
        "A transaction has batches but no commit or abort marker up to the log end.",
        "Normal while a producer is in a transaction; after an incident the coordinator aborts it on timeout. read_committed consumers stall at its first offset.";
    EPOCH_BEYOND_CONTROLLER = "epoch-beyond-controller", Error, Replication,
        "A replica holds batches of a leader epoch higher than the controller ever assigned to the partition (metadata log).",
        "The replica's data did not come from this cluster's leaders, or the metadata log is older than the data; compare the capture times.";
    UNCLEAN_ELECTION = "unclean-election", Warning, Replication,
        "The metadata log records an unclean leader election: a leader from outside the ISR (leader recovery state RECOVERING).",
        "Records acknowledged by the previous leader may be lost; run `klf diff --records` on the partition.";
}

/// The table entry of `code`.
pub fn info(code: &str) -> Option<&'static CheckInfo> {
    CHECKS.iter().find(|c| c.code == code)
}

/// Builds a finding from the code table.
pub fn finding(
    code: &'static str,
    location: Location,
    message: impl Into<std::borrow::Cow<'static, str>>,
) -> Finding {
    let (severity, family, hint) = match info(code) {
        Some(i) => (i.severity, i.family, i.hint),
        None => (Severity::Error, Family::Capture, ""),
    };
    Finding {
        code: code.into(),
        severity,
        family,
        location,
        message: message.into(),
        hint: hint.into(),
        baselined: false,
    }
}
