//! klf's integration tests, one binary: the real binary run against the
//! real-Kafka captures under `testdata/kafka/` (and, in CI, the captures a
//! fresh Kafka run just made, `KLF_FRESH_CAPTURES`), the library's
//! pipelines, hostile inputs, and the source's own structure. Shared
//! helpers are in `common`. Run one module with `cargo test --test it
//! MODULE::`.

// A test asserts by panicking: unwrap is how it says "this must hold".
#![allow(clippy::unwrap_used)]

mod common;

mod archive_bounds;
mod archives;
mod aux_golden;
mod broker_log;
mod caps;
mod capture_discovery;
mod check;
mod check_summary;
mod cli_interface;
mod diff_model;
mod diff_window;
mod digest;
mod dump_corrupt;
mod dump_golden;
mod dump_parallel;
mod dump_paths;
mod dump_select;
mod elect;
mod evidence_untouched;
mod faults;
mod healthy_brokers;
mod hostile_input;
mod hostile_paths;
mod incident;
mod kafka_impact;
mod kafka_truncation;
mod layers;
mod layouts;
mod loss;
mod machine_limits;
mod many_partitions;
mod read_paths;
mod readme_examples;
mod report;
mod salvage;
mod share_groups;
mod terminal_layout;
mod terminal_safety;
mod tiered;
mod timeline;
mod transactions_summary;
mod truncation_vectors;
mod unread_records;
