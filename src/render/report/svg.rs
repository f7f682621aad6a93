//! The SVG timeline of one partition: an overview panel over the whole
//! offset range and, when the interesting part (divergence, truncations,
//! log ends) is a small slice of it, a zoomed panel over that slice.
//!
//! Every mark carries `data-*` attributes (docs/commands.md lists them as a
//! stable contract): `data-kind`, `data-replica`, `data-epoch`,
//! `data-start`/`data-end` (half-open offset ranges), `data-offset`,
//! `data-records`. Panels are `<g data-panel="overview|zoom">`.

use crate::format::text::iso_time;
use crate::render::text::markup;
use std::fmt::Write;

use crate::model::diff::{DivergenceKind, ReplicaDiff};
use crate::model::records::Committed;
use crate::model::report::{PartitionReport, ReplicaView};

/// Width of the whole picture.
const WIDTH: f64 = 1100.0;
/// Left column with the lane labels.
const LABEL_W: f64 = 200.0;
/// Room right of the plot for labels at the log end.
const RIGHT_PAD: f64 = 80.0;
/// Height of a replica lane.
const LANE_H: f64 = 74.0;
/// Height of the controller (elections) lane.
const CTRL_H: f64 = 42.0;
/// Height below the lanes: the offset axis, then the time axis.
const AXES_H: f64 = 52.0;

/// Fill colours of leader epochs (epoch modulo the length); reds and
/// oranges are kept for loss.
const EPOCH_COLOURS: [&str; 10] = [
    "#4e79a7", "#59a14f", "#b07aa1", "#edc948", "#76b7b2", "#9c755f", "#1f3b73", "#8c8c2c",
    "#bab0ac", "#d37295",
];

/// The colour of epoch `e`.
pub fn epoch_colour(e: i32) -> &'static str {
    if e < 0 {
        return "#999999";
    }
    EPOCH_COLOURS[(e as usize) % EPOCH_COLOURS.len()]
}

/// A linear map from offsets to x.
#[derive(Debug, Clone, Copy)]
struct Scale {
    lo: i64,
    hi: i64,
    x0: f64,
    w: f64,
}

impl Scale {
    fn x(&self, o: i64) -> f64 {
        let span = (self.hi - self.lo).max(1) as f64;
        let t = (o.saturating_sub(self.lo)) as f64 / span;
        self.x0 + t.clamp(-0.02, 1.02) * self.w
    }
    fn visible(&self, o: i64) -> bool {
        o >= self.lo && o <= self.hi
    }
    /// Pixel extent of `[a, b)` clipped to the panel, if any.
    fn span(&self, a: i64, b: i64) -> Option<(f64, f64)> {
        let a = a.max(self.lo);
        let b = b.min(self.hi);
        if b <= a {
            return None;
        }
        let (xa, xb) = (self.x(a), self.x(b));
        Some((xa, (xb - xa).max(1.5)))
    }
}

/// The offset window of the zoomed panel, when one helps: from a little
/// before the first divergence or cut to the highest log end, if that is
/// less than half the overview.
pub fn zoom_window(p: &PartitionReport) -> Option<(i64, i64)> {
    let (lo, hi) = p.offset_range();
    let focus_lo = p
        .diff
        .replicas
        .iter()
        .flat_map(|r| {
            let cut = (r.truncation_offset < r.log_end_offset).then_some(r.truncation_offset);
            let div = if r.divergence_kind == DivergenceKind::Diverged {
                r.divergence_offset
            } else {
                None
            };
            cut.into_iter().chain(div)
        })
        .min()?;
    let focus_hi = hi;
    let pad = ((focus_hi - focus_lo) / 4).max(4);
    let a = (focus_lo - pad).max(lo);
    let b = focus_hi;
    if (b - a) * 2 > hi - lo {
        return None;
    }
    Some((a, b))
}

fn nice_step(span: i64, target: i64) -> i64 {
    let raw = (span.max(1) as f64) / target as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    (step.round() as i64).max(1)
}

