//! Digests (`klf digest`): one `.klfd` per node, made from its log
//! directories, read by the analysis commands in their place. On real
//! Kafka captures, diff, timeline, impact, elect and check over the nodes'
//! digests give the same JSON and exit status as over the directories
//! (paths and read statistics aside); a damaged, truncated or foreign
//! digest is refused with its file, byte and reason; what needs records is
//! refused with the commands that read them on the node; the node's files
//! are left as they were.
//!
//! Every committed capture is compared, and in CI the captures a fresh
//! Kafka run just made (`KLF_FRESH_CAPTURES`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{copy_tree, kafka, klf, node_folders, scratch, text};

/// The commands compared.
const COMMANDS: &[&str] = &["diff", "timeline", "impact", "elect", "check"];

fn captures() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = crate::common::captures();
    if let Ok(fresh) = std::env::var("KLF_FRESH_CAPTURES") {
        if let Ok(rd) = std::fs::read_dir(&fresh) {
            let mut more: Vec<PathBuf> = rd
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.join("scenario.json").is_file())
                .collect();
            more.sort();
            v.extend(more);
        }
    }
    v
}

/// Digests every node of `cap` into `out`: the digests' paths.
fn digest_nodes(cap: &Path, out: &Path) -> Vec<PathBuf> {
    std::fs::create_dir_all(out).unwrap();
    node_folders(cap)
        .into_iter()
        .map(|(name, dir)| {
            let d = out.join(format!("{name}.klfd"));
            let o = klf(&[
                "digest",
                "-q",
                dir.to_str().unwrap(),
                "-o",
                d.to_str().unwrap(),
            ]);
            assert_eq!(
                o.status.code(),
                Some(0),
                "klf digest {}: {}",
                dir.display(),
                text(&o.stderr)
            );
            d
        })
        .collect()
}

/// A command's JSON with every path of a node's file written the same way
/// (`<node>/rest`, from `CAP/node/rest` or `DIGESTS/node.klfd!/rest`), and
/// the read statistics left out.
fn normalised(stdout: &[u8], cap: &Path, digests: &Path) -> Vec<Value> {
    let s = text(stdout);
    let docs: Vec<Value> = match serde_json::from_str::<Value>(&s) {
        Ok(v) => vec![v],
        Err(_) => s
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect(),
    };
    let cap = format!("{}/", cap.display());
    let dig = format!("{}/", digests.display());
    fn walk(v: &mut Value, cap: &str, dig: &str) {
        match v {
            Value::Object(m) => {
                m.remove("bytes_read");
                m.remove("log_bytes");
                for x in m.values_mut() {
                    walk(x, cap, dig);
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, cap, dig)),
            Value::String(s) => {
                let t = s.replace(cap, "<").replace(dig, "<").replace(".klfd!", "");
                *s = t;
            }
            _ => {}
        }
    }
    docs.into_iter()
        .map(|mut d| {
            walk(&mut d, &cap, &dig);
            d
        })
        .collect()
}

#[test]
fn digests_answer_as_the_directories() {
    let work = scratch("digest-compare");
    for cap in captures() {
        let name = cap.file_name().unwrap().to_string_lossy().into_owned();
        let out = work.join(&name);
        let digests = digest_nodes(&cap, &out);
        let d: Vec<&str> = digests.iter().map(|p| p.to_str().unwrap()).collect();
        // each command, and the metadata log's own timeline (the quorum's
        // history and each node's quorum-state)
        let metadata: &[&str] = &["--topic", "__cluster_metadata"];
        let runs = COMMANDS
            .iter()
            .map(|c| (c, &[][..]))
            .chain(std::iter::once((&"timeline", metadata)));
        for (cmd, extra) in runs {
            let mut args = vec![*cmd, cap.to_str().unwrap(), "--format", "json"];
            args.extend(extra);
            let on_dirs = klf(&args);
            let mut args = vec![*cmd];
            args.extend(&d);
            args.extend(["--format", "json"]);
            args.extend(extra);
            let on_digests = klf(&args);
            assert_eq!(
                on_dirs.status.code(),
                on_digests.status.code(),
                "{name}: klf {cmd}: exit status on the directories and on the digests\n{}\n{}",
                text(&on_dirs.stderr),
                text(&on_digests.stderr)
            );
            let a = normalised(&on_dirs.stdout, &cap, &out);
            let b = normalised(&on_digests.stdout, &cap, &out);
            // (a capture of one broker has nothing to diff: exit 2, no JSON)
            assert!(
                !a.is_empty() || on_dirs.status.code() == Some(2),
                "{name}: klf {cmd} printed no JSON"
            );
            if a != b {
                let a = serde_json::to_string_pretty(&a).unwrap();
                let b = serde_json::to_string_pretty(&b).unwrap();
                let first = a
                    .lines()
                    .zip(b.lines())
                    .position(|(x, y)| x != y)
                    .unwrap_or(0);
                panic!(
                    "{name}: klf {cmd} on the digests differs from the directories at line {first}:\n{}\n---\n{}",
                    a.lines().skip(first.saturating_sub(3)).take(8).collect::<Vec<_>>().join("\n"),
                    b.lines().skip(first.saturating_sub(3)).take(8).collect::<Vec<_>>().join("\n"),
                );
            }
        }
    }
}

