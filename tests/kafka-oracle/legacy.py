#!/usr/bin/env python3
"""The legacy-formats capture: message format v0 and v1, written by a real broker.

Kafka 4.x no longer writes v0/v1. A Kafka 3.9 broker in ZooKeeper mode with
inter.broker.protocol.version=2.8 (below 3.0) still honours the topic-level
message.format.version: it down-converts what Kafka's Java producer sends
(v2 batches) into v0 (0.9.0) or v1 (0.10.2) messages on disk, and with the
topic's compression.type=producer it writes compressed wrapper messages with
the producer's codec.

    python3 tests/kafka-oracle/legacy.py [OUT_DIR] [--no-golden]

OUT_DIR defaults to testdata/kafka/legacy-formats. `run_legacy(out_dir)` is
the importable entry point (it makes no golden files; the standalone run asks
oracle.py for them unless --no-golden). Importing this module starts nothing.

Every process started here (ZooKeeper, the broker, the client driver) is
stopped by its process id when the run ends or fails, and at exit.
"""

import atexit
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CACHE = os.path.join(HERE, ".cache")
POM = os.path.join(HERE, "pom-3.9.xml")
LIB = os.path.join(CACHE, "lib-3.9")
SRC = os.path.join(CACHE, "legacy-src")
CLASSES = os.path.join(CACHE, "classes-3.9")
WORK = os.path.join(HERE, ".work", "legacy-formats")
DEFAULT_OUT = os.path.join(REPO, "testdata", "kafka", "legacy-formats")

BROKER_ID = 1
IBP = "2.8"
SEGMENT_BYTES = 8192           # 2-3 segments per partition
INDEX_BYTES = 1024
INDEX_INTERVAL = 1024
RECORDS_PER_TOPIC = 200
FORMATS = ((0, "0.9.0"), (1, "0.10.2"))   # magic, topic message.format.version
CODECS = ("none", "gzip", "snappy", "lz4")


def topics():
    """(topic, magic, message.format.version, codec, extra topic configs)."""
    out = [(f"legacy-v{m}-{codec}", m, mfv, codec, {}) for m, mfv in FORMATS for codec in CODECS]
    # v1 wrapper messages whose timestamp the broker sets (LogAppendTime attribute bit)
    out.append(("legacy-v1-gzip-logappendtime", 1, "0.10.2", "gzip", {"message.timestamp.type": "LogAppendTime"}))
    return out


