#!/usr/bin/env python3
"""klf's benchmark: real Kafka writes large partitions, then klf is timed
side by side with a reference on the same bytes, in one run.

    python3 tests/bench/bench.py                 # generate (once) and measure
    python3 tests/bench/bench.py --reps 7        # more repetitions
    python3 tests/bench/bench.py --generate-only
    python3 tests/bench/bench.py --data DIR      # keep the data elsewhere

Data (made once, kept in tests/bench/.data/, which git ignores): two clusters
of one KRaft controller and three brokers, each given the same incident at a
different size. Kafka's own producer performance tool (ProducerPerformance,
1 KiB records) writes a replicated topic `bench` (codec none, replication
factor 3, 256 MiB segments, Kafka's default index sizes); when the leader's
log reaches its target size the leader is killed (SIGKILL) in mid-produce,
the producer carries on against the new leader, then the other two brokers
are stopped. The large run also writes `bench-lz4` (lz4, one replica).
`small` is a tenth of `large`; the incident (about 20,000 records produced
after the kill) is the same in both.

Measured, each pair interleaved run by run, medians of --reps runs, page
cache warm (one untimed run of each first):
  1. klf dump --format kafka against kafka-dump-log on the same segment,
     shallow and --deep-iteration --print-data-log, after checking that the
     two outputs are byte-identical;
  2. klf check of a partition against `cat` of the same files > /dev/null;
  3. klf diff of the three replicas, small and large (10x) capture;
  4. peak resident memory of every command (GNU time's %M, one run each).
Results go to stdout and, as JSON, to --json (default: DATA/results.json).

    python3 tests/bench/bench.py --shapes        # the shapes only
    python3 tests/bench/bench.py --budget        # the memory budgets only
    python3 tests/bench/bench.py --digest        # klf digest and diff over digests only
    python3 tests/bench/bench.py --report        # the size of klf report's page only

Budgets (`--budget`, no Kafka needed): peak RSS and time of `klf check` on
the `crashed` shape at 2,000 and 10,000 partitions on 3 brokers (budgets
96 MiB and 256 MiB), and of `check` and `diff` on 3 x 20,000 and
3 x 100,000 empty partition folders (budget: under 512 MiB and a minute at
100,000; the time at 5x the folders should be about 5x).

Digests (`--digest`, no Kafka needed; results in DATA/digest.json), each
pair interleaved, medians of --reps runs, page cache warm:
  1. `klf digest NODE -o out.klfd` of a node (one log directory) holding
     one partition (tests/bench/shapes.py `node`: real records rebatched
     the way a producer fills batch.size, every batch distinct, segments
     rolled at Kafka's default 1 GiB) against `cat` of the node's files:
     256 MiB and 1 GiB in 16 KiB batches (the producer's default
     batch.size), and 256 MiB in 1 KiB batches (16x the batches: how a
     digest grows with them); the 1 GiB one also with --verify. Reported:
     digest/cat, klf's own count of bytes read (the "made" object of the
     digest's node entry, read by parsing the .klfd here) as a share of
     the partition's bytes, and the digest's size. Targets: 256 MiB ->
     digest <= 512 KiB; 1 GiB -> bytes read <= 2%, time <= 0.1x cat.
  2. The `crashed` shape at 3 x 10,000 partitions (as --budget): each
     broker folder digested (time, size), then `klf diff --format json`
     over the three digests against the same over the directories, with
     peak RSS; the two outputs must be equal once paths inside a digest
     (`…/broker-N.klfd!/rest`) are written as the directories' and the
     "bytes_read" fields left out (the run stops, printing the first
     differing lines, if not). Targets: digests <= 0.1x directories in
     time, peak RSS <= 256 MiB.

Report page (`--report`, no Kafka needed; results in DATA/report.json):
`klf report --html` of the `losing` shape (tests/bench/shapes.py) at
3 x 2,001 partitions, two of which lose data: the page's size (target:
at most 8 MiB; it was 20 MiB when every partition was drawn), its time
(median of --reps runs) and peak RSS, and the partitions it opens on (the
first two drawn must be the two that lose data, the worst first).

Shapes (tests/bench/shapes.py: captures of a chosen shape made from the
real batches of a committed capture) measure how klf grows with a
capture's shape: each shape at n and at 4n (batches per segment, segments
per partition, partitions, brokers), every command timed beside `cat` of
the same files and with its peak RSS; the growth factor is the 4n time over
the n time (4.0 is linear). `--shape-scale` multiplies every n.
"""

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "kafka-oracle"))
sys.path.insert(0, HERE)
import oracle  # noqa: E402

