//! `klf report` on the real Kafka captures with a divergence, two
//! divergences and an unclean election: every mark of the page's timelines
//! (read back from its `data-*` attributes) says what `klf diff --format
//! json` and `klf timeline --format json` say of the same capture, and the
//! page is self-contained.

// A test asserts by panicking: unwrap is how it says "this must hold".
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::common::{finish, klf_command};
use serde_json::Value;

const CAPTURES: [&str; 3] = ["divergence", "double-divergence", "unclean"];

fn capture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/kafka")
        .join(name)
}

fn klf_json(args: &[&str], dir: &Path) -> (Option<i32>, Value) {
    let out = finish(klf_command().args(args).arg(dir));
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), v)
}

/// Runs `klf report DIR --html -` and returns the exit code and the page.
fn report(dir: &Path) -> (Option<i32>, String) {
    let out = finish(klf_command().arg("report").arg(dir).args(["--html", "-"]));
    (
        out.status.code(),
        String::from_utf8(out.stdout).expect("UTF-8 page"),
    )
}

/// A tag carrying `data-*` attributes, with the partition section and the
/// SVG panel it sits in.
#[derive(Debug, Clone)]
struct Mark {
    partition: String,
    panel: String,
    attrs: BTreeMap<String, String>,
}

impl Mark {
    fn get(&self, k: &str) -> Option<&str> {
        self.attrs.get(k).map(String::as_str)
    }
    fn int(&self, k: &str) -> i64 {
        self.get(k)
            .unwrap_or_else(|| panic!("{k} missing on {self:?}"))
            .parse()
            .unwrap_or_else(|e| panic!("{k} on {self:?}: {e}"))
    }
}

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// Every opening tag's attributes, in document order (the page escapes
/// `<`, `>` and quotes in attribute values, so a tag ends at the first `>`).
fn tags(html: &str) -> Vec<(String, BTreeMap<String, String>)> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        let Some(end) = rest.find('>') else { break };
        let tag = &rest[..end];
        rest = &rest[end + 1..];
        if tag.starts_with('/') || tag.starts_with('!') {
            continue;
        }
        let name: String = tag
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        let mut attrs = BTreeMap::new();
        let mut t = &tag[name.len()..];
        while let Some(eq) = t.find("=\"") {
            let key = t[..eq]
                .trim()
                .rsplit(char::is_whitespace)
                .next()
                .unwrap_or("")
                .to_string();
            let after = &t[eq + 2..];
            let Some(close) = after.find('"') else { break };
            attrs.insert(key, unescape(&after[..close]));
            t = &after[close + 1..];
        }
        out.push((name, attrs));
    }
    out
}

/// The marks (tags with `data-kind`) of the page.
fn marks(html: &str) -> Vec<Mark> {
    let mut partition = String::new();
    let mut panel = String::new();
    let mut out = Vec::new();
    for (name, attrs) in tags(html) {
        if name == "section" {
            if let Some(p) = attrs.get("data-partition") {
                partition = p.clone();
                panel.clear();
            }
        }
        if let Some(p) = attrs.get("data-panel") {
            panel = p.clone();
        }
        if attrs.contains_key("data-kind") {
            out.push(Mark {
                partition: partition.clone(),
                panel: panel.clone(),
                attrs,
            });
        }
    }
    out
}

fn of<'a>(ms: &'a [Mark], partition: &str, kind: &str, broker: Option<i64>) -> Vec<&'a Mark> {
    ms.iter()
        .filter(|m| m.partition == partition && m.panel == "overview")
        .filter(|m| m.get("data-kind") == Some(kind))
        .filter(|m| broker.is_none_or(|b| m.get("data-replica") == Some(b.to_string().as_str())))
        .collect()
}