def log(msg):
    print(f"[legacy {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def kafka_version():
    return re.search(r"<kafka.version>([^<]+)</kafka.version>", open(POM).read()).group(1)


def zookeeper_version():
    return re.search(r"<zookeeper.version>([^<]+)</zookeeper.version>", open(POM).read()).group(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- processes

_PROCS = {}  # pid -> (Popen, description): everything started here and not yet reaped
_ATEXIT = [False]


def _kill(p):
    try:
        os.kill(p.pid, signal.SIGCONT)
        os.kill(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        p.wait(30)
    except subprocess.TimeoutExpired:
        pass
    _PROCS.pop(p.pid, None)


def _kill_all():
    for p, _ in list(_PROCS.values()):
        _kill(p)


def _track(p, what):
    if not _ATEXIT[0]:
        atexit.register(_kill_all)
        _ATEXIT[0] = True
    _PROCS[p.pid] = (p, what)
    return p


def _stop(p, what, timeout=90):
    """SIGTERM (Kafka: controlled shutdown, logs flushed and indexes trimmed), SIGKILL after timeout."""
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            log(f"{what} (pid {p.pid}) did not stop in {timeout}s; SIGKILL")
            _kill(p)
            return False
    _PROCS.pop(p.pid, None)
    log(f"{what} (pid {p.pid}) stopped, exit {p.returncode}")
    return True


def _wait_port(p, port, what, logfile, timeout=90):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if p.poll() is not None:
            raise RuntimeError(f"{what} exited with {p.returncode}; see {logfile}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{what} did not open 127.0.0.1:{port}; see {logfile}")


def _wait_until(what, pred, timeout=60, interval=0.3):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = pred()
        if last:
            return last
        time.sleep(interval)
    raise RuntimeError(f"timed out waiting for {what}: {last}")


# ---------------------------------------------------------------- setup

def classpath():
    return LIB + "/*"


def setup():
    """Resolves the Kafka 3.9 jars from Maven Central and compiles the client driver."""
    if not os.path.isdir(LIB) or not any(f.startswith("kafka_2.13-3.9") for f in os.listdir(LIB)):
        log("resolving Kafka 3.9 jars with Maven")
        subprocess.run(["mvn", "-B", "-q", "-f", POM, "-Dmaven.repo.local=" + os.path.join(CACHE, "m2"),
                        "dependency:copy-dependencies"], check=True)
    os.makedirs(SRC, exist_ok=True)
    src = os.path.join(SRC, "LegacyDriver.java")
    stamp = os.path.join(CLASSES, "LegacyDriver.sha256")
    digest = hashlib.sha256(DRIVER_JAVA.encode()).hexdigest()
    if not (os.path.exists(stamp) and open(stamp).read() == digest
            and os.path.exists(os.path.join(CLASSES, "LegacyDriver.class"))):
        with open(src, "w") as f:
            f.write(DRIVER_JAVA)
        shutil.rmtree(CLASSES, ignore_errors=True)
        os.makedirs(CLASSES)
        subprocess.run(["javac", "-nowarn", "-d", CLASSES, "-cp", classpath(), src], check=True)
        with open(stamp, "w") as f:
            f.write(digest)


BROKER_LOG4J = """\
# Kafka 3.9 broker / ZooKeeper logging (log4j 1.x syntax, reload4j): INFO to stdout,
# which legacy.py redirects to a file and reads Kafka's own leadership lines from.
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.org.apache.kafka.clients=WARN
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=INFO
"""

CLIENT_LOG4J = """\
# The client driver: warnings only, to stderr, so stdout carries only JSON.
log4j.rootLogger=WARN, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.org.apache.zookeeper=ERROR
"""


# ---------------------------------------------------------------- the run

class _Run:
    def __init__(self):
        shutil.rmtree(WORK, ignore_errors=True)
        os.makedirs(WORK)
        self.broker_log4j = os.path.join(WORK, "log4j.properties")
        self.client_log4j = os.path.join(WORK, "log4j-client.properties")
        open(self.broker_log4j, "w").write(BROKER_LOG4J)
        open(self.client_log4j, "w").write(CLIENT_LOG4J)
        self.zk_port = free_port()
        self.port = free_port()
        self.zk_dir = os.path.join(WORK, "zookeeper")
        self.data = os.path.join(WORK, f"broker-{BROKER_ID}", "data")
        self.zk_log = os.path.join(WORK, "zookeeper.log")
        self.broker_log = os.path.join(WORK, f"broker-{BROKER_ID}", "server.log")
        self.zk = None
        self.broker = None

    def jvm(self, heap, log4j):
        return ["java", f"-Xmx{heap}", "-Xms32m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Djava.awt.headless=true", f"-Dlog4j.configuration=file:{log4j}"]

    def start_zookeeper(self):
        os.makedirs(self.zk_dir)
        cfg = os.path.join(WORK, "zoo.cfg")
        with open(cfg, "w") as f:
            f.write(f"tickTime=500\ninitLimit=10\nsyncLimit=5\ndataDir={self.zk_dir}\n"
                    f"clientPort={self.zk_port}\nclientPortAddress=127.0.0.1\n"
                    "maxClientCnxns=50\nadmin.enableServer=false\n4lw.commands.whitelist=\n")
        cmd = self.jvm("128m", self.broker_log4j) + ["-Dzookeeper.admin.enableServer=false",
                                                     "-cp", classpath(),
                                                     "org.apache.zookeeper.server.ZooKeeperServerMain", cfg]
        out = open(self.zk_log, "a")
        self.zk = _track(subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL),
                         "zookeeper")
        log(f"zookeeper started, pid {self.zk.pid}, port {self.zk_port}")
        _wait_port(self.zk, self.zk_port, "zookeeper", self.zk_log)

    def start_broker(self):
        os.makedirs(self.data)
        cfg = os.path.join(WORK, f"broker-{BROKER_ID}", "server.properties")
        props = {
            "broker.id": BROKER_ID,
            "zookeeper.connect": f"127.0.0.1:{self.zk_port}",
            "zookeeper.session.timeout.ms": 18000,
            "listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{self.port}",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT",
            "inter.broker.listener.name": "PLAINTEXT",
            # below 3.0: the topic-level message.format.version is honoured
            "inter.broker.protocol.version": IBP,
            "log.dirs": self.data,
            "num.partitions": 1,
            "default.replication.factor": 1,
            "auto.create.topics.enable": "false",
            "auto.leader.rebalance.enable": "false",
            "log.index.size.max.bytes": INDEX_BYTES,
            "log.index.interval.bytes": INDEX_INTERVAL,
            "replica.high.watermark.checkpoint.interval.ms": 200,
            "log.flush.offset.checkpoint.interval.ms": 1000,
            "log.flush.start.offset.checkpoint.interval.ms": 1000,
            "log.recovery.point.checkpoint.interval.ms": 1000,
            "offsets.topic.replication.factor": 1,
            "offsets.topic.num.partitions": 1,
            "transaction.state.log.replication.factor": 1,
            "transaction.state.log.min.isr": 1,
            "transaction.state.log.num.partitions": 1,
            "group.initial.rebalance.delay.ms": 0,
            "num.network.threads": 2,
            "num.io.threads": 2,
            "num.replica.fetchers": 1,
            "background.threads": 2,
            "log.cleaner.threads": 1,
            "log.cleaner.dedupe.buffer.size": 4194304,
            "controlled.shutdown.enable": "true",
        }
        with open(cfg, "w") as f:
            for k, v in props.items():
                f.write(f"{k}={v}\n")
        self.server_properties = props
        # no remote JMX: the JDK's JMX agent also opens a wildcard-bound socket; the
        # log end offset comes from the recovery-point checkpoint of the clean shutdown
        cmd = self.jvm("384m", self.broker_log4j) + ["-cp", classpath(), "kafka.Kafka", cfg]
        out = open(self.broker_log, "a")
        self.broker = _track(subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL),
                             f"broker {BROKER_ID}")
        log(f"broker {BROKER_ID} (Kafka {kafka_version()}, ZooKeeper mode, IBP {IBP}) started, "
            f"pid {self.broker.pid}, port {self.port}")
        _wait_port(self.broker, self.port, f"broker {BROKER_ID}", self.broker_log)

    def driver(self, cmd, timeout=300, **kw):
        args = self.jvm("128m", self.client_log4j) + ["-cp", f"{classpath()}:{CLASSES}", "LegacyDriver", cmd,
                                                      f"bootstrap=127.0.0.1:{self.port}"]
        args += [f"{k}={v}" for k, v in kw.items()]
        p = _track(subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    stdin=subprocess.DEVNULL), f"driver {cmd}")
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(p)
            raise RuntimeError(f"driver {cmd} timed out")
        _PROCS.pop(p.pid, None)
        if p.returncode != 0:
            raise RuntimeError(f"driver {cmd} failed ({p.returncode}): {err[-3000:]}")
        return json.loads(out.strip().splitlines()[-1])

    def broker_log_text(self):
        with open(self.broker_log, errors="replace") as f:
            return f.read()

    def leader_epoch_from_log(self, topic, partition=0):
        """What the broker logged when it became leader (Partition.makeLeader)."""
        pat = re.compile(r"Leader " + re.escape(f"{topic}-{partition}") +
                         r" with topic id \S+ starts at leader epoch (\d+) from offset (-?\d+)"
                         r" with partition epoch (\d+), high watermark (\d+)")
        m = pat.findall(self.broker_log_text())
        if not m:
            return None
        e, off, pe, hw = m[-1]
        return {"leader_epoch": int(e), "start_offset": int(off), "partition_epoch": int(pe),
                "high_watermark": int(hw)}

    def hw_checkpoint(self):
        return read_checkpoint(os.path.join(self.data, "replication-offset-checkpoint"))