KLF = os.path.join(REPO, "target", "release", "klf")
RECORD = 1024
SEGMENT = 256 << 20
SIZES = {"small": 110 << 20, "large": 1100 << 20}   # bytes of the leader's log when it is killed
TOPIC = "bench"
LZ4_TOPIC = "bench-lz4"
POST_KILL_RECORDS = 20000


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- data

def perf_producer(cluster, topic, records, props):
    args = ["java", "-Xmx256m", f"-Dlog4j2.configurationFile={oracle.HERE}/log4j2-client.properties",
            "-cp", oracle.classpath(), "org.apache.kafka.tools.ProducerPerformance",
            "--topic", topic, "--num-records", str(records), "--record-size", str(RECORD),
            "--throughput", "-1", "--producer-props", f"bootstrap.servers={cluster.bootstrap}", *props]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    oracle.PROCS[p.pid] = f"producer-perf {topic}"
    return p


def finish(p, timeout):
    out, _ = p.communicate(timeout=timeout)
    oracle.PROCS.pop(p.pid, None)
    if p.returncode != 0:
        raise RuntimeError(f"producer performance tool failed: {out[-2000:]}")
    return out.strip().splitlines()[-1] if out.strip() else ""


def generate_one(name, target, out):
    """One cluster, one incident; the brokers' log directories end up in out/broker-N."""
    extra = {"log.index.size.max.bytes": 10 << 20, "log.index.interval.bytes": 4096,
             "log.segment.bytes": SEGMENT, "num.io.threads": 2}
    c = oracle.Cluster(f"bench-{name}", broker_extra=extra)
    try:
        c.start()
        cfg = f"segment.bytes={SEGMENT},min.insync.replicas=1"
        c.driver("create", topic=TOPIC, assignment="1,2,3", config=cfg)
        if name == "large":
            c.driver("create", topic=LZ4_TOPIC, assignment="2", config=f"segment.bytes={SEGMENT}")
            p = perf_producer(c, LZ4_TOPIC, target // (RECORD + 70),
                              ["acks=1", "compression.type=lz4", "linger.ms=5", "batch.size=65536"])
            log(f"{LZ4_TOPIC}: {finish(p, 1800)}")
        # the same incident at every size: after the kill the producer goes on
        # against the new leader with about POST_KILL_RECORDS more records
        records = target // (RECORD + 11) + POST_KILL_RECORDS
        p = perf_producer(c, TOPIC, records, ["acks=1", "compression.type=none", "linger.ms=5",
                                              "batch.size=65536", "delivery.timeout.ms=300000"])
        def reached():
            if p.poll() is not None:
                raise SystemExit(f"the producer ended before the leader's log reached {target >> 20} MiB")
            return c.log_bytes(1, TOPIC) >= target
        c.wait_until(f"{TOPIC} leader log at {target >> 20} MiB", reached,
                     timeout=1800, interval=0.2)
        c.brokers[1].kill9()
        log(f"{TOPIC}: {finish(p, 1800)}")
        c.brokers[2].stop()
        c.brokers[3].stop()
        c.stop_all()
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        for n in oracle.BROKERS:
            os.rename(c.brokers[n].data, os.path.join(out, f"broker-{n}"))
            lock = os.path.join(out, f"broker-{n}", ".lock")
            if os.path.exists(lock):
                os.remove(lock)
        with open(os.path.join(out, "DONE"), "w") as f:
            json.dump({"kafka_version": oracle.kafka_version(), "target_bytes": target,
                       "incident": "leader (broker 1) killed with SIGKILL in mid-produce, acks=1"}, f)
    finally:
        c.stop_all()
        oracle._kill_all()
        shutil.rmtree(c.dir, ignore_errors=True)


def generate(data):
    oracle.setup()
    for name, target in SIZES.items():
        out = os.path.join(data, name)
        if os.path.exists(os.path.join(out, "DONE")):
            continue
        for attempt in range(1, 4):
            try:
                t0 = time.time()
                log(f"generating {name} ({target >> 20} MiB)")
                generate_one(name, target, out)
                log(f"{name} done in {time.time() - t0:.0f} s")
                break
            except Exception as e:
                log(f"{name} failed (attempt {attempt}): {e}")
                if attempt == 3:
                    raise


# ---------------------------------------------------------------- measuring

