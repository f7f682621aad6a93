//! Facts from parsed data: epoch timelines, replica divergence and the
//! truncation Kafka performs, consistency findings.

pub mod broker_log;
pub mod check;
pub mod diff;
pub mod epochs;
pub mod impact;
pub mod incident;
pub mod kraft;
pub mod loss;
pub mod lost;
pub mod timeline;
pub mod transactions;
pub mod truncation;
