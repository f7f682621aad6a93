//! Facts to text: what `klf dump` prints (kafka-dump-log compatible text,
//! JSON Lines, tables: `dump`), the tables and JSON of diff, check and
//! timeline, JUnit XML; one sanitiser and one escaper for untrusted text
//! (`text`), one table style (`style`). Nothing here reads a capture:
//! every renderer takes what the engine computed or opened.

pub mod check;
pub mod diff;
pub mod dump;
pub mod elect;
pub mod impact;
pub mod overview;
pub mod release;
pub mod salvage;
pub mod style;
pub mod text;
pub mod timeline;
mod utc;
