//! What every entry of a `.log` segment shares, whatever its format (v2
//! batch or v0/v1 message): the offset and size in front of it, and the
//! timestamp types.

/// Offset (8) + size (4) in front of every entry.
pub const LOG_OVERHEAD: usize = 12;

/// Timestamp type of a batch or message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimestampType {
    /// v0 messages have none (-1).
    NoTimestampType,
    /// Producer-set timestamp (0).
    CreateTime,
    /// Broker-set timestamp (1).
    LogAppendTime,
}

impl TimestampType {
    /// Kafka's display name.
    pub fn name(self) -> &'static str {
        match self {
            TimestampType::NoTimestampType => "NoTimestampType",
            TimestampType::CreateTime => "CreateTime",
            TimestampType::LogAppendTime => "LogAppendTime",
        }
    }
}