def run(cmd, stdout=subprocess.DEVNULL):
    """Wall time of one command."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.DEVNULL)
    _, status, _ = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}")
    return wall


def peak_rss(cmd):
    """Peak RSS (KiB) of one run of a command, as GNU time reports it. (The
    rusage of a child Python forks counts the Python process it was before
    exec, some 30 MiB, so it is not used.) None without /usr/bin/time."""
    if not os.path.exists("/usr/bin/time"):
        return None
    import tempfile
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as f:
        p = subprocess.run(["/usr/bin/time", "-o", f.name, "-f", "%M", *cmd],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if p.returncode not in (0, 1):
            raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}")
        lines = [l for l in f.read().splitlines() if l.strip().isdigit()]
        return int(lines[-1]) if lines else None


def output_hash(cmd):
    h = hashlib.sha256()
    n = 0
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    for chunk in iter(lambda: p.stdout.read(1 << 20), b""):
        h.update(chunk)
        n += len(chunk)
    p.wait()
    return h.hexdigest(), n


def compare(label, cmds, reps):
    """Runs the commands interleaved, reps times each after one warm-up; medians."""
    for c in cmds.values():
        run(c)
    times = {k: [] for k in cmds}
    for _ in range(reps):
        for k, c in cmds.items():
            times[k].append(run(c))
    rss = {k: peak_rss(c) for k, c in cmds.items()}
    med = {k: statistics.median(v) for k, v in times.items()}
    log(f"{label}: " + ", ".join(f"{k} {med[k]:.3f} s" for k in cmds))
    return {"median_s": med, "runs_s": times, "peak_rss_kib": rss}


def kafka_dump_log(args):
    # the heap kafka-run-class.sh gives tools by default
    return ["java", "-Xmx256M", f"-Dlog4j2.configurationFile={oracle.HERE}/log4j2-client.properties",
            "-cp", oracle.classpath(), "kafka.tools.DumpLogSegments", *args]


def segments(part):
    return sorted(os.path.join(part, f) for f in os.listdir(part) if f.endswith(".log"))


def measure(data, reps, deep_reps):
    res = {"machine": machine(), "reps": reps}
    large = os.path.join(data, "large")
    small = os.path.join(data, "small")
    # a full segment of the partition's current leader (broker 2 took over from 1)
    part = os.path.join(large, "broker-2", f"{TOPIC}-0")
    lz4part = os.path.join(large, "broker-2", f"{LZ4_TOPIC}-0")
    seg = segments(part)[0]
    lz4seg = segments(lz4part)[0]
    res["inputs"] = {"segment_none_bytes": os.path.getsize(seg), "segment_lz4_bytes": os.path.getsize(lz4seg),
                     "partition_bytes": sum(os.path.getsize(os.path.join(part, f)) for f in os.listdir(part)),
                     "capture_small_bytes": du(small), "capture_large_bytes": du(large),
                     "diffed_small_bytes": du(small, TOPIC), "diffed_large_bytes": du(large, TOPIC)}

    for name, s in (("none", seg), ("lz4", lz4seg)):
        for mode, flags in (("shallow", []), ("deep", ["--deep-iteration", "--print-data-log"])):
            klf = [KLF, "dump", "--format", "kafka", *flags, "--files", s]
            ref = kafka_dump_log([*flags, "--files", s])
            hk, nk = output_hash(klf)
            hr, nr = output_hash(ref)
            if hk != hr:
                raise SystemExit(f"klf and kafka-dump-log differ on {s} {mode}: {nk} vs {nr} bytes")
            r = compare(f"dump {name} {mode}", {"klf": klf, "kafka-dump-log": ref},
                        reps if mode == "shallow" else deep_reps)
            r["identical_output_bytes"] = nk
            r["ratio"] = r["median_s"]["kafka-dump-log"] / r["median_s"]["klf"]
            res[f"dump_{name}_{mode}"] = r

    for name, p in (("none", part), ("lz4", lz4part)):
        files = sorted(os.path.join(p, f) for f in os.listdir(p))
        r = compare(f"check {name}", {"klf": [KLF, "check", "--format", "json", p], "cat": ["cat", *files]}, reps)
        r["ratio"] = r["median_s"]["klf"] / r["median_s"]["cat"]
        res[f"check_{name}"] = r

    r = compare("diff", {"small": [KLF, "diff", "--format", "json", small],
                         "large": [KLF, "diff", "--format", "json", large]}, reps)
    r["growth"] = r["median_s"]["large"] / r["median_s"]["small"]
    res["diff"] = r
    # for comparison: every batch read (--verify)
    r = compare("diff --verify", {"small": [KLF, "diff", "--verify", "--format", "json", small],
                                  "large": [KLF, "diff", "--verify", "--format", "json", large]}, reps)
    r["growth"] = r["median_s"]["large"] / r["median_s"]["small"]
    res["diff_verify"] = r
    return res


# (kind, n): each measured at n and 4n
SHAPE_SIZES = [("batches", 10000), ("segments", 50), ("partitions", 500), ("brokers", 3)]


def shape_commands(d):
    """What is timed on a shape: name -> argv (klf's) or None for cat."""
    return {
        "check": [KLF, "check", "--format", "json", d],
        "diff": [KLF, "diff", "--format", "json", d],
        "diff --verify": [KLF, "diff", "--verify", "--format", "json", d],
        "timeline": [KLF, "timeline", "--format", "json", d],
        "dump table": [KLF, "dump", "--format", "table", d],
        "report": [KLF, "report", "--html", os.path.join(os.path.dirname(d), "report.html"), d],
    }


def cat_of(d):
    """`cat` of every file of a capture (through xargs: a large capture's
    file list is longer than one command line)."""
    return ["sh", "-c", 'find "$1" -type f ! -name done -print0 | xargs -0 cat', "sh", d]


def measure_shapes(data, reps, scale):
    import shapes
    res = {"machine": machine(), "reps": reps, "shapes": {}}
    for kind, n in SHAPE_SIZES:
        n = max(1, int(n * scale))
        runs = {}
        for size in (n, 4 * n):
            log(f"shape {kind}-{size}: making (once)")
            d = shapes.shape(data, kind, size)
            cmds = {"cat": cat_of(d), **shape_commands(d)}
            r = compare(f"{kind}-{size}", cmds, reps)
            r["bytes"] = du(d)
            r["files"] = len(shapes.files(d))
            report_file = os.path.join(os.path.dirname(d), "report.html")
            r["report_bytes"] = os.path.getsize(report_file) if os.path.exists(report_file) else None
            runs[size] = r
        small, large = runs[n], runs[4 * n]
        growth = {k: large["median_s"][k] / small["median_s"][k] for k in small["median_s"]}
        res["shapes"][kind] = {"n": n, "runs": {str(k): v for k, v in runs.items()}, "growth": growth}
    return res


def report_shapes(res):
    mib = lambda kib: "?" if kib is None else f"{kib / 1024:.0f}"
    print(f"machine: {res['machine']['cores']} cores, {res['machine']['cpu']}, {res['machine']['memory_gib']} GiB; "
          f"medians of {res['reps']} runs")
    for kind, r in res["shapes"].items():
        n = r["n"]
        small, large = r["runs"][str(n)], r["runs"][str(4 * n)]
        print(f"{kind}: {n} -> {4 * n} ({small['bytes'] >> 20} -> {large['bytes'] >> 20} MiB, "
              f"{small['files']} -> {large['files']} files; report {small['report_bytes']} -> {large['report_bytes']} bytes)")
        for k in small["median_s"]:
            ratio = large["median_s"][k] / large["median_s"]["cat"]
            print(f"  {k:14} {small['median_s'][k]:7.3f} s -> {large['median_s'][k]:7.3f} s  growth {r['growth'][k]:5.2f}x  "
                  f"at 4n {ratio:5.2f}x cat  peak RSS {mib(small['peak_rss_kib'][k])} -> {mib(large['peak_rss_kib'][k])} MiB")


# (shape, n, command, peak RSS budget in MiB)
BUDGETS = [("crashed", 2000, "check", 96), ("crashed", 10000, "check", 256),
           ("folders", 20000, "check", None), ("folders", 100000, "check", 512),
           ("folders", 20000, "diff", None), ("folders", 100000, "diff", 512)]


def measure_budgets(data, reps):
    import shapes
    res = {"machine": machine(), "reps": reps, "budgets": []}
    for kind, n, cmd, budget in BUDGETS:
        log(f"budget {kind}-{n}: making (once)")
        d = shapes.shape(data, kind, n)
        argv = [KLF, cmd, "--format", "json", d]
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            run(argv)
            times.append(time.perf_counter() - t)
        res["budgets"].append({"shape": kind, "n": n, "command": cmd, "budget_mib": budget,
                               "median_s": statistics.median(times), "peak_rss_kib": peak_rss(argv)})
    return res


def report_budgets(res):
    print(f"machine: {res['machine']['cores']} cores, {res['machine']['cpu']}, {res['machine']['memory_gib']} GiB; "
          f"medians of {res['reps']} runs")
    by = {(b["shape"], b["n"], b["command"]): b for b in res["budgets"]}
    for b in res["budgets"]:
        rss = b["peak_rss_kib"] / 1024 if b["peak_rss_kib"] is not None else None
        verdict = ""
        if b["budget_mib"] is not None and rss is not None:
            verdict = "within" if rss <= b["budget_mib"] else "OVER"
            verdict = f"  budget {b['budget_mib']} MiB: {verdict}"
        growth = ""
        small = by.get((b["shape"], b["n"] // 5, b["command"]))
        if small and b["n"] % 5 == 0 and small is not b:
            growth = f"  time at 5x n: {b['median_s'] / small['median_s']:.2f}x"
        print(f"{b['command']:6} {b['shape']}-{b['n']:<7} {b['median_s']:7.2f} s  peak RSS "
              f"{'?' if rss is None else f'{rss:.0f}'} MiB{verdict}{growth}")


# ---------------------------------------------------------------- report page

REPORT_PARTITIONS = 2001
REPORT_MAX_BYTES = 8 << 20


def measure_report(data, reps):
    import re
    import shapes
    log(f"shape losing-{REPORT_PARTITIONS}: making (once)")
    d = shapes.shape(data, "losing", REPORT_PARTITIONS)
    page = os.path.join(data, "report-losing.html")
    argv = [KLF, "report", "--html", page, d]
    times = []
    for _ in range(reps + 1):
        t = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    html = open(page, encoding="utf-8").read()
    drawn = re.findall(r'<section class="partition" data-partition="([^"]*)"', html)
    return {"machine": machine(), "reps": reps, "partitions": REPORT_PARTITIONS,
            "page_bytes": os.path.getsize(page), "max_bytes": REPORT_MAX_BYTES,
            "median_s": statistics.median(times[1:]), "peak_rss_kib": peak_rss(argv),
            "first_drawn": drawn[:2], "drawn": len(drawn)}


def report_report(res):
    rss = res["peak_rss_kib"]
    met = "met" if res["page_bytes"] <= res["max_bytes"] else "NOT MET"
    opens = "met" if res["first_drawn"] == ["stale-group-0", "stale-0"] else "NOT MET"
    print(f"machine: {res['machine']['cores']} cores, {res['machine']['cpu']}, {res['machine']['memory_gib']} GiB; "
          f"medians of {res['reps']} runs")
    print(f"klf report, losing-{res['partitions']} (3 brokers): page {res['page_bytes']} bytes "
          f"(target <= {res['max_bytes'] >> 20} MiB: {met}), {res['median_s']:.2f} s, peak RSS "
          f"{'?' if rss is None else f'{rss / 1024:.0f}'} MiB; {res['drawn']} partitions drawn, "
          f"first {', '.join(res['first_drawn'])} (the two losing data, worst first: {opens})")


# ---------------------------------------------------------------- digests

# (name, bytes of batches, batch size): one partition on one node each.
# 16 KiB is the producer's default batch.size (a busy producer fills its
# batches to it); 1 KiB shows how a digest grows with the batch count
# (16x the batches of the same bytes).
DIGEST_NODES = [("256m-16k", 256 << 20, 16384), ("1g-16k", 1 << 30, 16384), ("256m-1k", 256 << 20, 1024)]
DIGEST_CRASHED = 10000
# targets
DIGEST_256M_MAX_BYTES = 512 << 10
DIGEST_1G_MAX_READ = 0.02
DIGEST_1G_MAX_VS_CAT = 0.1
DIGEST_DIFF_MAX_VS_DIRS = 0.1
DIGEST_DIFF_MAX_RSS_MIB = 256


def read_digest(path):
    """The entries of a .klfd as its format documents it (header "KLFDIGST",
    u16 LE major and minor; entries tag u8, body length u32 LE, body,
    CRC-32C u32 LE of tag, length and body; the last one tag 0xFF, its body
    the count of entries before it, u64 LE): (version, {tag: count}, the
    node entry's JSON). The node and end entries' CRCs are checked (the
    others are only framed: a pure-Python CRC of megabytes is slow)."""
    import shapes
    data = open(path, "rb").read()
    if data[:8] != b"KLFDIGST" or len(data) < 12:
        raise SystemExit(f"{path}: not a klf digest")
    major, minor = int.from_bytes(data[8:10], "little"), int.from_bytes(data[10:12], "little")
    pos, tags, node, count = 12, {}, None, 0
    while True:
        if pos + 5 > len(data):
            raise SystemExit(f"{path}: ends inside an entry's head at byte {pos} (truncated, no end entry)")
        tag = data[pos]
        n = int.from_bytes(data[pos + 1:pos + 5], "little")
        end = pos + 5 + n + 4
        if end > len(data):
            raise SystemExit(f"{path}: entry at byte {pos} runs past the end")
        body = data[pos + 5:pos + 5 + n]
        if tag in (1, 0xFF):
            crc = int.from_bytes(data[end - 4:end], "little")
            if crc != shapes.crc32c(data[pos:pos + 5 + n]):
                raise SystemExit(f"{path}: entry at byte {pos} (tag {tag}) fails its CRC-32C")
        if tag == 0xFF:
            if int.from_bytes(body, "little") != count:
                raise SystemExit(f"{path}: the end entry counts {int.from_bytes(body, 'little')} entries, "
                                 f"{count} came before it")
            if end != len(data):
                raise SystemExit(f"{path}: {len(data) - end} bytes after the end entry")
            break
        tags[tag] = tags.get(tag, 0) + 1
        if tag == 1:
            node = json.loads(body)
        count += 1
        pos = end
    if node is None:
        raise SystemExit(f"{path}: no node entry")
    return (major, minor), tags, node


def normalised_diff(text, roots):
    """The lines of diff's JSON (one field a line) with the paths inside
    digests written as the same paths in the directories (`roots`: {digest
    root "…/broker-N.klfd!": folder "…/broker-N"}) and every "bytes_read"
    line left out (what was read differs by design). Lines, not parsed
    JSON: the output of 3 x 10,000 partitions is some 50 MB."""
    text = text.decode()
    for a, b in roots.items():
        text = text.replace(json.dumps(a)[1:-1], json.dumps(b)[1:-1])
    return [l for l in text.splitlines() if not l.lstrip().startswith('"bytes_read":')]


def first_differences(a, b, limit=20):
    """The first differing lines of two lists of lines."""
    out = []
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else "<end>"
        y = b[i] if i < len(b) else "<end>"
        if x != y:
            out.append(f"  line {i + 1}: digests: {x.strip()}  |  directories: {y.strip()}")
            if len(out) >= limit:
                break
    return out


def measure_digest(data, reps):
    import shapes
    res = {"machine": machine(), "reps": reps, "nodes": {}, "targets": {}}
    # 1. one big partition on a node
    for name, total, batch in DIGEST_NODES:
        log(f"digest node {name}: making (once)")
        root = os.path.join(data, "nodes", name)
        logs = shapes.node(root, total, batch)
        part = os.path.join(logs, "events-0")
        out = os.path.join(root, "out.klfd")
        files = shapes.files(logs)
        cmds = {"digest": [KLF, "digest", logs, "-o", out], "cat": ["cat", *files]}
        if name == "1g-16k":
            cmds["digest --verify"] = [KLF, "digest", "--verify", logs, "-o", out + ".verify"]
        r = compare(f"digest {name}", cmds, reps)
        version, tags, node = read_digest(out)
        made = node["made"]
        r.update({
            "batch_bytes": batch, "partition_bytes": du(part),
            "segments": len(segments(part)), "made": made, "format": f"{version[0]}.{version[1]}",
            "entries": {str(k): v for k, v in sorted(tags.items())},
            "digest_bytes": os.path.getsize(out),
            "read_share": made["bytes_read"] / du(part),
            "vs_cat": r["median_s"]["digest"] / r["median_s"]["cat"],
        })
        if "digest --verify" in cmds:
            _, _, vnode = read_digest(out + ".verify")
            r["verify_made"] = vnode["made"]
            r["verify_vs_cat"] = r["median_s"]["digest --verify"] / r["median_s"]["cat"]
        res["nodes"][name] = r
    n256, n1g = res["nodes"]["256m-16k"], res["nodes"]["1g-16k"]
    res["targets"]["256 MiB partition: digest <= 512 KiB"] = n256["digest_bytes"] <= DIGEST_256M_MAX_BYTES
    res["targets"]["1 GiB partition: bytes read <= 2%"] = n1g["read_share"] <= DIGEST_1G_MAX_READ
    res["targets"]["1 GiB partition: digest time <= 0.1x cat"] = n1g["vs_cat"] <= DIGEST_1G_MAX_VS_CAT

    # 2. diff over digests against diff over directories
    n = DIGEST_CRASHED
    log(f"digest crashed-{n}: making (once)")
    cap = shapes.shape(data, "crashed", n)
    brokers = sorted(b for b in os.listdir(cap) if b.startswith("broker-"))
    ddir = os.path.join(data, "digests", f"crashed-{n}")
    os.makedirs(ddir, exist_ok=True)
    digests = [os.path.join(ddir, f"{b}.klfd") for b in brokers]
    r = compare(f"digest of each broker of crashed-{n}",
                {b: [KLF, "digest", os.path.join(cap, b), "-o", d] for b, d in zip(brokers, digests)}, reps)
    made = {b: read_digest(d)[2]["made"] for b, d in zip(brokers, digests)}
    r.update({"digest_bytes": {b: os.path.getsize(d) for b, d in zip(brokers, digests)}, "made": made,
              "files": len(shapes.files(cap))})
    r["total_digest_bytes"] = sum(r["digest_bytes"].values())
    r["total_s"] = sum(r["median_s"].values())
    res["crashed_digests"] = r
    on_digests = [KLF, "diff", "--format", "json", *digests]
    on_dirs = [KLF, "diff", "--format", "json", cap]
    log("diff over digests and over directories: comparing the outputs (once)")
    a = subprocess.run(on_digests, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    b = subprocess.run(on_dirs, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if a.returncode not in (0, 1) or b.returncode not in (0, 1):
        raise SystemExit(f"diff exited {a.returncode} on the digests, {b.returncode} on the directories")
    roots = {d + "!": os.path.join(cap, br) for br, d in zip(brokers, digests)}
    na, nb = normalised_diff(a.stdout, roots), normalised_diff(b.stdout, {})
    if na != nb:
        for line in first_differences(na, nb):
            print(line, file=sys.stderr)
        raise SystemExit(f"klf diff over the digests and over the directories differ ({len(na)} and {len(nb)} "
                         "lines once normalised; the first differing lines above)")
    del na, nb
    r = compare(f"diff crashed-{n}", {"digests": on_digests, "directories": on_dirs}, reps)
    r["identical_output_bytes"] = {"digests": len(a.stdout), "directories": len(b.stdout)}
    r["vs_dirs"] = r["median_s"]["digests"] / r["median_s"]["directories"]
    res["crashed_diff"] = r
    rss = r["peak_rss_kib"]["digests"]
    res["targets"][f"diff of 3 x {n:,} partitions: digests <= 0.1x directories"] = r["vs_dirs"] <= DIGEST_DIFF_MAX_VS_DIRS
    res["targets"][f"diff of 3 x {n:,} partitions over digests: peak RSS <= 256 MiB"] = (
        None if rss is None else rss / 1024 <= DIGEST_DIFF_MAX_RSS_MIB)
    return res


def report_digest(res):
    mib = lambda kib: "?" if kib is None else f"{kib / 1024:.0f} MiB"
    size = lambda b: f"{b / 1024:.1f} KiB" if b < 1 << 20 else f"{b / (1 << 20):.2f} MiB"
    print(f"machine: {res['machine']['cores']} cores, {res['machine']['cpu']}, {res['machine']['memory_gib']} GiB; "
          f"medians of {res['reps']} runs")
    for name, r in res["nodes"].items():
        m = r["made"]
        print(f"node {name}: one partition, {r['partition_bytes'] / (1 << 20):.0f} MiB in {r['segments']} segment(s), "
              f"{m['batches']} batches of <= {r['batch_bytes']} bytes")
        print(f"  digest {r['median_s']['digest']:.3f} s, cat {r['median_s']['cat']:.3f} s: digest/cat = {r['vs_cat']:.3f}x; "
              f"read {size(m['bytes_read'])} = {100 * r['read_share']:.2f}% of the partition; "
              f"digest {size(r['digest_bytes'])} ({r['digest_bytes'] / m['batches']:.1f} bytes a batch); "
              f"peak RSS {mib(r['peak_rss_kib']['digest'])}")
        if "verify_made" in r:
            print(f"  digest --verify {r['median_s']['digest --verify']:.3f} s = {r['verify_vs_cat']:.3f}x cat; "
                  f"read {size(r['verify_made']['bytes_read'])}; peak RSS {mib(r['peak_rss_kib']['digest --verify'])}")
    c = res["crashed_digests"]
    segs = sum(m["segment_bytes"] for m in c["made"].values())
    print(f"crashed-{DIGEST_CRASHED}: 3 brokers x {DIGEST_CRASHED:,} partitions ({c['files']:,} files, "
          f"{segs / (1 << 30):.1f} GiB of segments counted per replica, hard links of one replica's)")
    for b in c["median_s"]:
        print(f"  digest {b}: {c['median_s'][b]:.2f} s, {size(c['digest_bytes'][b])}, read {size(c['made'][b]['bytes_read'])}, "
              f"peak RSS {mib(c['peak_rss_kib'][b])}")
    print(f"  all three: {c['total_s']:.2f} s one after the other, {size(c['total_digest_bytes'])}")
    d = res["crashed_diff"]
    print(f"  diff --format json: digests {d['median_s']['digests']:.2f} s, directories {d['median_s']['directories']:.2f} s: "
          f"digests/directories = {d['vs_dirs']:.2f}x; peak RSS {mib(d['peak_rss_kib']['digests'])} / "
          f"{mib(d['peak_rss_kib']['directories'])}; outputs equal once normalised")
    for t, ok in res["targets"].items():
        print(f"target {t}: {'?' if ok is None else 'met' if ok else 'NOT met'}")


def du(d, topic=None):
    """Bytes under d; with topic, only in that topic's partition directories (all replicas)."""
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(d) for f in fs
               if topic is None or os.path.basename(r) == f"{topic}-0")


def machine():
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": round(mem / (1 << 30)),
            "os": platform.platform(), "kafka": oracle.kafka_version()}


def report(res):
    mib = lambda kib: "?" if kib is None else f"{kib / 1024:.0f} MiB"
    print(f"machine: {res['machine']['cores']} cores, {res['machine']['cpu']}, {res['machine']['memory_gib']} GiB; "
          f"Kafka {res['machine']['kafka']}; medians of {res['reps']} runs")
    print(f"inputs: segment {res['inputs']['segment_none_bytes'] >> 20} MiB (none), "
          f"{res['inputs']['segment_lz4_bytes'] >> 20} MiB (lz4); partition {res['inputs']['partition_bytes'] >> 20} MiB; "
          f"captures {res['inputs']['capture_small_bytes'] >> 20} MiB and {res['inputs']['capture_large_bytes'] >> 20} MiB")
    for k in ("dump_none_shallow", "dump_none_deep", "dump_lz4_shallow", "dump_lz4_deep"):
        r = res[k]
        print(f"{k:20} kafka-dump-log/klf = {r['ratio']:6.1f}x  (klf {r['median_s']['klf']:.3f} s, "
              f"kafka-dump-log {r['median_s']['kafka-dump-log']:.3f} s; identical {r['identical_output_bytes']} bytes; "
              f"klf peak RSS {mib(r['peak_rss_kib']['klf'])})")
    for k in ("check_none", "check_lz4"):
        r = res[k]
        print(f"{k:20} klf/cat = {r['ratio']:5.2f}x  (klf {r['median_s']['klf']:.3f} s, cat {r['median_s']['cat']:.3f} s; "
              f"klf peak RSS {mib(r['peak_rss_kib']['klf'])})")
    for k in ("diff", "diff_verify"):
        r = res[k]
        print(f"{k:20} large/small = {r['growth']:5.2f}x for {res['inputs']['diffed_large_bytes'] / res['inputs']['diffed_small_bytes']:.1f}x "
              f"the replicated log bytes  (small {r['median_s']['small']:.3f} s, large {r['median_s']['large']:.3f} s; "
              f"peak RSS {mib(r['peak_rss_kib']['small'])} / {mib(r['peak_rss_kib']['large'])})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=os.path.join(HERE, ".data"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--deep-reps", type=int, default=3, help="repetitions of the deep dumps (slow in kafka-dump-log)")
    ap.add_argument("--json", help="where to write the results (default DATA/results.json)")
    ap.add_argument("--generate-only", action="store_true")
    ap.add_argument("--shapes", action="store_true", help="measure the shapes only (no Kafka needed)")
    ap.add_argument("--shape-scale", type=float, default=1.0, help="multiplies every shape's n")
    ap.add_argument("--budget", action="store_true", help="measure the memory budgets only (no Kafka needed)")
    ap.add_argument("--digest", action="store_true", help="measure klf digest and diff over digests only (no Kafka needed)")
    ap.add_argument("--report", action="store_true", help="measure klf report's page only (no Kafka needed)")
    a = ap.parse_args()
    data = os.path.abspath(a.data)
    if a.report:
        log("building klf (release)")
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
        res = measure_report(data, a.reps)
        with open(a.json or os.path.join(data, "report.json"), "w") as f:
            json.dump(res, f, indent=2)
        report_report(res)
        return
    if a.digest:
        log("building klf (release)")
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
        res = measure_digest(data, a.reps)
        with open(a.json or os.path.join(data, "digest.json"), "w") as f:
            json.dump(res, f, indent=2)
        report_digest(res)
        return
    if a.budget:
        log("building klf (release)")
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
        res = measure_budgets(data, a.reps)
        with open(a.json or os.path.join(data, "budgets.json"), "w") as f:
            json.dump(res, f, indent=2)
        report_budgets(res)
        return
    if a.shapes:
        log("building klf (release)")
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
        res = measure_shapes(data, a.reps, a.shape_scale)
        with open(a.json or os.path.join(data, "shapes.json"), "w") as f:
            json.dump(res, f, indent=2)
        report_shapes(res)
        return
    generate(data)
    if a.generate_only:
        return
    log("building klf (release)")
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
    res = measure(data, a.reps, a.deep_reps)
    with open(a.json or os.path.join(data, "results.json"), "w") as f:
        json.dump(res, f, indent=2)
    report(res)


if __name__ == "__main__":
    main()
