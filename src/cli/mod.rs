//! The command line: one module per subcommand (its arguments and its
//! run), and what they share (`common`). The library does the work; these
//! modules read arguments, call the engine and hand its results to the
//! renderers.

pub mod check;
pub mod common;
pub mod completions;
pub mod diff;
pub mod digest;
pub mod dump;
pub mod elect;
pub mod impact;
pub mod man;
pub mod report;
pub mod salvage;
pub mod timeline;
pub mod transactions;
