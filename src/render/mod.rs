//! Facts to text: what `klf dump` prints (kafka-dump-log compatible text,
//! JSON Lines, tables: `dump`), the tables and JSON of diff, check and
//! timeline, JUnit XML; one sanitiser and one escaper for untrusted text
//! (`text`), one table style (`style`), the stories told of a partition
//! (`explain`), the words of its loss's evidence (`loss`), and the HTML
//! page of `klf report` (`report`). Nothing here
//! reads a capture or computes a fact: every renderer takes model values
//! the engine computed or opened, and this layer uses only `format` and
//! `model`.

pub mod broker_log;
pub mod check;
pub mod diff;
pub mod dump;
pub mod elect;
pub mod explain;
pub mod impact;
pub mod json;
pub mod loss;
pub mod overview;
pub mod release;
pub mod report;
pub mod salvage;
pub mod style;
pub mod text;
pub mod timeline;
pub mod transactions;
mod utc;