def read_checkpoint(p):
    """topic, partition -> offset from one of Kafka's offset checkpoint files."""
    out = {}
    try:
        lines = open(p).read().splitlines()
    except OSError:
        return out
    for line in lines[2:]:
        f = line.split()
        if len(f) == 3:
            out[(f[0], int(f[1]))] = int(f[2])
    return out


def copy_log_dir(src, dst):
    """An exact copy of the broker's log directory, but for the empty `.lock`."""
    shutil.rmtree(dst, ignore_errors=True)

    def ignore(d, names):
        return {n for n in names if n == ".lock" and d == src and os.path.getsize(os.path.join(d, n)) == 0}
    shutil.copytree(src, dst, symlinks=True, ignore=ignore)


def dump_check(broker_dir, specs, acked):
    """Kafka 3.9's own kafka-dump-log over every segment of each topic: the magic
    and codec of every entry (a legacy message or a compressed wrapper message),
    and with --deep-iteration the number of records, which must be the number
    the producer was told were written."""
    files = []
    for t, *_ in specs:
        d = os.path.join(broker_dir, f"{t}-0")
        files += [os.path.join(d, f) for f in sorted(os.listdir(d)) if f.endswith(".log")]
    result = {}
    for mode, flags in (("shallow", []), ("deep", ["--deep-iteration"])):
        cmd = ["java", "-Xmx256m", "-XX:TieredStopAtLevel=1", f"-Dlog4j.configuration=file:{WORK}/log4j-client.properties",
               "-cp", classpath(), "kafka.tools.DumpLogSegments", "--files", ",".join(files)] + flags
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError(f"kafka-dump-log 3.9 failed: {r.stderr[-2000:]}")
        current = None
        for line in r.stdout.splitlines():
            if line.startswith("Dumping "):
                current = os.path.basename(os.path.dirname(line[len("Dumping "):].strip()))[:-2]
                continue
            if line.startswith("| offset: ") and current is not None:
                st = result.setdefault(current, {}).setdefault(mode, {"entries": 0, "magic": set(), "compresscodec": set()})
                st["inner"] = st.get("inner", 0) + 1
                continue
            m = re.search(r"\bmagic: (\d+)", line)
            if not m or current is None:
                continue
            c = re.search(r"\bcompresscodec: (\w+)", line)
            st = result.setdefault(current, {}).setdefault(mode, {"entries": 0, "magic": set(), "compresscodec": set()})
            st["entries"] += 1
            st["magic"].add(int(m.group(1)))
            if c:
                st["compresscodec"].add(c.group(1))
    out = {}
    for t, magic, _mfv, codec, _extra in specs:
        want = acked.get(t)
        st = result.get(t, {})
        sh, dp = st.get("shallow"), st.get("deep")
        if not sh or sh["magic"] != {magic} or {c.lower() for c in sh["compresscodec"]} != {codec}:
            raise RuntimeError(f"{t}: kafka-dump-log 3.9 shows magic {sh and sorted(sh['magic'])} codec "
                               f"{sh and sorted(sh['compresscodec'])}, expected magic {magic} codec {codec}")
        if not dp or dp.get("inner") != want:
            raise RuntimeError(f"{t}: kafka-dump-log 3.9 --deep-iteration shows {dp and dp.get('inner')} records, "
                               f"the producer was told {want} were written")
        segs = len([f for f in os.listdir(os.path.join(broker_dir, f"{t}-0")) if f.endswith(".log")])
        out[t] = {"segments": segs,
                  "shallow_entries": sh["entries"], "shallow_magic": sorted(sh["magic"]),
                  "shallow_compresscodec": sorted(sh["compresscodec"]),
                  "deep_records": dp["inner"]}
    return out


