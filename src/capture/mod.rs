//! Finding things on disk: log directories, brokers, partitions, segments,
//! and opening files read-only.

pub mod careful;
pub mod controller;
pub mod digest;
pub mod discover;
pub mod groups;
pub mod incident;
pub mod logs;
pub mod mmap;
pub mod producers;
pub mod replica;
pub mod scan;
pub mod segment;
pub mod share_groups;
pub mod transactions;
pub mod vfs;