/// Draws the SVG of one partition. `id` makes clip-path ids unique on the page.
pub fn partition_svg(p: &PartitionReport, id: &str) -> String {
    let n = p.replicas.len() as f64;
    let panel_h = 22.0 + CTRL_H + n * LANE_H + AXES_H;
    let zoom = zoom_window(p);
    let total_h = panel_h * if zoom.is_some() { 2.0 } else { 1.0 } + 4.0;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="timeline" viewBox="0 0 {WIDTH} {total_h}" width="{WIDTH}" height="{total_h}" role="img" aria-label="{}">"#,
        markup(&format!(
            "Replica timeline of {}-{}",
            p.diff.topic, p.diff.partition
        ))
    );
    s.push_str(
        r##"<defs><pattern id="hatch-lost" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#e8590c" stroke-width="2.2"/></pattern><pattern id="hatch-cp" width="4" height="4" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)"><line x1="0" y1="0" x2="0" y2="4" stroke="#333" stroke-width="1.5"/></pattern></defs>"##,
    );
    let (lo, hi) = p.offset_range();
    let plot_w = WIDTH - LABEL_W - RIGHT_PAD;
    let overview = Scale {
        lo,
        hi,
        x0: LABEL_W,
        w: plot_w,
    };
    panel(&mut s, p, overview, 0.0, "overview", id, zoom);
    if let Some((a, b)) = zoom {
        let z = Scale {
            lo: a,
            hi: b,
            x0: LABEL_W,
            w: plot_w,
        };
        panel(&mut s, p, z, panel_h + 4.0, "zoom", id, None);
    }
    s.push_str("</svg>");
    s
}