def run_legacy(out_dir=DEFAULT_OUT):
    """Runs ZooKeeper and one Kafka 3.9 broker, writes v0/v1 topics, stops the
    broker cleanly and copies its log directory into out_dir/broker-1/, with
    out_dir/scenario.json. Returns the scenario facts."""
    out_dir = os.path.abspath(out_dir)
    t0 = time.time()
    setup()
    specs = topics()
    run = _Run()
    try:
        run.start_zookeeper()
        run.start_broker()
        ready = run.driver("ready", timeout_ms=90000, zk=f"127.0.0.1:{run.zk_port}", broker_id=BROKER_ID)
        log(f"broker ready: {ready}")
        spec_file = os.path.join(WORK, "topics.tsv")
        with open(spec_file, "w") as f:
            for t, _m, mfv, codec, extra in specs:
                cfg = {"message.format.version": mfv, "compression.type": "producer",
                       "segment.bytes": SEGMENT_BYTES, "segment.index.bytes": INDEX_BYTES,
                       "index.interval.bytes": INDEX_INTERVAL, "message.timestamp.type": "CreateTime"}
                cfg.update(extra)
                f.write("\t".join([t, codec, str(RECORDS_PER_TOPIC), ";".join(f"{k}={v}" for k, v in cfg.items())]) + "\n")
        produced = run.driver("run", spec=spec_file, broker_id=BROKER_ID)["topics"]
        for t, r in produced.items():
            log(f"{t}: acked {r['acked']}/{r['sent']}, offsets {r['min_offset']}..{r['max_offset']}"
                + (f", errors {r['errors']}" if r["errors"] else ""))
            if r["acked"] != r["sent"]:
                raise RuntimeError(f"{t}: producer was not told every record was written: {r}")
        # the high watermark checkpoint (every 200 ms) has caught up with every topic
        _wait_until("the high-watermark checkpoint", lambda: all(
            run.hw_checkpoint().get((t, 0)) == produced[t]["max_offset"] + 1 for t, *_ in specs), timeout=30)
        facts = run.driver("facts", topics=",".join(t for t, *_ in specs),
                           zk=f"127.0.0.1:{run.zk_port}")["topics"]
        epochs = {t: run.leader_epoch_from_log(t) for t, *_ in specs}
        if not _stop(run.broker, f"broker {BROKER_ID}"):
            raise RuntimeError("the broker did not shut down cleanly")
        if "shut down completed" not in run.broker_log_text():
            raise RuntimeError(f"the broker did not log a completed shutdown; see {run.broker_log}")
        _stop(run.zk, "zookeeper")
        broker_dir = os.path.join(out_dir, f"broker-{BROKER_ID}")
        shutil.rmtree(out_dir, ignore_errors=True)
        os.makedirs(out_dir)
        copy_log_dir(run.data, broker_dir)
        log(f"captured broker {BROKER_ID}'s log directory into {broker_dir}")
        checked = dump_check(broker_dir, specs, {t: r["acked"] for t, r in produced.items()})
        cp_hw = read_checkpoint(os.path.join(broker_dir, "replication-offset-checkpoint"))
        cp_rp = read_checkpoint(os.path.join(broker_dir, "recovery-point-offset-checkpoint"))
        cp_ls = read_checkpoint(os.path.join(broker_dir, "log-start-offset-checkpoint"))

        parts = []
        for t, magic, mfv, codec, extra in specs:
            fa, pr, le = facts[t], produced[t], epochs[t]
            zk_state = fa.get("zk_partition_state") or {}
            leo = cp_rp.get((t, 0))
            if cp_ls.get((t, 0), 0) != fa["log_start_offset"]:
                raise RuntimeError(f"{t}: log start {fa['log_start_offset']} but checkpoint {cp_ls.get((t, 0))}")
            if not (leo == fa["high_watermark"] == cp_hw.get((t, 0)) == pr["max_offset"] + 1):
                raise RuntimeError(f"{t}: offsets disagree: recovery point {leo}, high watermark {fa['high_watermark']}, "
                                   f"checkpoint {cp_hw.get((t, 0))}, acked max {pr['max_offset']}")
            if le is None and "leader_epoch" in zk_state:
                le = {"leader_epoch": zk_state["leader_epoch"], "source": "zookeeper partition state"}
            parts.append({
                "topic": t, "partition": 0, "replicas": fa["replicas"],
                "leader_at_capture": fa["leader"],
                "leader_epoch_at_capture": le["leader_epoch"] if le else None,
                "leader_start_offset_at_capture": le.get("start_offset") if le else None,
                "leader_epoch_source": le.get("source", "broker log: 'starts at leader epoch'") if le else None,
                "zookeeper_partition_state": zk_state,
                "isr_at_capture": fa["isr"],
                "replica_state": {str(BROKER_ID): {
                    "log_end_offset": leo,
                    "log_start_offset": fa["log_start_offset"],
                    "high_watermark": fa["high_watermark"],
                    "high_watermark_checkpoint": cp_hw.get((t, 0)),
                    "source": "high_watermark and log_start_offset: ListOffsets (latest, earliest) while live; "
                              "log_end_offset: recovery-point-offset-checkpoint written by the clean shutdown "
                              "(SIGTERM) after which the log directory was copied; log-start-offset-checkpoint "
                              "lists no partition, as every log starts at 0"}},
                "acked": {"count": pr["acked"], "max_offset": pr["max_offset"]},
                "produced": pr,
                "message_format_version": mfv, "magic": magic, "compression": codec,
                "topic_config": fa["config"],
                "kafka_3_9_dump_log": checked[t],
            })
        scenario = {
            "kafka_version": kafka_version(),
            "zookeeper_version": zookeeper_version(),
            "inter_broker_protocol_version": IBP,
            "writer": f"Apache Kafka {kafka_version()} broker (ZooKeeper mode, ZooKeeper {zookeeper_version()}, "
                      f"inter.broker.protocol.version={IBP}, one broker on 127.0.0.1), fed by Kafka "
                      f"{kafka_version()}'s Java producer (acks=all, no idempotence)",
            "description": "Message formats v0 and v1 written by a real broker: a ZooKeeper-mode Kafka 3.9 broker with "
                           f"IBP {IBP} and message.format.version set per topic (0.9.0 -> magic 0, 0.10.2 -> magic 1) "
                           "down-converting the v2 batches Kafka's Java producer sends. compression.type=producer, "
                           "and the producer sends with none, gzip, snappy or lz4, so compressed topics hold "
                           "compressed wrapper messages (v0: absolute inner offsets, v1: relative) with the "
                           "producer's codec; legacy-v1-gzip-logappendtime uses message.timestamp.type="
                           "LogAppendTime. Records have keys, null keys, repeated keys, null and empty values, "
                           "no headers (v0/v1 have none); the producer flushes after groups of 1 to 30 records, so "
                           "wrappers hold that many inner messages. segment.bytes=%d gives 2-3 segments per "
                           "partition. The broker was stopped cleanly before its log directory was copied; no "
                           "leader-epoch-checkpoint is kept for formats below v2." % SEGMENT_BYTES,
            "partitions": parts,
            "omitted_from_capture": [],
            "broker_config": {k: v for k, v in run.server_properties.items()
                              if k not in ("log.dirs", "zookeeper.connect", "listeners", "advertised.listeners")},
            "verified_with": "Kafka 3.9 kafka-dump-log (kafka.tools.DumpLogSegments), shallow and --deep-iteration: "
                             "every entry of each topic has the expected magic and codec (kafka_3_9_dump_log)",
            "broker_ready": ready,
            "mode": "zookeeper",
        }
        with open(os.path.join(out_dir, "scenario.json"), "w") as f:
            json.dump(scenario, f, indent=2, sort_keys=True)
            f.write("\n")
        log(f"legacy-formats captured in {time.time() - t0:.0f}s")
        return scenario
    finally:
        for p, what in reversed(list(_PROCS.values())):   # clients, then the broker, then ZooKeeper
            _stop(p, what, timeout=30)
        _kill_all()


