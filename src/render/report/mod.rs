//! `klf report`: one self-contained HTML page for a post-mortem of a
//! capture. The page opens on the whole capture (the report's overview:
//! partitions compared, partitions losing data, records lost, the committed
//! bounds, replicas not captured), then the partitions that lose data,
//! worst first, each with an SVG timeline with one lane per replica (leader
//! epochs over offsets, high watermark, log end, divergence, the truncation
//! Kafka will perform, the records it cuts and how many of them were
//! committed), the controller's elections from the metadata log, and the
//! story `klf diff --explain` tells; the partitions that lose nothing are
//! folded into one list.
//!
//! The facts come from the engine ([`crate::engine::report::build`], over
//! the same diff as `klf diff`) as a [`crate::model::report::Report`]; this
//! module only draws them: [`svg`] a partition, [`html`] the page.

pub mod html;
pub mod svg;