fn check_capture(name: &str) {
    let dir = capture(name);
    let (code, html) = report(&dir);
    let (diff_code, diff) = klf_json(&["diff", "--format", "json"], &dir);
    let (_, tl) = klf_json(&["timeline", "--format", "json"], &dir);
    assert_eq!(code, diff_code, "{name}: report and diff exit alike");
    let ms = marks(&html);
    let rows: Vec<BTreeMap<String, String>> = tags(&html)
        .into_iter()
        .filter(|(n, a)| n == "tr" && a.contains_key("data-partition"))
        .map(|(_, a)| a)
        .collect();
    let parts = diff["partitions"].as_array().unwrap();
    assert!(!parts.is_empty());
    assert_eq!(
        rows.len(),
        parts.len(),
        "{name}: one summary row per partition"
    );
    for p in parts {
        let pname = format!("{}-{}", p["topic"].as_str().unwrap(), p["partition"]);
        let reps = p["replicas"].as_array().unwrap();
        // Summary row.
        let row = rows
            .iter()
            .find(|r| r["data-partition"] == pname)
            .unwrap_or_else(|| panic!("{name}: no summary row for {pname}"));
        let diverged: Option<i64> = reps
            .iter()
            .filter(|r| r["divergence_kind"] == "diverged")
            .filter_map(|r| r["divergence_offset"].as_i64())
            .min();
        // The partition's loss, counted once, as diff counts it.
        let lost = p["loss"]["records"].as_i64().unwrap();
        let committed = p["loss"]["committed_proven"].as_i64().unwrap();
        let possible = p["loss"]["committed_possible"]
            .as_i64()
            .map_or("-".to_string(), |v| v.to_string());
        assert_eq!(row["data-committed-possible"], possible, "{name} {pname}");
        assert_eq!(row["data-verdict"], p["loss"]["verdict"].as_str().unwrap());
        let section_loss = ms
            .iter()
            .find(|m| m.partition == pname && m.get("data-kind") == Some("partition-loss"))
            .unwrap_or_else(|| panic!("{name}: no partition-loss block"));
        assert_eq!(section_loss.int("data-records"), lost);
        let ranges: Vec<(i64, i64)> = ms
            .iter()
            .filter(|m| m.partition == pname && m.get("data-kind") == Some("lost-range"))
            .map(|m| (m.int("data-start"), m.int("data-end")))
            .collect();
        let want: Vec<(i64, i64)> = p["loss"]["offsets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["start"].as_i64().unwrap(), r["end"].as_i64().unwrap()))
            .collect();
        assert_eq!(ranges, want, "{name}: the lost ranges");
        assert_eq!(
            row["data-divergence"],
            diverged.map_or("-".to_string(), |d| d.to_string()),
            "{name} {pname}"
        );
        assert_eq!(row["data-records-lost"], lost.to_string(), "{name} {pname}");
        assert_eq!(
            row["data-committed-lost"],
            committed.to_string(),
            "{name} {pname}"
        );
        assert!(diverged.is_some(), "{name}: the scenario diverges");
        assert!(lost > 0, "{name}: the scenario cuts records");
        let point = of(&ms, &pname, "divergence-point", None);
        assert_eq!(point.len(), 1, "{name}: one divergence point");
        assert_eq!(Some(point[0].int("data-offset")), diverged);
        // Per replica.
        for r in reps {
            let b = r["broker"].as_i64().unwrap();
            let leo = r["log_end_offset"].as_i64().unwrap();
            let cut = r["truncation_offset"].as_i64().unwrap();
            let cut_records = r["records_to_truncate"].as_i64().unwrap();
            // the replica's share of the partition's loss, as diff bounds it
            let lost_cut = r["lost_records_to_truncate"].as_i64().unwrap();
            let proven = r["committed_proven_to_truncate"].as_i64().unwrap();
            let possible = r["committed_possible_to_truncate"].as_i64();
            let t = of(&ms, &pname, "truncation", Some(b));
            assert_eq!(t.len(), 1, "{name} broker {b}: one truncation mark");
            assert_eq!(t[0].int("data-offset"), cut, "{name} broker {b}");
            assert_eq!(t[0].int("data-records"), cut_records, "{name} broker {b}");
            assert_eq!(t[0].int("data-lost"), lost_cut, "{name} broker {b}");
            assert_eq!(
                t[0].int("data-committed-proven"),
                proven,
                "{name} broker {b}"
            );
            assert_eq!(
                t[0].get("data-committed-possible"),
                Some(possible.map_or("-".to_string(), |v| v.to_string()).as_str()),
                "{name} broker {b}"
            );
            assert_eq!(
                t[0].int("data-checkpointed"),
                r["checkpointed_records_to_truncate"].as_i64().unwrap(),
                "{name} broker {b}"
            );
            let l = of(&ms, &pname, "lost", Some(b));
            if cut < leo {
                assert_eq!(l.len(), 1, "{name} broker {b}: the cut is drawn");
                assert_eq!((l[0].int("data-start"), l[0].int("data-end")), (cut, leo));
                assert_eq!(l[0].int("data-records"), cut_records);
            } else {
                assert!(
                    l.is_empty(),
                    "{name} broker {b}: nothing cut, nothing drawn"
                );
            }
            // the lost records it holds, red where proven committed, light
            // red where possibly: as many as diff's bounds say
            let c = of(&ms, &pname, "committed-lost", Some(b));
            let sum: i64 = c.iter().map(|m| m.int("data-records")).sum();
            assert_eq!(sum, proven, "{name} broker {b}: committed loss drawn");
            let maybe = of(&ms, &pname, "possibly-committed-lost", Some(b));
            let sum_maybe: i64 = maybe.iter().map(|m| m.int("data-records")).sum();
            if let Some(p) = possible {
                assert_eq!(
                    sum_maybe,
                    p - proven,
                    "{name} broker {b}: possibly committed loss drawn"
                );
            }
            for m in c.iter().chain(&maybe) {
                assert!(cut <= m.int("data-start") && m.int("data-start") < m.int("data-end"));
                assert!(m.int("data-end") <= leo);
            }
            let d = of(&ms, &pname, "divergence", Some(b));
            match r["divergence_offset"].as_i64() {
                Some(o) => {
                    assert_eq!(d.len(), 1, "{name} broker {b}");
                    assert_eq!(d[0].int("data-offset"), o);
                    assert_eq!(
                        Some(d[0].get("data-divergence").unwrap()),
                        r["divergence_kind"].as_str()
                    );
                }
                None => assert!(d.is_empty(), "{name} broker {b}: no divergence mark"),
            }
            let hw = of(&ms, &pname, "hw", Some(b));
            match r["high_watermark"].as_i64() {
                Some(h) => assert_eq!(
                    hw.iter().map(|m| m.int("data-offset")).collect::<Vec<_>>(),
                    [h]
                ),
                None => assert!(hw.is_empty()),
            }
            let le = of(&ms, &pname, "leo", Some(b));
            assert_eq!(
                le.iter().map(|m| m.int("data-offset")).collect::<Vec<_>>(),
                [leo]
            );
        }
    }
    // Epochs and elections against `klf timeline`.
    for p in tl["partitions"].as_array().unwrap() {
        let pname = format!("{}-{}", p["topic"].as_str().unwrap(), p["partition"]);
        if !parts
            .iter()
            .any(|d| format!("{}-{}", d["topic"].as_str().unwrap(), d["partition"]) == pname)
        {
            continue;
        }
        for r in p["replicas"].as_array().unwrap() {
            let b = r["broker"].as_i64().unwrap();
            let want: Vec<(i64, i64, i64)> = r["from_batches"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| {
                    (
                        s["epoch"].as_i64().unwrap(),
                        s["start_offset"].as_i64().unwrap(),
                        s["end"].as_i64().unwrap(),
                    )
                })
                .collect();
            let got: Vec<(i64, i64, i64)> = of(&ms, &pname, "epoch", Some(b))
                .iter()
                .map(|m| (m.int("data-epoch"), m.int("data-start"), m.int("data-end")))
                .collect();
            assert_eq!(
                got, want,
                "{name} broker {b}: epochs from the batch headers"
            );
        }
        let elections: Vec<(i64, i64, bool, i64)> = p["controller"]["changes"]
            .as_array()
            .expect("the captures hold a metadata log")
            .iter()
            .filter(|e| e["leader_changed"] == true && e["leader"].as_i64() >= Some(0))
            .map(|e| {
                (
                    e["leader_epoch"].as_i64().unwrap(),
                    e["leader"].as_i64().unwrap(),
                    e["unclean"].as_bool().unwrap(),
                    e["timestamp"].as_i64().unwrap(),
                )
            })
            .collect();
        let drawn: Vec<(i64, i64, bool, i64)> = of(&ms, &pname, "election", None)
            .iter()
            .map(|m| {
                (
                    m.int("data-epoch"),
                    m.int("data-leader"),
                    m.get("data-unclean") == Some("true"),
                    m.int("data-time"),
                )
            })
            .collect();
        // The time axis: where each epoch of the reference starts, its
        // first batch's timestamp; at its log end, its last max timestamp.
        let reference = parts
            .iter()
            .find(|d| format!("{}-{}", d["topic"].as_str().unwrap(), d["partition"]) == pname)
            .unwrap()["reference"]["broker"]
            .as_i64()
            .unwrap();
        let spans = p["replicas"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["broker"].as_i64() == Some(reference))
            .unwrap()["from_batches"]
            .as_array()
            .unwrap();
        let mut want_times: Vec<(i64, i64)> = spans
            .iter()
            .map(|s| {
                (
                    s["start_offset"].as_i64().unwrap(),
                    s["first_timestamp"].as_i64().unwrap(),
                )
            })
            .collect();
        let last = spans.last().unwrap();
        want_times.push((
            last["end"].as_i64().unwrap(),
            last["last_timestamp"].as_i64().unwrap(),
        ));
        let times: Vec<(i64, i64)> = of(&ms, &pname, "time", None)
            .iter()
            .map(|m| (m.int("data-offset"), m.int("data-time")))
            .collect();
        assert_eq!(
            times, want_times,
            "{name}: the time axis is broker {reference}'s batches"
        );
        assert!(html.contains(&format!(
            "<g class=\"time-axis\" data-replica=\"{reference}\">"
        )));
        assert_eq!(
            drawn, elections,
            "{name}: every election that wrote is drawn"
        );
        // An election is drawn where its epoch's first batch is.
        for m in of(&ms, &pname, "election", None) {
            let leader = m.int("data-leader");
            let epoch = m.int("data-epoch");
            let starts: Vec<i64> = p["replicas"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|r| r["from_batches"].as_array().unwrap())
                .filter(|s| s["epoch"].as_i64() == Some(epoch))
                .map(|s| s["start_offset"].as_i64().unwrap())
                .collect();
            assert!(
                starts.contains(&m.int("data-offset")),
                "{name}: election of epoch {epoch} (broker {leader}) at {:?}, batches start at {starts:?}",
                m.get("data-offset")
            );
        }
    }
    // The zoomed panel, when there is one, frames the divergence.
    for p in parts {
        let pname = format!("{}-{}", p["topic"].as_str().unwrap(), p["partition"]);
        let d = of(&ms, &pname, "divergence-point", None)[0].int("data-offset");
        let zoom: Vec<&Mark> = ms
            .iter()
            .filter(|m| {
                m.partition == pname
                    && m.panel == "zoom"
                    && m.get("data-kind") == Some("divergence-point")
            })
            .collect();
        if let Some(z) = zoom.first() {
            assert_eq!(z.int("data-offset"), d);
        }
    }
    self_contained(name, &html);
}

/// No external resource, no script, no network address.
fn self_contained(name: &str, html: &str) {
    let lower = html.to_ascii_lowercase();
    assert!(lower.starts_with("<!doctype html>"), "{name}");
    assert!(
        !lower.contains("http://") && !lower.contains("https://"),
        "{name}: a network address"
    );
    assert!(!lower.contains("<script"), "{name}: a script");
    assert!(!lower.contains("<link"), "{name}: a linked resource");
    assert!(
        !lower.contains("@import") && !lower.contains("@font-face"),
        "{name}: CSS loading something"
    );
    for (tag, attrs) in tags(html) {
        for k in ["src", "srcset", "xlink:href", "data", "action"] {
            assert!(!attrs.contains_key(k), "{name}: <{tag} {k}=...>");
        }
        if let Some(h) = attrs.get("href") {
            assert!(
                h.starts_with('#'),
                "{name}: <{tag} href={h}> leaves the page"
            );
        }
    }
    let mut rest = lower.as_str();
    while let Some(i) = rest.find("url(") {
        rest = &rest[i + 4..];
        assert!(
            rest.starts_with('#'),
            "{name}: url() to something outside the page"
        );
    }
}

#[test]
fn divergence_report_matches_diff_and_timeline() {
    check_capture(CAPTURES[0]);
}

#[test]
fn double_divergence_report_matches_diff_and_timeline() {
    check_capture(CAPTURES[1]);
}

#[test]
fn unclean_report_matches_diff_and_timeline() {
    check_capture(CAPTURES[2]);
    let (_, html) = report(&capture("unclean"));
    let ms = marks(&html);
    assert!(
        ms.iter().any(
            |m| m.get("data-kind") == Some("election") && m.get("data-unclean") == Some("true")
        ),
        "the unclean election is flagged"
    );
    assert!(
        ms.iter()
            .any(|m| m.get("data-kind") == Some("committed-lost")),
        "acknowledged writes lost are drawn"
    );
}

#[test]
fn divergence_report_has_a_zoomed_panel() {
    // The divergence capture's cut is a small part of its offsets: the page
    // zooms on it.
    let (_, html) = report(&capture("divergence"));
    let ms = marks(&html);
    let zoom_cut: Vec<&Mark> = ms
        .iter()
        .filter(|m| m.panel == "zoom" && m.get("data-kind") == Some("lost"))
        .collect();
    assert_eq!(zoom_cut.len(), 1, "the cut is drawn in the zoomed panel");
    let panels: Vec<BTreeMap<String, String>> = tags(&html)
        .into_iter()
        .filter(|(_, a)| a.get("data-panel").is_some_and(|p| p == "zoom"))
        .map(|(_, a)| a)
        .collect();
    assert_eq!(panels.len(), 1);
    let (lo, hi): (i64, i64) = (
        panels[0]["data-start"].parse().unwrap(),
        panels[0]["data-end"].parse().unwrap(),
    );
    let (s, e) = (zoom_cut[0].int("data-start"), zoom_cut[0].int("data-end"));
    assert!(
        lo <= s && e <= hi,
        "zoom [{lo}, {hi}] frames the cut [{s}, {e})"
    );
}

#[test]
fn story_is_the_diff_explain_story() {
    let dir = capture("unclean");
    let out = finish(klf_command().args(["diff", "--explain"]).arg(&dir));
    let text = String::from_utf8(out.stdout).unwrap();
    let (_, html) = report(&dir);
    let start = html.find("<pre class=\"story\">").expect("story") + "<pre class=\"story\">".len();
    let story = unescape(&html[start..start + html[start..].find("</pre>").unwrap()]);
    let lines: Vec<&str> = story.lines().collect();
    assert!(lines.len() >= 3, "{story}");
    for l in lines {
        assert!(text.contains(l), "story line not in diff --explain: {l}");
    }
}

#[test]
fn page_is_never_written_into_the_evidence() {
    let dir = capture("divergence");
    let target = dir.join("broker-1").join("klf-report-test.html");
    let out = finish(
        klf_command()
            .arg("report")
            .arg(&dir)
            .arg("--html")
            .arg(&target),
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!target.exists());
    assert!(String::from_utf8_lossy(&out.stderr).contains("evidence"));
}

#[test]
fn page_is_written_to_a_file() {
    let dir = capture("double-divergence");
    let tmp = std::env::temp_dir().join(format!("klf-report-test-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let target = tmp.join("double.html");
    let out = finish(
        klf_command()
            .arg("report")
            .arg(&dir)
            .arg("--html")
            .arg(&target),
    );
    let written = std::fs::read_to_string(&target);
    let _ = std::fs::remove_dir_all(&tmp);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout.is_empty(),
        "the page goes to the file, not stdout"
    );
    let (_, page) = report(&dir);
    assert_eq!(
        written.expect("page written"),
        page,
        "the same page either way"
    );
}

#[test]
fn partitions_that_lose_nothing_are_folded_into_one_list() {
    // Captures whose partitions lose nothing, some with replicas that hold
    // the same batches, others not.
    for name in ["codecs", "transactions", "internal-topics"] {
        let dir = capture(name);
        let (_, html) = report(&dir);
        let (_, diff) = klf_json(&["diff", "--format", "json"], &dir);
        let sections: Vec<String> = tags(&html)
            .into_iter()
            .filter(|(n, _)| n == "section")
            .filter_map(|(_, a)| a.get("data-partition").cloned())
            .collect();
        let rows: BTreeMap<String, BTreeMap<String, String>> = tags(&html)
            .into_iter()
            .filter(|(n, a)| n == "tr" && a.contains_key("data-partition"))
            .map(|(_, a)| (a["data-partition"].clone(), a))
            .collect();
        let parts = diff["partitions"].as_array().unwrap();
        assert_eq!(rows.len(), parts.len(), "{name}: one row per partition");
        let fold = html.find("<h2 id=\"nothing-lost\">").expect("the fold");
        let (mut agreeing, mut quiet) = (0, 0);
        for p in parts {
            let pname = format!("{}-{}", p["topic"].as_str().unwrap(), p["partition"]);
            let reps = p["replicas"].as_array().unwrap();
            let lost = p["loss"]["records"].as_u64().unwrap()
                + p["loss"]["control_records"].as_u64().unwrap();
            let same = reps.iter().all(|r| {
                matches!(
                    r["divergence_kind"].as_str(),
                    Some("identical" | "reference")
                ) && r["records_to_truncate"] == 0
                    && r["truncation_offset"] == r["log_end_offset"]
                    && r["findings"].as_array().unwrap().is_empty()
            }) && p["loss"]["verdict"] == "nothing-lost"
                && lost == 0
                && p["findings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|f| f["code"] == "ambiguous-reference");
            let row = &rows[&pname];
            // a partition that loses nothing is a row of the fold, after
            // its heading
            let at = html
                .find(&format!("<tr data-partition=\"{pname}\""))
                .unwrap();
            assert_eq!(lost == 0, at > fold, "{name} {pname}");
            if lost == 0 {
                quiet += 1;
                assert_eq!(row["data-records-lost"], "0");
            }
            if same {
                agreeing += 1;
                assert_eq!(
                    row.get("data-agrees").map(String::as_str),
                    Some("true"),
                    "{name} {pname}"
                );
                assert!(!sections.contains(&pname), "{name} {pname}: drawn");
            } else {
                // fewer than 50 differ: every one is drawn
                assert!(!row.contains_key("data-agrees"), "{name} {pname}");
                assert!(sections.contains(&pname), "{name} {pname}: not drawn");
            }
        }
        assert!(agreeing > 0, "{name}: no partition agrees");
        assert!(
            html.contains(&format!(
                "<h2 id=\"nothing-lost\">{quiet} partition{}: nothing lost</h2>",
                if quiet == 1 { "" } else { "s" }
            )),
            "{name}"
        );
    }
}

/// The visible text of a page (tags dropped, entities decoded) and, apart,
/// its tooltips (`<title>` of the SVG marks).
fn visible(html: &str) -> (String, Vec<String>) {
    let body = &html[html.find("<body>").unwrap_or(0)..];
    let mut text = String::new();
    let mut titles = Vec::new();
    let mut rest = body;
    while let Some(i) = rest.find('<') {
        text.push_str(&rest[..i]);
        text.push(' ');
        rest = &rest[i..];
        if let Some(t) = rest.strip_prefix("<title>") {
            let end = t.find("</title>").unwrap();
            titles.push(unescape(&t[..end]));
            rest = &t[end..];
        }
        let Some(end) = rest.find('>') else { break };
        rest = &rest[end + 1..];
    }
    (unescape(&text), titles)
}

/// Where `text` states a committed count of 0: `0 committed`, `(0
/// committed)`, `0 of them committed`, `committed: 0` (but `committed: 0
/// proven, ...`, which gives the upper bound beside it).
fn zero_committed(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    for pat in ["0 committed", "0 of them committed"] {
        for (i, _) in text.match_indices(pat) {
            if i == 0 || !b[i - 1].is_ascii_digit() {
                out.push(text[i.saturating_sub(30)..(i + pat.len())].to_string());
            }
        }
    }
    for (i, _) in text.match_indices("committed: 0") {
        let after = &text[i + "committed: 0".len()..];
        if !after.starts_with(|c: char| c.is_ascii_digit()) && !after.starts_with(" proven") {
            out.push(text[i..(i + 30).min(text.len())].to_string());
        }
    }
    out
}

/// The page opens with the whole capture: its figures are the sums of
/// what `klf diff` says of each partition, one sentence says what they
/// come to ("Nothing lost" when nothing is), and no "none" in green sits
/// beside a loss; a capture that loses nothing has no table of losses.
#[test]
fn page_opens_with_the_whole_capture() {
    for name in ["unclean-stale-hw", "divergence", "codecs", "transactions"] {
        let dir = capture(name);
        let (_, html) = report(&dir);
        let (_, diff) = klf_json(&["diff", "--format", "json"], &dir);
        let parts = diff["partitions"].as_array().unwrap();
        let u = |p: &Value, k: &str| p["loss"][k].as_u64().unwrap();
        let losing: Vec<&Value> = parts
            .iter()
            .filter(|p| u(p, "records") + u(p, "control_records") > 0)
            .collect();
        let overview = marks(&html)
            .into_iter()
            .find(|m| m.get("data-kind") == Some("overview"))
            .unwrap_or_else(|| panic!("{name}: no overview"));
        let sum = |k: &str| losing.iter().map(|p| u(p, k)).sum::<u64>() as i64;
        assert_eq!(
            overview.int("data-partitions"),
            parts.len() as i64,
            "{name}"
        );
        assert_eq!(overview.int("data-losing"), losing.len() as i64, "{name}");
        assert_eq!(overview.int("data-records-lost"), sum("records"), "{name}");
        assert_eq!(
            overview.int("data-control-records-lost"),
            sum("control_records"),
            "{name}"
        );
        assert_eq!(
            overview.int("data-committed-proven"),
            sum("committed_proven"),
            "{name}"
        );
        // every capture here bounds its loss
        let possible: u64 = losing
            .iter()
            .map(|p| p["loss"]["committed_possible"].as_u64().unwrap())
            .sum();
        assert_eq!(
            overview.int("data-committed-possible"),
            possible as i64,
            "{name}"
        );
        let not_captured: usize = parts
            .iter()
            .map(|p| p["loss"]["replicas_not_captured"].as_array().unwrap().len())
            .sum();
        assert_eq!(
            overview.int("data-replicas-not-captured"),
            not_captured as i64,
            "{name}"
        );
        // it comes first: before any partition's table or drawing
        let at = html.find("data-kind=\"overview\"").unwrap();
        for first in [
            "<table class=\"summary\"",
            "<section class=\"partition\"",
            "<h2 id=\"nothing-lost\"",
        ] {
            if let Some(i) = html.find(first) {
                assert!(at < i, "{name}: {first} before the overview");
            }
        }
        let (text, _) = visible(&html);
        let verdict = text[text.find("The capture").unwrap()..]
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && *l != "The capture")
            .unwrap()
            .to_string();
        if losing.is_empty() {
            assert!(
                verdict.starts_with(&format!(
                    "Nothing lost: in the {} partition{} compared, every record is kept",
                    parts.len(),
                    if parts.len() == 1 { "" } else { "s" }
                )),
                "{name}: {verdict}"
            );
            assert!(!html.contains("<table class=\"summary\""), "{name}");
        } else {
            assert!(
                verdict.starts_with(&format!(
                    "Data lost in {} of {} partition{} compared: ",
                    losing.len(),
                    parts.len(),
                    if parts.len() == 1 { "" } else { "s" }
                )),
                "{name}: {verdict}"
            );
            assert!(verdict.contains(&format!("{} records lost", sum("records"))));
        }
        // no green, and no "none" in a row that loses records
        assert!(!html.contains("class=\"ok\""), "{name}");
        for line in html
            .lines()
            .filter(|l| l.starts_with("<tr data-partition="))
        {
            let lost: u64 = line
                .split("data-records-lost=\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap()
                .parse()
                .unwrap();
            if lost > 0 {
                let (cells, _) = visible(line);
                assert!(!cells.contains("none"), "{name}: {cells}");
            }
        }
    }
}

/// unclean-stale-hw: an unclean election lost records the stale high
/// watermark checkpoints do not prove committed, though up to all of them
/// may have been. No lane, tooltip, table or sentence says "0 committed"
/// where the partition's upper bound is above 0; the lanes give each
/// replica's bounds as `klf diff` does.
#[test]
fn no_committed_count_of_zero_beside_a_possible_loss() {
    let dir = capture("unclean-stale-hw");
    let (_, html) = report(&dir);
    let (_, diff) = klf_json(&["diff", "--format", "json"], &dir);
    let mut checked = 0;
    for p in diff["partitions"].as_array().unwrap() {
        let pname = format!("{}-{}", p["topic"].as_str().unwrap(), p["partition"]);
        let possible = p["loss"]["committed_possible"].as_u64();
        if possible.is_some_and(|v| v == 0) {
            continue;
        }
        let start = html
            .find(&format!(
                "<section class=\"partition\" data-partition=\"{pname}\">"
            ))
            .unwrap_or_else(|| panic!("{pname} not drawn"));
        let section = &html[start..start + html[start..].find("</section>").unwrap()];
        let (text, titles) = visible(section);
        let found: Vec<String> = zero_committed(&text)
            .into_iter()
            .chain(titles.iter().flat_map(|t| zero_committed(t)))
            .collect();
        assert!(found.is_empty(), "{pname}: {found:?}");
        for r in p["replicas"].as_array().unwrap() {
            let b = r["broker"].as_i64().unwrap();
            let lost = r["lost_records_to_truncate"].as_u64().unwrap();
            if lost == 0 {
                continue;
            }
            checked += 1;
            let proven = r["committed_proven_to_truncate"].as_u64().unwrap();
            let most = r["committed_possible_to_truncate"].as_u64().unwrap();
            assert!(
                most > proven,
                "{pname} broker {b}: the scenario's stale checkpoint"
            );
            let cut = r["records_to_truncate"].as_u64().unwrap();
            let lane = format!(
                "broker {b}: {cut} records cut, {lost} of them lost on every replica; committed: {proven} proven, at most {most} possible"
            );
            assert!(
                titles.contains(&lane),
                "{pname}: no tooltip {lane:?} in {titles:#?}"
            );
            assert!(
                text.contains(&format!("cut {cut}, {lost} lost")),
                "{pname} broker {b}"
            );
            assert!(
                text.contains(&format!("committed: {proven} proven, ≤ {most}")),
                "{pname} broker {b}"
            );
            // the replica table's committed cell
            assert!(
                text.contains(&format!("{proven} proven, at most {most} possible")),
                "{pname} broker {b}"
            );
        }
    }
    assert!(checked >= 4, "{checked} replicas losing records checked");
}

/// Partitions added to unclean-stale-hw by [`many_partitions`]: more than
/// the page draws of those that lose nothing ([`DRAWN`]). (The benchmark's
/// `--report` measures the page at 3 x 2,001 partitions; here the files a
/// test makes are few, their deletion being slow on some disks.)
const HEALTHY: usize = 60;

/// How many partitions that lose nothing the page draws at most.
const DRAWN: usize = 50;

/// unclean-stale-hw's brokers (two partitions lose data, one loses
/// nothing) and, on each, its replica of the same `stale-0` once the brokers
/// had returned and truncated (`after/`: every replica agrees with the
/// reference) under `HEALTHY` new names (hard links: the disk holds one
/// copy). The copies are not in the brokers' offset checkpoints, so each
/// has findings (no high watermark) and its replicas "differ": the page's
/// worst case, each of them a candidate for drawing.
fn many_partitions(tag: &str) -> PathBuf {
    let root = super::common::scratch(tag);
    let scenario = capture("unclean-stale-hw");
    for b in 1..=3 {
        let broker = root.join(format!("broker-{b}"));
        super::common::copy_tree(&scenario.join(format!("broker-{b}")), &broker);
        let one = root.join(format!("healthy-{b}"));
        super::common::copy_tree(&scenario.join(format!("after/broker-{b}/stale-0")), &one);
        let files: Vec<std::ffi::OsString> = std::fs::read_dir(&one)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        for i in 0..HEALTHY {
            let d = broker.join(format!("healthy-{i}"));
            std::fs::create_dir(&d).unwrap();
            for f in &files {
                std::fs::hard_link(one.join(f), d.join(f)).unwrap();
            }
        }
    }
    root
}

/// A page of many partitions of which two lose data opens on those two,
/// the worst first (committed records lost, then possibly committed); the
/// others are one folded list of short rows, at most [`DRAWN`] of them
/// drawn after it: the page grows by a row per partition that loses
/// nothing (3 x 2,001 partitions: 1.1 MB, where every partition drawn was
/// 20 MB).
#[test]
fn many_partitions_page_opens_on_the_two_that_lose_data() {
    let root = many_partitions("report-many");
    let (code, html) = report(&root);
    let _ = std::fs::remove_dir_all(&root);
    assert_eq!(code, Some(1), "committed records are lost");
    let sections: Vec<String> = tags(&html)
        .into_iter()
        .filter(|(n, a)| n == "section" && a.get("class").is_some_and(|c| c == "partition"))
        .map(|(_, a)| a["data-partition"].clone())
        .collect();
    // worst first: stale-group-0 loses 50 proven committed records,
    // stale-0 none proven and at most 100
    assert_eq!(sections[..2], ["stale-group-0", "stale-0"]);
    assert_eq!(sections.len(), 2 + DRAWN, "{sections:?}");
    let summary = &html[html.find("<table class=\"summary\"").unwrap()..];
    let summary = &summary[..summary.find("</table>").unwrap()];
    let rows: Vec<String> = tags(summary)
        .into_iter()
        .filter_map(|(_, a)| a.get("data-partition").cloned())
        .collect();
    assert_eq!(rows, ["stale-group-0", "stale-0"]);
    // the overview, then the losses, then the fold, then the drawings of
    // some that lose nothing
    let overview = html.find("data-kind=\"overview\"").unwrap();
    let first = html.find("<section class=\"partition\"").unwrap();
    let fold = html
        .find(&format!(
            "<h2 id=\"nothing-lost\">{} partitions: nothing lost</h2>",
            HEALTHY + 1
        ))
        .expect("one line for the partitions that lose nothing");
    let third = html
        .find(&format!(
            "<section class=\"partition\" data-partition=\"{}\"",
            sections[2]
        ))
        .unwrap();
    assert!(overview < first && first < fold && fold < third);
    let folded: Vec<&str> = html[fold..third]
        .lines()
        .filter(|l| l.starts_with("<tr data-partition="))
        .collect();
    assert_eq!(folded.len(), HEALTHY + 1, "each listed once");
    for row in &folded {
        assert!(row.len() < 1024, "{row}");
    }
    assert!(html[fold..].contains(&format!("{DRAWN} of {} drawn", HEALTHY + 1)));
    let m = marks(&html)
        .into_iter()
        .find(|m| m.get("data-kind") == Some("overview"))
        .unwrap();
    assert_eq!(m.int("data-partitions"), HEALTHY as i64 + 3);
    assert_eq!(m.int("data-losing"), 2);
    assert_eq!(m.int("data-records-lost"), 200);
    assert_eq!(m.int("data-committed-proven"), 50);
    assert_eq!(m.int("data-committed-possible"), 200);
}

/// A partition whose assigned replica is not in the capture loses nothing
/// among the replicas read, but its loss is not known whole: the page
/// says so first and heads with it (elections without broker 3's replica).
#[test]
fn a_partition_missing_a_replica_heads_the_page() {
    let root = super::common::scratch("report-not-captured");
    super::common::copy_tree(&capture("elections"), &root);
    std::fs::remove_dir_all(root.join("broker-3").join("elect-0")).unwrap();
    let (_, html) = report(&root);
    let _ = std::fs::remove_dir_all(&root);
    let m = marks(&html)
        .into_iter()
        .find(|m| m.get("data-kind") == Some("overview"))
        .unwrap();
    assert_eq!(m.int("data-losing"), 0);
    assert_eq!(m.int("data-replicas-not-captured"), 1);
    let (text, _) = visible(&html);
    assert!(
        text.contains("Nothing lost among the replicas read: in the 1 partition compared")
            && text.contains(
                "but 1 replica is not captured or could not be read, so the loss may be larger"
            ),
        "{text}"
    );
    assert!(text.contains("Broker 3 is assigned but not captured (1 partition)"));
    let summary = &html[html.find("<table class=\"summary\"").expect("a summary")..];
    assert!(summary.contains("<tr data-partition=\"elect-0\""));
    assert!(html.contains("<section class=\"partition\" data-partition=\"elect-0\">"));
    assert!(!html.contains("id=\"nothing-lost\""));
}