#[allow(clippy::too_many_arguments)]
fn panel(
    s: &mut String,
    p: &PartitionReport,
    sc: Scale,
    y0: f64,
    name: &str,
    id: &str,
    zoom: Option<(i64, i64)>,
) {
    let n = p.replicas.len() as f64;
    let plot_top = y0 + 22.0;
    let plot_bottom = plot_top + CTRL_H + n * LANE_H;
    let clip = format!("clip-{id}-{name}");
    let _ = write!(
        s,
        r#"<g data-panel="{name}" data-start="{}" data-end="{}">"#,
        sc.lo, sc.hi
    );
    let _ = write!(
        s,
        r#"<clipPath id="{clip}"><rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}"/></clipPath>"#,
        sc.x0 - 8.0,
        plot_top - 2.0,
        sc.w + 16.0,
        plot_bottom - plot_top + 4.0
    );
    let title = if name == "zoom" {
        format!("Zoom: offsets {} to {}", sc.lo, sc.hi)
    } else {
        format!("All offsets: {} to {}", sc.lo, sc.hi)
    };
    let _ = write!(
        s,
        r#"<text class="panel-title" x="4" y="{:.1}">{}</text>"#,
        y0 + 15.0,
        markup(&title)
    );
    // Controller lane.
    let cy = plot_top;
    let _ = write!(
        s,
        r#"<text class="lane-label" x="4" y="{:.1}">controller</text><text class="lane-sub" x="4" y="{:.1}">{}</text>"#,
        cy + 16.0,
        cy + 30.0,
        if p.history.is_some() {
            "elections (metadata log)"
        } else {
            "no metadata log"
        }
    );
    let _ = write!(
        s,
        r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#ccc"/>"##,
        sc.x0,
        cy + CTRL_H - 2.0,
        sc.x0 + sc.w,
        cy + CTRL_H - 2.0
    );
    let _ = write!(s, r#"<g clip-path="url(#{clip})">"#);
    // Labels of elections at nearby offsets go on alternate rows.
    let mut row_ends = [f64::MIN; 2];
    for e in &p.elections {
        let Some(o) = e.offset else { continue };
        if !sc.visible(o) {
            continue;
        }
        let x = sc.x(o);
        let row = if row_ends[0] <= x + 4.0 {
            0
        } else if row_ends[1] <= x + 4.0 {
            1
        } else {
            0
        };
        let colour = if e.unclean { "#c92a2a" } else { "#333" };
        let label = format!(
            "e{} → broker {}{}",
            e.epoch,
            e.leader,
            if e.unclean { " UNCLEAN" } else { "" }
        );
        row_ends[row] = x + 4.0 + 7.0 * label.chars().count() as f64;
        let _ = write!(
            s,
            r#"<g data-kind="election" data-epoch="{}" data-leader="{}" data-unclean="{}" data-offset="{o}" data-metadata-offset="{}" data-time="{}"><title>{}</title><path d="M{x:.1},{:.1} l-6,-10 h12 z" fill="{colour}"/><line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="{colour}" stroke-width="1" stroke-dasharray="2 3" opacity="0.6"/><text class="election-label" x="{:.1}" y="{:.1}" fill="{colour}">{}</text></g>"#,
            e.epoch,
            e.leader,
            e.unclean,
            e.metadata_offset,
            e.timestamp,
            markup(&format!(
                "epoch {} elected broker {}{} (metadata offset {}{}); its first record at offset {o}",
                e.epoch,
                e.leader,
                if e.unclean {
                    " by an UNCLEAN election"
                } else {
                    ""
                },
                e.metadata_offset,
                iso_time(e.timestamp).map_or(String::new(), |t| format!(", {t}"))
            )),
            cy + CTRL_H - 4.0,
            cy + CTRL_H - 4.0,
            plot_bottom,
            x + 4.0,
            cy + 11.0 + 12.0 * row as f64,
            markup(&label)
        );
    }
    s.push_str("</g>");
    // Replica lanes.
    for (i, (r, v)) in p.diff.replicas.iter().zip(&p.replicas).enumerate() {
        let y = plot_top + CTRL_H + i as f64 * LANE_H;
        lane(s, p, r, v, sc, y, &clip);
    }
    // Where the zoomed panel looks, shaded on the overview.
    if let Some((a, b)) = zoom {
        if let Some((x, w)) = sc.span(a, b) {
            let _ = write!(
                s,
                r##"<rect class="zoom-area" x="{x:.1}" y="{:.1}" width="{w:.1}" height="{:.1}" fill="#ffd43b" fill-opacity="0.15" stroke="#f08c00" stroke-dasharray="4 3"/>"##,
                plot_top,
                plot_bottom - plot_top
            );
        }
    }
    // Partition divergence point across all lanes.
    if let Some(d) = p.divergence_offset() {
        if sc.visible(d) {
            let x = sc.x(d);
            let _ = write!(
                s,
                r##"<g data-kind="divergence-point" data-offset="{d}"><title>first divergence at offset {d}</title><line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#d6336c" stroke-width="1.5" stroke-dasharray="6 3"/></g>"##,
                plot_top + CTRL_H,
                plot_bottom
            );
        }
    }
    axis(s, sc, plot_bottom);
    time_axis(s, p, sc, plot_bottom + 28.0);
    s.push_str("</g>");
}

/// Times under the offset axis: where each leader epoch of the reference
/// replica (else the first replica with batches) starts, its first batch's
/// timestamp, and where its log ends, its last batch's max timestamp; a
/// label is left out where it would overlap the one before.
fn time_axis(s: &mut String, p: &PartitionReport, sc: Scale, y: f64) {
    let reference = p.diff.reference.broker;
    let Some(v) = p
        .replicas
        .iter()
        .find(|v| v.timeline.broker == reference && !v.timeline.from_batches.is_empty())
        .or_else(|| {
            p.replicas
                .iter()
                .find(|v| !v.timeline.from_batches.is_empty())
        })
    else {
        return;
    };
    let spans = &v.timeline.from_batches;
    let mut marks: Vec<(i64, i64)> = spans
        .iter()
        .map(|e| (e.start_offset, e.first_timestamp))
        .collect();
    if let Some(last) = spans.last() {
        marks.push((last.end, last.last_timestamp));
    }
    let dates: std::collections::BTreeSet<String> = marks
        .iter()
        .filter_map(|&(_, t)| iso_time(t))
        .map(|t| t[..10].to_string())
        .collect();
    let one_day = dates.len() == 1;
    let _ = write!(
        s,
        r#"<g class="time-axis" data-replica="{}">"#,
        v.timeline.broker
    );
    let mut free_from = f64::MIN;
    for (o, t) in marks {
        let Some(iso) = iso_time(t) else { continue };
        if !sc.visible(o) {
            continue;
        }
        let x = sc.x(o);
        // the time of day when every mark is on one date, else date and time
        let label = if one_day {
            iso[11..23].to_string()
        } else {
            format!("{} {}", &iso[5..10], &iso[11..19])
        };
        // labels start at their tick, so the first clears the axis title
        // a label starts at its tick, or near the right edge ends there
        let width = 6.5 * label.len() as f64;
        let (from, anchor) = if x + 2.0 + width > WIDTH - 2.0 {
            (x - 2.0 - width, " style=\"text-anchor:end\"")
        } else {
            (x + 2.0, "")
        };
        let _ = write!(
            s,
            r##"<g data-kind="time" data-offset="{o}" data-time="{t}"><title>{}</title><line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#868e96"/>"##,
            markup(&format!("offset {o}: {iso} ({t})")),
            y - 4.0,
            y + 1.0
        );
        if from >= free_from {
            let _ = write!(
                s,
                r#"<text class="time-tick" x="{:.1}" y="{:.1}"{anchor}>{}</text>"#,
                if anchor.is_empty() { x + 2.0 } else { x - 2.0 },
                y + 13.0,
                markup(&label)
            );
            free_from = from + width + 10.0;
        }
        s.push_str("</g>");
    }
    let title = if one_day {
        format!(
            "time (UTC, {})",
            dates.iter().next().map_or("", String::as_str)
        )
    } else {
        "time (UTC)".to_string()
    };
    let _ = write!(
        s,
        r#"<text class="axis-title" x="{:.1}" y="{:.1}" text-anchor="end">{}</text><text class="axis-title" x="{:.1}" y="{:.1}" text-anchor="end">broker {}'s batches</text></g>"#,
        sc.x0 - 14.0,
        y + 6.0,
        markup(&title),
        sc.x0 - 14.0,
        y + 19.0,
        v.timeline.broker
    );
}

fn lane(
    s: &mut String,
    p: &PartitionReport,
    r: &ReplicaDiff,
    v: &ReplicaView,
    sc: Scale,
    y: f64,
    clip: &str,
) {
    let broker = r.broker;
    let is_ref = broker == p.diff.reference.broker;
    let bar_y = y + 16.0;
    let bar_h = 24.0;
    // Lane background and labels.
    let _ = write!(
        s,
        r##"<rect x="0" y="{y:.1}" width="{WIDTH}" height="{LANE_H}" fill="{}"/>"##,
        if is_ref { "#eef6ff" } else { "#ffffff" }
    );
    let sub = if is_ref {
        "reference (leader)".to_string()
    } else {
        match (r.divergence_kind, r.divergence_offset) {
            (DivergenceKind::Diverged, Some(d)) => format!("diverges at {d}"),
            (DivergenceKind::Prefix, _) => "behind the reference".into(),
            (DivergenceKind::Extends, _) => "longer than the reference".into(),
            (DivergenceKind::Identical, _) => "identical".into(),
            (DivergenceKind::Disjoint, _) => "disjoint".into(),
            _ => String::new(),
        }
    };
    let lost_control: u64 = p
        .loss
        .offsets
        .iter()
        .filter(|l| l.held_by.contains(&broker))
        .map(|l| l.control_records)
        .sum();
    let cut = cut_words(r, lost_control);
    let class = if cut.alarming { " loss" } else { "" };
    let _ = write!(
        s,
        r#"<g class="lane-labels" data-kind="lane" data-replica="{broker}"><title>{}</title><text class="lane-label" x="4" y="{:.1}">broker {broker}</text><text class="lane-sub" x="4" y="{:.1}">{}</text><text class="lane-sub{class}" x="4" y="{:.1}">{}</text>"#,
        markup(&format!("broker {broker}: {}", cut.long)),
        y + 18.0,
        y + 34.0,
        markup(&sub),
        y + 50.0,
        markup(&cut.short)
    );
    if let Some(c) = &cut.committed {
        let _ = write!(
            s,
            r#"<text class="lane-sub{class}" x="4" y="{:.1}">{}</text>"#,
            y + 66.0,
            markup(c)
        );
    }
    s.push_str("</g>");
    let _ = write!(s, r#"<g clip-path="url(#{clip})">"#);
    // Epochs from the batch headers.
    for e in &v.timeline.from_batches {
        let end = e.end;
        let Some((x, w)) = sc.span(e.start_offset, end) else {
            continue;
        };
        let _ = write!(
            s,
            r##"<g data-kind="epoch" data-source="batches" data-replica="{broker}" data-epoch="{}" data-start="{}" data-end="{end}" data-records="{}"><title>{}</title><rect x="{x:.1}" y="{bar_y:.1}" width="{w:.1}" height="{bar_h}" fill="{}" stroke="#fff" stroke-width="0.5"/>"##,
            e.epoch,
            e.start_offset,
            e.records,
            markup(&format!(
                "broker {broker}: epoch {} wrote offsets [{}, {end}) ({}, {})",
                e.epoch,
                e.start_offset,
                crate::render::text::counted(e.records.max(0) as u64, "record"),
                crate::render::text::counted(e.batches, "batch")
            )),
            epoch_colour(e.epoch)
        );
        if w >= 26.0 {
            let _ = write!(
                s,
                r#"<text class="epoch-label" x="{:.1}" y="{:.1}">e{}</text>"#,
                x + 3.0,
                bar_y + 16.0,
                e.epoch
            );
        }
        s.push_str("</g>");
    }
    // The checkpoint's view where it disagrees.
    for c in &v.checkpoint_disagreements {
        let Some((x, w)) = sc.span(c.start, c.end) else {
            continue;
        };
        let _ = write!(
            s,
            r##"<g data-kind="checkpoint-epoch" data-replica="{broker}" data-epoch="{}" data-start="{}" data-end="{}"><title>{}</title><rect x="{x:.1}" y="{:.1}" width="{w:.1}" height="6" fill="{}"/><rect x="{x:.1}" y="{:.1}" width="{w:.1}" height="6" fill="url(#hatch-cp)"/></g>"##,
            c.epoch,
            c.start,
            c.end,
            markup(&format!(
                "broker {broker}: leader-epoch-checkpoint says epoch {} covers [{}, {}), the batches disagree",
                c.epoch, c.start, c.end
            )),
            bar_y + bar_h + 13.0,
            epoch_colour(c.epoch),
            bar_y + bar_h + 13.0,
        );
    }
    // What the truncation cuts, and among the lost records it takes those
    // proven committed (red) and those possibly committed (light red).
    if r.truncation_offset < r.log_end_offset {
        if let Some((x, w)) = sc.span(r.truncation_offset, r.log_end_offset) {
            let _ = write!(
                s,
                r##"<g data-kind="lost" data-replica="{broker}" data-start="{}" data-end="{}" data-records="{}" data-lost="{}"><title>{}</title><rect x="{x:.1}" y="{:.1}" width="{w:.1}" height="{:.1}" fill="url(#hatch-lost)" stroke="#e8590c" stroke-width="1.5"/></g>"##,
                r.truncation_offset,
                r.log_end_offset,
                r.records_to_truncate,
                r.lost_cut,
                markup(&format!(
                    "broker {broker} loses offsets [{}, {}): {}",
                    r.truncation_offset, r.log_end_offset, cut.long
                )),
                bar_y - 3.0,
                bar_h + 14.0
            );
        }
    }
    for c in &v.lost {
        let (kind, fill, words) = match c.committed {
            Committed::Proven => (
                "committed-lost",
                "#e03131",
                "proven COMMITTED (acknowledged writes lost)",
            ),
            Committed::Possible => (
                "possibly-committed-lost",
                "#ffa8a8",
                "possibly committed (every member of an ISR in force held them)",
            ),
            Committed::Unknown => (
                "possibly-committed-lost",
                "#ffa8a8",
                "of unknown commitment (no ISR history bounds them): possibly committed",
            ),
            Committed::No => continue,
        };
        if let Some((x, w)) = sc.span(c.start, c.end) {
            let _ = write!(
                s,
                r##"<g data-kind="{kind}" data-replica="{broker}" data-start="{}" data-end="{}" data-records="{}" data-committed="{}"><title>{}</title><rect x="{x:.1}" y="{:.1}" width="{w:.1}" height="{:.1}" fill="{fill}"/></g>"##,
                c.start,
                c.end,
                c.records,
                c.committed.name(),
                markup(&format!(
                    "broker {broker}: {} lost at offsets [{}, {}), {words}",
                    crate::render::text::counted(c.records, "record"),
                    c.start,
                    c.end
                )),
                bar_y + bar_h + 2.0,
                7.0
            );
        }
    }
    // Per-replica divergence.
    if let Some(d) = r.divergence_offset {
        if sc.visible(d) {
            let x = sc.x(d);
            let colour = if r.divergence_kind == DivergenceKind::Diverged {
                "#d6336c"
            } else {
                "#868e96"
            };
            let _ = write!(
                s,
                r#"<g data-kind="divergence" data-replica="{broker}" data-offset="{d}" data-divergence="{}"><title>{}</title><path d="M{x:.1},{:.1} l5,5 l-5,5 l-5,-5 z" fill="{colour}"/></g>"#,
                kind_name(r.divergence_kind),
                markup(&format!(
                    "broker {broker} parts from the reference at offset {d} ({})",
                    kind_name(r.divergence_kind)
                )),
                bar_y + bar_h + 9.0
            );
        }
    }
    s.push_str("</g>");
    // Truncation point (a mark on every replica; drawn when it cuts).
    let t = r.truncation_offset;
    let _ = write!(
        s,
        r#"<g data-kind="truncation" data-replica="{broker}" data-offset="{t}" data-records="{}" data-lost="{}" data-committed-proven="{}" data-committed-possible="{}" data-checkpointed="{}"><title>{}</title>"#,
        r.records_to_truncate,
        r.lost_cut,
        r.committed_proven_cut,
        r.committed_possible_cut
            .map_or_else(|| "-".to_string(), |v| v.to_string()),
        r.checkpointed_records_to_truncate,
        markup(&if t < r.log_end_offset {
            format!(
                "following broker {}, Kafka truncates broker {broker} to offset {t}",
                p.diff.reference.broker
            )
        } else {
            format!("broker {broker} keeps its log (truncation offset = log end {t})")
        })
    );
    if t < r.log_end_offset && sc.visible(t) {
        let x = sc.x(t);
        let _ = write!(
            s,
            r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#000" stroke-width="2.5"/><text class="cut-label" x="{:.1}" y="{:.1}">✂ {t}</text>"##,
            bar_y - 6.0,
            bar_y + bar_h + 12.0,
            x + 3.0,
            bar_y - 5.0
        );
    }
    s.push_str("</g>");
    // High watermark.
    if let Some(h) = r.high_watermark {
        let _ = write!(
            s,
            r#"<g data-kind="hw" data-replica="{broker}" data-offset="{h}"><title>broker {broker}: high watermark {h}</title>"#
        );
        if sc.visible(h) {
            let x = sc.x(h);
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#1c7ed6" stroke-width="2.5"/><text class="hw-label" x="{x:.1}" y="{:.1}">HW {h}</text>"##,
                bar_y - 2.0,
                bar_y + bar_h + 13.0,
                bar_y + bar_h + 28.0
            );
        }
        s.push_str("</g>");
    }
    // Log end.
    let leo = r.log_end_offset;
    let _ = write!(
        s,
        r#"<g data-kind="leo" data-replica="{broker}" data-offset="{leo}"><title>broker {broker}: log end offset {leo}</title>"#
    );
    if sc.visible(leo) {
        let x = sc.x(leo);
        let _ = write!(
            s,
            r##"<path d="M{x:.1},{:.1} v{bar_h} l5,-{:.1} z" fill="#212529"/><text class="leo-label" x="{:.1}" y="{:.1}">LEO {leo}</text>"##,
            bar_y,
            bar_h / 2.0,
            x + 7.0,
            bar_y + 16.0
        );
    }
    s.push_str("</g>");
}

/// What a replica's truncation takes, as a lane says it: two short lines
/// (records cut and how many of them are lost on every replica; the
/// commitment of those) and the same in words for its tooltip. A committed
/// figure of 0 is never written while more may have been committed: the
/// bounds are the replica's share of the partition's loss
/// (`committed_proven_cut`, `committed_possible_cut`).
pub struct CutWords {
    /// `cut 100, 100 lost`, `cut 20, fetched again`, `nothing cut`.
    pub short: String,
    /// `committed: 0 proven, ≤ 100` and the like, when records are lost.
    pub committed: Option<String>,
    /// The tooltip's sentence.
    pub long: String,
    /// Records that were or may have been committed are lost.
    pub alarming: bool,
}

/// [`CutWords`] of a replica; `lost_control`: the control records
/// (transaction markers) among the lost records it holds, which the
/// commitment bounds leave out.
pub fn cut_words(r: &ReplicaDiff, lost_control: u64) -> CutWords {
    if r.truncation_offset >= r.log_end_offset {
        return CutWords {
            short: "nothing cut".into(),
            committed: None,
            long: format!(
                "nothing cut (truncation offset = log end {})",
                r.log_end_offset
            ),
            alarming: false,
        };
    }
    let n = r.records_to_truncate.max(0) as u64;
    let cut = crate::render::text::counted(n, "record");
    let control = if lost_control > 0 {
        format!(
            " (and {} lost)",
            crate::render::text::counted(lost_control, "control record")
        )
    } else {
        String::new()
    };
    if r.lost_cut == 0 {
        return CutWords {
            short: if lost_control > 0 {
                format!("cut {n}, {lost_control} control lost")
            } else {
                format!("cut {n}, fetched again")
            },
            committed: None,
            long: if lost_control > 0 {
                format!("{cut} cut: no data record lost{control}")
            } else {
                format!("{cut} cut, every one fetched again from the reference, which keeps them")
            },
            alarming: false,
        };
    }
    let (proven, possible) = (r.committed_proven_cut, r.committed_possible_cut);
    let committed = match possible {
        Some(0) => "not committed".to_string(),
        Some(p) if p == proven => format!("{p} committed (proven)"),
        Some(p) => format!("committed: {proven} proven, ≤ {p}"),
        None => format!("committed: {proven} proven, rest unknown"),
    };
    let bounds = match possible {
        Some(0) => "not committed".to_string(),
        _ => format!(
            "committed: {}",
            crate::model::loss::bounds_words(proven, possible)
        ),
    };
    CutWords {
        short: format!("cut {n}, {} lost", r.lost_cut),
        committed: Some(committed),
        long: format!(
            "{cut} cut, {} of them lost on every replica{control}; {bounds}",
            r.lost_cut
        ),
        alarming: possible != Some(0),
    }
}

fn kind_name(k: DivergenceKind) -> &'static str {
    match k {
        DivergenceKind::Identical => "identical",
        DivergenceKind::Prefix => "prefix",
        DivergenceKind::Extends => "extends",
        DivergenceKind::Diverged => "diverged",
        DivergenceKind::Disjoint => "disjoint",
        DivergenceKind::Reference => "reference",
    }
}

fn axis(s: &mut String, sc: Scale, y: f64) {
    let _ = write!(
        s,
        r##"<g class="axis"><line x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#495057"/>"##,
        sc.x0,
        sc.x0 + sc.w
    );
    let step = nice_step(sc.hi - sc.lo, 10);
    let first = sc.lo.div_euclid(step) * step;
    let mut o = if first < sc.lo { first + step } else { first };
    while o <= sc.hi {
        let x = sc.x(o);
        let _ = write!(
            s,
            r##"<line x1="{x:.1}" y1="{y:.1}" x2="{x:.1}" y2="{:.1}" stroke="#495057"/><text class="tick" x="{x:.1}" y="{:.1}">{o}</text>"##,
            y + 5.0,
            y + 17.0
        );
        o += step;
    }
    let _ = write!(
        s,
        r#"<text class="axis-title" x="{:.1}" y="{:.1}" text-anchor="end">offset</text></g>"#,
        sc.x0 - 14.0,
        y + 17.0
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_round() {
        assert_eq!(nice_step(164, 10), 20);
        assert_eq!(nice_step(10, 10), 1);
        assert_eq!(nice_step(1_000_000, 10), 100_000);
    }

    #[test]
    fn escaping() {
        assert_eq!(
            markup("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
