//! Turning parsed data and analysis results into text: kafka-dump-log
//! compatible text, JSON Lines, tables.

pub mod kafka;
pub mod kafka_aux;