/// A replica missing from the capture is found missing the same way when
/// its node's digest is left out.
#[test]
fn a_node_left_out_is_a_replica_not_captured() {
    let cap = kafka("unclean");
    let out = scratch("digest-left-out");
    let digests = digest_nodes(&cap, &out);
    let kept: Vec<&str> = digests
        .iter()
        .filter(|p| !p.ends_with("broker-3.klfd"))
        .map(|p| p.to_str().unwrap())
        .collect();
    let dirs: Vec<String> = ["broker-1", "broker-2"]
        .iter()
        .map(|b| cap.join(b).display().to_string())
        .collect();
    let mut a = vec!["diff", "--format", "json"];
    a.extend(dirs.iter().map(String::as_str));
    let mut b = vec!["diff", "--format", "json"];
    b.extend(&kept);
    let (x, y) = (klf(&a), klf(&b));
    assert_eq!(x.status.code(), y.status.code());
    let x = normalised(&x.stdout, &cap, &out);
    let y = normalised(&y.stdout, &cap, &out);
    assert_eq!(x, y);
    let s = serde_json::to_string(&y).unwrap();
    assert!(
        s.contains("replica-not-captured"),
        "the left-out replica is named: {s}"
    );
}

/// Digests and directories can be mixed.
#[test]
fn digests_mix_with_directories() {
    let cap = kafka("divergence");
    let out = scratch("digest-mixed");
    let digests = digest_nodes(&cap, &out);
    let all = klf(&["diff", cap.to_str().unwrap(), "--format", "json"]);
    let b1 = cap.join("broker-1");
    let mixed = klf(&[
        "diff",
        b1.to_str().unwrap(),
        digests[1].to_str().unwrap(),
        digests[2].to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(all.status.code(), mixed.status.code());
    assert_eq!(
        normalised(&all.stdout, &cap, &out),
        normalised(&mixed.stdout, &cap, &out)
    );
}

/// The same node gives the same digest, to a file or to stdout, and the
/// node's files are untouched; an output inside the node is refused.
#[test]
fn digests_are_deterministic_and_leave_the_node_as_it_was() {
    let src = kafka("impact").join("broker-2");
    let work = scratch("digest-node");
    let node = work.join("broker-2");
    copy_tree(&src, &node);
    let before = crate::common::tree_state(&node);
    let f = work.join("n.klfd");
    let o = klf(&["digest", node.to_str().unwrap(), "-o", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let note = text(&o.stderr);
    assert!(
        note.contains("segments") && note.contains("read"),
        "it says what it read: {note}"
    );
    let o2 = klf(&["digest", "-q", node.to_str().unwrap(), "-o", "-"]);
    assert_eq!(o2.status.code(), Some(0));
    assert!(o2.stderr.is_empty(), "--quiet: {}", text(&o2.stderr));
    assert_eq!(std::fs::read(&f).unwrap(), o2.stdout);
    let inside = node.join("x.klfd");
    let o3 = klf(&[
        "digest",
        node.to_str().unwrap(),
        "-o",
        inside.to_str().unwrap(),
    ]);
    assert_eq!(o3.status.code(), Some(2));
    assert!(text(&o3.stderr).contains("x.klfd"), "{}", text(&o3.stderr));
    assert_eq!(before, crate::common::tree_state(&node), "the node changed");
    // reading the digest leaves it as it was too
    let bytes = std::fs::read(&f).unwrap();
    let o4 = klf(&["timeline", f.to_str().unwrap(), "--format", "json"]);
    assert_eq!(o4.status.code(), Some(0), "{}", text(&o4.stderr));
    assert_eq!(bytes, std::fs::read(&f).unwrap());
}

/// A digest that is damaged, cut short or of another format version is
/// refused with the file, the byte and why (exit 2, no panic); one with
/// bytes after its end, too.
#[test]
fn damaged_digests_are_refused_with_file_byte_and_reason() {
    let work = scratch("digest-damaged");
    let good = work.join("good.klfd");
    let node = kafka("unclean").join("broker-1");
    let o = klf(&[
        "digest",
        "-q",
        node.to_str().unwrap(),
        "-o",
        good.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let bytes = std::fs::read(&good).unwrap();
    let bad = work.join("bad.klfd");
    let refused = |b: &[u8], want: &str| {
        std::fs::write(&bad, b).unwrap();
        let o = klf(&["diff", bad.to_str().unwrap(), "--format", "json"]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{want}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            err.contains(&format!("{}:", bad.display())) && err.contains(want),
            "wanted {want:?} with the file and byte: {err}"
        );
    };
    // cut at a spread of places, each a clear refusal
    for cut in [
        0,
        5,
        12,
        13,
        bytes.len() / 3,
        bytes.len() / 2,
        bytes.len() - 1,
    ] {
        let want = if cut < 12 {
            "not a klf digest"
        } else {
            "truncated"
        };
        refused(&bytes[..cut], want);
    }
    // a flipped byte in the middle of an entry
    let mut flipped = bytes.clone();
    let mid = bytes.len() / 2;
    flipped[mid] ^= 0x40;
    refused(&flipped, "damaged");
    // another major version
    let mut v2 = bytes.clone();
    v2[8] = 2;
    refused(&v2, "digest format 2.0");
    // two digests joined
    let mut joined = bytes.clone();
    joined.extend_from_slice(&bytes);
    refused(&joined, "after the end entry");
}

/// What needs records is refused on digests, naming for each lost range
/// the command that reads it on the node that holds it.
#[test]
fn records_are_read_on_the_node() {
    let cap = kafka("unclean");
    let out = scratch("digest-records");
    let digests = digest_nodes(&cap, &out);
    let d: Vec<&str> = digests.iter().map(|p| p.to_str().unwrap()).collect();
    let mut args = vec!["diff", "--records"];
    args.extend(&d);
    let o = klf(&args);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    let b1 = cap.join("broker-1").join("unclean-0");
    let want = format!(
        "klf dump --deep-iteration --print-data-log --offsets 200..250 {}",
        b1.display()
    );
    assert!(err.contains(&want), "wanted {want:?} in: {err}");
    // the diff itself is printed
    assert!(text(&o.stdout).contains("unclean-0"));
    let salv = out.join("salvaged");
    let mut args = vec!["salvage", "--out", salv.to_str().unwrap()];
    args.extend(&d);
    let o = klf(&args);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains(&want), "{}", text(&o.stderr));
    assert!(!salv.exists(), "nothing is written");
}

/// A batch damaged in the middle of a segment, below the high watermark:
/// `klf check` of the directories finds it; a digest made with `--verify`
/// finds it the same way (same JSON); one made without says on stderr that
/// those checksums were not checked on the node.
#[test]
fn verified_digests_check_every_checksum() {
    let work = scratch("digest-verify");
    let cap = work.join("cap");
    copy_tree(&kafka("unclean"), &cap);
    // broker 2 shut down cleanly: Kafka will not re-read its log
    let seg = cap.join("broker-2/unclean-0/00000000000000000000.log");
    let mut b = std::fs::read(&seg).unwrap();
    // a byte of the second batch's records (its header is the first 61
    // bytes from its position, 12 + size of the first batch)
    let first = 12 + u32::from_be_bytes([b[8], b[9], b[10], b[11]]) as usize;
    b[first + 100] ^= 0x5a;
    std::fs::write(&seg, &b).unwrap();
    for d in ["after", "golden"] {
        let _ = std::fs::remove_dir_all(cap.join(d));
    }
    let dirs = klf(&["check", cap.to_str().unwrap(), "--format", "json"]);
    assert!(text(&dirs.stdout).contains("batch-crc-mismatch"));
    let plain = work.join("plain");
    let verified = work.join("verified");
    std::fs::create_dir_all(&plain).unwrap();
    std::fs::create_dir_all(&verified).unwrap();
    let mut pd = Vec::new();
    let mut vd = Vec::new();
    for (name, node) in node_folders(&cap) {
        for (out, v, list) in [(&plain, false, &mut pd), (&verified, true, &mut vd)] {
            let f = out.join(format!("{name}.klfd"));
            let mut a = vec![
                "digest",
                "-q",
                node.to_str().unwrap(),
                "-o",
                f.to_str().unwrap(),
            ];
            if v {
                a.push("--verify");
            }
            assert_eq!(klf(&a).status.code(), Some(0));
            list.push(f.display().to_string());
        }
    }
    let run = |list: &[String]| {
        let mut a = vec!["check", "--format", "json"];
        a.extend(list.iter().map(String::as_str));
        klf(&a)
    };
    let v = run(&vd);
    assert_eq!(dirs.status.code(), v.status.code());
    assert_eq!(
        normalised(&dirs.stdout, &cap, &verified),
        normalised(&v.stdout, &cap, &verified)
    );
    // whatever reads batches of a digest below where the node checked
    // their CRCs says so; over --verify digests nothing is said
    let timeline = |list: &[String]| {
        let mut a = vec!["timeline"];
        a.extend(list.iter().map(String::as_str));
        text(&klf(&a).stderr)
    };
    assert!(timeline(&pd).contains("CRCs not checked"));
    assert!(!timeline(&vd).contains("CRCs not checked"));
    let p = run(&pd);
    assert!(!text(&p.stdout).contains("batch-crc-mismatch"));
    let err = text(&p.stderr);
    assert!(
        err.contains("made without --verify") && err.contains("klf digest --verify"),
        "{err}"
    );
}

/// A node's log directories given one by one (Strimzi's
/// `data-0/kafka-log1`, `data-1/kafka-log1`) make one digest that keeps
/// them apart by their paths under the folder they share, reads as the
/// node folder does, and names the node's own paths in what it asks to
/// run there.
#[test]
fn a_nodes_volumes_given_one_by_one_keep_their_paths() {
    let cap = kafka("jbod");
    let work = scratch("digest-volumes");
    let pods = work.join("pods");
    let mut digests = Vec::new();
    for (name, node) in node_folders(&cap) {
        let pod = pods.join(&name);
        let mut dirs = Vec::new();
        let vols: Vec<PathBuf> = ["d1", "d2"]
            .iter()
            .map(|d| node.join(d))
            .filter(|d| d.is_dir())
            .collect();
        let vols = if vols.is_empty() {
            vec![node.clone()]
        } else {
            vols
        };
        for (i, v) in vols.iter().enumerate() {
            let to = pod.join(format!("data-{i}")).join("kafka-log");
            copy_tree(v, &to);
            dirs.push(to.display().to_string());
        }
        let f = work.join(format!("{name}.klfd"));
        let mut a = vec!["digest", "-q", "-o", f.to_str().unwrap()];
        a.extend(dirs.iter().map(String::as_str));
        let o = klf(&a);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        digests.push(f);
    }
    let d: Vec<&str> = digests.iter().map(|p| p.to_str().unwrap()).collect();
    let mut a = vec!["diff", "--format", "json"];
    a.extend(&d);
    let on_digests = klf(&a);
    let on_dirs = klf(&["diff", "--format", "json", pods.to_str().unwrap()]);
    assert_eq!(on_dirs.status.code(), on_digests.status.code());
    let s = text(&on_digests.stdout);
    assert!(
        s.contains("broker-1.klfd!/data-0/kafka-log/")
            || s.contains("broker-1.klfd!/data-1/kafka-log/"),
        "{s}"
    );
    let norm = |v: Vec<Value>| -> String {
        serde_json::to_string(&v)
            .unwrap()
            .replace(&format!("{}/", pods.display()), "<")
            .replace(&format!("{}/", work.display()), "<")
            .replace(".klfd!", "")
    };
    assert_eq!(
        norm(normalised(&on_dirs.stdout, &pods, &work)),
        norm(normalised(&on_digests.stdout, &pods, &work))
    );
    // the records' command names the node's own volume
    let mut a = vec!["diff", "--records"];
    a.extend(&d);
    let err = text(&klf(&a).stderr);
    let want = format!(
        "{}/data-1/kafka-log/jbod-0",
        pods.join("broker-1").display()
    );
    assert!(err.contains(&want), "wanted {want} in: {err}");
}

/// `klf report` over the digests draws the same page as over the
/// directories: only the inputs it names differ.
#[test]
fn the_report_over_digests_is_the_same_page() {
    for name in ["unclean", "divergence", "impact"] {
        let cap = kafka(name);
        let work = scratch(&format!("digest-report-{name}"));
        let digests = digest_nodes(&cap, &work);
        let a_page = work.join("a.html");
        let b_page = work.join("b.html");
        let a = klf(&[
            "report",
            cap.to_str().unwrap(),
            "--html",
            a_page.to_str().unwrap(),
        ]);
        let mut args = vec!["report", "--html", b_page.to_str().unwrap()];
        args.extend(digests.iter().map(|p| p.to_str().unwrap()));
        let b = klf(&args);
        assert_eq!(a.status.code(), b.status.code(), "{name}");
        let page = |p: &Path, prefix: String| -> Vec<String> {
            std::fs::read_to_string(p)
                .unwrap()
                .replace(&prefix, "<")
                .replace(".klfd!", "")
                .lines()
                .filter(|l| !l.contains("<title>klf report") && !l.contains("report over"))
                .map(str::to_owned)
                .collect()
        };
        let x = page(&a_page, format!("{}/", cap.display()));
        let y = page(&b_page, format!("{}/", work.display()));
        assert!(x.len() > 20, "{name}: a page");
        assert_eq!(x, y, "{name}: the pages differ");
    }
}

/// An archive of a node's folder digests as the folder does.
#[test]
fn an_archive_of_a_node_digests_as_its_folder() {
    let cap = kafka("divergence");
    let work = scratch("digest-archive");
    let tarball = work.join("broker-1.tar");
    std::fs::create_dir_all(&work).unwrap();
    let mut b = tar::Builder::new(std::fs::File::create(&tarball).unwrap());
    b.append_dir_all("broker-1", cap.join("broker-1")).unwrap();
    b.finish().unwrap();
    drop(b);
    let from_tar = work.join("t.klfd");
    let from_dir = work.join("d.klfd");
    for (src, to) in [
        (tarball.clone(), &from_tar),
        (cap.join("broker-1"), &from_dir),
    ] {
        let o = klf(&[
            "digest",
            "-q",
            src.to_str().unwrap(),
            "-o",
            to.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    }
    let json = |d: &Path| {
        let o = klf(&["timeline", "--format", "json", d.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        text(&o.stdout).replace(&format!("{}!", d.display()), "")
    };
    assert_eq!(json(&from_tar), json(&from_dir));
}

/// A broker's `server.log` of the `unclean-4.4` capture's restart, in the
/// shape Kafka 4.4 writes it (its lines from a real run of the scenario,
/// the data directory written `/d`): `filler` other records before the
/// replica's load (at the log end `end` the capture holds) and the
/// truncation it logged after; the lines of the load and the truncation.
fn restart_log(broker: i32, end: i64, filler: usize) -> (String, u64, u64) {
    let other = "[2026-12-06 02:28:54,993] INFO [LogLoader partition=unclean-0, dir=/d] Producer state recovery took 1ms for snapshot load and 0ms for segment recovery from offset 0 (org.apache.kafka.storage.internals.log.UnifiedLog)\n";
    let mut s = String::from(
        "[2026-12-06 02:28:16,850] INFO KafkaConfig values: \n\tadvertised.listeners = PLAINTEXT://localhost:9092\n\tbroker.id = 1\n (org.apache.kafka.common.config.AbstractConfig)\n",
    );
    for _ in 0..filler {
        s.push_str(other);
    }
    let loaded = s.lines().count() as u64 + 1;
    s.push_str(&format!("[2026-12-06 02:28:55,005] INFO Completed load of Log(dir=/d/unclean-0, topicId=A8jRRQ29QF2oglntnNoEKA, topic=unclean, partition=0, highWatermark=0, lastStableOffset=0, logStartOffset=0, logEndOffset={end}) with 2 segments, local-log-start-offset 0 and log-end-offset {end} in 18ms (1/1 completed in /d) (org.apache.kafka.storage.internals.log.LogManager)\n"));
    for _ in 0..filler / 2 {
        s.push_str(other);
    }
    let truncated = s.lines().count() as u64 + 1;
    s.push_str(&format!("[2026-12-06 02:28:55,116] INFO [ReplicaFetcher replicaId={broker}, leaderId=3, fetcherId=0] Truncating partition unclean-0 with TruncationState(offset=100, completed=true) due to leader epoch and offset EpochEndOffset(errorCode=0, partition=0, leaderEpoch=0, endOffset=100) (kafka.server.ReplicaFetcherThread)\n"));
    s.push_str("[2026-12-06 02:28:55,118] INFO [UnifiedLog partition=unclean-0, dir=/d] Truncating to offset 100 (org.apache.kafka.storage.internals.log.UnifiedLog)\n");
    for _ in 0..filler {
        s.push_str(other);
    }
    (s, loaded, truncated)
}

/// A copy of a capture without the Kafka logs the harness copied in
/// (`server.log*` beside the data, a controller's folder of logs alone):
/// the tests here write their own.
fn copy_without_logs(src: &Path, dst: &Path) {
    copy_tree(src, dst);
    for (_, folder) in node_folders(dst) {
        if !folder.join("meta.properties").exists() {
            // a folder of the node's logs alone
            std::fs::remove_dir_all(&folder).unwrap();
            continue;
        }
        for e in std::fs::read_dir(&folder).unwrap().flatten() {
            if e.file_name().to_string_lossy().starts_with("server.log") {
                std::fs::remove_file(e.path()).unwrap();
            }
        }
    }
}

fn gzipped(text: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text).unwrap();
    e.finish().unwrap()
}

/// Digests `cap`'s nodes into `out` and compares diff, timeline and check
/// over them with the directories: the JSON of diff over the digests.
fn compare_over_digests(cap: &Path, out: &Path) -> Vec<Value> {
    let digests = digest_nodes(cap, out);
    let d: Vec<&str> = digests.iter().map(|p| p.to_str().unwrap()).collect();
    let mut diff = Vec::new();
    for cmd in ["diff", "timeline", "check"] {
        let on_dirs = klf(&[cmd, cap.to_str().unwrap(), "--format", "json"]);
        let mut args = vec![cmd];
        args.extend(&d);
        args.extend(["--format", "json"]);
        let on_digests = klf(&args);
        assert_eq!(
            on_dirs.status.code(),
            on_digests.status.code(),
            "klf {cmd}\n{}\n{}",
            text(&on_dirs.stderr),
            text(&on_digests.stderr)
        );
        let a = normalised(&on_dirs.stdout, cap, out);
        let b = normalised(&on_digests.stdout, cap, out);
        assert_eq!(
            a, b,
            "klf {cmd} on the digests differs from the directories"
        );
        if cmd == "diff" {
            diff = b;
        }
    }
    diff
}

/// The node's Kafka logs ride in its digest, reduced to the records klf
/// reads and their lines, every other line empty: diff over the digests
/// gives the same broker_log, on the same lines of the same files (a plain
/// `server.log` and a `server.log.gz`), and the logs cost the digest next
/// to nothing.
#[test]
fn kafka_logs_ride_in_the_digest_on_their_lines() {
    let work = scratch("digest-logs");
    let cap = work.join("unclean-4.4");
    copy_without_logs(&kafka("unclean-4.4"), &cap);
    let (log1, loaded1, truncated1) = restart_log(1, 250, 3000);
    let (log2, loaded2, truncated2) = restart_log(2, 200, 2000);
    std::fs::write(cap.join("broker-1/server.log"), &log1).unwrap();
    std::fs::write(cap.join("broker-2/server.log.gz"), gzipped(log2.as_bytes())).unwrap();
    // a controller's folder of logs alone, read as node 100's by its name
    // (4.4's line, broker 2's registration changed to fenced)
    std::fs::create_dir_all(cap.join("controller-100")).unwrap();
    std::fs::write(
        cap.join("controller-100/server.log"),
        "[2026-12-06 02:28:16,292] INFO Registered `kafka:type=kafka.Log4jController` MBean (org.apache.kafka.server.logger.Log4jControllerRegistration)\n\
         [2026-12-06 02:28:18,789] INFO [QuorumController id=100] Replayed BrokerRegistrationChangeRecord modifying the registration for broker 2: BrokerRegistrationChangeRecord(brokerId=2, brokerEpoch=22, fenced=1, inControlledShutdown=0, logDirs=[], cordonedLogDirs=[]) (org.apache.kafka.controller.ClusterControlManager)\n",
    )
    .unwrap();
    let out = work.join("digests");
    let diff = compare_over_digests(&cap, &out);
    assert!(out.join("controller-100.klfd").is_file());
    let logged: Vec<(i64, u64, u64, String)> = diff[0]["partitions"][0]["broker_log"]
        .as_array()
        .unwrap_or_else(|| panic!("no broker_log: {}", diff[0]["partitions"][0]))
        .iter()
        .map(|b| {
            (
                b["broker"].as_i64().unwrap(),
                b["loaded_at"]["line"].as_u64().unwrap(),
                b["logged"]["source"]["line"].as_u64().unwrap(),
                b["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        logged,
        [
            (1, loaded1, truncated1, "agrees".to_string()),
            (2, loaded2, truncated2, "agrees".to_string())
        ]
    );
    let s = serde_json::to_string(&diff).unwrap();
    assert!(s.contains("<broker-2/server.log.gz"), "{s}");
    // 1.6 MB of log (7,500 lines), and 1.1 MB of text in a 5 KB .gz, add
    // less than 2 KB to each digest (measured: about 700 bytes)
    let bare = work.join("bare");
    let no_logs = work.join("no-logs");
    copy_without_logs(&kafka("unclean-4.4"), &no_logs);
    let before = digest_nodes(&no_logs, &bare);
    for (n, log) in [(1, log1.len()), (2, log2.len())] {
        let with = std::fs::metadata(out.join(format!("broker-{n}.klfd")))
            .unwrap()
            .len();
        let without = std::fs::metadata(&before[n - 1]).unwrap().len();
        assert!(log > 250_000, "{log}");
        assert!(
            with < without + 2048,
            "broker-{n}: {with} bytes with its log, {without} without"
        );
    }
}

/// Logs given with `--logs [NODE=]PATH` ride in the digest too, in the
/// `logs/` folder of the node's log directory, under a Kafka log's name,
/// and read there as the node's, on the same lines as the file given; a
/// NODE that is not the node digested is refused.
#[test]
fn logs_given_to_digest_are_the_nodes() {
    let work = scratch("digest-given-logs");
    let cap = work.join("unclean-4.4");
    copy_without_logs(&kafka("unclean-4.4"), &cap);
    let (log1, loaded1, _) = restart_log(1, 250, 500);
    let given = work.join("var-log-kafka.txt");
    std::fs::write(&given, &log1).unwrap();
    let on_dirs = klf(&[
        "diff",
        cap.to_str().unwrap(),
        "--logs",
        &format!("1={}", given.display()),
        "--format",
        "json",
    ]);
    let mut digests = Vec::new();
    for (name, node) in node_folders(&cap) {
        let d = work.join(format!("{name}.klfd"));
        let mut a = vec![
            "digest",
            "-q",
            node.to_str().unwrap(),
            "-o",
            d.to_str().unwrap(),
        ];
        let logs = format!("{}", given.display());
        if name == "broker-1" {
            a.extend(["--logs", &logs]);
        }
        let o = klf(&a);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        digests.push(d.display().to_string());
    }
    let mut a = vec!["diff", "--format", "json"];
    a.extend(digests.iter().map(String::as_str));
    let on_digests = klf(&a);
    assert_eq!(on_dirs.status.code(), on_digests.status.code());
    let broker_log = |o: &std::process::Output| -> Value {
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["partitions"][0]["broker_log"][0].clone()
    };
    let (x, y) = (broker_log(&on_dirs), broker_log(&on_digests));
    assert_eq!(x["loaded_at"]["line"], loaded1);
    assert_eq!(x["loaded_at"]["line"], y["loaded_at"]["line"]);
    assert_eq!(x["logged"]["source"]["line"], y["logged"]["source"]["line"]);
    assert_eq!(x["verdict"], y["verdict"]);
    assert_eq!(
        y["loaded_at"]["file"],
        format!("{}!/logs/server.log", digests[0])
    );
    let o = klf(&[
        "digest",
        cap.join("broker-1").to_str().unwrap(),
        "--logs",
        &format!("2={}", given.display()),
        "-o",
        work.join("x.klfd").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("node 2 is not the node digested"),
        "{}",
        text(&o.stderr)
    );
    assert!(!work.join("x.klfd").exists());
}

/// A hostile log digests without failing, with a note where the copy ends
/// early, and reads over the digest as over the directory: a 10 MB line,
/// bytes that are not UTF-8, a `.gz` cut short.
#[test]
fn a_hostile_log_digests_with_a_note() {
    let work = scratch("digest-hostile-log");
    let cap = work.join("unclean-4.4");
    copy_without_logs(&kafka("unclean-4.4"), &cap);
    let (log1, ..) = restart_log(1, 250, 2000);
    let mut bytes = b"[2026-12-06 02:28:16,001] INFO ".to_vec();
    bytes.resize(10_000_000, b'x');
    bytes.extend_from_slice(b" (x.Y)\n\xff\xfe\xc3\x28 not UTF-8\n");
    bytes.extend_from_slice(log1.as_bytes());
    std::fs::write(cap.join("broker-1/server.log"), &bytes).unwrap();
    let (log3, ..) = restart_log(3, 120, 4000);
    let gz = gzipped(log3.as_bytes());
    std::fs::create_dir_all(cap.join("broker-3/logs")).unwrap();
    std::fs::write(
        cap.join("broker-3/logs/server.log.1.gz"),
        &gz[..gz.len() / 2],
    )
    .unwrap();
    let out = work.join("digests");
    std::fs::create_dir_all(&out).unwrap();
    let o = klf(&[
        "digest",
        cap.join("broker-3").to_str().unwrap(),
        "-o",
        out.join("b3.klfd").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("logs/server.log.1.gz: gzip stream damaged or cut short"),
        "{err}"
    );
    compare_over_digests(&cap, &out);
    let size = std::fs::metadata(out.join("broker-1.klfd")).unwrap().len();
    assert!(size < 64 * 1024, "{size} bytes");
}

/// Which pages of each file the page cache holds (mapped by the test, on
/// its own copy: `mincore` reads no page in). An empty file has none.
#[allow(unsafe_code)]
fn cached_pages(files: &[PathBuf]) -> Vec<(PathBuf, Vec<bool>)> {
    use std::os::unix::io::AsRawFd;
    // SAFETY: sysconf reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    files
        .iter()
        .map(|p| {
            let f = std::fs::File::open(p).unwrap();
            let len = f.metadata().unwrap().len() as usize;
            if len == 0 {
                return (p.clone(), Vec::new());
            }
            let pages = len.div_ceil(page);
            let mut v = vec![0u8; pages];
            // SAFETY: a shared read-only mapping of the test's own file,
            // never read through (mincore only asks whether its pages are
            // cached), unmapped before the file is closed; `v` has one byte
            // a page of the mapping.
            unsafe {
                let m = libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ,
                    libc::MAP_SHARED,
                    f.as_raw_fd(),
                    0,
                );
                assert_ne!(m, libc::MAP_FAILED, "{}", p.display());
                assert_eq!(libc::mincore(m, len, v.as_mut_ptr()), 0);
                libc::munmap(m, len);
            }
            (p.clone(), v.iter().map(|b| b & 1 == 1).collect())
        })
        .collect()
}

/// Whether `cachestat(2)` answers here (Linux 6.5 and later, where no
/// sandbox refuses it).
#[allow(unsafe_code)]
fn cachestat_works(p: &Path) -> bool {
    use std::os::unix::io::AsRawFd;
    let f = std::fs::File::open(p).unwrap();
    let range = [0u64, 4096];
    let mut stat = [0u64; 5];
    // SAFETY: cachestat reads two u64 and writes five, both live arrays.
    let r = unsafe {
        libc::syscall(
            451,
            f.as_raw_fd(),
            range.as_ptr(),
            stat.as_mut_ptr(),
            0 as libc::c_uint,
        )
    };
    r == 0
}

/// `klf digest` leaves the page cache of the node's files as it found it
/// (what a broker's consumers read stays cached, and what klf alone read
/// does not): on a real Kafka log directory, every file first on disk and
/// out of the cache, then one segment read whole (a consumer's hot data).
#[test]
#[allow(unsafe_code)]
fn a_digest_leaves_the_page_cache_as_it_found_it() {
    use std::os::unix::io::AsRawFd;
    let work = scratch("digest-page-cache");
    let node = work.join("broker-1");
    copy_tree(&kafka("impact").join("after/broker-1"), &node);
    let mut files = Vec::new();
    let mut todo = vec![node.clone()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    for p in &files {
        let f = std::fs::File::open(p).unwrap();
        f.sync_all().unwrap();
        // SAFETY: posix_fadvise takes the descriptor and two integers.
        unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    }
    let hot = node.join("orders-0/00000000000000000000.log");
    assert!(!std::fs::read(&hot).unwrap().is_empty());
    // and the second half of a file klf reads whole in one read (the
    // metadata log, shipped): hot pages after cold ones
    {
        use std::os::unix::fs::FileExt;
        let half = node.join("__cluster_metadata-0/00000000000000000000.log");
        let f = std::fs::File::open(&half).unwrap();
        let len = f.metadata().unwrap().len();
        assert!(len > 3 * 4096, "{len}");
        let mut tail = vec![0u8; (len / 2) as usize];
        let at = len - tail.len() as u64;
        f.read_exact_at(&mut tail, at).unwrap();
    }
    let before = cached_pages(&files);
    let evicted = before.iter().any(|(_, v)| v.iter().any(|c| !c));
    if !evicted {
        eprintln!("this file system keeps every page cached: only checked that klf evicts none");
    }
    let out = work.join("node.klfd");
    let o = klf(&[
        "digest".as_ref(),
        node.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let after = cached_pages(&files);
    let n = |v: &[bool]| v.iter().filter(|c| **c).count();
    // never a page that was cached dropped (the consumers' hot data)
    let evicted: Vec<String> = before
        .iter()
        .zip(&after)
        .filter(|(b, a)| b.1.iter().zip(&a.1).any(|(b, a)| *b && !*a))
        .map(|(b, a)| {
            format!(
                "{}: {} pages cached before, {} after",
                b.0.display(),
                n(&b.1),
                n(&a.1)
            )
        })
        .collect();
    assert!(evicted.is_empty(), "pages evicted:\n{}", evicted.join("\n"));
    // and, where the kernel says what it caches (cachestat, Linux 6.5+),
    // none that klf alone brought in left
    if cachestat_works(&hot) {
        let changed: Vec<String> = before
            .iter()
            .zip(&after)
            .filter(|(b, a)| b.1 != a.1)
            .map(|(b, a)| {
                format!(
                    "{}: {} of {} pages cached before, {} after",
                    b.0.strip_prefix(&node).unwrap_or(&b.0).display(),
                    n(&b.1),
                    b.1.len(),
                    n(&a.1)
                )
            })
            .collect();
        assert!(
            changed.is_empty(),
            "the page cache changed:\n{}",
            changed.join("\n")
        );
    } else {
        eprintln!("no cachestat(2) here: only checked that klf evicts nothing");
    }
    // the hot segment stayed cached
    let hot_pages = &after.iter().find(|(p, _)| *p == hot).unwrap().1;
    assert!(hot_pages.iter().all(|c| *c));
    let _ = std::fs::remove_dir_all(&work);
}
