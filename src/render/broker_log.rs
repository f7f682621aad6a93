//! What klf says about reading the nodes' own logs.

use crate::format::text::count;
use crate::model::broker_log::BrokerLogs;

/// A note about the logs read: `(warning, text)`; a warning says a file
/// was not read whole.
pub fn file_notes(logs: &BrokerLogs) -> Vec<(bool, String)> {
    let mut out = Vec::new();
    for f in &logs.files {
        let path = f.path.display();
        if let Some(why) = &f.stopped {
            out.push((true, format!("{path}: {why}")));
        }
        if f.unreadable_lines > 0 {
            out.push((
                false,
                format!(
                    "{path}: {} not in Kafka's log layout ([%d] %p %m (%c)) skipped",
                    count(f.unreadable_lines, "line", "lines")
                ),
            ));
        }
        if f.lines_cut > 0 {
            out.push((
                false,
                format!(
                    "{path}: {} longer than {} KiB cut there",
                    count(f.lines_cut, "line", "lines"),
                    crate::format::kafka_log::MAX_LINE >> 10
                ),
            ));
        }
        if f.stopped.is_none() && f.entries == 0 && f.lines > 0 {
            out.push((
                true,
                format!("{path}: no record in Kafka's log layout ([%d] %p %m (%c)): nothing read from it"),
            ));
        }
    }
    if logs.events_dropped > 0 {
        out.push((
            true,
            format!(
                "{} past klf's cap of {} were not kept",
                count(
                    logs.events_dropped,
                    "statement of the logs",
                    "statements of the logs"
                ),
                crate::model::broker_log::MAX_EVENTS
            ),
        ));
    }
    if !logs.files.is_empty() {
        out.push((
            false,
            "Kafka's logs print their times in the broker's own time zone without naming it: klf shows them as written and orders each node's lines by its own files, never across nodes by time".to_string(),
        ));
    }
    out
}