def _on_signal(signum, _frame):
    _kill_all()
    sys.exit(128 + signum)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?", default=DEFAULT_OUT)
    ap.add_argument("--no-golden", action="store_true", help="skip oracle.py's kafka-dump-log golden files")
    a = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    run_legacy(a.out)
    if not a.no_golden:
        subprocess.run([sys.executable, os.path.join(HERE, "oracle.py"), "golden", os.path.abspath(a.out)],
                       check=True)


# ---------------------------------------------------------------- the client driver

DRIVER_JAVA = r"""
// Client driver for legacy.py, compiled against Kafka 3.9's kafka-clients and
// ZooKeeper. Each command prints one JSON object on stdout.
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import java.util.concurrent.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.*;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.zookeeper.*;

public class LegacyDriver {
    static Map<String, String> args = new HashMap<>();

    static String arg(String k) {
        String v = args.get(k);
        if (v == null) throw new IllegalArgumentException("missing argument " + k);
        return v;
    }

    public static void main(String[] argv) throws Exception {
        for (int i = 1; i < argv.length; i++) {
            int eq = argv[i].indexOf('=');
            args.put(argv[i].substring(0, eq), argv[i].substring(eq + 1));
        }
        String out;
        switch (argv[0]) {
            case "ready": out = ready(); break;
            case "run": out = run(); break;
            case "facts": out = facts(); break;
            default: throw new IllegalArgumentException("unknown command " + argv[0]);
        }
        System.out.println(out);
        System.out.flush();
        System.exit(0);
    }

    static String q(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static Admin admin() {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, arg("bootstrap"));
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        return Admin.create(p);
    }

    static ZooKeeper zk() throws Exception {
        CountDownLatch up = new CountDownLatch(1);
        ZooKeeper z = new ZooKeeper(arg("zk"), 10000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) up.countDown();
        });
        if (!up.await(30, TimeUnit.SECONDS)) throw new RuntimeException("no ZooKeeper session");
        return z;
    }

    static String zkData(ZooKeeper z, String path) throws Exception {
        try {
            return new String(z.getData(path, false, null), StandardCharsets.UTF_8);
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
    }

    // The broker is registered in ZooKeeper, is the controller, and answers Admin requests.
    static String ready() throws Exception {
        long deadline = System.currentTimeMillis() + Long.parseLong(arg("timeout_ms"));
        String id = arg("broker_id");
        Exception last = null;
        try (Admin a = admin()) {
            while (System.currentTimeMillis() < deadline) {
                try {
                    DescribeClusterResult d = a.describeCluster();
                    Collection<Node> nodes = d.nodes().get(10, TimeUnit.SECONDS);
                    Node c = d.controller().get(10, TimeUnit.SECONDS);
                    if (nodes.size() == 1 && c != null && Integer.toString(c.id()).equals(id)) {
                        ZooKeeper z = zk();
                        try {
                            String reg = zkData(z, "/brokers/ids/" + id);
                            String ctl = zkData(z, "/controller");
                            if (reg != null && ctl != null)
                                return "{\"controller\":" + c.id() + ",\"cluster_id\":" + q(d.clusterId().get())
                                        + ",\"zk_broker_registration\":" + reg + ",\"zk_controller\":" + ctl + "}";
                        } finally {
                            z.close();
                        }
                    }
                } catch (Exception e) {
                    last = e;
                }
                Thread.sleep(300);
            }
        }
        throw new RuntimeException("broker not ready", last);
    }

    static List<String[]> spec() throws Exception {
        List<String[]> out = new ArrayList<>();
        for (String line : Files.readAllLines(Paths.get(arg("spec")))) {
            if (!line.isEmpty()) out.add(line.split("\t"));
        }
        return out;
    }

    // Creates every topic of the spec on the one broker, waits for its leader,
    // then produces to each topic in turn.
    static String run() throws Exception {
        List<String[]> spec = spec();
        int broker = Integer.parseInt(arg("broker_id"));
        List<String> names = new ArrayList<>();
        try (Admin a = admin()) {
            List<NewTopic> nts = new ArrayList<>();
            for (String[] s : spec) {
                Map<String, String> cfg = new LinkedHashMap<>();
                for (String kv : s[3].split(";")) {
                    int eq = kv.indexOf('=');
                    cfg.put(kv.substring(0, eq), kv.substring(eq + 1));
                }
                Map<Integer, List<Integer>> assign = new HashMap<>();
                assign.put(0, Collections.singletonList(broker));
                nts.add(new NewTopic(s[0], assign).configs(cfg));
                names.add(s[0]);
            }
            a.createTopics(nts).all().get(60, TimeUnit.SECONDS);
            long deadline = System.currentTimeMillis() + 60000;
            while (true) {
                boolean ok = true;
                try {
                    for (TopicDescription d : a.describeTopics(names).allTopicNames().get(30, TimeUnit.SECONDS).values()) {
                        for (TopicPartitionInfo p : d.partitions())
                            if (p.leader() == null || p.leader().id() != broker) ok = false;
                    }
                } catch (ExecutionException e) {
                    ok = false;
                }
                if (ok) break;
                if (System.currentTimeMillis() > deadline) throw new RuntimeException("no leaders for " + names);
                Thread.sleep(200);
            }
        }
        StringJoiner j = new StringJoiner(",", "{\"topics\":{", "}}");
        for (String[] s : spec) j.add(q(s[0]) + ":" + produce(s[0], s[1], Integer.parseInt(s[2])));
        return j.toString();
    }

    static final int[] GROUPS = {1, 7, 15, 3, 25, 10, 2, 30, 5};
    static final String ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";

    // Keys: every third null, every seventh one of five repeated keys, else key-<i>.
    // Values: every eleventh null, every thirteenth empty, else "v<i>:" and 4-120
    // pseudo-random characters (seeded by the topic name). The producer flushes
    // after groups of 1..30 records: one batch, so one wrapper message, per group.
    static String produce(String topic, String codec, int count) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, arg("bootstrap"));
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
        // brokers refuse idempotent/transactional producers on formats below v2
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        p.put(ProducerConfig.RETRIES_CONFIG, "0");
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "60000");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "65536");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "120000");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        Random rnd = new Random(topic.hashCode());
        long[] offsets = new long[count];
        Arrays.fill(offsets, -2);
        Set<String> errors = new ConcurrentSkipListSet<>();
        int nullKeys = 0, nullValues = 0, emptyValues = 0, repeatedKeys = 0, flushes = 0;
        try (KafkaProducer<byte[], byte[]> prod = new KafkaProducer<>(p)) {
            int i = 0, g = 0;
            while (i < count) {
                int n = Math.min(GROUPS[g++ % GROUPS.length], count - i);
                for (int end = i + n; i < end; i++) {
                    byte[] k;
                    if (i % 3 == 0) { k = null; nullKeys++; }
                    else if (i % 7 == 1) { k = ("key-r" + (i % 5)).getBytes(StandardCharsets.UTF_8); repeatedKeys++; }
                    else k = ("key-" + i).getBytes(StandardCharsets.UTF_8);
                    byte[] v;
                    if (i % 11 == 5) { v = null; nullValues++; }
                    else if (i % 13 == 7) { v = new byte[0]; emptyValues++; }
                    else {
                        StringBuilder b = new StringBuilder("v" + i + ":");
                        int len = 4 + rnd.nextInt(117);
                        for (int c = 0; c < len; c++) b.append(ALPHABET.charAt(rnd.nextInt(ALPHABET.length())));
                        v = b.toString().getBytes(StandardCharsets.UTF_8);
                    }
                    final int idx = i;
                    prod.send(new ProducerRecord<>(topic, 0, null, k, v), (md, ex) -> {
                        if (ex == null) offsets[idx] = md.offset();
                        else { offsets[idx] = -1; errors.add(ex.getClass().getSimpleName() + ": " + ex.getMessage()); }
                    });
                }
                prod.flush();
                flushes++;
            }
        }
        long acked = 0, min = Long.MAX_VALUE, max = -1;
        boolean inOrder = true;
        for (int i = 0; i < count; i++) {
            if (offsets[i] >= 0) {
                acked++;
                min = Math.min(min, offsets[i]);
                max = Math.max(max, offsets[i]);
                if (offsets[i] != i) inOrder = false;
            }
        }
        StringJoiner ej = new StringJoiner(",", "[", "]");
        for (String e : errors) ej.add(q(e));
        return "{\"codec\":" + q(codec) + ",\"sent\":" + count + ",\"acked\":" + acked + ",\"min_offset\":" + (acked == 0 ? -1 : min)
                + ",\"max_offset\":" + max + ",\"offset_equals_record_index\":" + inOrder
                + ",\"null_keys\":" + nullKeys + ",\"repeated_keys\":" + repeatedKeys + ",\"null_values\":" + nullValues
                + ",\"empty_values\":" + emptyValues + ",\"producer_batches\":" + flushes + ",\"errors\":" + ej + "}";
    }

    static String ids(List<Node> nodes) {
        StringJoiner j = new StringJoiner(",", "[", "]");
        for (Node n : nodes) j.add(Integer.toString(n.id()));
        return j.toString();
    }

    // Leader, ISR, replicas (Admin), high watermark and log start (ListOffsets), the
    // partition state and topic config in ZooKeeper, and the effective topic config
    // (DescribeConfigs).
    static String facts() throws Exception {
        List<String> names = Arrays.asList(arg("topics").split(","));
        StringJoiner j = new StringJoiner(",", "{\"topics\":{", "}}");
        try (Admin a = admin()) {
            ZooKeeper z = zk();
            Map<String, TopicDescription> ds = a.describeTopics(names).allTopicNames().get(30, TimeUnit.SECONDS);
            List<ConfigResource> crs = new ArrayList<>();
            for (String t : names) crs.add(new ConfigResource(ConfigResource.Type.TOPIC, t));
            Map<ConfigResource, Config> cfgs = a.describeConfigs(crs).all().get(30, TimeUnit.SECONDS);
            for (String t : names) {
                TopicPartition tp = new TopicPartition(t, 0);
                TopicPartitionInfo pi = ds.get(t).partitions().get(0);
                long hw = a.listOffsets(Collections.singletonMap(tp, OffsetSpec.latest())).partitionResult(tp).get().offset();
                long lso = a.listOffsets(Collections.singletonMap(tp, OffsetSpec.earliest())).partitionResult(tp).get().offset();
                StringJoiner jc2 = new StringJoiner(",", "{", "}");
                for (String k : new String[] {"message.format.version", "compression.type", "segment.bytes", "segment.index.bytes",
                        "index.interval.bytes", "message.timestamp.type", "cleanup.policy"}) {
                    ConfigEntry e = cfgs.get(new ConfigResource(ConfigResource.Type.TOPIC, t)).get(k);
                    jc2.add(q(k) + ":" + (e == null ? "null" : "{\"value\":" + q(e.value()) + ",\"source\":" + q(e.source().toString()) + "}"));
                }
                String st = zkData(z, "/brokers/topics/" + t + "/partitions/0/state");
                String zc = zkData(z, "/config/topics/" + t);
                j.add(q(t) + ":{\"leader\":" + (pi.leader() == null ? "null" : pi.leader().id()) + ",\"isr\":" + ids(pi.isr())
                        + ",\"replicas\":" + ids(pi.replicas()) + ",\"high_watermark\":" + hw + ",\"log_start_offset\":" + lso
                        + ",\"config\":" + jc2 + ",\"zk_partition_state\":" + (st == null ? "null" : st)
                        + ",\"zk_topic_config\":" + (zc == null ? "null" : zc) + "}");
            }
            z.close();
        }
        return j.toString();
    }
}
"""


if __name__ == "__main__":
    main(sys.argv[1:])
