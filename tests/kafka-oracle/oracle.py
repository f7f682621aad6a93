#!/usr/bin/env python3
"""Real Apache Kafka as the oracle for klf.

Starts real Kafka brokers (one KRaft controller, or three in a dynamic quorum
for scenario quorum, and three brokers, all on 127.0.0.1), puts them through the incidents klf analyses, and copies their log
directories into testdata/kafka/<scenario>/ together with what Kafka itself
reported: scenario.json (leaders, epochs, ISR, offsets, what producers were
told, the truncation the brokers logged), each node's own log (server.log,
machine names replaced) and kafka-dump-log golden output.

    python3 tests/kafka-oracle/oracle.py setup              # jars + driver
    python3 tests/kafka-oracle/oracle.py run [SCENARIO...]  # all when none given
    python3 tests/kafka-oracle/oracle.py run --out DIR e f  # somewhere else
    python3 tests/kafka-oracle/oracle.py golden SCENARIO_DIR...
    python3 tests/kafka-oracle/oracle.py validate DIR...
    python3 tests/kafka-oracle/oracle.py healthy DIR...     # healthy_nodes from scenario.json
    python3 tests/kafka-oracle/oracle.py live --klf PATH [--seconds N]  # klf on a live cluster

Every process the harness starts is stopped by process id when the scenario
ends, fails, or the harness is interrupted.
"""

import argparse
import atexit
import base64
import hashlib
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CACHE = os.path.join(HERE, ".cache")
# The release the harness runs: pom.xml's by default, `--kafka X` for another
# (its jars resolve into .cache/lib-X, the driver compiles into .cache/classes-X).
RELEASE = [None]
# `--mode zookeeper`: the brokers run in ZooKeeper mode (no KRaft controller,
# no metadata log) from the release pom-3.9.xml pins, with
# inter.broker.protocol.version IBP[0]; the client driver stays on pom.xml's
# release (a 4.x client talks to 3.x brokers).
MODE = ["kraft"]
ZK_IBP_DEFAULT = "2.6"
IBP = [ZK_IBP_DEFAULT]
WORK = os.path.join(HERE, ".work")
CONTROLLER_ID = 100
KLF = [None]  # a klf binary (run --klf): salvage is then checked by replaying it
BROKERS = (1, 2, 3)

# Small files so committed captures stay small: several segments per
# partition, indexes with entries. Kafka 4.x refuses segment.bytes below
# 1 MiB (KIP-1030); the topic-level internal.segment.bytes, which Kafka's own
# tests use, allows smaller segments.
SEGMENT_BYTES = 16384
INDEX_BYTES = 1024
INDEX_INTERVAL = 1024


def log(msg):
    print(f"[oracle {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def pom_version():
    pom = open(os.path.join(HERE, "pom.xml")).read()
    return re.search(r"<kafka.version>([^<]+)</kafka.version>", pom).group(1)


def zookeeper_mode():
    return MODE[0] == "zookeeper"


# ZooKeeper-mode releases the harness runs (--mode zookeeper --kafka X), each
# with the ZooKeeper its broker is built against (its published POM's
# dependency); pom-3.9.xml resolves them, 3.9.2 being its default.
ZK_RELEASES = {"3.9.2": "3.8.4", "2.8.2": "3.5.9"}


def zk_pom_version():
    """The ZooKeeper-mode release (--kafka, else pom-3.9.xml's) and its
    ZooKeeper."""
    if RELEASE[0]:
        return RELEASE[0], ZK_RELEASES[RELEASE[0]]
    pom = open(os.path.join(HERE, "pom-3.9.xml")).read()
    return (re.search(r"<kafka.version>([^<]+)</kafka.version>", pom).group(1),
            re.search(r"<zookeeper.version>([^<]+)</zookeeper.version>", pom).group(1))


def kafka_version():
    """The release the brokers run."""
    if zookeeper_mode():
        return zk_pom_version()[0]
    return RELEASE[0] or pom_version()


def client_version():
    """The release of the client driver (Admin, producers, consumers)."""
    return pom_version() if zookeeper_mode() else kafka_version()


def lib_dir():
    if zookeeper_mode():
        if kafka_version() == "3.9.2":
            return os.path.join(CACHE, "lib-3.9")   # pom-3.9.xml's output folder (legacy.py)
        return os.path.join(CACHE, f"lib-zk-{kafka_version()}")
    return os.path.join(CACHE, f"lib-{kafka_version()}")


def classes_dir():
    return os.path.join(CACHE, f"classes-{client_version()}")


def client_classpath():
    return os.path.join(CACHE, f"lib-{client_version()}") + "/*:" + classes_dir()


def release_tuple(v=None):
    return tuple(int(x) for x in re.findall(r"\d+", v or kafka_version())[:3])


def dump_class():
    """kafka-dump-log's main class: Scala in core up to 4.1, Java in
    kafka-tools from 4.2 on (read off the jars, not assumed)."""
    import zipfile
    lib = lib_dir() if os.path.isdir(lib_dir()) else dump_dir()
    for f in os.listdir(lib):
        if f.startswith("kafka-tools-") and f.endswith(".jar"):
            with zipfile.ZipFile(os.path.join(lib, f)) as z:
                if "org/apache/kafka/tools/DumpLogSegments.class" in z.namelist():
                    return "org.apache.kafka.tools.DumpLogSegments"
    return "kafka.tools.DumpLogSegments"


# ---------------------------------------------------------------- setup

def setup():
    """Resolves the Kafka jars from Maven Central and compiles the driver
    (in ZooKeeper mode: the 3.x broker and ZooKeeper jars of pom-3.9.xml,
    and the client release's jars for the driver)."""
    if zookeeper_mode() and kafka_version() != "3.9.2":
        lib = lib_dir()
        if not os.path.isdir(lib) or not any(f.startswith("kafka_2.13-") for f in os.listdir(lib)):
            log(f"resolving Kafka {kafka_version()} and ZooKeeper {zk_pom_version()[1]} jars with Maven")
            subprocess.run(["mvn", "-B", "-q", "-f", os.path.join(HERE, "pom-3.9.xml"),
                            "-Dmaven.repo.local=" + os.path.join(CACHE, "m2"),
                            "-Dkafka.version=" + kafka_version(),
                            "-Dzookeeper.version=" + zk_pom_version()[1],
                            "-Dlib.dir=" + lib, "dependency:copy-dependencies"], check=True)
    elif zookeeper_mode():
        sys.path.insert(0, HERE)
        import legacy
        legacy.setup()
    lib = os.path.join(CACHE, f"lib-{client_version()}")
    if not os.path.isdir(lib) or not all(any(f.startswith(p) for f in os.listdir(lib))
                                         for p in ("kafka_2.13-", "kafka-streams-")):
        log(f"resolving Kafka {client_version()} jars with Maven")
        subprocess.run(["mvn", "-B", "-q", "-f", os.path.join(HERE, "pom.xml"),
                        "-Dmaven.repo.local=" + os.path.join(CACHE, "m2"),
                        "-Dkafka.version=" + client_version(),
                        "dependency:copy-dependencies"], check=True)
    src = os.path.join(HERE, "Driver.java")
    classes = classes_dir()
    cls = os.path.join(classes, "Driver.class")
    if not os.path.exists(cls) or os.path.getmtime(cls) < os.path.getmtime(src):
        os.makedirs(classes, exist_ok=True)
        subprocess.run(["javac", "-d", classes, "-cp", lib + "/*", src], check=True)


def classpath():
    return lib_dir() + "/*"


def dump_dir():
    return os.path.join(CACHE, f"dump-{kafka_version()}")


def setup_dump_tool():
    """Resolves just the release's kafka-dump-log (pom-dump.xml): enough for
    golden files of a release whose brokers the harness does not run."""
    d = dump_dir()
    if os.path.isdir(lib_dir()) and any(f.startswith("kafka_2.13-") for f in os.listdir(lib_dir())):
        return
    if not os.path.isdir(d) or not any(f.startswith("kafka_2.13-") for f in os.listdir(d)):
        log(f"resolving kafka-dump-log {kafka_version()} with Maven")
        subprocess.run(["mvn", "-B", "-q", "-f", os.path.join(HERE, "pom-dump.xml"),
                        "-Dmaven.repo.local=" + os.path.join(CACHE, "m2"),
                        "-Dkafka.version=" + kafka_version(),
                        "dependency:copy-dependencies"], check=True)


def dump_classpath():
    """The jars kafka-dump-log runs from: the full set when the harness ran
    this release, else pom-dump.xml's."""
    if os.path.isdir(lib_dir()):
        return classpath()
    return dump_dir() + "/*"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- processes

PROCS = {}  # pid -> description, every JVM the harness started and has not reaped


def _kill_all():
    for pid in list(PROCS):
        try:
            os.kill(pid, signal.SIGCONT)
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        PROCS.pop(pid, None)


atexit.register(_kill_all)


def _on_signal(signum, _frame):
    _kill_all()
    sys.exit(128 + signum)


signal.signal(signal.SIGTERM, _on_signal)
signal.signal(signal.SIGINT, _on_signal)


class Node:
    def __init__(self, cluster, node_id, roles, log_dirs=1):
        self.cluster = cluster
        self.id = node_id
        self.roles = roles
        self.dir = os.path.join(cluster.dir, f"node-{node_id}")
        # log.dirs: one folder, or several (JBOD: d1, d2, ...); the first
        # also holds the metadata log (metadata.log.dir defaults to it)
        if log_dirs == 1:
            self.log_dirs = [os.path.join(self.dir, "data")]
        else:
            self.log_dirs = [os.path.join(self.dir, f"d{i}") for i in range(1, log_dirs + 1)]
        self.data = self.log_dirs[0]
        self.port = free_port()
        self.proc = None
        self.paused = False
        self.logfile = os.path.join(self.dir, "server.log")
        # where the log file stood when the node's folder was last captured
        # (capture_node): what it logged after is what it did after the capture
        self.capture_mark = None

    def write_config(self, extra):
        c = self.cluster
        if zookeeper_mode():
            lines = {
                "broker.id": self.id,
                "zookeeper.connect": f"127.0.0.1:{c.zk.port}",
                # a killed broker's ZooKeeper session (and with it its
                # registration and the controller's view of it) ends after
                # this, Kafka's default; a broker paused (SIGSTOP) for less
                # keeps its session, as a KRaft broker paused for less than
                # broker.session.timeout.ms (20 s here) stays registered
                "zookeeper.session.timeout.ms": 18000,
                "inter.broker.protocol.version": IBP[0],
                "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT",
                "controlled.shutdown.enable": "true",
            }
        else:
            lines = {
                "process.roles": self.roles,
                "node.id": self.id,
                **c.quorum_config(),
                "controller.listener.names": "CONTROLLER",
                "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            }
        lines.update({
            "log.dirs": ",".join(self.log_dirs),
            "num.partitions": 1,
            "auto.create.topics.enable": "false",
            "auto.leader.rebalance.enable": "false",
            "log.index.size.max.bytes": INDEX_BYTES,
            "log.index.interval.bytes": INDEX_INTERVAL,
            "replica.high.watermark.checkpoint.interval.ms": 200,
            "log.flush.offset.checkpoint.interval.ms": 1000,
            "log.flush.start.offset.checkpoint.interval.ms": 1000,
            "log.recovery.point.checkpoint.interval.ms": 1000,
            "log.retention.check.interval.ms": 5000,
            "group.initial.rebalance.delay.ms": 0,
            "offsets.topic.replication.factor": 3,
            "offsets.topic.num.partitions": 1,
            "transaction.state.log.replication.factor": 3,
            "transaction.state.log.min.isr": 1,
            "transaction.state.log.num.partitions": 1,
            "num.network.threads": 2,
            "num.io.threads": 2,
            "num.replica.fetchers": 1,
            "background.threads": 2,
            "log.cleaner.threads": 1,
            "log.cleaner.dedupe.buffer.size": 4194304,
            "log.cleaner.backoff.ms": 1000,
        })
        if not zookeeper_mode():
            lines["share.coordinator.state.topic.replication.factor"] = 1
            lines["share.coordinator.state.topic.num.partitions"] = 1
        if self.roles == "controller":
            lines["listeners"] = f"CONTROLLER://127.0.0.1:{self.port}"
            lines["broker.session.timeout.ms"] = 20000
        else:
            lines["listeners"] = f"PLAINTEXT://127.0.0.1:{self.port}"
            lines["advertised.listeners"] = f"PLAINTEXT://127.0.0.1:{self.port}"
            lines["inter.broker.listener.name"] = "PLAINTEXT"
            if not zookeeper_mode():
                lines["broker.heartbeat.interval.ms"] = 1000
        lines.update(extra)
        os.makedirs(self.dir, exist_ok=True)
        self.config = os.path.join(self.dir, "server.properties")
        self.properties = lines
        with open(self.config, "w") as f:
            for k, v in lines.items():
                f.write(f"{k}={v}\n")

    def format(self):
        if zookeeper_mode():
            return   # a ZooKeeper-mode broker writes meta.properties itself
        # a dynamic quorum (KIP-853): the first controller formats as a
        # one-voter quorum (--standalone, kraft.version 1), the others as
        # controllers outside it (--no-initial-controllers) that join it as
        # voters once running (add_voter)
        quorum = []
        if self.cluster.dynamic_quorum and self.roles == "controller":
            quorum = ["--standalone"] if self is self.cluster.controller else ["--no-initial-controllers"]
        subprocess.run(["java", "-Xmx256m", "-cp", classpath(),
                        f"-Dlog4j2.configurationFile={HERE}/log4j2.properties",
                        "kafka.tools.StorageTool", "format", "-t", self.cluster.cluster_id,
                        "-c", self.config, "--ignore-formatted"] + quorum,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def start(self):
        assert self.proc is None
        if zookeeper_mode():
            self.cluster.wait_unregistered(self.id)
        cp = classpath() + "".join(f":{d}/*" for d in self.cluster.extra_classpath)
        out = open(self.logfile, "a")
        cmd = ["java", "-Xmx384m", "-Xms64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
               "-Djava.awt.headless=true",
               f"-Dlog4j2.configurationFile={HERE}/log4j2.properties",
               f"-Dlog4j.configuration=file:{HERE}/log4j-broker.properties",
               "-Djava.rmi.server.hostname=127.0.0.1",
               "-cp", cp, "kafka.Kafka", self.config]
        self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        PROCS[self.proc.pid] = f"node {self.id}"
        self.log_mark = os.path.getsize(self.logfile) if os.path.exists(self.logfile) else 0
        log(f"node {self.id} started, pid {self.proc.pid}, port {self.port}")

    def wait_port(self, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"node {self.id} exited with {self.proc.returncode}; see {self.logfile}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"node {self.id} did not open port {self.port}")

    def _reap(self):
        self.paused = False
        PROCS.pop(self.proc.pid, None)
        self.proc = None

    def stop(self, timeout=60):
        """Clean shutdown (SIGTERM: controlled shutdown, logs closed and trimmed)."""
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGCONT)
        self.proc.terminate()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        log(f"node {self.id} stopped")
        self._reap()

    def kill9(self):
        if self.proc is None:
            return
        self.proc.kill()
        self.proc.wait()
        log(f"node {self.id} killed (SIGKILL)")
        self._reap()

    def pause(self):
        self.proc.send_signal(signal.SIGSTOP)
        self.paused = True
        log(f"node {self.id} paused (SIGSTOP)")

    def resume(self):
        self.proc.send_signal(signal.SIGCONT)
        self.paused = False
        log(f"node {self.id} resumed (SIGCONT)")

    def log_text(self, since_start=False):
        with open(self.logfile, errors="replace") as f:
            if since_start:
                f.seek(self.log_mark)
            return f.read()


class ZooKeeper:
    """One ZooKeeper server (the release's own, from pom-3.9.xml) for a
    ZooKeeper-mode cluster, on 127.0.0.1, stopped by process id."""

    def __init__(self, cluster):
        self.dir = os.path.join(cluster.dir, "zookeeper")
        self.port = free_port()
        self.proc = None
        self.logfile = os.path.join(cluster.dir, "zookeeper.log")

    def start(self):
        os.makedirs(os.path.join(self.dir, "data"), exist_ok=True)
        cfg = os.path.join(self.dir, "zoo.cfg")
        with open(cfg, "w") as f:
            f.write(f"tickTime=500\ninitLimit=10\nsyncLimit=5\ndataDir={self.dir}/data\n"
                    f"clientPort={self.port}\nclientPortAddress=127.0.0.1\n"
                    "maxClientCnxns=60\nadmin.enableServer=false\n4lw.commands.whitelist=\n"
                    # the default maximum (20 ticks, 10 s) would cap the brokers' 18 s
                    "maxSessionTimeout=40000\n")
        cmd = ["java", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
               f"-Dlog4j.configuration=file:{HERE}/log4j-broker.properties",
               "-Dzookeeper.admin.enableServer=false",
               "-cp", classpath(), "org.apache.zookeeper.server.ZooKeeperServerMain", cfg]
        self.proc = subprocess.Popen(cmd, stdout=open(self.logfile, "a"), stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        PROCS[self.proc.pid] = "zookeeper"
        log(f"zookeeper {zk_pom_version()[1]} started, pid {self.proc.pid}, port {self.port}")
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"zookeeper exited with {self.proc.returncode}; see {self.logfile}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"zookeeper did not open port {self.port}")

    def stop(self):
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        PROCS.pop(self.proc.pid, None)
        self.proc = None
        log("zookeeper stopped")


class Cluster:
    def __init__(self, name, broker_extra=None, controller_extra=None, extra_classpath=(), log_dirs=1,
                 controllers=(CONTROLLER_ID,), dynamic_quorum=False):
        """controllers: the KRaft controllers' node ids, the first being
        `controller`; by default one, node 100, the only voter of a static
        quorum (controller.quorum.voters). dynamic_quorum: a KIP-853 quorum
        (controller.quorum.bootstrap.servers) that the first controller
        forms alone (format --standalone); the others start outside it and
        the scenario adds them (add_voter)."""
        self.name = name
        self.extra_classpath = list(extra_classpath)
        self.dir = os.path.join(WORK, name)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        # a cluster id is a base64 UUID; one starting with '-' would read as a flag
        self.cluster_id = "-"
        while self.cluster_id.startswith("-"):
            self.cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if zookeeper_mode():
            # no KRaft controller: ZooKeeper, and one of the brokers is the controller
            self.zk = ZooKeeper(self)
            self.controller = None
            self.controllers = {}
            self.dynamic_quorum = False
        else:
            self.zk = None
            self.dynamic_quorum = dynamic_quorum
            self.controllers = {i: Node(self, i, "controller") for i in controllers}
            self.controller = self.controllers[controllers[0]]
            self.controller_port = self.controller.port
            # every controller's port is known before any configuration names them
            for n in self.controllers.values():
                n.write_config(controller_extra or {})
        self.brokers = {i: Node(self, i, "broker", log_dirs=log_dirs) for i in BROKERS}
        for b in self.brokers.values():
            b.write_config(broker_extra or {})

    def quorum_config(self):
        """How a KRaft node finds the controllers: the static voters
        (controller.quorum.voters, id@host:port each), or for a dynamic
        quorum the controllers to bootstrap from
        (controller.quorum.bootstrap.servers)."""
        if self.dynamic_quorum:
            return {"controller.quorum.bootstrap.servers":
                    ",".join(f"127.0.0.1:{n.port}" for n in self.controllers.values())}
        return {"controller.quorum.voters":
                ",".join(f"{i}@127.0.0.1:{n.port}" for i, n in self.controllers.items())}

    @property
    def bootstrap_controllers(self):
        """The running controllers (Admin bootstrap.controllers)."""
        return ",".join(f"127.0.0.1:{n.port}" for n in self.controllers.values()
                        if n.proc is not None and not n.paused)

    def broker_config(self):
        """The brokers' settings as scenario.json keeps them: what every
        broker shares, without ports and paths."""
        skip = {"listeners", "advertised.listeners", "log.dirs", "zookeeper.connect",
                "controller.quorum.voters", "controller.quorum.bootstrap.servers", "node.id", "broker.id"}
        # a path in the cluster's folder is kept relative to it (<cluster>/...)
        return {k: (v.replace(self.dir, "<cluster>") if isinstance(v, str) else v)
                for k, v in self.brokers[BROKERS[0]].properties.items() if k not in skip}

    def wait_unregistered(self, node_id):
        """A ZooKeeper-mode broker cannot register again while its previous
        session's registration stands (it expires zookeeper.session.timeout.ms
        after a kill): wait until the live brokers no longer list it."""
        live = [b for b in self.brokers.values() if b.proc is not None and not b.paused and b.id != node_id]
        if not live:
            return
        def gone():
            r = self.driver("nodes", check=False)
            return r is not None and node_id not in r["nodes"]
        self.wait_until(f"broker {node_id}'s old ZooKeeper registration to expire", gone, timeout=60)

    @property
    def bootstrap(self):
        return ",".join(f"127.0.0.1:{b.port}" for b in self.brokers.values()
                        if b.proc is not None and not b.paused)

    def start(self):
        if self.zk is not None:
            self.zk.start()
        else:
            for n in [*self.controllers.values(), *self.brokers.values()]:
                n.format()
            for n in self.controllers.values():
                n.start()
            for n in self.controllers.values():
                n.wait_port()
        for b in self.brokers.values():
            b.start()
        for b in self.brokers.values():
            b.wait_port()
        self.driver("ready", brokers=len(self.brokers), timeout_ms=90000)
        log(f"cluster {self.name} ready")

    def stop_all(self):
        for n in [*self.brokers.values(), *self.controllers.values()]:
            if n.proc is not None:
                n.kill9() if n.roles != "controller" else n.stop()
        if self.zk is not None:
            self.zk.stop()

    def driver(self, cmd, check=True, **kw):
        args = ["java", "-Xmx128m", "-XX:TieredStopAtLevel=1",
                f"-Dlog4j2.configurationFile={HERE}/log4j2-client.properties",
                "-cp", client_classpath(), "Driver", cmd]
        kw.setdefault("bootstrap", self.bootstrap)
        args += [f"{k}={v}" for k, v in kw.items()]
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode != 0:
            if check:
                raise RuntimeError(f"driver {cmd} failed: {r.stderr[-2000:]}")
            return None
        return json.loads(r.stdout.strip().splitlines()[-1])

    def driver_bg(self, cmd, **kw):
        args = ["java", "-Xmx128m", "-XX:TieredStopAtLevel=1",
                f"-Dlog4j2.configurationFile={HERE}/log4j2-client.properties",
                "-cp", client_classpath(), "Driver", cmd]
        kw.setdefault("bootstrap", self.bootstrap)
        args += [f"{k}={v}" for k, v in kw.items()]
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        PROCS[p.pid] = f"driver {cmd}"
        return p

    def produce_armed(self, **kw):
        """A producer that has connected and waits for go() before sending."""
        args = ["java", "-Xmx128m", "-XX:TieredStopAtLevel=1",
                f"-Dlog4j2.configurationFile={HERE}/log4j2-client.properties",
                "-cp", client_classpath(), "Driver", "produce", "wait_stdin=true"]
        kw.setdefault("bootstrap", self.bootstrap)
        args += [f"{k}={v}" for k, v in kw.items()]
        p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        PROCS[p.pid] = "driver produce"
        line = p.stdout.readline()
        if '"ready"' not in line:
            p.kill()
            _, err = p.communicate()
            PROCS.pop(p.pid, None)
            raise RuntimeError(f"armed producer failed: {line} {err[-2000:]}")
        cluster = self

        class Armed:
            def release(self):
                """Lets it send, without waiting for what it was told."""
                p.stdin.write("go\n")
                p.stdin.flush()

            def result(self, timeout=120):
                """What it was told, once it has finished (after release)."""
                return cluster.wait_bg(p, timeout)

            def go(self, timeout=120):
                self.release()
                return self.result(timeout)
        return Armed()

    def driver_held(self, cmd, timeout=120, **kw):
        """A driver command that stops at each {"ready": ...} line it prints
        and goes on when told: returns (first ready line, Held). Held.go()
        releases it and returns its next line (the next ready line, or the
        command's result once it ends)."""
        args = ["java", "-Xmx128m", "-XX:TieredStopAtLevel=1",
                f"-Dlog4j2.configurationFile={HERE}/log4j2-client.properties",
                "-cp", client_classpath(), "Driver", cmd]
        kw.setdefault("bootstrap", self.bootstrap)
        args += [f"{k}={v}" for k, v in kw.items()]
        p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        PROCS[p.pid] = f"driver {cmd}"

        def line():
            out = p.stdout.readline()
            if not out:
                try:
                    _, err = p.communicate(timeout=timeout)
                except subprocess.TimeoutExpired:
                    p.kill()
                    _, err = p.communicate()
                PROCS.pop(p.pid, None)
                raise RuntimeError(f"driver {cmd} ended: {err[-2000:]}")
            r = json.loads(out)
            if not r.get("ready"):
                p.wait(timeout)
                PROCS.pop(p.pid, None)
            return r

        class Held:
            def go(self):
                p.stdin.write("go\n")
                p.stdin.flush()
                return line()
        return line(), Held()

    def wait_bg(self, p, timeout=120):
        out, err = p.communicate(timeout=timeout)
        PROCS.pop(p.pid, None)
        if p.returncode != 0:
            raise RuntimeError(f"background driver failed: {err[-2000:]}")
        return json.loads(out.strip().splitlines()[-1])

    def log_bytes(self, node, topic, partition=0):
        """Bytes in the replica's .log files (a wait condition, not a fact)."""
        d = partition_dir(self.brokers[node].log_dirs, topic, partition)
        try:
            return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d) if f.endswith(".log"))
        except OSError:
            return 0

    def describe(self, topic, partition=0):
        for p in self.driver("describe", topic=topic)["partitions"]:
            if p["partition"] == partition:
                return p
        raise RuntimeError(f"no partition {partition} in {topic}")

    def wait_until(self, what, pred, timeout=60, interval=0.5):
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            try:
                last = pred()
                if last:
                    return last
            except RuntimeError as e:
                last = e
            time.sleep(interval)
        raise RuntimeError(f"timed out waiting for {what}: {last}")

    def wait_leader(self, topic, leader, partition=0, isr=None):
        def ok():
            d = self.describe(topic, partition)
            if d["leader"] == leader and (isr is None or sorted(d["isr"]) == sorted(isr)):
                return d
            return None
        return self.wait_until(f"{topic}-{partition} leader {leader} isr {isr}", ok, timeout=90)

    def leader_epoch(self, topic, partition, node):
        """The leader epoch the broker itself logged when it last became leader."""
        # 3.x/4.x: "Leader T-P with topic id ID starts at leader epoch E from
        # offset O with partition epoch PE, high watermark HW"; 2.8 (and a
        # topic without an id): "Leader T-P starts at leader epoch E from
        # offset O with high watermark HW"
        pat = re.compile(r"Leader " + re.escape(f"{topic}-{partition}") +
                         r"(?: with topic id \S+)? starts at leader epoch (\d+) from offset (\d+) with "
                         r"(?:partition epoch (\d+), )?high watermark (\d+)")
        m = pat.findall(self.brokers[node].log_text())
        if not m:
            return None
        e, off, pe, hw = m[-1]
        return {"leader_epoch": int(e), "start_offset": int(off),
                "partition_epoch": int(pe) if pe else None, "high_watermark": int(hw)}

    def truncations(self, node, topic, partition=0, since_start=True):
        """Truncation lines the broker logged for the partition since it last started."""
        return [t for _, t in truncation_lines(self.brokers[node].log_text(since_start=since_start),
                                               topic, partition)]

    def loaded_state(self, node, topic, partition=0):
        """LEO / log start the broker reported when it loaded the log on its last start."""
        text = self.brokers[node].log_text(since_start=True)
        tp = re.escape(f"{topic}-{partition}")
        m2 = re.findall(r"Completed load of Log\(dir=[^)]*" + tp + r", [^)]*highWatermark=(\d+)[^)]*\) with (\d+) segments, local-log-start-offset (\d+) and log-end-offset (\d+)", text)
        if m2:
            hw, segs, start, leo = m2[-1]
            return {"segments": int(segs), "log_start_offset": int(start), "log_end_offset": int(leo),
                    "high_watermark": int(hw)}
        # 2.8: "Completed load of Log(dir=D/T-P, topic=T, partition=P,
        # highWatermark=HW, lastStableOffset=L, logStartOffset=S,
        # logEndOffset=E) with N segments in Xms"
        m3 = re.findall(r"Completed load of Log\(dir=[^,]*/" + tp + r", [^)]*highWatermark=(\d+), [^)]*"
                        r"logStartOffset=(\d+), logEndOffset=(\d+)\) with (\d+) segments", text)
        if m3:
            hw, start, leo, segs = m3[-1]
            return {"segments": int(segs), "log_start_offset": int(start), "log_end_offset": int(leo),
                    "high_watermark": int(hw)}
        return None


def truncation_lines(text, topic, partition):
    """The truncations a broker's log text records for a partition, each as
    (where its line starts in text, {offset, completed, reason}): Kafka's
    "Truncating partition T-P with TruncationState(offset=N, ...) due to ..."
    lines first, then the log's own "Truncating to offset N" (UnifiedLog from
    3.0, Log in 2.8) and "Truncating to N has no effect", each kind in the
    order logged."""
    tp = re.escape(f"{topic}-{partition}")
    out = []
    for m in re.finditer(r"Truncating partition " + tp + r" with TruncationState\(offset=(\d+), completed=(\w+)\) due to (.*?) \(", text):
        out.append((m.start(), {"offset": int(m.group(1)), "completed": m.group(2) == "true", "reason": m.group(3)}))
    for m in re.finditer(r"\[(?:Unified)?Log partition=" + tp + r", dir=[^\]]*\] Truncating to offset (\d+)", text):
        out.append((m.start(), {"offset": int(m.group(1)), "completed": True, "reason": "UnifiedLog.truncateTo"}))
    for m in re.finditer(r"\[(?:Unified)?Log partition=" + tp + r", dir=[^\]]*\] Truncating to (\d+) has no effect", text):
        out.append((m.start(), {"offset": int(m.group(1)), "completed": True, "reason": "no effect"}))
    return out


# ---------------------------------------------------------------- capture

OMITTED = []  # files left out of a capture, recorded in scenario.json


def copy_dir(src, dst):
    """An exact copy of a broker's log directory, but for two things: the
    empty `.lock` file, and the preallocated offset and time index of the
    active `__cluster_metadata-0` segment. Kafka sizes those at its fixed
    10 MiB default (the KRaft log ignores log.index.size.max.bytes), which
    would make every capture tens of MiB of zeros. Kafka rebuilds a missing
    index itself; each omission is listed in scenario.json. A checkpoint's
    temporary file (`*.tmp`, written and renamed over the checkpoint) that
    Kafka renames between the listing and the copy was not there to copy:
    the copy holds the checkpoint as it was or as it became."""
    shutil.rmtree(dst, ignore_errors=True)

    def copy_file(s, d):
        try:
            return shutil.copy2(s, d)
        except FileNotFoundError:
            if not s.endswith(".tmp"):
                raise
            return d

    def ignore(d, names):
        out = {".lock"} & set(names)
        if os.path.basename(d) == "__cluster_metadata-0":
            for n in names:
                if n.endswith((".index", ".timeindex")) and os.path.getsize(os.path.join(d, n)) >= 1 << 20:
                    out.add(n)
                    # the path in the copy (d is a folder of the source)
                    path = os.path.join(dst, os.path.relpath(d, src), n)
                    OMITTED.append({"path": os.path.relpath(path, CAPTURE_ROOT[0]),
                                    "size": os.path.getsize(os.path.join(d, n)),
                                    "reason": "preallocated index of the active metadata-log segment"})
        return out
    shutil.copytree(src, dst, symlinks=True, ignore=ignore, copy_function=copy_file)


CAPTURE_ROOT = [REPO]


def capture_node(node, dst):
    """Copies a node's log directories (the log.dirs of the configuration
    it runs with) into its capture folder `dst`: a node with one log
    directory is that folder itself (broker-1/); a node with several (JBOD)
    gets one folder in it per log directory, named as the log directory is
    (broker-1/d1, broker-1/d2), each a Kafka log directory with its own
    meta.properties. A capture's own node folder (not after/'s) marks where
    the node's log file stands (capture_mark): what the node logs after it,
    it logged after the capture (truncations_after_capture)."""
    if os.path.dirname(os.path.abspath(dst)) == os.path.abspath(CAPTURE_ROOT[0]) and os.path.exists(node.logfile):
        node.capture_mark = os.path.getsize(node.logfile)
    dirs = [d.strip() for d in str(node.properties["log.dirs"]).split(",") if d.strip()]
    if len(dirs) == 1:
        copy_dir(dirs[0], dst)
        return
    names = [os.path.basename(d) for d in dirs]
    if len(set(names)) != len(names):
        raise RuntimeError(f"node {node.id}: log directories with the same name: {dirs}")
    shutil.rmtree(dst, ignore_errors=True)
    for d, name in zip(dirs, names):
        copy_dir(d, os.path.join(dst, name))


def capture(cluster, out_dir, nodes=BROKERS, sub=""):
    for n in nodes:
        capture_node(cluster.brokers[n], os.path.join(out_dir, sub, f"broker-{n}"))
    log(f"captured {', '.join(map(str, nodes))} into {os.path.join(out_dir, sub) or out_dir}")


def node_log_dirs(node_dir):
    """A node's log directories: a list of them as it is (a live node's
    log_dirs); a captured node folder (broker-<id>/) is one log directory
    (it holds meta.properties) or, for a node with several (capture_node),
    a folder of them, each with its own meta.properties."""
    if isinstance(node_dir, (list, tuple)):
        return list(node_dir)
    if os.path.exists(os.path.join(node_dir, "meta.properties")) or not os.path.isdir(node_dir):
        return [node_dir]
    subs = sorted(os.path.join(node_dir, n) for n in os.listdir(node_dir)
                  if os.path.isfile(os.path.join(node_dir, n, "meta.properties")))
    return subs or [node_dir]


def partition_dir(node_dir, topic, partition):
    """A replica's partition folder in a node's log directories
    (node_log_dirs): in the one holding it, or where none does, the path it
    would have in the first."""
    dirs = node_log_dirs(node_dir)
    name = f"{topic}-{partition}"
    for d in dirs:
        if os.path.isdir(os.path.join(d, name)):
            return os.path.join(d, name)
    return os.path.join(dirs[0], name)


def leo_by_kafka_dump(broker_dir, topic, partition):
    """A captured replica's log end offset as Kafka's own kafka-dump-log reads
    it: one past the lastOffset of the last batch, or the base offset of an
    empty last segment. Runs on a scratch copy of the segment."""
    pdir = partition_dir(broker_dir, topic, partition)
    try:
        logs = sorted(f for f in os.listdir(pdir) if re.fullmatch(r"\d{20}\.log", f))
    except OSError:
        return None
    if not logs:
        return None
    scratch = os.path.join(WORK, "leo-scratch")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    try:
        last_base = int(logs[-1][:-4])
        for name in reversed(logs):
            dst = os.path.join(scratch, name)
            shutil.copyfile(os.path.join(pdir, name), dst)
            r = subprocess.run(["java", "-Xmx256m", "-XX:TieredStopAtLevel=1",
                                f"-Dlog4j2.configurationFile={HERE}/log4j2-client.properties",
                                "-cp", classpath(), dump_class(), "--files", dst],
                               capture_output=True, text=True)
            last = re.findall(r"lastOffset: (-?\d+)", r.stdout)
            if last:
                return max(int(last[-1]) + 1, last_base)
        return last_base
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def replica_state(cluster, topic, partition, leader, nodes):
    """The leader's high watermark and last stable offset from ListOffsets.
    Log end offsets come from kafka-dump-log on the capture (write_scenario)
    and followers' high watermarks from the broker's own
    replication-offset-checkpoint (written every 200 ms)."""
    state = {str(n): {} for n in nodes}
    if leader is not None and cluster.brokers[leader].proc is not None:
        o = cluster.driver("offsets", topic=topic, partition=partition)
        state[str(leader)]["high_watermark"] = o["high_watermark"]
        state[str(leader)]["last_stable_offset"] = o["last_stable_offset"]
    return state


def hw_from_checkpoint(broker_dir, topic, partition):
    """The partition's high watermark in the replication-offset-checkpoint
    of the node's log directory that lists it (node_log_dirs: each log
    directory checkpoints its own partitions)."""
    for d in node_log_dirs(broker_dir):
        p = os.path.join(d, "replication-offset-checkpoint")
        try:
            lines = open(p).read().splitlines()
        except OSError:
            continue
        for line in lines[2:]:
            f = line.split()
            if len(f) == 3 and f[0] == topic and int(f[1]) == partition:
                return int(f[2])
    return None


def runs(ids):
    """Inclusive runs [[a, b], ...] of a set of numbers."""
    out = []
    for x in sorted(ids):
        if out and x == out[-1][1] + 1:
            out[-1][1] = x
        else:
            out.append([x, x])
    return out


def from_runs(rs):
    return {x for a, b in rs for x in range(a, b + 1)}


RECORD_LINE = re.compile(r"^\| offset: (\d+) .*? key: (.*?) payload: (.*)$")


def dump_records(pdir):
    """The data records of a captured partition directory as Kafka's own
    kafka-dump-log (--deep-iteration --print-data-log) prints them:
    {offset: (key, payload)}, control batches left out."""
    try:
        logs = sorted(f for f in os.listdir(pdir) if re.fullmatch(r"\d{20}\.log", f))
    except OSError:
        return None
    if not logs:
        return {}
    scratch = os.path.join(WORK, "records-scratch")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    try:
        files = []
        for name in logs:
            shutil.copyfile(os.path.join(pdir, name), os.path.join(scratch, name))
            files.append(os.path.join(scratch, name))
        r = subprocess.run(["java", "-Xmx256m", "-XX:TieredStopAtLevel=1",
                            f"-Dlog4j2.configurationFile={HERE}/log4j2-client.properties",
                            "-cp", classpath(), dump_class(), "--deep-iteration",
                            "--print-data-log", "--files", ",".join(files)],
                           capture_output=True, text=True)
        out, control = {}, False
        for line in r.stdout.splitlines():
            if line.startswith("baseOffset:"):
                control = "isControl: true" in line
            elif line.startswith("| offset:") and not control:
                m = RECORD_LINE.match(line)
                if m:
                    out[int(m.group(1))] = (m.group(2), m.group(3))
        return out
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def record_id(kp):
    """A record's identity: N of a key key-N (the harness's producers number
    every record), else its key and payload."""
    m = re.fullmatch(r"key-(\d+)", kp[0])
    return int(m.group(1)) if m else kp


def loss_truth(out, p):
    """What Kafka lost, from what Kafka itself wrote and printed: the data
    records on any captured replica (kafka-dump-log on broker-*/) that the
    recovered partition no longer has (read back by a consumer after
    recovery, `after_recovery`, or else kafka-dump-log on the leader's
    after/ copy, taken once every replica was in sync); and of those, the
    records acknowledged to acks=all producers (their record numbers as the
    producer reported them, or the phase's offsets on the acking leader's
    captured log)."""
    topic, part = p["topic"], p["partition"]
    before = {}
    for n in p["replicas"]:
        recs = dump_records(partition_dir(os.path.join(out, f"broker-{n}"), topic, part))
        if recs is not None:
            before[n] = recs
    captured = {record_id(kp) for recs in before.values() for kp in recs.values()}
    if "after_recovery" in p:
        survived = from_runs(p["after_recovery"]["ids"])
        method = "consumer read after recovery"
    else:
        leader = p.get("leader_after_restart") or p["leader_at_capture"]
        recs = dump_records(partition_dir(os.path.join(out, "after", f"broker-{leader}"), topic, part))
        if recs is None:
            return None
        survived = {record_id(kp) for kp in recs.values()}
        method = "kafka-dump-log on after/"
    if "after_recovery" in p:
        # The reader names only records keyed key-N; of the others it gives
        # the count. They survived when it read at least as many of them as
        # the capture holds distinct ones; else the shortfall is lost.
        others = {x for x in captured if not isinstance(x, int)}
        read_others = p["after_recovery"].get("other", 0)
        if read_others >= len(others):
            survived |= others
            others_lost = 0
        else:
            others_lost = len(others) - read_others
        captured = {x for x in captured if isinstance(x, int)}
    else:
        others_lost = 0
    lost = captured - survived
    acked = set()
    for name, ph in (p.get("acked_by_phase") or {}).items():
        if ph.get("acks") not in ("all", "-1") or not ph.get("acked"):
            continue
        if "acked_ids" in ph:
            acked |= from_runs(ph["acked_ids"])
        else:
            recs = before.get(ph["leader"], {})
            for o in range(ph["min_offset"], ph["max_offset"] + 1):
                if o not in recs:
                    raise RuntimeError(f"{topic}-{part}: acked offset {o} of phase {name} not on broker {ph['leader']}")
                acked.add(record_id(recs[o]))
    acked_lost = acked & lost
    return {"records_lost": len(lost) + others_lost, "acked_all_lost": len(acked_lost),
            "lost_ids": runs(x for x in lost if isinstance(x, int)),
            "acked_all_lost_ids": runs(x for x in acked_lost if isinstance(x, int)),
            "survived_from": method,
            "source": "kafka-dump-log --deep-iteration --print-data-log on broker-*/, record numbers from the producers"}


def add_truth(d):
    """Adds loss_truth to every partition of a capture whose scenario.json
    records a recovery (kafka_truncation), in place."""
    sj = os.path.join(d, "scenario.json")
    facts = json.load(open(sj))
    changed = False
    for p in facts.get("partitions", []):
        if "kafka_truncation" not in p:
            continue
        t = loss_truth(d, p)
        if t is not None:
            p["loss_truth"] = t
            changed = True
            log(f"{os.path.basename(d)} {p['topic']}-{p['partition']}: {t['records_lost']} records lost, "
                f"{t['acked_all_lost']} of them acknowledged (acks=all)")
    if changed:
        with open(sj, "w") as f:
            json.dump(facts, f, indent=2, sort_keys=True)
            f.write("\n")


# ---------------------------------------------------------------- node logs

# Each node's own log (its stdout: log4j's `[%d] %p %m (%c)` lines, see
# log4j2.properties / log4j-broker.properties) is copied whole into the
# capture when the scenario ends: it spans the incident, the capture and the
# restart after it in which brokers truncate, so klf can set the
# truncations Kafka logged beside the ones it predicts from the bytes.
NODE_LOG = "server.log"
NODE_LOG_NAMES = (NODE_LOG, NODE_LOG + ".gz")

# What stands in the copied text for the names of the machine that ran it.
NEUTRAL_WORK = "/var/lib/kafka"       # the scenario's work folder, .work/<scenario>
NEUTRAL_REPO = "/opt/klf"             # the repository
NEUTRAL_HOME = "/home/kafka"          # the user's home directory
NEUTRAL_JDK = "/usr/lib/jvm/java"     # the JDK's home (java.home)
NEUTRAL_HOST = "kafka-host"           # the host name, and its FQDN
NEUTRAL_USER = "kafka"                # the user name (user.name=)


def jdk_home():
    """The home of the JDK the harness runs (`java` on the PATH, links
    resolved): its bin/java's grandparent."""
    java = shutil.which("java")
    if not java:
        return None
    home = os.path.dirname(os.path.dirname(os.path.realpath(java)))
    # a JDK 8 layout keeps the JVM in jre/
    return os.path.dirname(home) if os.path.basename(home) == "jre" else home


def machine_names(work_dir):
    """(path substitutions, host names, user name) that name the machine a
    node log was written on: each path with the neutral root it becomes
    and what it stands for, longest first (a work folder inside the
    repository inside the home directory goes to the most specific root)."""
    paths = []

    def add(path, neutral, what):
        if not path:
            return
        for p in {os.path.abspath(path), os.path.realpath(path)}:
            if p not in ("/", neutral) and not any(p == q for q, _, _ in paths):
                paths.append((p, neutral, what))
    add(work_dir, NEUTRAL_WORK, "the scenario's work folder (tests/kafka-oracle/.work/<scenario>)")
    add(REPO, NEUTRAL_REPO, "the repository")
    add(os.path.expanduser("~"), NEUTRAL_HOME, "the home directory of the user who ran the harness")
    add(jdk_home(), NEUTRAL_JDK, "the home of the JDK (java.home)")
    paths.sort(key=lambda x: -len(x[0]))
    hosts = []
    for h in (socket.gethostname(), socket.getfqdn()):
        if h and h not in hosts and h not in ("localhost", "localhost.localdomain") and not h.startswith("127."):
            hosts.append(h)
    hosts.sort(key=lambda h: -len(h))
    try:
        import pwd
        user = pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):
        user = os.environ.get("USER")
    return paths, hosts, user


def path_pattern(path):
    """A path as a prefix of paths: not inside a longer name (`/root` is not
    in `/rootfs` or `/root.d`; a sentence's full stop may follow it)."""
    return re.escape(path) + r"(?![\w+-]|\.[\w.])"


def host_pattern(host):
    """A host name as a whole name: not part of another word, path or
    dotted name (a logger's `vm.x`)."""
    return r"(?<![\w./-])" + re.escape(host) + r"(?![\w/-]|\.\w)"


def sanitise_log(text, work_dir):
    """A node log's text with the names of the machine that wrote it
    replaced by neutral ones (machine_names): the scenario's work folder by
    /var/lib/kafka, the repository by /opt/klf, the home directory by
    /home/kafka, the JDK's home by /usr/lib/jvm/java (each as a path
    prefix: `/root` is not replaced in `/rootfs`), the host name and its
    FQDN by kafka-host (as a whole name, not inside another word or a
    dotted name such as a logger's), and the user name after `user.name=`
    by kafka. Nothing else changes: every line stays, in its order, so
    line numbers are Kafka's own. Returns (text, {neutral name: {for,
    occurrences}}) for those that occurred."""
    paths, hosts, user = machine_names(work_dir)
    used = {}

    def count(neutral, what, n):
        if n:
            e = used.setdefault(neutral, {"for": what, "occurrences": 0})
            e["occurrences"] += n
    lines = text.count("\n")
    for path, neutral, what in paths:
        text, n = re.subn(path_pattern(path), neutral, text)
        count(neutral, what, n)
    for h in hosts:
        text, n = re.subn(host_pattern(h), NEUTRAL_HOST, text)
        count(NEUTRAL_HOST, "the host name (socket.gethostname() and its FQDN)", n)
    if user and user != NEUTRAL_USER:
        text, n = re.subn(r"(?<=\buser\.name=)" + re.escape(user) + r"(?![\w.-])", NEUTRAL_USER, text)
        count(NEUTRAL_USER, "the user name (user.name=)", n)
    if text.count("\n") != lines:
        raise RuntimeError("sanitising a node log changed its line count")
    left = [p for p, _, _ in paths if re.search(path_pattern(p), text)]
    if left:
        raise RuntimeError(f"a node log still names {left}")
    return text, used


# Absolute paths a sanitised log may hold: the neutral roots and the
# system's own, which name no particular machine (java.io.tmpdir /tmp,
# kinit, the JDK's library path).
GENERIC_ROOTS = (NEUTRAL_WORK, NEUTRAL_REPO, NEUTRAL_HOME, NEUTRAL_JDK, "/tmp", "/usr", "/lib", "/lib64",
                 "/dev", "/proc", "/sys", "/etc", "/bin", "/sbin")
# ZooKeeper's paths (znodes) a ZooKeeper-mode broker logs: no files
ZNODE_ROOTS = ("/brokers", "/config", "/controller", "/controller_epoch", "/feature", "/admin",
               "/isr_change_notification", "/log_dir_event_notification", "/latest_producer_id_block",
               "/cluster", "/consumers")
# (a path's first name starts with a letter: `/127.0.0.1:9092` is an address)
ABSOLUTE_PATH = re.compile(r"(?<![\w.:/-])(/[A-Za-z_][\w.+-]*(?:/[\w.+-]*)*)")


def other_paths(text):
    """The absolute paths of a sanitised log outside GENERIC_ROOTS, each
    with its count: what may still name the machine (the harness logs them;
    a person decides)."""
    out = {}
    for m in ABSOLUTE_PATH.finditer(text):
        p = m.group(1)
        if p == "/" or any(p == r or p.startswith(r + "/") for r in GENERIC_ROOTS + ZNODE_ROOTS):
            continue
        out[p] = out.get(p, 0) + 1
    return out


def write_node_log(text, dst_dir, compressed):
    """Writes a sanitised node log into dst_dir and returns its file name.
    A fresh run (`run --no-golden`, as CI makes its captures) writes it as
    it is, `server.log`, to be read beside the data it was written with. A
    run that makes goldens makes captures to commit under testdata/, where
    a broker's log of a few minutes (thousands of lines, mostly the same
    config dumps and metadata lines) would outweigh its log directory:
    there it is `server.log.gz`, gzip with the mtime field 0 and no file
    name in the header, so the same text always gives the same bytes."""
    os.makedirs(dst_dir, exist_ok=True)
    data = text.encode("utf-8", errors="surrogateescape")
    if not compressed:
        name = NODE_LOG
        with open(os.path.join(dst_dir, name), "wb") as f:
            f.write(data)
        return name
    import gzip
    name = NODE_LOG + ".gz"
    with open(os.path.join(dst_dir, name), "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as gz:
            gz.write(data)
    return name


def copy_node_log(logfile, out, folder, work_dir, compressed, node_id, roles):
    """Copies a node's whole log file, sanitised (sanitise_log), into
    out/folder/ and returns its scenario.json `logs` entry."""
    with open(logfile, "rb") as f:
        text = f.read().decode("utf-8", errors="surrogateescape")
    text, used = sanitise_log(text, work_dir)
    name = write_node_log(text, os.path.join(out, folder), compressed)
    rest = other_paths(text)
    if rest:
        log(f"{folder}/{name}: absolute paths left as they are: {sorted(rest)[:20]}")
    return {"path": f"{folder}/{name}", "node": node_id, "roles": roles,
            "lines": text.count("\n") + (0 if text.endswith("\n") or not text else 1),
            "substituted": used}


def is_node_log_folder(d):
    """A folder that holds node logs (NODE_LOG_NAMES) and nothing else: a
    node whose data the capture does not hold, only its logs."""
    try:
        names = os.listdir(d)
    except OSError:
        return False
    return bool(names) and all(n in NODE_LOG_NAMES for n in names)


def truncations_after_capture(node, topics):
    """{"T-P": [{offset, completed, reason, line}]} for each partition in
    topics ((topic, partition) pairs): the truncations the node logged after
    its folder was captured (capture_mark), each with the number of its line
    in the node's log file (1-based, the same in the copy)."""
    with open(node.logfile, "rb") as f:
        data = f.read()
    mark = min(node.capture_mark, len(data))
    # from the start of the line the mark fell in
    mark = data.rfind(b"\n", 0, mark) + 1
    before = data[:mark].count(b"\n")
    text = data[mark:].decode("utf-8", errors="replace")
    out = {}
    for topic, partition in topics:
        found = truncation_lines(text, topic, partition)
        found.sort(key=lambda x: x[0])
        out[f"{topic}-{partition}"] = [dict(t, line=before + text.count("\n", 0, pos) + 1) for pos, t in found]
    return out


def add_legacy_log(out, legacy, compressed):
    """add_node_logs for legacy-formats (legacy.py: one broker, stopped
    before its capture, no restart after it): its log into broker-<id>/."""
    logfile = os.path.join(legacy.WORK, f"broker-{legacy.BROKER_ID}", NODE_LOG)
    sj = os.path.join(out, "scenario.json")
    facts = json.load(open(sj))
    facts["logs"] = [copy_node_log(logfile, out, f"broker-{legacy.BROKER_ID}", legacy.WORK, compressed,
                                   legacy.BROKER_ID, "broker")]
    with open(sj, "w") as f:
        json.dump(facts, f, indent=2, sort_keys=True)
        f.write("\n")


def add_node_logs(cluster, out, compressed):
    """At the end of a scenario (every node stopped): copies each node's log
    into the capture (copy_node_log) -- a broker's into its broker-<id>/
    (a broker not captured is skipped), the KRaft controller's into
    controller-<id>/ (made for it when the capture has none) -- and adds to
    scenario.json `logs` and `logged_truncations_after_capture`: per captured
    broker and partition of scenario.json's partitions, what the broker
    logged truncating after its capture. after/ gets no logs."""
    entries = []
    nodes = list(cluster.brokers.values()) + list(cluster.controllers.values())
    sj = os.path.join(out, "scenario.json")
    facts = json.load(open(sj))
    topics = sorted({(p["topic"], p["partition"]) for p in facts.get("partitions", [])})
    after = {}
    for n in nodes:
        if not os.path.exists(n.logfile):
            continue
        folder = f"controller-{n.id}" if n.roles == "controller" else f"broker-{n.id}"
        if n.roles != "controller" and not os.path.isdir(os.path.join(out, folder)):
            continue
        entries.append(copy_node_log(n.logfile, out, folder, cluster.dir, compressed, n.id, n.roles))
        if n.roles != "controller" and n.capture_mark is not None:
            after[str(n.id)] = truncations_after_capture(n, topics)
    facts["logs"] = entries
    facts["logged_truncations_after_capture"] = after
    with open(sj, "w") as f:
        json.dump(facts, f, indent=2, sort_keys=True)
        f.write("\n")
    log(f"node logs: {', '.join(e['path'] + ' (' + str(e['lines']) + ' lines)' for e in entries)}")


# ---------------------------------------------------------------- healthy nodes

# Omissions that leave a node's files as Kafka wrote them: Kafka rebuilds a
# missing index when it loads the segment (copy_dir).
HARMLESS_OMISSIONS = ("preallocated index of the active metadata-log segment",)
NODE_FOLDER = re.compile(r"^(?:broker|controller)-(\d+)$")


def captured_nodes(d):
    """The node ids of a capture's broker-<id>/ and controller-<id>/ folders
    (but a folder that holds only the node's logs, is_node_log_folder: it
    has no files of Kafka's data to be healthy or not)."""
    try:
        names = os.listdir(d)
    except OSError:
        return []
    return sorted(int(m.group(1)) for m in map(NODE_FOLDER.match, names)
                  if m and os.path.isdir(os.path.join(d, m.group(0)))
                  and not is_node_log_folder(os.path.join(d, m.group(0))))


def cut_by_rejoin(p, node, truncation):
    """Whether Kafka cut records from node's captured log of partition p when
    the node rejoined (`truncation`: its kafka_truncation entry): it truncated
    below the captured log end, or loaded less than the capture holds. None
    when the facts do not say."""
    end = (p.get("replica_state") or {}).get(str(node), {}).get("log_end_offset")
    loaded = truncation.get("log_end_offset_loaded")
    if end is None:
        end = loaded
    to = truncation.get("truncated_to")
    if end is None or to is None:
        return None
    return to < end or (loaded is not None and loaded < end)


def healthy_nodes(d, facts, sub=""):
    """The nodes of a capture (or of its after/ with sub="after") whose files
    are healthy, derived from scenario.json alone: Kafka wrote them; Kafka
    did not cut records from that replica's captured log when it rejoined
    (kafka_truncation of any partition, and of any election outcome the
    harness ran: a node cut in one of them is not healthy); the harness left
    out none of its files but preallocated indexes Kafka rebuilds
    (omitted_from_capture), and no scenario alters a byte. A truncation Kafka
    made before the capture does not count: the capture holds what it left.
    Nothing rejoins after after/ is taken. None when the facts do not say."""
    nodes = captured_nodes(os.path.join(d, sub) if sub else d)
    if not nodes:
        return None
    bad = set()
    prefix = f"{sub}/" if sub else ""
    for o in facts.get("omitted_from_capture", []):
        path = o.get("path", "")
        if not path.startswith(prefix):
            continue
        m = NODE_FOLDER.match(path[len(prefix):].split("/")[0])
        if m and o.get("reason") not in HARMLESS_OMISSIONS:
            bad.add(int(m.group(1)))
    if not sub:
        for p in facts.get("partitions", []):
            rejoins = [p.get("kafka_truncation") or {}]
            rejoins += [o.get("kafka_truncation") or {} for o in (p.get("election_outcomes") or {}).values()]
            for tr in rejoins:
                for n, t in tr.items():
                    cut = cut_by_rejoin(p, n, t)
                    if cut is None:
                        return None
                    if cut:
                        bad.add(int(n))
    return [n for n in nodes if n not in bad]


def add_healthy(d, facts):
    """Sets healthy_nodes (broker-*/ and controller-*/ of the capture) and,
    where there is an after/, healthy_nodes_after, in facts; a field whose
    rule the facts cannot decide is left out."""
    for key, sub in (("healthy_nodes", ""), ("healthy_nodes_after", "after")):
        facts.pop(key, None)
        if sub and not os.path.isdir(os.path.join(d, sub)):
            continue
        h = healthy_nodes(d, facts, sub)
        if h is not None:
            facts[key] = h
    return facts


def add_healthy_file(d):
    """add_healthy on a capture's scenario.json, in place."""
    sj = os.path.join(d, "scenario.json")
    facts = json.load(open(sj))
    add_healthy(d, facts)
    with open(sj, "w") as f:
        json.dump(facts, f, indent=2, sort_keys=True)
        f.write("\n")
    log(f"{os.path.basename(os.path.abspath(d))}: healthy_nodes {facts.get('healthy_nodes', 'left out')}"
        + (f", after/ {facts['healthy_nodes_after']}" if "healthy_nodes_after" in facts else ""))


# ---------------------------------------------------------------- golden dumps

INTERNAL_DECODERS = {"__consumer_offsets": "--offsets-decoder",
                     "__transaction_state": "--transaction-log-decoder",
                     "__cluster_metadata": "--cluster-metadata-decoder",
                     "__share_group_state": "--share-group-state-decoder",
                     "__remote_log_metadata": "--remote-log-metadata-decoder"}


def dumpable_files(scenario_dir):
    out = []
    for root, dirs, files in os.walk(scenario_dir):
        # a broker's cache of remote segments' indexes (tiered storage) has
        # no .log to read an index with: not dumped
        dirs[:] = sorted(d for d in dirs if d != "remote-log-index-cache")
        if os.path.relpath(root, scenario_dir).split(os.sep)[0].startswith("golden"):
            continue
        for f in sorted(files):
            # a node's own log (server.log) is no segment; a KRaft snapshot
            # (<end offset>-<epoch>.checkpoint: a dynamic quorum's controller
            # formatted --standalone holds 0-0's voter set) is, but not the
            # bootstrap.checkpoint of a controller's log directory root
            if ((f.endswith((".log", ".index", ".timeindex", ".txnindex", ".snapshot")) and f not in NODE_LOG_NAMES)
                    or KRAFT_SNAPSHOT.match(f)):
                out.append(os.path.join(root, f))
    return out


KRAFT_SNAPSHOT = re.compile(r"^\d{20}-\d{10}\.checkpoint$")


def file_modes(path):
    part = os.path.basename(os.path.dirname(path))
    topic = part.rsplit("-", 1)[0]
    modes = [("shallow", [])]
    deep = ["--deep-iteration", "--print-data-log"]
    if (path.endswith(".log") or KRAFT_SNAPSHOT.match(os.path.basename(path))) and topic in INTERNAL_DECODERS:
        deep = deep + [INTERNAL_DECODERS[topic]]
    modes.append(("deep", deep))
    if path.endswith((".index", ".timeindex")):
        modes.append(("sanity", ["--index-sanity-check"]))
    return modes


# A remote segment's files as the remote store names them (tiered storage:
# <base offset>-<segment id>.<suffix>, LocalTieredStorage). kafka-dump-log
# stops on such a name (it parses the whole stem as the base offset); the
# golden text of one is what it prints for the same bytes under the
# segment's own name, <base offset>.<suffix>, the path in it put back.
REMOTE_NAME = re.compile(r"^(\d{1,20})[-_]([A-Za-z0-9_-]{22})\.(log|index|timeindex|txnindex|snapshot)$")


def canonical_remote(rel):
    """The scratch path a remote segment file is dumped under, or None."""
    m = REMOTE_NAME.match(os.path.basename(rel))
    if not m:
        return None
    return os.path.join(os.path.dirname(rel), f".canonical-{m.group(2)}",
                        f"{int(m.group(1)):020d}.{m.group(3)}")


def put_canonical_copies(scratch, rel_scenario):
    """Beside every remote segment file of the scratch copy, its segment's
    files under their canonical names (see REMOTE_NAME)."""
    for root, _, files in os.walk(os.path.join(scratch, rel_scenario)):
        for f in files:
            rel = os.path.relpath(os.path.join(root, f), scratch)
            c = canonical_remote(rel)
            if c:
                os.makedirs(os.path.join(scratch, os.path.dirname(c)), exist_ok=True)
                shutil.copyfile(os.path.join(scratch, rel), os.path.join(scratch, c))


def run_dump(scratch, relpaths, flags):
    """Runs kafka-dump-log once over several files (from the scratch root, so
    the paths it prints are the repository-relative ones) and splits stdout
    into one text per file. A remote segment file is dumped under its
    canonical name (canonical_remote) and its path put back."""
    run = [canonical_remote(r) or r for r in relpaths]
    back = {c: r for c, r in zip(run, relpaths) if c != r}
    cmd = ["java", "-Xmx384m", "-XX:TieredStopAtLevel=1",
           f"-Dlog4j2.configurationFile={HERE}/log4j2-tool.properties",
           f"-Dlog4j.configuration=file:{HERE}/log4j-tool.properties",
           "-cp", dump_classpath(), dump_class(),
           "--files", ",".join(run)] + flags
    r = subprocess.run(cmd, cwd=scratch, capture_output=True, text=True)
    texts = {}
    current = None
    for line in r.stdout.splitlines(keepends=True):
        if line.startswith("Dumping "):
            name = line[len("Dumping "):].rstrip("\n")
            if name in run:
                current = back.get(name, name)
                texts[current] = ""
        if current is not None:
            texts[current] += line
    stderr = r.stderr
    for c, orig in back.items():
        for k in texts:
            texts[k] = texts[k].replace(c, orig)
        stderr = stderr.replace(c, orig)
    return r.returncode, texts, stderr


def dump_texts(scenario_dir, scratch):
    """(repository-relative path, mode, flags, kafka-dump-log's stdout) for
    every dumpable file of a capture and each of its modes, run on the
    scratch copy: one JVM per mode and a few hundred files (a run that
    fails is redone per file, to get exactly each file's own output)."""
    groups = {}
    for f in dumpable_files(scenario_dir):
        rel = os.path.relpath(f, REPO)
        for mode, flags in file_modes(f):
            groups.setdefault((mode, tuple(flags)), []).append(rel)
    for (mode, flags), rels in sorted(groups.items()):
        # kafka-dump-log can write into what it reads (a time index dumped
        # without its offset index leaves an empty .index behind): each
        # mode starts from a fresh copy, so no run sees another's files
        refresh_scratch(scenario_dir, scratch)
        pending = list(rels)
        while pending:
            chunk = pending[:200]
            rc, texts, _ = run_dump(scratch, chunk, list(flags))
            if rc == 0:
                for rel in chunk:
                    yield rel, mode, list(flags), texts.get(rel, "")
                pending = pending[len(chunk):]
                continue
            # The tool stops at the file that threw: the files it finished
            # before are whole; that one is redone alone (its exit status
            # and its text), and the rest of the chunk runs again.
            refresh_scratch(scenario_dir, scratch)
            printed = [rel for rel in chunk if rel in texts]
            stopped = chunk.index(printed[-1]) if printed else 0
            for rel in chunk[:stopped]:
                yield rel, mode, list(flags), texts[rel]
            rel = chunk[stopped]
            srcs, single, _ = run_dump(scratch, [rel], list(flags))
            if srcs != 0:
                # what the failed run wrote must not reach the next one
                refresh_scratch(scenario_dir, scratch)
            yield rel, mode, list(flags), single.get(rel, "")
            pending = pending[stopped + 1:]


def refresh_scratch(scenario_dir, scratch):
    """Puts the scratch copy of a capture back as scratch_copy made it."""
    scenario_dir = os.path.abspath(scenario_dir)
    dst = os.path.join(scratch, os.path.relpath(scenario_dir, REPO))
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(scenario_dir, dst, ignore=shutil.ignore_patterns("golden*", "scenario.json"))
    put_canonical_copies(scratch, os.path.relpath(scenario_dir, REPO))


def scratch_copy(scenario_dir):
    """A scratch copy of a capture under its repository-relative path
    (kafka-dump-log can create or open files read-write; it runs on the
    copy): (absolute capture dir, its relative path, the scratch root, the
    capture's hash before)."""
    scenario_dir = os.path.abspath(scenario_dir)
    rel_scenario = os.path.relpath(scenario_dir, REPO)
    scratch = os.path.join(WORK, f"golden-scratch-{os.getpid()}")
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(scenario_dir, os.path.join(scratch, rel_scenario),
                    ignore=shutil.ignore_patterns("golden*", "scenario.json"))
    put_canonical_copies(scratch, rel_scenario)
    return scenario_dir, rel_scenario, scratch, tree_hash(scenario_dir)


def golden(scenario_dir):
    """kafka-dump-log output for every dumpable file of a capture, run on a
    scratch copy laid out under the same repository-relative paths."""
    scenario_dir, rel_scenario, scratch, before = scratch_copy(scenario_dir)
    gdir = os.path.join(scenario_dir, "golden")
    shutil.rmtree(gdir, ignore_errors=True)
    count = 0
    for rel, mode, _flags, text in dump_texts(scenario_dir, scratch):
        sub = os.path.relpath(os.path.join(REPO, rel), scenario_dir)
        dst = os.path.join(gdir, f"{sub}.{mode}.txt")
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "w") as fh:
            fh.write(text)
        count += 1
    after = tree_hash(scenario_dir, skip=("golden",))
    if before != after:
        raise RuntimeError("the capture changed while making golden files")
    shutil.rmtree(scratch, ignore_errors=True)
    # whose kafka-dump-log golden/ is (the capture may be another release's)
    facts_path = os.path.join(scenario_dir, "scenario.json")
    if os.path.exists(facts_path):
        with open(facts_path) as fh:
            facts = json.load(fh)
        facts["golden_kafka_version"] = kafka_version()
        with open(facts_path, "w") as fh:
            json.dump(facts, fh, indent=2, sort_keys=True)
            fh.write("\n")
    log(f"golden: {count} files for {rel_scenario}")
    return count


def release_line(v=None):
    """"4.4.0" -> "4.4": the per-release golden folders are per release line."""
    return ".".join((v or kafka_version()).split(".")[:2])


def golden_release(scenario_dir):
    """kafka-dump-log of the release `--kafka` names, on a capture whose
    `golden/` another release made: writes `golden-<X.Y>/` holding only the
    files whose text differs from `golden/` (a missing file means "the same"),
    `index.json` with what was compared, and, for segments that do not start
    at offset 0, the deep mode's stderr of each run alone
    (`<path>.deep.stderr.txt`, kafka-dump-log's non-consecutive offsets and
    index findings; only where that release prints any)."""
    scenario_dir = os.path.abspath(scenario_dir)
    rel_scenario = os.path.relpath(scenario_dir, REPO)
    base = os.path.join(scenario_dir, "golden")
    if not os.path.isdir(base):
        raise RuntimeError(f"{rel_scenario} has no golden/ to compare with")
    with open(os.path.join(scenario_dir, "scenario.json")) as f:
        facts = json.load(f)
    own = facts.get("golden_kafka_version") or facts["kafka_version"]
    line = release_line()
    if line == release_line(own):
        raise RuntimeError(f"{rel_scenario}: golden/ is already Kafka {own}'s")
    _, _, scratch, before = scratch_copy(scenario_dir)
    out = os.path.join(scenario_dir, f"golden-{line}")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    compared = differ = 0
    stderr_files = 0
    for rel, mode, flags, text in dump_texts(scenario_dir, scratch):
        sub = os.path.relpath(os.path.join(REPO, rel), scenario_dir)
        name = f"{sub}.{mode}.txt"
        with open(os.path.join(base, name)) as fh:
            same = fh.read() == text
        compared += 1
        if not same:
            differ += 1
            dst = os.path.join(out, name)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, "w") as fh:
                fh.write(text)
        if mode == "deep" and rel.endswith(".log") and not os.path.basename(rel).startswith("00000000000000000000."):
            # one run alone, so stderr is this file's only
            _, _, err = run_dump(scratch, [rel], list(flags))
            err = "".join(l for l in err.splitlines(True)
                          if not l.startswith(("WARN", "SLF4J", "[", "log4j:")))
            if err:
                dst = os.path.join(out, f"{sub}.deep.stderr.txt")
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                # absolute paths of the scratch copy: keep them repository-relative
                with open(dst, "w") as fh:
                    fh.write(err.replace(scratch + "/", ""))
                stderr_files += 1
    with open(os.path.join(out, "index.json"), "w") as fh:
        json.dump({"kafka_version": kafka_version(), "golden_kafka_version": own,
                   "compared": compared, "differ": differ, "stderr_files": stderr_files,
                   "tool": dump_class()}, fh, indent=2, sort_keys=True)
        fh.write("\n")
    if tree_hash(scenario_dir, skip=("golden", f"golden-{line}")) != before:
        raise RuntimeError("the capture changed while making golden files")
    shutil.rmtree(scratch, ignore_errors=True)
    log(f"golden-{line}: {differ} of {compared} files differ from golden/ ({own}) in {rel_scenario}")
    return differ


def golden_text(scenario_dir, line, name):
    """A golden file's text as release `line` printed it (golden-LINE/, its
    base's, or golden/)."""
    d = os.path.join(scenario_dir, f"golden-{line}")
    if os.path.exists(os.path.join(d, name)):
        return open(os.path.join(d, name)).read()
    try:
        base = json.load(open(os.path.join(d, "index.json"))).get("base")
    except OSError:
        base = None
    if base:
        return golden_text(scenario_dir, base, name)
    return open(os.path.join(scenario_dir, "golden", name)).read()


def golden_dedupe(scenario_dir, line, base):
    """Stores golden-LINE/ as a delta against golden-BASE/ (two releases
    whose text is mostly the same): files equal to the base's text go, files
    the base has but this line printed as golden/ are written out, and
    index.json says `base`."""
    scenario_dir = os.path.abspath(scenario_dir)
    d = os.path.join(scenario_dir, f"golden-{line}")
    idx = os.path.join(d, "index.json")
    if not os.path.exists(idx):
        return
    names = set()
    for sub in (d, os.path.join(scenario_dir, f"golden-{base}")):
        for root, _, files in os.walk(sub):
            for f in files:
                if f.endswith(".txt"):
                    names.add(os.path.relpath(os.path.join(root, f), sub))
    facts = json.load(open(idx))
    if facts.get("base"):
        raise RuntimeError(f"{d} is already stored against golden-{facts['base']}")
    mine = {n: golden_text(scenario_dir, line, n) for n in names}
    removed = 0
    for n, text in mine.items():
        p = os.path.join(d, n)
        if golden_text(scenario_dir, base, n) == text:
            if os.path.exists(p):
                os.remove(p)
                removed += 1
        elif not os.path.exists(p):
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as fh:
                fh.write(text)
    for root, dirs, files in os.walk(d, topdown=False):
        if root != d and not os.listdir(root):
            os.rmdir(root)
    facts["base"] = base
    with open(idx, "w") as fh:
        json.dump(facts, fh, indent=2, sort_keys=True)
        fh.write("\n")
    log(f"golden-{line}: {removed} files now read from golden-{base} in {os.path.relpath(scenario_dir, REPO)}")


# A capture's per-release golden folders (golden-X.Y/) are committed packed
# in one archive: a tar of them, zstd-compressed with a long window. Their
# text is mostly the same as golden/ and as each other's, so together they
# take a few hundred KB where the folders take megabytes. golden-release and
# golden-dedupe unpack it first and pack it again after.
GOLDEN_ARCHIVE = "golden-releases.tar.zst"
RELEASE_DIR = re.compile(r"^golden-\d+\.\d+$")


def release_dirs(scenario_dir):
    return sorted(d for d in os.listdir(scenario_dir)
                  if RELEASE_DIR.match(d) and os.path.isdir(os.path.join(scenario_dir, d)))


def zstd_tool():
    tool = shutil.which("zstd")
    if tool is None:
        raise RuntimeError("the zstd command is needed to pack and unpack golden files "
                           "(Debian: apt-get install zstd)")
    return tool


def golden_unpack(scenario_dir):
    """Puts the packed golden-X.Y/ folders back as folders (and removes the
    archive)."""
    archive = os.path.join(scenario_dir, GOLDEN_ARCHIVE)
    if not os.path.exists(archive):
        return
    data = subprocess.run([zstd_tool(), "-dcq", "--long=31", archive], check=True,
                          capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tf:
        for m in tf.getmembers():
            top = m.name.split("/")[0]
            if not RELEASE_DIR.match(top) or ".." in m.name.split("/") or not (m.isfile() or m.isdir()):
                raise RuntimeError(f"{archive}: unexpected entry {m.name}")
        tf.extractall(scenario_dir)
    os.remove(archive)


def golden_pack(scenario_dir):
    """Packs every golden-X.Y/ folder of a capture into GOLDEN_ARCHIVE (a
    reproducible tar: names sorted, no times or owners) and removes the
    folders."""
    dirs = release_dirs(scenario_dir)
    if not dirs:
        return
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:", format=tarfile.USTAR_FORMAT) as tf:
        for d in dirs:
            for root, subdirs, files in os.walk(os.path.join(scenario_dir, d)):
                subdirs.sort()
                for f in sorted(files):
                    p = os.path.join(root, f)
                    name = os.path.relpath(p, scenario_dir)
                    info = tarfile.TarInfo(name)
                    info.size = os.path.getsize(p)
                    info.mode = 0o644
                    info.mtime = 0
                    with open(p, "rb") as fh:
                        tf.addfile(info, fh)
    archive = os.path.join(scenario_dir, GOLDEN_ARCHIVE)
    packed = subprocess.run([zstd_tool(), "-19", "-q", "--long=27", "-c"], input=buf.getvalue(),
                            check=True, capture_output=True).stdout
    with open(archive + ".tmp", "wb") as fh:
        fh.write(packed)
    os.replace(archive + ".tmp", archive)
    for d in dirs:
        shutil.rmtree(os.path.join(scenario_dir, d))
    log(f"packed {', '.join(dirs)} of {os.path.relpath(scenario_dir, REPO)} into {GOLDEN_ARCHIVE} "
        f"({len(packed) / 1024:.0f} KiB from {len(buf.getvalue()) / 1024:.0f} KiB)")


DECODER_CLASSES = ("StringDecoder", "DefaultDecoder", "IntegerDecoder", "LongDecoder")


def golden_decoders(scenario_dir, files):
    """kafka-dump-log --key-decoder-class/--value-decoder-class with each
    built-in Decoder class (org.apache.kafka.tools.api, the release `--kafka`
    names) on `files` (capture-relative): `golden-decoders/<file>.<Class>.txt`
    holds stdout; index.json the release and, per output, the exit status
    and stderr's first line (an exception stops the run)."""
    scenario_dir, rel_scenario, scratch, before = scratch_copy(scenario_dir)
    out = os.path.join(scenario_dir, "golden-decoders")
    shutil.rmtree(out, ignore_errors=True)
    runs = {}
    for f in files:
        rel = os.path.join(rel_scenario, f)
        for cls in DECODER_CLASSES:
            full = f"org.apache.kafka.tools.api.{cls}"
            cmd = ["java", "-Xmx384m", "-XX:TieredStopAtLevel=1",
                   f"-Dlog4j2.configurationFile={HERE}/log4j2-tool.properties",
                   "-cp", dump_classpath(), dump_class(), "--files", rel,
                   "--key-decoder-class", full, "--value-decoder-class", full]
            r = subprocess.run(cmd, cwd=scratch, capture_output=True, text=True)
            dst = os.path.join(out, f"{f}.{cls}.txt")
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, "w") as fh:
                fh.write(r.stdout)
            first = next((l for l in r.stderr.splitlines() if l.startswith("Exception")), None)
            runs[f"{f}.{cls}.txt"] = {"exit": r.returncode, "exception": first}
    with open(os.path.join(out, "index.json"), "w") as fh:
        json.dump({"kafka_version": kafka_version(), "tool": dump_class(), "runs": runs},
                  fh, indent=2, sort_keys=True)
        fh.write("\n")
    if tree_hash(scenario_dir) != before:
        raise RuntimeError("the capture changed while making golden files")
    shutil.rmtree(scratch, ignore_errors=True)
    log(f"golden-decoders: {len(runs)} runs for {rel_scenario}")


def tree_hash(d, skip=("golden",)):
    h = hashlib.sha256()
    for root, dirs, files in os.walk(d):
        # golden/ and the per-release golden-X.Y/ are made from the capture, not part of it
        dirs[:] = sorted(x for x in dirs if not (root == d and (x in skip or x.startswith("golden"))))
        for f in sorted(files):
            p = os.path.join(root, f)
            if root == d and (f == "scenario.json" or f == GOLDEN_ARCHIVE):
                continue
            h.update(os.path.relpath(p, d).encode())
            with open(p, "rb") as fh:
                h.update(hashlib.sha256(fh.read()).digest())
    return h.hexdigest()


# ---------------------------------------------------------------- scenarios

def topic_config(extra=None):
    # Kafka 3.x takes small segment.bytes as it is; 4.x refuses it (KIP-1030)
    # and has internal.segment.bytes instead
    seg = "segment.bytes" if release_tuple() < (4, 0) else "internal.segment.bytes"
    c = {seg: SEGMENT_BYTES, "segment.index.bytes": INDEX_BYTES,
         "index.interval.bytes": INDEX_INTERVAL}
    c.update(extra or {})
    return ",".join(f"{k}={v}" for k, v in c.items())


def write_scenario(out, facts):
    facts = dict(facts)
    facts.setdefault("kafka_version", kafka_version())
    facts["omitted_from_capture"] = list(OMITTED)
    for p in facts.get("partitions", []):
        for n in p.get("replicas", []):
            leo = leo_by_kafka_dump(os.path.join(out, f"broker-{n}"), p["topic"], p["partition"])
            st = p.setdefault("replica_state", {}).setdefault(str(n), {})
            if leo is not None:
                st["log_end_offset"] = leo
                st["log_end_offset_source"] = "kafka-dump-log on the captured segments"
    c = CURRENT[0]
    if zookeeper_mode():
        facts.setdefault("writer", f"Apache Kafka {kafka_version()} brokers (ZooKeeper mode, "
                                   f"inter.broker.protocol.version {IBP[0]}; ZooKeeper {zk_pom_version()[1]} "
                                   f"+ 3 brokers on 127.0.0.1; clients: Kafka {client_version()})")
    else:
        k = len(c.controllers) if c is not None else 1
        facts.setdefault("writer", f"Apache Kafka {kafka_version()} broker (KRaft, {k} controller{'s' if k > 1 else ''}"
                                   f"{' in a dynamic quorum' if c is not None and c.dynamic_quorum else ''}"
                                   f" + 3 brokers on 127.0.0.1)")
    facts["mode"] = MODE[0]
    if c is not None:
        facts["broker_config"] = c.broker_config()
    add_healthy(out, facts)
    with open(os.path.join(out, "scenario.json"), "w") as f:
        json.dump(facts, f, indent=2, sort_keys=True)
        f.write("\n")


def partition_facts(cluster, topic, partition, replicas, leader, acked, nodes=BROKERS, captured_dir=None):
    d = None
    try:
        d = cluster.describe(topic, partition)
    except RuntimeError:
        pass
    st = replica_state(cluster, topic, partition, leader, nodes)
    if captured_dir:
        for n in nodes:
            hw = hw_from_checkpoint(os.path.join(captured_dir, f"broker-{n}"), topic, partition)
            st[str(n)].setdefault("high_watermark_checkpoint", hw)
    le = cluster.leader_epoch(topic, partition, leader) if leader is not None else None
    return {
        "topic": topic, "partition": partition, "replicas": replicas,
        "leader_at_capture": d["leader"] if d else leader,
        "leader_epoch_at_capture": le["leader_epoch"] if le else None,
        "leader_start_offset_at_capture": le["start_offset"] if le else None,
        "isr_at_capture": d["isr"] if d else None,
        "replica_state": st,
        "acked": acked,
    }


SCENARIOS = {}
CURRENT = [None]   # the cluster of the scenario running (write_scenario keeps its settings)
# scenarios that run in ZooKeeper mode (the others need KRaft: a metadata
# log, the consumer group protocol, share groups, the controller's log)
ZK_SCENARIOS = ("follower-returns", "divergence", "double-divergence", "unclean", "unclean-stale-hw",
                "lag-window", "paused-follower")


# scenarios of share groups (KIP-932): Kafka 4.2 on
SHARE_SCENARIOS = ("share-unclean",)
# scenarios of a dynamic controller quorum (KIP-853: format --standalone,
# controller.quorum.bootstrap.servers, addRaftVoter): Kafka 4.0 on
DYNAMIC_QUORUM_SCENARIOS = ("quorum",)


def scenario(name):
    def reg(fn):
        SCENARIOS[name] = fn
        return fn
    return reg


def phases(**named):
    """What the producers were told in each phase, with the leader that answered."""
    return {name: dict(r, leader=leader) for name, (r, leader) in named.items()}


def acked_summary(*results):
    count = sum(r["acked"] for r in results)
    mx = max((r["max_offset"] for r in results), default=-1)
    return {"count": count, "max_offset": mx}


@scenario("follower-returns")
def s_follower_returns(c, out):
    t = "returns"
    c.driver("create", topic=t, assignment="1,2,3", config=topic_config({"min.insync.replicas": 1}))
    r1 = c.driver("produce", topic=t, count=200, acks="all")
    c.brokers[3].stop()
    c.wait_leader(t, 1, isr=[1, 2])
    r2 = c.driver("produce", topic=t, count=200, base=200, acks="all")
    c.brokers[1].stop()
    c.wait_leader(t, 2, isr=[2])
    r3 = c.driver("produce", topic=t, count=100, base=400, acks="all")
    time.sleep(1)  # let the HW checkpoint (every 200 ms) catch up before copying
    capture(c, out)
    p = partition_facts(c, t, 0, [1, 2, 3], 2, acked_summary(r1, r2, r3), captured_dir=out)
    p["replica_state"]["1"]["source"] = "stopped cleanly before capture (leader of epoch 0)"
    p["replica_state"]["3"]["source"] = "stopped cleanly before capture (follower)"
    c.brokers[3].start(); c.brokers[3].wait_port()
    c.brokers[1].start(); c.brokers[1].wait_port()
    c.wait_leader(t, 2, isr=[1, 2, 3])
    after = rejoin_facts(c, t, 0, [3, 1])
    capture(c, out, sub="after")
    p["kafka_truncation"] = after
    write_scenario(out, {
        "description": "Follower 3 stops cleanly; leader 1 keeps writing with ISR {1,2}; leader 1 stops cleanly; "
                       "broker 2 leads and writes; broker-*/ is captured then. Brokers 3 and 1 return and catch up; "
                       "after/ is captured once all three are in sync.",
        "partitions": [p]})


def rejoin_facts(c, topic, partition, nodes):
    out = {}
    for n in nodes:
        tr = c.truncations(n, topic, partition)
        loaded = c.loaded_state(n, topic, partition)
        # every replica is in sync and nothing is written: its log end is the
        # partition's high watermark, which the leader reports
        after = c.driver("offsets", topic=topic, partition=partition)
        cut = min((t["offset"] for t in tr), default=None)
        out[str(n)] = {
            # where the broker logged no truncation, it kept its whole log:
            # the log end offset it reported when it loaded the log
            "truncated_to": cut if cut is not None else (loaded["log_end_offset"] if loaded else None),
            "truncation_logged": cut is not None,
            "truncation_log": tr,
            "log_end_offset_loaded": loaded["log_end_offset"] if loaded else None,
            "high_watermark_loaded": loaded["high_watermark"] if loaded else None,
            "log_end_offset_after": after["high_watermark"],
        }
    return out


@scenario("divergence")
def s_divergence(c, out):
    t = "diverge"
    c.driver("create", topic=t, assignment="1,2,3", config=topic_config({"min.insync.replicas": 1}))
    r1 = c.driver("produce", topic=t, count=100, acks="all")
    armed = c.produce_armed(topic=t, count=50, base=100, acks="1")
    c.brokers[2].pause(); c.brokers[3].pause()
    r2 = armed.go()
    c.brokers[1].kill9()
    le1 = c.leader_epoch(t, 0, 1)
    c.brokers[2].resume(); c.brokers[3].resume()
    c.wait_leader(t, 2)
    r3 = c.driver("produce", topic=t, count=30, base=150, acks="all")
    time.sleep(1)
    capture(c, out)
    p = partition_facts(c, t, 0, [1, 2, 3], 2, acked_summary(r1, r2, r3), nodes=(2, 3), captured_dir=out)
    p["replica_state"]["1"] = {"source": "killed (SIGKILL) before capture; see kafka_truncation log_end_offset_loaded",
                               "leader_epoch": le1["leader_epoch"] if le1 else None,
                               "high_watermark_checkpoint": hw_from_checkpoint(os.path.join(out, "broker-1"), t, 0)}
    p["acked_by_phase"] = phases(before_pause_acks_all=(r1, 1), old_leader_acks_1=(r2, 1), new_leader_acks_all=(r3, 2))
    c.brokers[1].start(); c.brokers[1].wait_port()
    c.wait_leader(t, 2, isr=[1, 2, 3])
    p["kafka_truncation"] = rejoin_facts(c, t, 0, [1])
    capture(c, out, sub="after")
    write_scenario(out, {
        "description": "Leader 1 accepts acks=1 writes while followers 2 and 3 are paused (SIGSTOP); leader 1 is "
                       "killed (SIGKILL); the followers resume, 2 is elected and writes in the new epoch. broker-*/ "
                       "is captured before 1 restarts; after/ once 1 has truncated and caught up.",
        "partitions": [p]})


@scenario("double-divergence")
def s_double_divergence(c, out):
    t = "double"
    c.driver("create", topic=t, assignment="1,2,3", config=topic_config({"min.insync.replicas": 1}))
    r1 = c.driver("produce", topic=t, count=100, acks="all")
    armed = c.produce_armed(topic=t, count=20, base=100, acks="1")
    c.brokers[2].pause(); c.brokers[3].pause()
    r2 = armed.go()
    c.brokers[1].kill9()
    c.brokers[2].resume(); c.brokers[3].resume()
    c.wait_leader(t, 2)
    armed = c.produce_armed(topic=t, count=10, base=120, acks="1")
    c.brokers[3].pause()
    r3 = armed.go()
    c.brokers[2].kill9()
    c.brokers[3].resume()
    c.wait_leader(t, 3)
    r4 = c.driver("produce", topic=t, count=30, base=130, acks="all")
    time.sleep(1)
    capture(c, out)
    p = partition_facts(c, t, 0, [1, 2, 3], 3, acked_summary(r1, r2, r3, r4), nodes=(3,), captured_dir=out)
    p["replica_state"]["1"] = {"source": "killed (SIGKILL) before capture; see kafka_truncation log_end_offset_loaded",
                               "high_watermark_checkpoint": hw_from_checkpoint(os.path.join(out, "broker-1"), t, 0)}
    p["replica_state"]["2"] = {"source": "killed (SIGKILL) before capture; see kafka_truncation log_end_offset_loaded",
                               "high_watermark_checkpoint": hw_from_checkpoint(os.path.join(out, "broker-2"), t, 0)}
    p["acked_by_phase"] = phases(leader1_acks_all=(r1, 1), leader1_acks_1=(r2, 1), leader2_acks_1=(r3, 2), leader3_acks_all=(r4, 3))
    c.brokers[1].start(); c.brokers[2].start()
    c.brokers[1].wait_port(); c.brokers[2].wait_port()
    c.wait_leader(t, 3, isr=[1, 2, 3])
    p["kafka_truncation"] = rejoin_facts(c, t, 0, [1, 2])
    capture(c, out, sub="after")
    write_scenario(out, {
        "description": "Two consecutive leader changes leave divergent tails on two replicas: leader 1 writes acks=1 "
                       "while 2 and 3 are paused and is killed; 2 leads, writes acks=1 while 3 is paused and is killed; "
                       "3 leads and writes. broker-*/ is captured then; after/ once 1 and 2 have truncated and caught up.",
        "partitions": [p]})


def shrink_to_leader(c, t, counts):
    """Topic t (replicas 1, 2, 3, unclean elections allowed) takes counts[0]
    acks=all writes with every replica in sync; 3 stops, counts[1] writes
    with ISR {1,2}; 2 stops, counts[2] writes with leader 1 alone. Returns
    what the three producers were told."""
    c.driver("create", topic=t, assignment="1,2,3",
             config=topic_config({"min.insync.replicas": 1, "unclean.leader.election.enable": "true"}))
    r1 = c.driver("produce", topic=t, count=counts[0], acks="all")
    c.brokers[3].stop()
    c.wait_leader(t, 1, isr=[1, 2])
    r2 = c.driver("produce", topic=t, count=counts[1], base=counts[0], acks="all")
    c.brokers[2].stop()
    c.wait_leader(t, 1, isr=[1])
    r3 = c.driver("produce", topic=t, count=counts[2], base=counts[0] + counts[1], acks="all")
    return r1, r2, r3


@scenario("unclean")
def s_unclean(c, out):
    t = "unclean"
    r1, r2, r3 = shrink_to_leader(c, t, (100, 100, 50))
    hw1 = c.driver("offsets", topic=t)
    c.brokers[1].kill9()
    c.brokers[3].start(); c.brokers[3].wait_port()
    def elected():
        c.driver("elect", topic=t, type="unclean", check=False)
        d = c.describe(t)
        return d if d["leader"] == 3 else None
    c.wait_until("unclean election of 3", elected, timeout=90, interval=2)
    r4 = c.driver("produce", topic=t, count=20, base=250, acks="all")
    time.sleep(1)
    capture(c, out)
    p = partition_facts(c, t, 0, [1, 2, 3], 3, acked_summary(r1, r2, r3, r4), nodes=(3,), captured_dir=out)
    p["replica_state"]["1"] = {"high_watermark": hw1["high_watermark"],
                               "source": "ListOffsets before kill -9",
                               "high_watermark_checkpoint": hw_from_checkpoint(os.path.join(out, "broker-1"), t, 0)}
    p["replica_state"]["2"] = {"source": "stopped cleanly before capture",
                               "high_watermark_checkpoint": hw_from_checkpoint(os.path.join(out, "broker-2"), t, 0)}
    p["acked_by_phase"] = phases(isr_123=(r1, 1), isr_12=(r2, 1), isr_1=(r3, 1), unclean_leader_3=(r4, 3))
    c.brokers[1].start(); c.brokers[2].start()
    c.brokers[1].wait_port(); c.brokers[2].wait_port()
    c.wait_leader(t, 3, isr=[1, 2, 3])
    p["kafka_truncation"] = rejoin_facts(c, t, 0, [1, 2])
    survived = c.driver("offsets", topic=t)
    p["after_rejoin"] = survived
    capture(c, out, sub="after")
    write_scenario(out, {
        "description": "unclean.leader.election.enable=true. 3 stops; 1 leads with ISR {1,2}; 2 stops; 1 leads "
                       "alone and acknowledges acks=all writes; 1 is killed; 3 (out of sync) returns and is elected "
                       "uncleanly, losing records acknowledged to producers. broker-*/ is captured then; after/ once "
                       "1 and 2 have returned and truncated.",
        "partitions": [p]})


@scenario("codecs")
def s_codecs(c, out):
    parts = []
    for codec in ("none", "gzip", "snappy", "lz4", "zstd"):
        t = f"codec-{codec}"
        c.driver("create", topic=t, assignment="1,2,3", config=topic_config({"max.message.bytes": 12000}))
        r1 = c.driver("produce", topic=t, count=120, acks="all", compression=codec, keys="mixed",
                      values="mixed", headers="true", value_size=150)
        # records near max.message.bytes (the batch must still fit under it)
        r2 = c.driver("produce", topic=t, count=3, base=120, acks="all", compression=codec,
                      value_size=11000, batch_size=16384, linger_ms=0)
        r3 = c.driver("produce", topic=t, count=60, base=123, acks="all", compression=codec, value_size=80)
        parts.append((t, acked_summary(r1, r2, r3)))
    time.sleep(1)
    capture(c, out)
    facts = [partition_facts(c, t, 0, [1, 2, 3], 1, a, captured_dir=out) for t, a in parts]
    write_scenario(out, {
        "description": "One topic per producer compression codec (none, gzip, snappy, lz4, zstd), written by Kafka's "
                       "Java producer: sequential, null and repeated keys, null values, record headers (one with a "
                       "null value), three records of 11000 bytes (max.message.bytes=12000), several segments per "
                       "partition. Captured live.",
        "partitions": facts})


@scenario("transactions")
def s_transactions(c, out):
    t = "txn"
    c.driver("create", topic=t, assignment="1,2,3", config=topic_config())
    tx = c.driver("txn", topic=t, txn_id="klf-txn-1", plan="commit:20,abort:15,commit:10,abort:5,commit:25")
    idem = c.driver("produce", topic=t, count=80, base=1000, acks="all", idempotent="true", max_in_flight=5, retries=5)
    tx2 = c.driver("txn", topic=t, txn_id="klf-txn-2", plan="abort:12,commit:8", leave_open="true")
    time.sleep(1)
    capture(c, out)
    p = partition_facts(c, t, 0, [1, 2, 3], 1, acked_summary(idem), captured_dir=out)
    p["transactions"] = {"klf-txn-1": tx, "klf-txn-2": tx2, "idempotent_producer": idem}
    write_scenario(out, {
        "description": "Transactional producer klf-txn-1 commits and aborts transactions; an idempotent producer "
                       "writes between them; klf-txn-2 aborts, commits, then leaves a transaction open (the "
                       "producer exits). Control batches, .txnindex entries and producer .snapshot files. Captured live.",
        "partitions": [p]})


@scenario("compaction")
def s_compaction(c, out):
    t = "compacted"
    c.driver("create", topic=t, assignment="1,2,3",
             config=topic_config({"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.01",
                                  "segment.ms": 2000, "delete.retention.ms": 600000,
                                  "min.compaction.lag.ms": 0}))
    r1 = c.driver("produce", topic=t, count=400, acks="all", keys="repeat", values="mixed", value_size=120)
    time.sleep(3)
    r2 = c.driver("produce", topic=t, count=50, base=400, acks="all", keys="repeat", value_size=120)

    def cleaned():
        ck = os.path.join(c.brokers[1].data, "cleaner-offset-checkpoint")
        return os.path.exists(ck) and t in open(ck).read()
    c.wait_until("the log cleaner to run", lambda: all(
        os.path.exists(os.path.join(c.brokers[n].data, "cleaner-offset-checkpoint")) and
        t in open(os.path.join(c.brokers[n].data, "cleaner-offset-checkpoint")).read() for n in BROKERS),
        timeout=120, interval=1)
    time.sleep(1)
    capture(c, out)
    p = partition_facts(c, t, 0, [1, 2, 3], 1, acked_summary(r1, r2), captured_dir=out)
    write_scenario(out, {
        "description": "cleanup.policy=compact with 7 distinct keys, every fifth value a "
                       "tombstone; segments roll every 2 s and the cleaner runs on every replica "
                       "(cleaner-offset-checkpoint names the topic) before the live capture: offset gaps and tombstones.",
        "partitions": [p]})


@scenario("elections")
def s_elections(c, out):
    t = "elect"
    c.driver("create", topic=t, assignment="1,2,3", config=topic_config({"min.insync.replicas": 1}))
    phases = []
    phases.append(c.driver("produce", topic=t, count=60, acks="all"))
    # forced: the leader shuts down (controlled shutdown moves leadership), then returns
    c.brokers[1].stop(); c.wait_leader(t, 2)
    phases.append(c.driver("produce", topic=t, count=60, base=60, acks="all"))
    c.brokers[1].start(); c.brokers[1].wait_port(); c.wait_leader(t, 2, isr=[1, 2, 3])
    # preferred election moves it back to 1
    c.driver("elect", topic=t, type="preferred"); c.wait_leader(t, 1)
    phases.append(c.driver("produce", topic=t, count=60, base=120, acks="all"))
    c.brokers[1].stop(); c.wait_leader(t, 2)
    c.brokers[2].stop(); c.wait_leader(t, 3)
    phases.append(c.driver("produce", topic=t, count=60, base=180, acks="all"))
    c.brokers[1].start(); c.brokers[2].start()
    c.brokers[1].wait_port(); c.brokers[2].wait_port(); c.wait_leader(t, 3, isr=[1, 2, 3])
    c.driver("elect", topic=t, type="preferred"); c.wait_leader(t, 1, isr=[1, 2, 3])
    phases.append(c.driver("produce", topic=t, count=60, base=240, acks="all"))
    time.sleep(1)
    capture(c, out)
    p = partition_facts(c, t, 0, [1, 2, 3], 1, acked_summary(*phases), captured_dir=out)
    p["leaders_in_order"] = [1, 2, 1, 2, 3, 1]
    write_scenario(out, {
        "description": "Clean leader changes: leader 1 stops (controlled shutdown) -> 2; 1 returns; preferred "
                       "election -> 1; 1 stops -> 2; 2 stops -> 3; both return; preferred election -> 1. 60 records "
                       "acks=all in each leadership; leader-epoch-checkpoint holds several epochs. Captured live.",
        "partitions": [p]})


@scenario("lag-window")
def s_lag_window(c, out):
    t = "lag"
    # replicas [1,3,2]: when 1 dies the controller picks 3, the follower that was paused
    c.driver("create", topic=t, assignment="1,3,2", config=topic_config({"min.insync.replicas": 2}))
    r1 = c.driver("produce", topic=t, count=100, acks="all")
    before = c.log_bytes(2, t)
    c.brokers[3].pause()
    bg = c.driver_bg("produce", topic=t, count=40, base=100, acks="all", request_timeout_ms=60000,
                     delivery_timeout_ms=90000, linger_ms=0, max_in_flight=5, retries=0)
    # the leader and follower 2 hold the records; follower 3 does not; the producer waits for 3
    c.wait_until("the in-flight records to reach follower 2", lambda: c.log_bytes(2, t) > before,
                 timeout=30, interval=0.2)
    st_isr = c.describe(t)
    c.brokers[1].kill9()
    c.brokers[3].resume()
    c.wait_leader(t, 3)
    r2 = c.wait_bg(bg, timeout=180)
    r3 = c.driver("produce", topic=t, count=20, base=140, acks="all")
    time.sleep(1)
    capture(c, out)
    p = partition_facts(c, t, 0, [1, 3, 2], 3, acked_summary(r1, r2, r3), nodes=(2, 3), captured_dir=out)
    p["replica_state"]["1"] = {"source": "killed (SIGKILL) before capture; see kafka_truncation log_end_offset_loaded",
                               "high_watermark_checkpoint": hw_from_checkpoint(os.path.join(out, "broker-1"), t, 0)}
    p["isr_when_leader_killed"] = st_isr["isr"]
    p["acked_by_phase"] = phases(before_pause=(r1, 1), in_flight_while_3_paused=(r2, 1), new_leader_3=(r3, 3))
    c.brokers[1].start(); c.brokers[1].wait_port()
    c.wait_leader(t, 3, isr=[1, 2, 3])
    p["kafka_truncation"] = rejoin_facts(c, t, 0, [1])
    p["kafka_truncation_before_capture"] = {"2": c.truncations(2, t, 0, since_start=False)}
    p["after_rejoin"] = c.driver("offsets", topic=t)
    capture(c, out, sub="after")
    write_scenario(out, {
        "description": "min.insync.replicas=2, acks=all. Follower 3 is paused (SIGSTOP) for less than "
                       "replica.lag.time.max.ms and stays in the ISR while a producer sends 40 more records; leader "
                       "1 and follower 2 append them, the producer waits for 3. Leader 1 is killed, 3 resumes and is "
                       "elected (first live ISR member in replica order [1,3,2]); 2 truncates as 3's follower. "
                       "broker-*/ is captured then; after/ once 1 has returned and truncated. acked_by_phase says "
                       "what the producer was told.",
        "partitions": [p]})


# A follower paused for less than replica.lag.time.max.ms (and than the
# broker session timeout): it stays in the ISR and registered
PAUSE_SECONDS = 15


def wait_hw_checkpoints(c, topic, partition, nodes):
    """Waits until the replication-offset-checkpoint of each live replica in
    `nodes` lists the leader's current high watermark (written every 200 ms):
    the capture then holds checkpoints that know every record committed."""
    def caught_up():
        hw = c.driver("offsets", topic=topic, partition=partition)["high_watermark"]
        return all(hw_from_checkpoint(c.brokers[n].log_dirs, topic, partition) == hw for n in nodes)
    c.wait_until(f"the high-watermark checkpoints of {nodes} to reach the leader's", caught_up,
                 timeout=60, interval=0.2)


def metadata_partition_history(data_dir, topic, partition, directories=False):
    """The partition's records in a node's metadata log (its
    __cluster_metadata-0 under `data_dir`) as Kafka's own kafka-dump-log
    --cluster-metadata-decoder prints them, on a scratch copy: the
    PartitionRecord and every PartitionChangeRecord in log order, each with
    its offset and append time (`time_ms`), and the fields it sets (leader,
    isr, ...). Leader and ISR changes in KRaft come only from these.
    With `directories`, each record keeps the log directory ids it assigns
    the replicas to (KRaft JBOD: `directories`, in replica order)."""
    mdir = os.path.join(data_dir, "__cluster_metadata-0")
    logs = sorted(f for f in os.listdir(mdir) if re.fullmatch(r"\d{20}\.log", f))
    scratch = os.path.join(WORK, "metadata-scratch")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    try:
        files = []
        for name in logs:
            shutil.copyfile(os.path.join(mdir, name), os.path.join(scratch, name))
            files.append(os.path.join(scratch, name))
        r = subprocess.run(["java", "-Xmx256m", "-XX:TieredStopAtLevel=1",
                            f"-Dlog4j2.configurationFile={HERE}/log4j2-client.properties",
                            "-cp", classpath(), dump_class(), "--deep-iteration", "--cluster-metadata-decoder",
                            "--files", ",".join(files)],
                           capture_output=True, text=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    topic_id, out = None, []
    for line in r.stdout.splitlines():
        m = re.match(r"^\| offset: (\d+) CreateTime: (-?\d+) .*? payload: (\{.*\})$", line)
        if not m:
            continue
        try:
            rec = json.loads(m.group(3))
        except ValueError:
            continue
        data = rec.get("data", {})
        if rec.get("type") == "TOPIC_RECORD" and data.get("name") == topic:
            topic_id = data.get("topicId")
        elif (rec.get("type") in ("PARTITION_RECORD", "PARTITION_CHANGE_RECORD") and topic_id is not None
              and data.get("topicId") == topic_id and data.get("partitionId") == partition):
            drop = ("topicId", "partitionId") if directories else ("topicId", "partitionId", "directories")
            fields = {k: v for k, v in data.items() if k not in drop}
            out.append(dict(fields, offset=int(m.group(1)), time_ms=int(m.group(2)), type=rec["type"]))
    if topic_id is None:
        raise RuntimeError(f"{topic} is not in the metadata log of {data_dir}")
    return out


@scenario("paused-follower")
def s_paused_follower(c, out):
    """A follower paused (SIGSTOP) for about 15 s, less than
    replica.lag.time.max.ms: it stays in the ISR while the leader takes
    acks=1 and acks=all writes without it; it resumes and the leader is
    killed at once, so that it is elected cleanly (from the ISR) while
    behind. Nothing is wrong with its files; the other follower and the
    old leader, ahead of it, truncate to it, which leaves index entries
    past the valid ones of their active segment."""
    t = "paused"
    # replicas [1,3,2]: when 1 dies the controller picks 3 (first live ISR
    # member in replica order), the follower that was paused. One segment
    # holds the whole partition (128 KiB; the truncation lands in the
    # active segment, whose indexes are never trimmed while the broker
    # runs); small batches (batch_size 1024) and index.interval.bytes 256
    # give an index entry for about every append.
    c.driver("create", topic=t, assignment="1,3,2",
             config=topic_config({"min.insync.replicas": 1, "index.interval.bytes": 256,
                                  "segment.index.bytes": 4096,
                                  ("segment.bytes" if release_tuple() < (4, 0) else "internal.segment.bytes"): 131072}))
    small = {"batch_size": 1024, "linger_ms": 0}
    r1 = c.driver("produce", topic=t, count=40, acks="all", **small)
    isr = {"before_pause": c.describe(t)}
    # both producers connect first, so that the pause is the incident alone
    armed_all = c.produce_armed(topic=t, count=20, base=40, acks="all", request_timeout_ms=60000,
                                delivery_timeout_ms=90000, max_in_flight=5, retries=0, **small)
    armed_one = c.produce_armed(topic=t, count=60, base=60, acks="1", **small)
    before = c.log_bytes(1, t)
    c.brokers[3].pause()
    paused_at = time.time()
    # acks=all: appended by 1 and 2, acknowledged only once 3 has them (it
    # stays in the ISR), so the producer waits
    armed_all.release()
    c.wait_until("the acks=all records on leader 1", lambda: c.log_bytes(1, t) > before, timeout=30, interval=0.1)
    # acks=1: acknowledged by leader 1 alone
    r2 = armed_one.go()
    c.wait_until("follower 2 to hold everything leader 1 holds",
                 lambda: c.log_bytes(2, t) == c.log_bytes(1, t), timeout=30, interval=0.1)
    # the incident itself: the follower stays stopped for about 15 s
    time.sleep(max(0.0, paused_at + PAUSE_SECONDS - time.time()))
    # SIGCONT to 3 and SIGKILL to 1 back to back: 3 has no time to fetch
    # from 1 in between
    c.brokers[3].proc.send_signal(signal.SIGCONT)
    c.brokers[1].proc.kill()
    resumed_at = time.time()
    c.brokers[3].paused = False
    log("node 3 resumed (SIGCONT)")
    c.brokers[1].kill9()
    le1 = c.leader_epoch(t, 0, 1)
    c.wait_leader(t, 3)
    isr["after_election"] = c.describe(t)
    elected = c.leader_epoch(t, 0, 3)
    r_all = armed_all.result(timeout=180)
    # production goes on briefly on the new leader, past the offsets the
    # old leader reached, in smaller records: the followers that truncated
    # write fewer index entries over those offsets than they had, and the
    # entries past the new ones stay in the active segment's index files
    r3 = c.driver("produce", topic=t, count=160, base=120, acks="all", value_size=20, **small)
    wait_hw_checkpoints(c, t, 0, (2, 3))
    capture(c, out)
    sal = salvage_now(out, "paused-follower")
    p = partition_facts(c, t, 0, [1, 3, 2], 3, acked_summary(r1, r_all, r2, r3), nodes=(2, 3), captured_dir=out)
    p["replica_state"]["1"] = {"source": "killed (SIGKILL) before capture; see kafka_truncation log_end_offset_loaded",
                               "leader_epoch": le1["leader_epoch"] if le1 else None,
                               "high_watermark_checkpoint": hw_from_checkpoint(os.path.join(out, "broker-1"), t, 0)}
    p["acked_by_phase"] = phases(before_pause_acks_all=(r1, 1), during_pause_acks_all=(r_all, 1),
                                 during_pause_acks_1=(r2, 1), new_leader_acks_all=(r3, 3))
    old_end = leo_by_kafka_dump(os.path.join(out, "broker-1"), t, 0)
    p["pause"] = {
        "node": 3, "signal": "SIGSTOP, then SIGCONT", "seconds": round(resumed_at - paused_at, 1),
        "paused_at_ms": int(paused_at * 1000), "resumed_at_ms": int(resumed_at * 1000),
        "note": "the leader (1) was killed (SIGKILL) right as the follower resumed (the two signals sent "
                "back to back); a fetch the follower had sent before it stopped may have brought it one "
                "batch (replica.fetch.max.bytes 1024) while it was stopped",
    }
    p["isr_observed"] = {k: {"leader": v["leader"], "isr": v["isr"]} for k, v in isr.items()}
    # clean: unclean elections are off, so the controller elected 3 from the
    # ISR; the metadata log says which ISR it held then
    clean = True
    if zookeeper_mode():
        p["isr_history"] = None
        p["isr_history_source"] = "none: a ZooKeeper-mode cluster has no metadata log (isr_observed is the Admin API's view)"
    else:
        p["isr_history"] = metadata_partition_history(c.controller.data, t, 0)
        p["isr_history_source"] = "kafka-dump-log --cluster-metadata-decoder on the controller's metadata log"
        held = None
        for rec in p["isr_history"]:
            if rec.get("leader") == 3 and held is not None:
                clean = 3 in held and rec.get("leaderRecoveryState", 0) == 0
                break
            held = rec.get("isr", held)
        if not clean:
            raise RuntimeError(f"3 was not elected from the ISR: {p['isr_history']}")
    # 3's log end when it became leader is the start offset of its epoch
    p["election"] = {
        "leader": 3, "clean": clean,
        "leader_epoch": elected["leader_epoch"] if elected else None,
        "new_leader_log_end_offset": elected["start_offset"] if elected else None,
        "old_leader_log_end_offset": old_end,
        "behind_by": (old_end - elected["start_offset"]) if elected and old_end is not None else None,
    }
    p["read_at_capture"] = c.driver("read", topic=t)
    # Kafka's truncations before the capture: 2, ahead of the new leader,
    # truncates to it as its follower (3 never truncates)
    p["kafka_truncation_before_capture"] = {str(n): c.truncations(n, t, 0, since_start=False) for n in (2, 3)}
    c.brokers[1].start(); c.brokers[1].wait_port()
    c.wait_leader(t, 3, isr=[1, 2, 3])
    p["kafka_truncation"] = rejoin_facts(c, t, 0, [1])
    p["after_rejoin"] = c.driver("offsets", topic=t)
    p["after_recovery"] = c.driver("read", topic=t)
    capture(c, out, sub="after")
    r = salvage_replay(c, sal, t, 0)
    if r is not None:
        p["salvage_replay"] = r
    write_scenario(out, {
        "description": f"min.insync.replicas=1, replicas [1,3,2]; one 128 KiB segment holds the partition, "
                       "index.interval.bytes=256, batches of at most 1 KiB, replica.fetch.max.bytes=1024 (a "
                       f"follower fetches a batch at a time). Follower 3 is paused (SIGSTOP) for about "
                       f"{PAUSE_SECONDS} s, less than replica.lag.time.max.ms, and stays in the ISR while leader "
                       "1 takes 20 acks=all records (appended by 1 and 2, the producer waiting for 3) and 60 "
                       "acks=1 records. 3 resumes and 1 is killed (SIGKILL) at once; 3 is elected cleanly (from "
                       "the ISR) while behind (election); 160 acks=all records of 20-byte values go to 3. "
                       "broker-*/ is captured then (3 and 2 live, 1 as the kill left it); after/ once 1 has "
                       "restarted, recovered, truncated and caught up. isr_history is the partition's records in "
                       "the metadata log (the controller writes a no-op record every 2 s, "
                       "metadata.max.idle.interval.ms, to keep it small); read_at_capture and after_recovery are "
                       "what a consumer read; kafka_truncation_before_capture the truncations 2 and 3 logged "
                       "before the capture.",
        "partitions": [p]})


def read_meta_properties(log_dir):
    """A log directory's meta.properties as a dict."""
    out = {}
    with open(os.path.join(log_dir, "meta.properties")) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                k, v = line.split("=", 1)
                out[k.strip()] = v.strip()
    return out


def log_dir_layout(base):
    """Every captured node folder under `base` (broker-<id>/,
    controller-<id>/): each of its log directories (node_log_dirs, by path
    relative to `base`) with the node id and directory id its
    meta.properties gives and the partition folders it holds."""
    layout = {}
    for name in sorted(os.listdir(base)):
        nd = os.path.join(base, name)
        if not NODE_FOLDER.match(name) or not os.path.isdir(nd):
            continue
        entry = {}
        for d in node_log_dirs(nd):
            props = read_meta_properties(d)
            parts = sorted(x for x in os.listdir(d)
                           if os.path.isdir(os.path.join(d, x)) and re.fullmatch(r".+-\d+", x))
            entry[os.path.relpath(d, base)] = {"node_id": int(props.get("node.id", props.get("broker.id", -1))),
                                              "directory_id": props.get("directory.id"),
                                              "partitions": parts}
        layout[name] = entry
    return layout


JBOD_LOG_DIRS = 2
JBOD_PARTITIONS = 4


@scenario("jbod")
def s_jbod(c, out):
    """Brokers with two log directories each (JBOD: log.dirs d1,d2, each
    formatted with its own meta.properties and directory.id). A topic of 4
    partitions (replication factor 3) led by broker 1: each broker places
    its replicas on the log directory holding the fewest partitions, so
    they spread over both. Leader 1 takes acks=1 writes on every partition
    while followers 2 and 3 are paused (SIGSTOP), and is killed (SIGKILL);
    the followers resume and lead in a new epoch (2 for the partitions
    whose replicas are [1,2,3], 3 for those of [1,3,2]); 1 returns and
    truncates its divergent tails, in both of its log directories."""
    t = "jbod"
    parts = list(range(JBOD_PARTITIONS))
    assignment = ["1,2,3" if p % 2 == 0 else "1,3,2" for p in parts]
    replicas = {p: [int(x) for x in assignment[p].split(",")] for p in parts}
    # the first live in-sync replica in replica order leads once 1 is gone
    new_leader = {p: replicas[p][1] for p in parts}
    c.driver("create", topic=t, assignment=";".join(assignment), config=topic_config({"min.insync.replicas": 1}))
    # the topic is ready by the controller's metadata before every broker
    # has made its replicas' folders
    c.wait_until("every replica's partition folder", lambda: all(
        os.path.isdir(partition_dir(c.brokers[n].log_dirs, t, p)) for n in BROKERS for p in parts),
        timeout=60, interval=0.2)
    placed = {n: {p: os.path.basename(os.path.dirname(partition_dir(c.brokers[n].log_dirs, t, p))) for p in parts}
              for n in BROKERS}
    for n, where in placed.items():
        if len(set(where.values())) < JBOD_LOG_DIRS:
            raise RuntimeError(f"broker {n} put every partition of {t} in one log directory: {where}")
    log(f"jbod: placement {placed}")
    r1 = {p: c.driver("produce", topic=t, partition=p, count=40, acks="all") for p in parts}
    # small batches (1 KiB, a few records each): a fetch a paused follower
    # had outstanding brings it one batch at most, the rest of the acks=1
    # writes stay on the leader alone
    armed = {p: c.produce_armed(topic=t, partition=p, count=30, base=40, acks="1", batch_size=1024, linger_ms=0)
             for p in parts}
    c.brokers[2].pause(); c.brokers[3].pause()
    for a in armed.values():
        a.release()
    r2 = {p: a.result() for p, a in armed.items()}
    c.brokers[1].kill9()
    le1 = {p: c.leader_epoch(t, p, 1) for p in parts}
    c.brokers[2].resume(); c.brokers[3].resume()
    for p in parts:
        c.wait_leader(t, new_leader[p], partition=p)
    r3 = {p: c.driver("produce", topic=t, partition=p, count=20, base=70, acks="all") for p in parts}
    for p in parts:
        wait_hw_checkpoints(c, t, p, (2, 3))
    capture(c, out)
    capture_node(c.controller, os.path.join(out, f"controller-{CONTROLLER_ID}"))
    sal = salvage_now(out, "jbod")
    facts = []
    for p in parts:
        f = partition_facts(c, t, p, replicas[p], new_leader[p], acked_summary(r1[p], r2[p], r3[p]),
                            nodes=(2, 3), captured_dir=out)
        f["replica_state"]["1"] = {
            "source": "killed (SIGKILL) before capture; see kafka_truncation log_end_offset_loaded",
            "leader_epoch": le1[p]["leader_epoch"] if le1[p] else None,
            "high_watermark_checkpoint": hw_from_checkpoint(os.path.join(out, "broker-1"), t, p)}
        f["acked_by_phase"] = phases(before_pause_acks_all=(r1[p], 1), old_leader_acks_1=(r2[p], 1),
                                     new_leader_acks_all=(r3[p], new_leader[p]))
        f["log_dir_at_capture"] = {
            str(n): os.path.relpath(os.path.dirname(partition_dir(os.path.join(out, f"broker-{n}"), t, p)), out)
            for n in replicas[p]}
        facts.append(f)
    c.brokers[1].start(); c.brokers[1].wait_port()
    for p in parts:
        c.wait_leader(t, new_leader[p], partition=p, isr=[1, 2, 3])
    for p in parts:
        facts[p]["kafka_truncation"] = rejoin_facts(c, t, p, [1])
        # what a consumer reads once every replica is in sync
        facts[p]["after_recovery"] = c.driver("read", topic=t, partition=p)
    capture(c, out, sub="after")
    for p in parts:
        r = salvage_replay(c, sal, t, p)
        if r is not None:
            facts[p]["salvage_replay"] = r
    # what the controller's metadata log assigns each replica to (the
    # directory ids of KIP-858), against the log directory it is in
    layout = log_dir_layout(out)
    dir_ids = {f"{e['node_id']}:{e['directory_id']}": path for node in layout.values() for path, e in node.items()}
    for p in parts:
        recs = metadata_partition_history(os.path.join(out, f"controller-{CONTROLLER_ID}"), t, p, directories=True)
        dirs = next((r["directories"] for r in reversed(recs) if r.get("directories")), None)
        if dirs is not None:
            assigned = {str(n): dir_ids.get(f"{n}:{d}", d) for n, d in zip(replicas[p], dirs)}
            facts[p]["log_dir_in_metadata_log"] = assigned
            if assigned != facts[p]["log_dir_at_capture"]:
                log(f"jbod: {t}-{p}: the metadata log assigns {assigned}, the capture has "
                    f"{facts[p]['log_dir_at_capture']}")
    write_scenario(out, {
        "description": "KRaft JBOD: every broker has two log directories (log.dirs d1,d2, each with its own "
                       "meta.properties and directory.id; the metadata log in d1), captured as broker-<id>/d1 and "
                       "broker-<id>/d2. Topic jbod has 4 partitions, replicas [1,2,3] and [1,3,2] alternating, "
                       "min.insync.replicas=1; each broker put its replicas on both log directories (Kafka picks the "
                       "one with the fewest partitions; log_dir_at_capture, and log_dir_in_metadata_log as the "
                       "controller assigned them). 40 acks=all records per partition; leader 1 takes 30 acks=1 records "
                       "per partition in small batches while followers 2 and 3 are paused (SIGSTOP); 1 is killed "
                       "(SIGKILL); the followers resume, 2 leads partitions 0 and 2, 3 leads 1 and 3, and each takes 20 "
                       "acks=all records. broker-*/ and controller-100/ are captured then (2 and 3 live, 1 as the kill "
                       "left it); after/ once 1 has restarted, truncated and caught up (after_recovery: what a "
                       "consumer read then).",
        "log_dirs": layout,
        "partitions": facts})


@scenario("torn-write")
def s_torn_write(c, out):
    t = "torn"
    c.driver("create", topic=t, assignment="1,2,3", config=topic_config({"min.insync.replicas": 1}))
    r1 = c.driver("produce", topic=t, count=200, acks="all")
    # a bounded amount of data, so the capture stays small however late the kill lands
    bg = c.driver_bg("produce", topic=t, count=6000, base=200, acks="1", value_size=100, linger_ms=0,
                     batch_size=4096, max_in_flight=5, retries=0, delivery_timeout_ms=20000)
    c.wait_until("heavy produce under way", lambda: c.log_bytes(1, t) > 60000, timeout=60, interval=0.1)
    c.brokers[1].kill9()
    c.brokers[2].kill9()
    c.brokers[3].kill9()
    try:
        r2 = c.wait_bg(bg, timeout=120)
    except RuntimeError as e:
        r2 = {"acked": 0, "max_offset": -1, "error": str(e)[:200]}
    capture(c, out)
    p = partition_facts(c, t, 0, [1, 2, 3], None, acked_summary(r1, r2), nodes=(), captured_dir=out)
    p["leader_at_capture"] = 1
    p["isr_at_capture"] = None
    p["leader_epoch_at_capture"] = 0
    p["replica_state"] = {str(n): {"source": "all brokers killed (SIGKILL) during produce; see kafka_truncation",
                                   "high_watermark_checkpoint": hw_from_checkpoint(os.path.join(out, f"broker-{n}"), t, 0)}
                          for n in BROKERS}
    c.brokers[1].start(); c.brokers[2].start(); c.brokers[3].start()
    for n in BROKERS:
        c.brokers[n].wait_port()
    c.wait_until("a leader", lambda: c.describe(t)["leader"] is not None, timeout=90)
    p["kafka_truncation"] = rejoin_facts(c, t, 0, list(BROKERS))
    p["leader_after_restart"] = c.describe(t)["leader"]
    write_scenario(out, {
        "description": "All three brokers are killed (SIGKILL) while a producer writes with acks=1: segments end "
                       "wherever the writes stopped, active offset and time indexes stay preallocated (trailing "
                       "zero entries), checkpoints lag. broker-*/ is the state the kill left; kafka_truncation is "
                       "what each broker reported when it recovered the log on restart.",
        "partitions": [p]})


@scenario("internal-topics")
def s_internal(c, out):
    t = "events"
    c.driver("create", topic=t, assignment="1,2,3", config=topic_config())
    r1 = c.driver("produce", topic=t, count=100, acks="all")
    g1 = c.driver("consume", topic=t, group="klf-group-classic", protocol="classic", count=100)
    g2 = c.driver("consume", topic=t, group="klf-group-consumer", protocol="consumer", count=100)
    tx = c.driver("txn", topic=t, txn_id="klf-internal-txn", plan="commit:5,abort:5")
    share = None
    if release_tuple() >= (4, 2):
        # a share group (KIP-932, on by default from 4.2): __share_group_state
        c.driver("alter-config", resource="group", group="klf-share-group",
                 config="share.auto.offset.reset=earliest")
        share = c.driver("share-consume", topic=t, group="klf-share-group", count=100)
    time.sleep(2)
    capture(c, out)
    p = partition_facts(c, t, 0, [1, 2, 3], 1, acked_summary(r1), captured_dir=out)
    p["groups"] = {"klf-group-classic": g1, "klf-group-consumer": g2}
    p["transactions"] = {"klf-internal-txn": tx}
    internal = ["__consumer_offsets", "__transaction_state"]
    if share is not None:
        p["share_groups"] = {"klf-share-group": share}
        internal.append("__share_group_state")
    facts = [p]
    for it in internal:
        d = c.describe(it)
        facts.append({"topic": it, "partition": 0, "replicas": d["replicas"], "leader_at_capture": d["leader"],
                      "isr_at_capture": d["isr"], "internal": True,
                      "leader_epoch_at_capture": (c.leader_epoch(it, 0, d["leader"]) or {}).get("leader_epoch"),
                      "replica_state": replica_state(c, it, 0, d["leader"], BROKERS), "acked": {"count": 0, "max_offset": -1}})
    write_scenario(out, {
        "description": "A classic and a consumer-protocol (KIP-848) group consume and commit offsets "
                       "(__consumer_offsets); a transactional producer commits and aborts (__transaction_state); "
                       + ("a share group (KIP-932) consumes and acknowledges (__share_group_state); " if share else "")
                       + "every broker holds the __cluster_metadata log. Captured live.",
        "partitions": facts})


@scenario("coordinators")
def s_coordinators(c, out):
    """The coordinators' records at scale: transactions over 17 partitions of
    two topics (the transaction log lists them all; the Scala decoders print
    them in their hash set's order), a classic group of 14 members (its
    group metadata lists them all; the Scala decoder prints them in its hash
    map's order, past the growth at 12), a consumer-protocol group of 3, and
    a Kafka Streams application in a streams group (KIP-1071, 4.2 on)."""
    wide, side = "wide", "side"
    c.driver("create", topic=wide, assignment=";".join(str(1 + i % 3) for i in range(14)),
             config=topic_config())
    c.driver("create", topic=side, assignment="1;2;3", config=topic_config())
    tx = c.driver("txn-wide", topics=f"{wide}:14,{side}:3", txn_id="klf-wide-txn", plan="commit,abort")
    tx_side = c.driver("txn-wide", topics=f"{side}:3", txn_id="klf-side-txn", plan="commit,commit")
    classic = c.driver("group-members", topic=wide, group="klf-big-classic", protocol="classic",
                       members=14, count=14)
    consumer = c.driver("group-members", topic=wide, group="klf-three-consumer", protocol="consumer",
                        members=3, count=14)
    streams = None
    if release_tuple() >= (4, 2):
        c.driver("create", topic="streams-out", assignment="1", config=topic_config())
        state = os.path.join(c.dir, "streams-state")
        streams = c.driver("streams", topic=side, out_topic="streams-out", application_id="klf-streams",
                           count=9, state_dir=state)
    # left open: the transaction log holds an Ongoing entry with every partition
    open_tx = c.driver("txn-wide", topics=f"{wide}:14,{side}:3", txn_id="klf-open-txn", plan="commit",
                       leave_open="true")
    time.sleep(2)
    capture(c, out)
    facts = []
    for it in ("__consumer_offsets", "__transaction_state"):
        d = c.describe(it)
        facts.append({"topic": it, "partition": 0, "replicas": d["replicas"], "leader_at_capture": d["leader"],
                      "isr_at_capture": d["isr"], "internal": True,
                      "leader_epoch_at_capture": (c.leader_epoch(it, 0, d["leader"]) or {}).get("leader_epoch"),
                      "replica_state": replica_state(c, it, 0, d["leader"], BROKERS),
                      "acked": {"count": 0, "max_offset": -1}})
    facts[0]["groups"] = {"klf-big-classic": classic, "klf-three-consumer": consumer}
    if streams is not None:
        facts[0]["streams_groups"] = {"klf-streams": streams}
    facts[1]["transactions"] = {"klf-wide-txn": tx, "klf-side-txn": tx_side, "klf-open-txn": open_tx}
    write_scenario(out, {
        "description": "Transactions over 17 partitions of two topics (committed, aborted, one left open), a "
                       "classic consumer group of 14 members and a consumer-protocol group of 3 on a 14-partition "
                       "topic" + (", a Kafka Streams application in a streams group" if streams else "")
                       + ": __consumer_offsets and __transaction_state records at the sizes where the coordinators' "
                       "hash tables grow. Captured live.",
        "partitions": facts})


def checkpoint_lists(c, nodes, topics, hw):
    """Whether each node's replication-offset-checkpoint lists every topic
    (partition 0) at `hw`."""
    return all(hw_from_checkpoint(c.brokers[n].data, t, 0) == hw for n in nodes for t in topics)


@scenario("unclean-stale-hw")
def s_unclean_stale_hw(c, out):
    """The in-sync replicas are killed right after acks=all writes, before
    their replication-offset-checkpoint (written every 60 s here) records
    the new high watermark; an out-of-sync replica is elected uncleanly.
    stale-0 has no consumer; on stale-group-0 a group consumed and committed
    into the soon-lost range."""
    topics = ("stale", "stale-group")
    cfg = topic_config({"min.insync.replicas": 1, "unclean.leader.election.enable": "true"})
    for t in topics:
        c.driver("create", topic=t, assignment="1,2,3", config=cfg)
    first = {t: c.driver("produce", topic=t, count=100, acks="all") for t in topics}
    # the group's first commit while all three run (creates __consumer_offsets on 1, 2, 3)
    g1 = c.driver("consume", topic="stale-group", group="klf-stale", count=50)
    c.brokers[3].stop()
    for t in topics:
        c.wait_leader(t, 1, isr=[1, 2])
    # the checkpoint that goes stale: both topics at 100 on 1 and 2
    c.wait_until("replication-offset-checkpoint at 100", lambda: checkpoint_lists(c, (1, 2), topics, 100),
                 timeout=150, interval=0.2)
    second = {t: c.driver("produce", topic=t, count=100, base=100, acks="all") for t in topics}
    g2 = c.driver("consume", topic="stale-group", group="klf-stale", count=100)
    c.brokers[1].kill9()
    c.brokers[2].kill9()
    if not checkpoint_lists(c, (1, 2), topics, 100):
        raise RuntimeError("a replication-offset-checkpoint was written after the writes; not stale")
    c.brokers[3].start(); c.brokers[3].wait_port()
    for t in topics:
        def elected(t=t):
            c.driver("elect", topic=t, type="unclean", check=False)
            d = c.describe(t)
            return d if d["leader"] == 3 else None
        c.wait_until(f"unclean election of 3 for {t}", elected, timeout=90, interval=2)
    third = {t: c.driver("produce", topic=t, count=20, base=200, acks="all") for t in topics}
    time.sleep(1)
    capture(c, out)
    sal = salvage_now(out, "unclean-stale-hw")
    parts = []
    for t in topics:
        p = partition_facts(c, t, 0, [1, 2, 3], 3, acked_summary(first[t], second[t], third[t]), nodes=(3,),
                            captured_dir=out)
        for n in (1, 2):
            p["replica_state"][str(n)] = {"source": "killed (SIGKILL) right after the acks=all writes",
                                          "high_watermark_checkpoint": hw_from_checkpoint(os.path.join(out, f"broker-{n}"), t, 0)}
        p["acked_by_phase"] = phases(isr_123=(first[t], 1), isr_12=(second[t], 1), unclean_leader_3=(third[t], 3))
        if t == "stale-group":
            p["groups"] = {"klf-stale": {"before_stop": g1, "before_kill": g2}}
        parts.append(p)
    c.brokers[1].start(); c.brokers[2].start()
    c.brokers[1].wait_port(); c.brokers[2].wait_port()
    for t, p in zip(topics, parts):
        c.wait_leader(t, 3, isr=[1, 2, 3])
        p["kafka_truncation"] = rejoin_facts(c, t, 0, [1, 2])
        p["after_rejoin"] = c.driver("offsets", topic=t)
        p["after_recovery"] = c.driver("read", topic=t)
    capture(c, out, sub="after")
    for t, p in zip(topics, parts):
        r = salvage_replay(c, sal, t, 0)
        if r is not None:
            p["salvage_replay"] = r
    write_scenario(out, {
        "description": "unclean.leader.election.enable=true, replica.high.watermark.checkpoint.interval.ms=60000. "
                       "3 stops; 1 leads with ISR {1,2}; once both checkpoints say 100, 100 more acks=all writes "
                       "go to each of stale-0 and stale-group-0, a group (klf-stale) consumes stale-group-0 to 150 "
                       "and commits, then 1 and 2 are killed (SIGKILL) before their checkpoints move; 3 (out of "
                       "sync) is elected uncleanly and takes 20 writes. broker-*/ is captured then; after/ once 1 "
                       "and 2 have returned and truncated; after_recovery is what a consumer then read.",
        "partitions": parts})


def resume_truth(c, t, group, protocol):
    """What a restarted consumer of `group` fetches first under each
    auto.offset.reset, and what the group has committed (as
    kafka-consumer-groups --describe reads it)."""
    out = {"protocol": protocol, "committed": c.driver("group-offsets", group=group)}
    for reset in ("earliest", "latest", "none"):
        out[reset] = c.driver("resume", group=group, protocol=protocol, topic=t, reset=reset, timeout_ms=40000)
    return out


def find_hanging(c, broker):
    """kafka-transactions.sh find-hanging, Kafka's own tool, on one broker."""
    r = subprocess.run(["java", "-Xmx128m", "-XX:TieredStopAtLevel=1",
                        f"-Dlog4j2.configurationFile={HERE}/log4j2-client.properties",
                        "-cp", classpath(), "org.apache.kafka.tools.TransactionsCommand",
                        "--bootstrap-server", c.bootstrap, "find-hanging", "--broker-id", str(broker),
                        "--max-transaction-timeout", "0"],
                       capture_output=True, text=True, timeout=120)
    lines = [l for l in r.stdout.splitlines() if l.strip()]
    rows = []
    if lines:
        head = lines[0].split()
        for l in lines[1:]:
            rows.append(dict(zip(head, l.split())))
    return {"exit": r.returncode, "stdout": r.stdout, "stderr": r.stderr[-1000:], "rows": rows}


def salvage_now(out, name):
    """Runs `klf salvage` on the capture just taken (before any rejoin)."""
    if KLF[0] is None:
        return None
    dst = os.path.join(WORK, f"salvage-{name}")
    shutil.rmtree(dst, ignore_errors=True)
    r = subprocess.run([KLF[0], "salvage", out, "--out", dst], capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise RuntimeError(f"klf salvage failed ({r.returncode}): {r.stderr[-2000:]}")
    return dst


def salvage_replay(c, sal, topic, partition):
    """Replays what klf salvaged for topic-partition into the recovered
    cluster with Kafka's own producer (Driver replay), then reads the
    partition back."""
    if sal is None:
        return None
    m = json.load(open(os.path.join(sal, "manifest.json")))
    part = next((x for x in m["partitions"] if x["topic"] == topic and x["partition"] == partition), None)
    if part is None:
        return {"salvaged": 0}
    rep = c.driver("replay", topic=topic, partition=partition, file=os.path.join(sal, part["files"]["records"]))
    after = c.driver("read", topic=topic, partition=partition)
    return {"salvaged": part["records"], "replayed": rep["replayed"], "skipped": rep["skipped"],
            "after_replay": after}


@scenario("impact")
def s_impact(c, out):
    """Consumer groups, transactions and idempotent producers across an
    unclean election. `orders` has replicas [1, 3]; the coordinators'
    topics (__consumer_offsets, __transaction_state) have 1, 2, 3, so they
    keep every commit when 1 dies: broker 2 leads them then."""
    t = "orders"
    c.driver("create", topic=t, assignment="1,3",
             config=topic_config({"min.insync.replicas": 1, "unclean.leader.election.enable": "true"}))
    r1 = c.driver("produce", topic=t, count=100, acks="all")
    # a committed and an aborted transaction that both replicas hold
    tx = c.driver("txn", topic=t, txn_id="klf-impact-done", plan="commit:10,abort:5")
    groups = {}
    groups["behind-classic"] = c.driver("consume", topic=t, group="behind-classic", protocol="classic", count=60)
    groups["behind-consumer"] = c.driver("consume", topic=t, group="behind-consumer", protocol="consumer", count=40)
    # an idempotent producer whose first records both replicas hold
    p1_first, p1 = c.driver_held("produce-hold", topic=t, counts="20,30", base=1000, then=3)
    # a transaction whose records reach 3 while its COMMIT marker does not
    held_first, held = c.driver_held("txn-hold", topic=t, txn_id="klf-impact-hanging", count=5, end="commit")
    c.brokers[3].stop()
    c.wait_leader(t, 1, isr=[1])
    held_done = held.go()
    hw = c.wait_until("the COMMIT marker on leader 1 (LSO = HW)", lambda: (lambda o: o if o["last_stable_offset"] == o["high_watermark"] else None)(
        c.driver("offsets", topic=t)), timeout=60)
    # written while 3 is down: lost when 3 is elected
    p1_second = p1.go()
    p2_first, p2 = c.driver_held("produce-hold", topic=t, counts="25", base=2000, then=3)
    r_lost = c.driver("produce", topic=t, count=30, base=3000, acks="all")
    inside = p1_second["max_offset"] - 5
    groups["inside-classic"] = c.driver("consume", topic=t, group="inside-classic", protocol="classic",
                                        until_offset=inside)
    groups["inside-consumer"] = c.driver("consume", topic=t, group="inside-consumer", protocol="consumer",
                                         until_offset=p2_first["max_offset"] - 3)
    groups["past-classic"] = c.driver("consume", topic=t, group="past-classic", protocol="classic", count=-1)
    groups["past-consumer"] = c.driver("consume", topic=t, group="past-consumer", protocol="consumer", count=-1)
    end_before = c.driver("offsets", topic=t)
    # a commit without a leader epoch (Admin API, as offset-reset tooling writes it), past the end
    groups["past-no-epoch"] = c.driver("alter-offsets", group="past-no-epoch", topic=t, offset=end_before["high_watermark"])
    c.brokers[1].kill9()
    for it in ("__consumer_offsets", "__transaction_state"):
        c.wait_leader(it, 2)
    c.brokers[3].start(); c.brokers[3].wait_port()

    def elected():
        c.driver("elect", topic=t, type="unclean", check=False)
        d = c.describe(t)
        return d if d["leader"] == 3 else None
    c.wait_until("unclean election of 3", elected, timeout=90, interval=2)
    for it in ("__consumer_offsets", "__transaction_state"):
        c.wait_leader(it, 2, isr=[2, 3])
    r_new = c.driver("produce", topic=t, count=20, base=4000, acks="all")
    time.sleep(1)
    capture(c, out)
    sal = salvage_now(out, "impact")
    p = partition_facts(c, t, 0, [1, 3], 3, acked_summary(r1, p1_first, p1_second, p2_first, r_lost, r_new),
                        nodes=(3,), captured_dir=out)
    p["replica_state"]["1"] = {"source": "killed (SIGKILL) before capture",
                               "high_watermark_before_kill": end_before["high_watermark"],
                               "high_watermark_checkpoint": hw_from_checkpoint(os.path.join(out, "broker-1"), t, 0)}
    p["acked_by_phase"] = phases(isr_13=(r1, 1), p1_first=(p1_first, 1), p1_second_isr_1=(p1_second, 1),
                                 p2_isr_1=(p2_first, 1), isr_1=(r_lost, 1), unclean_leader_3=(r_new, 3))
    truth = {"transactions": {"klf-impact-done": tx, "klf-impact-hanging": dict(held_first, **held_done)},
             "offsets_leader_1_before_kill": end_before,
             "marker_written": hw}
    # Kafka's own view after the election, before any replica rejoins
    truth["offsets_after"] = c.driver("offsets", topic=t)
    truth["read_committed"] = c.driver("read", topic=t, isolation="read_committed", timeout_ms=30000)
    truth["producers_on_leader"] = c.driver("producers", topic=t)
    truth["find_hanging"] = find_hanging(c, 3)
    truth["groups"] = {}
    for g, committed in groups.items():
        proto = "consumer" if g.endswith("-consumer") else "classic"
        truth["groups"][g] = dict(resume_truth(c, t, g, proto), commit=committed)
    # the producers that lived through the incident send again
    mark = os.path.getsize(c.brokers[3].logfile)
    truth["producers_after"] = {"p1": dict(p1.go(), first=p1_first, second=p1_second),
                                "p2": dict(p2.go(), first=p2_first)}
    # what the new leader answered them: the sequence errors it logged
    with open(c.brokers[3].logfile, errors="replace") as f:
        f.seek(mark)
        text = f.read()
    truth["leader_sequence_errors"] = [
        {"producer_id": int(m.group(1)), "offset": int(m.group(2)), "incoming_sequence": int(m.group(3)),
         "current_end_sequence": int(m.group(4)), "error": "OutOfOrderSequenceException"}
        for m in re.finditer(r"OutOfOrderSequenceException: Out of order sequence number for producer (\d+) at offset "
                             r"(\d+) in partition \S+: (-?\d+) \(incoming seq\. number\), (-?\d+) \(current end "
                             r"sequence number\)", text)]
    truth["leader_unknown_producer_errors"] = re.findall(r"UnknownProducerIdException: ([^\n]*)", text)
    truth["producers_on_leader_after"] = c.driver("producers", topic=t)
    p["impact_truth"] = truth
    c.brokers[1].start(); c.brokers[1].wait_port()
    c.wait_leader(t, 3, isr=[1, 3])
    p["kafka_truncation"] = rejoin_facts(c, t, 0, [1])
    p["after_rejoin"] = c.driver("offsets", topic=t)
    p["after_recovery"] = c.driver("read", topic=t)
    capture(c, out, sub="after")
    r = salvage_replay(c, sal, t, 0)
    if r is not None:
        p["salvage_replay"] = r
    internal = []
    for it in ("__consumer_offsets", "__transaction_state"):
        d = c.describe(it)
        internal.append({"topic": it, "partition": 0, "replicas": d["replicas"], "leader_at_capture": 2,
                         "isr_at_capture": [2, 3], "internal": True,
                         "leader_epoch_at_capture": (c.leader_epoch(it, 0, 2) or {}).get("leader_epoch"),
                         "replica_state": {}, "acked": {"count": 0, "max_offset": -1}})
    write_scenario(out, {
        "description": "orders has replicas [1,3], unclean.leader.election.enable=true, min.insync.replicas=1. "
                       "Groups commit behind the soon-lost range; an idempotent producer p1 and a transaction "
                       "klf-impact-hanging write while both replicas follow; 3 stops cleanly; the transaction commits "
                       "(its COMMIT marker reaches 1 only); p1, a new idempotent producer p2 and a plain producer "
                       "write with ISR {1}; classic and consumer-protocol groups commit inside and past that range, "
                       "and one group's offset is set past it without a leader epoch; 1 is killed; 3 returns and is "
                       "elected uncleanly and takes 20 writes. broker-*/ is captured then. impact_truth is Kafka's "
                       "own view after the election: what a restarted consumer of each group fetched under each "
                       "auto.offset.reset, the leader's producer state, find-hanging, where a read_committed "
                       "consumer stopped, what p1 and p2 were told when they sent again. after/ once 1 rejoined.",
        "partitions": [p] + internal})


def share_groups_describe(c, group):
    """kafka-share-groups.sh --describe --offsets, Kafka's own tool: its
    text and its rows (GROUP TOPIC PARTITION START-OFFSET LAG ...)."""
    r = subprocess.run(["java", "-Xmx128m", "-XX:TieredStopAtLevel=1",
                        f"-Dlog4j2.configurationFile={HERE}/log4j2-client.properties",
                        "-cp", classpath(), "org.apache.kafka.tools.consumer.group.ShareGroupCommand",
                        "--bootstrap-server", c.bootstrap, "--describe", "--group", group, "--offsets"],
                       capture_output=True, text=True, timeout=120)
    lines = [l for l in r.stdout.splitlines() if l.strip()]
    rows = []
    head = None
    for l in lines:
        cols = l.split()
        if cols and cols[0] == "GROUP":
            head = cols
        elif head is not None:
            rows.append(dict(zip(head, cols)))
    return {"exit": r.returncode, "stdout": r.stdout, "stderr": r.stderr[-1000:], "rows": rows}


def start_offset_refusals(text):
    """The share partition's refusals to move its start offset back to the
    log start, which Kafka logs each time a share fetch past the log end is
    answered OFFSET_OUT_OF_RANGE (SharePartition.updateCacheAndOffsets): each
    distinct one, with how often it was logged."""
    seen = {}
    for m in re.finditer(r"The log start offset: (-?\d+) is not greater than the start offset: (-?\d+) "
                         r"for the share partition: (\S+)", text):
        k = (int(m.group(1)), int(m.group(2)), m.group(3))
        seen[k] = seen.get(k, 0) + 1
    return [{"log_start_offset": a, "start_offset": b, "share_partition": sp, "times": n}
            for (a, b, sp), n in seen.items()]


@scenario("share-unclean")
def s_share_unclean(c, out):
    """A share group (KIP-932) across an unclean election. `shared` has
    replicas [1, 3]; the coordinators' topics (__consumer_offsets,
    __share_group_state) have 1, 2, 3, so they keep the group's state when
    1 dies: broker 2 leads them then. The group acknowledges on leader 1
    records that only 1 holds; 3 is elected uncleanly. share_truth is
    Kafka's own view after 1 rejoined and truncated: the group's offsets
    (Admin listShareGroupOffsets and kafka-share-groups --describe
    --offsets), what a share consumer of the group got then (nothing while
    the start offset lies past the log end), and once more records were
    written, which offsets of the new log it was given."""
    t, g = "shared", "klf-share-unclean"
    c.driver("create", topic=t, assignment="1,3",
             config=topic_config({"min.insync.replicas": 1, "unclean.leader.election.enable": "true"}))
    c.driver("alter-config", resource="group", group=g, config="share.auto.offset.reset=earliest")
    r1 = c.driver("produce", topic=t, count=100, acks="all")
    # every replica in sync: the group acknowledges them all (the
    # coordinators' topics are created now, on 1, 2 and 3)
    s1 = c.driver("share-consume", topic=t, group=g, explicit="true", until_offset=r1["max_offset"],
                  count=-1, max_poll=25, idle_ms=30000, timeout_ms=120000)
    c.brokers[3].stop()
    c.wait_leader(t, 1, isr=[1])
    # written while 3 is down: lost when 3 is elected
    r_lost = c.driver("produce", topic=t, count=150, base=100, acks="all")
    # the group reads on from leader 1 and acknowledges most of them; in its
    # last poll it releases some records and rejects others, and stops
    s2 = c.driver("share-consume", topic=t, group=g, explicit="true", until_offset=r1["max_offset"] + 121,
                  release_last=5, reject_last=2, count=-1, max_poll=10, idle_ms=30000, timeout_ms=120000)
    end_before = c.driver("offsets", topic=t)
    share_before = c.driver("share-group-offsets", group=g)
    c.brokers[1].kill9()
    for it in ("__consumer_offsets", "__share_group_state"):
        c.wait_leader(it, 2)
    c.brokers[3].start(); c.brokers[3].wait_port()

    def elected():
        c.driver("elect", topic=t, type="unclean", check=False)
        d = c.describe(t)
        return d if d["leader"] == 3 else None
    c.wait_until("unclean election of 3", elected, timeout=90, interval=2)
    for it in ("__consumer_offsets", "__share_group_state"):
        c.wait_leader(it, 2, isr=[2, 3])
    r_new = c.driver("produce", topic=t, count=20, base=1000, acks="all")
    time.sleep(1)
    capture(c, out)
    p = partition_facts(c, t, 0, [1, 3], 3, acked_summary(r1, r_lost, r_new), nodes=(3,), captured_dir=out)
    p["replica_state"]["1"] = {"source": "killed (SIGKILL) before capture",
                               "high_watermark_before_kill": end_before["high_watermark"],
                               "high_watermark_checkpoint": hw_from_checkpoint(os.path.join(out, "broker-1"), t, 0)}
    p["acked_by_phase"] = phases(isr_13=(r1, 1), isr_1=(r_lost, 1), unclean_leader_3=(r_new, 3))
    p["share_groups"] = {g: {"isr_13": s1, "isr_1": s2}}
    # Kafka's own view once the old leader has rejoined and truncated
    c.brokers[1].start(); c.brokers[1].wait_port()
    c.wait_leader(t, 3, isr=[1, 3])
    p["kafka_truncation"] = rejoin_facts(c, t, 0, [1])
    p["after_rejoin"] = c.driver("offsets", topic=t)
    capture(c, out, sub="after")
    truth = {"offsets_leader_1_before_kill": end_before, "share_group_offsets_before_kill": share_before}
    truth["share_group_offsets_after"] = c.driver("share-group-offsets", group=g)
    truth["describe_after"] = share_groups_describe(c, g)
    # a share consumer of the group now: the new leader loads the group's
    # state; its start offset lies past the log end
    mark = os.path.getsize(c.brokers[3].logfile)
    truth["consume_after"] = c.driver("share-consume", topic=t, group=g, explicit="true", count=-1,
                                      max_poll=50, idle_ms=10000, timeout_ms=60000)
    with open(c.brokers[3].logfile, errors="replace") as f:
        f.seek(mark)
        truth["leader_start_offset_refusals"] = start_offset_refusals(f.read())
    # more records, past the old lineage's end: what the group is given of the new log
    truth["produced_after"] = c.driver("produce", topic=t, count=200, base=2000, acks="all")
    truth["consume_after_more"] = c.driver("share-consume", topic=t, group=g, explicit="true", count=-1,
                                           max_poll=50, idle_ms=10000, timeout_ms=120000)
    truth["offsets_after_more"] = c.driver("offsets", topic=t)
    truth["share_group_offsets_after_more"] = c.driver("share-group-offsets", group=g)
    p["share_truth"] = truth
    internal = []
    for it in ("__consumer_offsets", "__share_group_state"):
        d = c.describe(it)
        internal.append({"topic": it, "partition": 0, "replicas": d["replicas"], "leader_at_capture": 2,
                         "isr_at_capture": [2, 3], "internal": True,
                         "leader_epoch_at_capture": (c.leader_epoch(it, 0, 2) or {}).get("leader_epoch"),
                         "replica_state": {}, "acked": {"count": 0, "max_offset": -1}})
    write_scenario(out, {
        "description": "shared has replicas [1,3], unclean.leader.election.enable=true, min.insync.replicas=1; "
                       "the coordinators' topics have 1, 2, 3 (share.coordinator.state.topic.replication.factor=3). "
                       "A share group (share.auto.offset.reset=earliest) acknowledges the first 100 records with "
                       "both replicas in sync; 3 stops cleanly; 150 records are written with ISR {1} and the group "
                       "acknowledges most of them on 1, releasing and rejecting a few in its last poll; 1 is killed; "
                       "3 returns and is elected uncleanly and takes 20 writes. broker-*/ is captured then; after/ "
                       "once 1 rejoined and truncated. share_truth is Kafka's own view after that: the group's "
                       "offsets (listShareGroupOffsets, kafka-share-groups --describe --offsets), what a share "
                       "consumer of the group was given then, and after 200 more records.",
        "partitions": [p] + internal})


def lost_by(before, after_ids):
    """Record numbers on any captured replica that the recovered partition
    no longer has."""
    return {x for x in before if isinstance(x, int)} - after_ids


@scenario("elect-choice")
def s_elect_choice(c, out):
    """The whole ISR dies and two out-of-sync replicas of different lengths
    remain; each is then elected for real (unclean), from the same state
    restored from a copy of every node's data, and what Kafka lost with it
    is counted."""
    t = "choice"
    r1, r2, r3 = shrink_to_leader(c, t, (100, 60, 40))
    mark = os.path.getsize(c.controller.logfile)
    c.brokers[1].kill9()

    def fenced():
        with open(c.controller.logfile, errors="replace") as f:
            f.seek(mark)
            return "Fencing broker 1 at epoch" in f.read()
    c.wait_until("the controller to fence broker 1 (the partition loses its leader)", fenced, timeout=90, interval=0.5)
    c.controller.stop()
    # the capture: every broker directory and the controller's (its
    # metadata log records the partition without a leader), the ISR {1} gone
    capture(c, out)
    capture_node(c.controller, os.path.join(out, f"controller-{CONTROLLER_ID}"))
    saved = os.path.join(WORK, "elect-choice-saved")
    shutil.rmtree(saved, ignore_errors=True)
    for n in [c.controller, *c.brokers.values()]:
        shutil.copytree(n.data, os.path.join(saved, str(n.id)), symlinks=True)
    before = {}
    for n in BROKERS:
        recs = dump_records(partition_dir(os.path.join(out, f"broker-{n}"), t, 0))
        before[n] = {record_id(kp) for kp in (recs or {}).values()}
    captured = set().union(*before.values())
    acked = set()
    for r in (r1, r2, r3):
        acked |= from_runs(r["acked_ids"])
    outcomes = {}
    for cand in (2, 3):
        for n in [c.controller, *c.brokers.values()]:
            shutil.rmtree(n.data, ignore_errors=True)
            shutil.copytree(os.path.join(saved, str(n.id)), n.data, symlinks=True)
        c.controller.start()
        c.controller.wait_port()
        c.brokers[cand].start()
        c.brokers[cand].wait_port()

        def elected(cand=cand):
            c.driver("elect", topic=t, type="unclean", check=False)
            d = c.describe(t)
            return d if d["leader"] == cand else None
        c.wait_until(f"unclean election of {cand}", elected, timeout=120, interval=2)
        for n in BROKERS:
            if n != cand:
                c.brokers[n].start()
        for n in BROKERS:
            c.brokers[n].wait_port()
        c.wait_leader(t, cand, isr=[1, 2, 3])
        after = c.driver("read", topic=t)
        ids = from_runs(after["ids"])
        lost = lost_by(captured, ids)
        outcomes[str(cand)] = {"records_lost": len(lost), "acked_all_lost": len(lost & acked),
                               "lost_ids": runs(lost), "after_recovery": after,
                               "kafka_truncation": rejoin_facts(c, t, 0, [n for n in BROKERS if n != cand])}
        log(f"elect-choice: electing {cand} lost {len(lost)} records ({len(lost & acked)} acknowledged)")
        c.stop_all()
        c.controller.stop()
    p = {"topic": t, "partition": 0, "replicas": [1, 2, 3], "leader_at_capture": None,
         "leader_epoch_at_capture": None, "isr_at_capture": [1],
         "replica_state": {str(n): {"high_watermark_checkpoint": hw_from_checkpoint(os.path.join(out, f"broker-{n}"), t, 0)}
                           for n in BROKERS},
         "acked": acked_summary(r1, r2, r3),
         "acked_by_phase": phases(isr_123=(r1, 1), isr_12=(r2, 1), isr_1=(r3, 1)),
         "election_outcomes": outcomes}
    write_scenario(out, {
        "description": "unclean.leader.election.enable=true. 3 stops; 1 leads with ISR {1,2}; 2 stops; 1 leads "
                       "alone; 1 is killed: the partition has no leader, 2 and 3 are out of sync at different "
                       "lengths. broker-*/ is captured then (every node stopped). election_outcomes: from that "
                       "state, restored from a copy of every node's data each time, 2 and then 3 is elected "
                       "uncleanly through the Admin API, the others return and truncate, and a consumer reads "
                       "what survived.",
        "partitions": [p]})


# scenario quorum: three controllers in a dynamic quorum (KIP-853)
QUORUM_CONTROLLERS = (100, 101, 102)


class QuorumLog:
    """quorum_truth of scenario quorum: the KRaft quorum as the Admin API
    (describeMetadataQuorum) reported it after each phase, and what the
    harness did to it (kills, stops, restarts, voters added and removed),
    in one order (`seq`, shared by both lists)."""

    def __init__(self, c):
        self.c = c
        self.phases = []
        self.events = []
        self.seq = 0

    def view(self):
        """describeMetadataQuorum through the brokers; RuntimeError while
        the quorum has no leader (a wait_until condition retries)."""
        q = self.c.driver("quorum")
        if q["leader_id"] < 0:
            raise RuntimeError(f"no quorum leader: {q}")
        return q

    @staticmethod
    def ids(q, key):
        return sorted(r["id"] for r in q[key])

    def phase(self, name, q):
        self.seq += 1
        leo = {str(r["id"]): r["log_end_offset"] for r in q["voters"] + q["observers"]}
        self.phases.append({"seq": self.seq, "phase": name, "leader_id": q["leader_id"],
                            "leader_epoch": q["leader_epoch"], "high_watermark": q["high_watermark"],
                            "voters": self.ids(q, "voters"), "observers": self.ids(q, "observers"),
                            "voter_directory_ids": {str(r["id"]): r["directory_id"] for r in q["voters"]},
                            "log_end_offsets": leo})
        log(f"quorum {name}: leader {q['leader_id']} epoch {q['leader_epoch']} hw {q['high_watermark']} "
            f"voters {self.ids(q, 'voters')} observers {self.ids(q, 'observers')}")

    def event(self, what, node, **kw):
        self.seq += 1
        self.events.append(dict({"seq": self.seq, "event": what, "node": node}, **kw))

    def truth(self):
        return {"phases": self.phases, "events": self.events}


def controller_directory_id(node):
    """The directory id of a controller's metadata log directory (its
    meta.properties): the voter's directory id in the quorum."""
    return read_meta_properties(node.data)["directory.id"]


def quorum_add_voter(c, ql, node):
    """Adds a running controller to the voters (Admin addRaftVoter, as
    kafka-metadata-quorum add-controller does), once the leader lists it as
    an observer with its directory id; done when describeMetadataQuorum
    lists it as a voter. A request the leader refuses (another voter change
    not yet committed, the observer not caught up) is made again."""
    d = controller_directory_id(node)

    def observing():
        q = ql.view()
        return q if any(o["id"] == node.id and o["directory_id"] == d for o in q["observers"]) else None
    c.wait_until(f"controller {node.id} to fetch from the quorum as an observer", observing, timeout=90)
    tries = []

    def voter():
        q = ql.view()
        if node.id in ql.ids(q, "voters"):
            return q
        tries.append(1)
        c.driver("add-voter", id=node.id, directory_id=d, host="127.0.0.1", port=node.port,
                 listener="CONTROLLER", bootstrap_controllers=c.bootstrap_controllers)
        return None
    q = c.wait_until(f"controller {node.id} to be a voter", voter, timeout=120, interval=1)
    ql.event("add_voter", node.id, directory_id=d, requests=len(tries))
    return q


def quorum_remove_voter(c, ql, node):
    """Removes a controller from the voters (Admin removeRaftVoter, as
    kafka-metadata-quorum remove-controller does); done when
    describeMetadataQuorum no longer lists it as a voter."""
    d = controller_directory_id(node)
    tries = []

    def removed():
        q = ql.view()
        if node.id not in ql.ids(q, "voters"):
            return q
        tries.append(1)
        c.driver("remove-voter", id=node.id, directory_id=d, bootstrap_controllers=c.bootstrap_controllers)
        return None
    q = c.wait_until(f"controller {node.id} to leave the voters", removed, timeout=120, interval=1)
    ql.event("remove_voter", node.id, directory_id=d, requests=len(tries))
    return q


def quorum_failover(c, ql, how):
    """Takes the active controller down (kill -9, or a clean stop) and waits
    until another voter leads in a higher epoch."""
    q = c.wait_until("a quorum leader", ql.view, timeout=60)
    old, epoch = q["leader_id"], q["leader_epoch"]
    n = c.controllers[old]
    n.kill9() if how == "kill9" else n.stop()
    ql.event(how, old, was_leader=True, leader_epoch_before=epoch, high_watermark_before=q["high_watermark"])

    def new_leader():
        q = ql.view()
        return q if q["leader_id"] != old and q["leader_epoch"] > epoch else None
    return n, c.wait_until(f"a controller other than {old} to lead in an epoch above {epoch}",
                           new_leader, timeout=90, interval=1)


def quorum_restart(c, ql, n):
    """Starts a controller again; done when describeMetadataQuorum lists it
    as a voter whose log end offset has reached the high watermark."""
    n.start()
    n.wait_port()
    ql.event("restart", n.id)

    def caught_up():
        q = ql.view()
        v = {r["id"]: r for r in q["voters"]}.get(n.id)
        return q if v is not None and v["log_end_offset"] >= q["high_watermark"] else None
    return c.wait_until(f"controller {n.id} to catch up as a voter", caught_up, timeout=90, interval=1)


@scenario("quorum")
def s_quorum(c, out):
    """The KRaft controller quorum's history in the metadata log: three
    controllers in a dynamic quorum (KIP-853, kraft.version 1). 100 formats
    alone (--standalone); 101 and 102 format outside it
    (--no-initial-controllers), start as observers and are added as voters
    one at a time (VotersRecord). The active controller is killed (-9),
    another leads in a higher epoch (LeaderChangeMessage), the killed one
    returns and catches up; the next leader is stopped cleanly and returns;
    a follower voter is removed and added back. quorum_truth is what the
    Admin API reported after each step."""
    t = "quorum"
    ql = QuorumLog(c)
    others = [c.controllers[i] for i in QUORUM_CONTROLLERS[1:]]

    def all_observing():
        q = ql.view()
        return q if set(ql.ids(q, "observers")) >= {*BROKERS, *(n.id for n in others)} else None
    ql.phase("standalone", c.wait_until("the brokers and controllers 101, 102 to fetch as observers",
                                        all_observing, timeout=90))
    for n in others:
        ql.phase(f"added_{n.id}", quorum_add_voter(c, ql, n))
    c.driver("create", topic=t, assignment="1,2,3", config=topic_config({"min.insync.replicas": 2}))
    r1 = c.driver("produce", topic=t, count=300, acks="all")
    ql.phase("produced", c.wait_until("a quorum leader", ql.view, timeout=60))
    killed, q = quorum_failover(c, ql, "kill9")
    ql.phase(f"leader_{killed.id}_killed", q)
    r2 = c.driver("produce", topic=t, count=100, base=300, acks="all")
    ql.phase(f"controller_{killed.id}_restarted", quorum_restart(c, ql, killed))
    stopped, q = quorum_failover(c, ql, "stop")
    ql.phase(f"leader_{stopped.id}_stopped", q)
    r3 = c.driver("produce", topic=t, count=100, base=400, acks="all")
    ql.phase(f"controller_{stopped.id}_restarted", quorum_restart(c, ql, stopped))
    # a voter that does not lead leaves the voter set and joins it again
    lead = ql.view()["leader_id"]
    gone = next(c.controllers[i] for i in reversed(QUORUM_CONTROLLERS) if i != lead)
    ql.phase(f"removed_{gone.id}", quorum_remove_voter(c, ql, gone))
    ql.phase(f"readded_{gone.id}", quorum_add_voter(c, ql, gone))
    r4 = c.driver("produce", topic=t, count=50, base=500, acks="all")

    def settled():
        q = ql.view()
        # every voter has the whole log the leader has committed
        return q if (ql.ids(q, "voters") == list(QUORUM_CONTROLLERS)
                     and all(v["log_end_offset"] >= q["high_watermark"] for v in q["voters"])) else None
    ql.phase("at_capture", c.wait_until("every voter caught up", settled, timeout=60))
    wait_hw_checkpoints(c, t, 0, BROKERS)
    capture(c, out)
    for i in QUORUM_CONTROLLERS:
        capture_node(c.controllers[i], os.path.join(out, f"controller-{i}"))
    p = partition_facts(c, t, 0, [1, 2, 3], 1, acked_summary(r1, r2, r3, r4), captured_dir=out)
    p["acked_by_phase"] = phases(voters_3=(r1, 1), after_kill=(r2, 1), after_stop=(r3, 1), after_readd=(r4, 1))
    write_scenario(out, {
        "description": "Three KRaft controllers (100, 101, 102) in a dynamic quorum (KIP-853, kraft.version 1, "
                       "controller.quorum.bootstrap.servers): 100 is formatted --standalone, 101 and 102 "
                       "--no-initial-controllers and added as voters one at a time (Admin addRaftVoter). Topic "
                       "quorum (replicas [1,2,3]) takes 300 acks=all records; the active controller is killed "
                       "(SIGKILL), another leads in a higher epoch, 100 records, the killed one returns and "
                       "catches up; the next active controller stops cleanly (SIGTERM), another leads, 100 "
                       "records, it returns; a voter that does not lead is removed (removeRaftVoter) and added "
                       "back; 50 records. broker-*/ and controller-*/ are captured then, live. quorum_truth: "
                       "describeMetadataQuorum after each phase (phases) and what was done to the quorum "
                       "(events), in one order (seq).",
        "controllers": list(QUORUM_CONTROLLERS),
        "quorum_truth": ql.truth(),
        "partitions": [p]})


@scenario("tiered")
def s_tiered(c, out):
    """A topic with remote storage (KIP-405) whose old segments Kafka has
    copied to the remote store and deleted locally: the capture holds the
    brokers' log directories (local segments from the local log start on,
    and __remote_log_metadata, where the brokers record each copy) and a
    copy of the remote store (remote-storage/: the segments and indexes as
    LocalTieredStorage names them)."""
    t, gone = "tiered", "tiered-deleted"
    # retention.bytes (remote and local together) lets the oldest remote segments expire
    cfg = topic_config({"remote.storage.enable": "true", "local.retention.ms": 2000,
                        "min.insync.replicas": 1})
    c.driver("create", topic=t, assignment="1,2,3", config=cfg + ",retention.bytes=100000")
    c.driver("create", topic=gone, assignment="2,3,1", config=cfg)
    r1 = c.driver("produce", topic=t, count=600, acks="all", value_size=200)
    c.driver("produce", topic=gone, count=200, acks="all", value_size=200)
    store = os.path.join(c.dir, "remote")
    leader = c.describe(t)["leader"]

    def remote_segments(topic):
        return [f for f in remote_files(store) if f.startswith(f"kafka-tiered-storage/{topic}-0-")
                and f.endswith(".log")]

    def tiered_away():
        o = c.driver("offsets", topic=t, earliest_local="true")
        # segments copied, the leader's local log starting past them, and the
        # oldest remote ones deleted by retention (the log start moved)
        if (len(remote_segments(t)) >= 3 and o["earliest_local_offset"] > o["log_start_offset"] > 0
                and remote_segments(gone)):
            return o
        return None
    offs = c.wait_until("segments copied to remote storage, deleted locally, the oldest expired", tiered_away,
                        timeout=180, interval=1)
    # a deleted topic: Kafka marks, deletes and forgets its remote partition
    gone_segments = len(remote_segments(gone))
    c.driver("delete-topic", topic=gone)
    c.wait_until(f"{gone}'s remote segments to be deleted", lambda: not remote_segments(gone),
                 timeout=120, interval=1)
    # the follower replicas delete their local copies too, on their own schedule
    c.wait_until("every replica's local log to start past offset 0", lambda: all(
        min(int(f[:20]) for f in os.listdir(os.path.join(c.brokers[n].data, f"{t}-0")) if f.endswith(".log")) > 0
        for n in BROKERS), timeout=120, interval=1)
    read = c.driver("read", topic=t)
    time.sleep(2)  # checkpoints (every 200 ms to 1 s) catch up
    capture(c, out)
    shutil.copytree(store, os.path.join(out, "remote-storage"))
    files = remote_files(os.path.join(out, "remote-storage"))
    log(f"remote store: {len(files)} files; local log starts at {offs['earliest_local_offset']}")
    p = partition_facts(c, t, 0, [1, 2, 3], leader, acked_summary(r1), captured_dir=out)
    p["offsets"] = offs
    p["read_from_start"] = read
    p["remote_storage"] = {
        "manager": LOCAL_TIERED_STORAGE,
        "files": files,
        "segments": len([f for f in files if f.endswith(".log")]),
        "deleted_topic": gone,
        "deleted_topic_segments_before_delete": gone_segments,
    }
    rlmm = c.describe("__remote_log_metadata")
    facts = [p, {"topic": "__remote_log_metadata", "partition": 0, "replicas": rlmm["replicas"],
                 "leader_at_capture": rlmm["leader"], "isr_at_capture": rlmm["isr"], "internal": True,
                 "leader_epoch_at_capture": (c.leader_epoch("__remote_log_metadata", 0, rlmm["leader"]) or {}).get("leader_epoch"),
                 "replica_state": replica_state(c, "__remote_log_metadata", 0, rlmm["leader"], BROKERS),
                 "acked": {"count": 0, "max_offset": -1}}]
    write_scenario(out, {
        "description": "Tiered storage (KIP-405) with Kafka's LocalTieredStorage: 600 records of 200 bytes "
                       "into a topic with remote.storage.enable=true, local.retention.ms=2000 and "
                       "retention.bytes=100000; Kafka copies its rolled segments to the remote store, records "
                       "each copy in __remote_log_metadata, deletes them locally, and expires the oldest remote "
                       "ones. A second tiered topic is deleted (its remote partition marked, deleted, finished). "
                       "broker-*/ is captured then, remote-storage/ is the remote store; read_from_start is what "
                       "a consumer read from the log start (served from remote storage).",
        "partitions": facts})


BROKER_EXTRA_STALE = {"replica.high.watermark.checkpoint.interval.ms": 60000}
# log directories per broker (JBOD) where a scenario has more than one
LOG_DIRS = {"jbod": JBOD_LOG_DIRS}


def run_scenario(name, out_root, retries=2, make_golden=True):
    """Runs one scenario on a new cluster. A cluster that does not start, or a
    scenario whose cluster misbehaves (a wait that times out), is run again
    from scratch on a new cluster, up to `retries` more times: every capture
    and fact comes from one run."""
    out = os.path.join(out_root, name)
    if name == "legacy-formats":
        # a Kafka 3.9 broker in ZooKeeper mode, see legacy.py
        sys.path.insert(0, HERE)
        import legacy
        for attempt in range(1, retries + 2):
            try:
                legacy.run_legacy(out)
                add_legacy_log(out, legacy, compressed=make_golden)
                add_healthy_file(out)
                break
            except Exception as e:
                log(f"scenario {name} failed (attempt {attempt}): {e}")
                if attempt > retries:
                    raise
        if make_golden:
            golden(out)
        return
    fn = SCENARIOS[name]
    if zookeeper_mode():
        # beside the KRaft capture of the same incident
        out = os.path.join(out_root, capture_name(name))
    for attempt in range(1, retries + 2):
        if name == "tiered":
            # the controller validates a topic's remote.storage.enable against its own setting
            c = Cluster(name, broker_extra=tiered_config(os.path.join(WORK, name)),
                        controller_extra={"remote.log.storage.system.enable": "true"},
                        extra_classpath=[tiered_lib()])
        else:
            extra = dict(BROKER_EXTRA.get(name) or {})
            if zookeeper_mode():
                extra.update(ZK_BROKER_EXTRA.get(name) or {})
            c = Cluster(name, broker_extra=extra, controller_extra=CONTROLLER_EXTRA.get(name),
                        log_dirs=LOG_DIRS.get(name, 1),
                        controllers=CONTROLLERS.get(name, (CONTROLLER_ID,)),
                        dynamic_quorum=name in DYNAMIC_QUORUM_SCENARIOS)
        CURRENT[0] = c
        try:
            shutil.rmtree(out, ignore_errors=True)
            os.makedirs(out)
            OMITTED.clear()
            CAPTURE_ROOT[0] = out
            c.start()
            fn(c, out)
            c.stop_all()
            add_node_logs(c, out, compressed=make_golden)
            add_truth(out)
            if make_golden:
                golden(out)
            return
        except Exception as e:
            log(f"scenario {name} failed (attempt {attempt}): {e}")
            if attempt > retries:
                raise
        finally:
            c.stop_all()
            _kill_all()


BROKER_EXTRA = {"unclean-stale-hw": BROKER_EXTRA_STALE,
                # the share group's state on every broker, writable while
                # one replica is left (the group acknowledges while 3 is down)
                "share-unclean": {"share.coordinator.state.topic.replication.factor": 3,
                                  "share.coordinator.state.topic.min.isr": 1},
                # replica.lag.time.max.ms: Kafka's default, stated (the pause
                # stays below it); replica.fetch.max.bytes: a follower's fetch
                # brings one batch, so the fetch the paused follower had
                # outstanding (its answer waits in the socket) brings it at
                # most one batch of what the leader takes during the pause
                "paused-follower": {"replica.lag.time.max.ms": 30000, "replica.fetch.max.bytes": 1024}}
# in ZooKeeper mode only: a paused broker keeps its ZooKeeper session when
# the pause and the time since its last ping (up to a third of the timeout)
# stay below the timeout
ZK_BROKER_EXTRA = {"paused-follower": {"zookeeper.session.timeout.ms": 30000}}
# a no-op record every 2 s instead of Kafka's 500 ms: the metadata log of a
# scenario that lasts minutes stays small
CONTROLLER_EXTRA = {"paused-follower": {"metadata.max.idle.interval.ms": 2000},
                    "jbod": {"metadata.max.idle.interval.ms": 2000},
                    "quorum": {"metadata.max.idle.interval.ms": 5000}}
# the KRaft controllers of a scenario's cluster where not the one node 100
CONTROLLERS = {"quorum": QUORUM_CONTROLLERS}


# ---------------------------------------------------------------- tiered storage

# Kafka's own RemoteStorageManager for tests and local use, in kafka-storage's
# test jar: it keeps each copied segment as files named
# <base offset>-<segment id>.<suffix> under
# <rsm.config.dir>/kafka-tiered-storage/<topic>-<partition>-<topic id>/.
LOCAL_TIERED_STORAGE = "org.apache.kafka.server.log.remote.storage.LocalTieredStorage"


def tiered_lib():
    """The release's kafka-storage and kafka-clients test jars (LocalTieredStorage
    and the test utilities it loads), resolved into .cache/tiered-X."""
    d = os.path.join(CACHE, f"tiered-{kafka_version()}")
    if not os.path.isdir(d) or not any(f.endswith("-test.jar") for f in os.listdir(d)):
        os.makedirs(d, exist_ok=True)
        for artifact in ("kafka-storage", "kafka-clients"):
            log(f"resolving {artifact} {kafka_version()} test jar with Maven")
            subprocess.run(["mvn", "-B", "-q", "dependency:copy",
                            "-Dmaven.repo.local=" + os.path.join(CACHE, "m2"),
                            f"-Dartifact=org.apache.kafka:{artifact}:{kafka_version()}:jar:test",
                            "-DoutputDirectory=" + d], check=True, cwd=HERE)
    return d


def tiered_config(cluster_dir):
    """Broker settings for tiered storage with LocalTieredStorage: one remote
    store shared by every broker (as an object store would be), the
    metadata topic __remote_log_metadata with one partition on all three
    brokers, and tasks that copy and delete every second."""
    return {
        "remote.log.storage.system.enable": "true",
        "remote.log.storage.manager.class.name": LOCAL_TIERED_STORAGE,
        "rsm.config.dir": os.path.join(cluster_dir, "remote"),
        "rsm.config.delete.on.close": "false",
        "remote.log.metadata.manager.listener.name": "PLAINTEXT",
        "rlmm.config.remote.log.metadata.topic.replication.factor": 3,
        "rlmm.config.remote.log.metadata.topic.num.partitions": 1,
        "remote.log.manager.task.interval.ms": 1000,
        "log.retention.check.interval.ms": 1000,
        "log.segment.delete.delay.ms": 1000,
    }


def remote_files(store):
    """Files of the LocalTieredStorage store, relative to it."""
    out = []
    for root, _, files in os.walk(store):
        for f in files:
            out.append(os.path.relpath(os.path.join(root, f), store))
    return sorted(out)


def capture_name(name):
    """A scenario's capture folder: its name, or in ZooKeeper mode
    NAME-zk-X.Y (divergence-zk-3.9)."""
    return f"{name}-zk-{release_line()}" if zookeeper_mode() else name


# ---------------------------------------------------------------- validation

REQUIRED = ["topic", "partition", "replicas", "leader_at_capture", "leader_epoch_at_capture",
            "isr_at_capture", "replica_state", "acked"]


def validate(d, need_golden=True):
    problems = []
    sj = os.path.join(d, "scenario.json")
    try:
        s = json.load(open(sj))
    except Exception as e:
        return [f"{sj}: {e}"]
    for k in ("kafka_version", "description", "partitions"):
        if k not in s:
            problems.append(f"{sj}: missing {k}")
    for p in s.get("partitions", []):
        for k in REQUIRED:
            # with every replica down at capture there is no ISR to report
            if k == "isr_at_capture" and "leader_after_restart" in p:
                continue
            # a partition captured without a leader, before the election
            if k in ("leader_at_capture", "leader_epoch_at_capture") and "election_outcomes" in p:
                continue
            if k not in p or p[k] is None:
                problems.append(f"{sj}: partition {p.get('topic')}-{p.get('partition')} missing {k}")
        for n in p.get("replicas", []):
            part = partition_dir(os.path.join(d, f"broker-{n}"), p["topic"], p["partition"])
            if not os.path.isdir(part):
                problems.append(f"missing {part}")
        for n, t in (p.get("kafka_truncation") or {}).items():
            if t.get("truncated_to") is None:
                problems.append(f"{sj}: broker {n} logged no truncation")
    for n in BROKERS:
        b = os.path.join(d, f"broker-{n}")
        # each of the node's log directories (broker-<id>/ itself, or the
        # folders of a node with several) has its meta.properties
        for ld in node_log_dirs(b) if os.path.isdir(b) else []:
            if not os.path.exists(os.path.join(ld, "meta.properties")):
                problems.append(f"{ld}: no meta.properties")
    problems += validate_logs(d, s)
    if need_golden and not os.path.isdir(os.path.join(d, "golden")):
        problems.append(f"{d}: no golden/")
    return problems


def read_node_log(path):
    """A copied node log's text (server.log, or server.log.gz)."""
    if path.endswith(".gz"):
        import gzip
        with gzip.open(path, "rb") as f:
            data = f.read()
    else:
        with open(path, "rb") as f:
            data = f.read()
    return data.decode("utf-8", errors="surrogateescape")


def validate_logs(d, s):
    """The node logs scenario.json lists (`logs`): each in a node's folder,
    with as many lines as it says, naming none of this machine's paths,
    host or user (sanitise_log); and each line logged_truncations_after_capture
    points at is that truncation."""
    problems = []
    texts = {}
    paths, hosts, user = machine_names(WORK)
    for e in s.get("logs", []):
        path = os.path.join(d, e.get("path", ""))
        folder, name = os.path.split(e.get("path", ""))
        if not NODE_FOLDER.match(folder) or name not in NODE_LOG_NAMES:
            problems.append(f"{d}: log {e.get('path')} is not a node folder's {NODE_LOG}[.gz]")
            continue
        try:
            text = read_node_log(path)
        except (OSError, EOFError) as ex:
            problems.append(f"{path}: {ex}")
            continue
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        texts[int(NODE_FOLDER.match(folder).group(1))] = lines
        if len(lines) != e.get("lines"):
            problems.append(f"{path}: {len(lines)} lines, scenario.json says {e.get('lines')}")
        for p, _, _ in paths:
            if re.search(path_pattern(p), text):
                problems.append(f"{path}: names {p}")
        for h in hosts:
            if re.search(host_pattern(h), text):
                problems.append(f"{path}: names the host {h}")
        if user and user != NEUTRAL_USER and re.search(r"\buser\.name=" + re.escape(user) + r"(?![\w.-])", text):
            problems.append(f"{path}: names the user {user}")
    for n, parts in (s.get("logged_truncations_after_capture") or {}).items():
        lines = texts.get(int(n))
        if lines is None:
            problems.append(f"{d}: truncations of broker {n} but no log of it")
            continue
        for tp, found in parts.items():
            for t in found:
                i = t.get("line", 0)
                if not (1 <= i <= len(lines)) or tp not in lines[i - 1] or "Truncating" not in lines[i - 1]:
                    problems.append(f"{d}: broker {n} {tp}: line {i} is not the truncation {t}")
    return problems


# ---------------------------------------------------------------- live

def live(klf, seconds=60, out_report=None):
    """Runs klf again and again on the log directories of a running cluster
    while Kafka appends, rolls, deletes and truncates under it. Fails when a
    klf run dies from a signal, exits with a status other than 0, 1 or 2, or
    does not finish within 120 s; and when Kafka did not roll, delete and
    truncate while klf ran (a run that saw none of it proves nothing)."""
    klf = os.path.abspath(klf)
    if not os.access(klf, os.X_OK):
        raise RuntimeError(f"{klf}: not an executable")
    c = Cluster("live")
    producer = None
    stats = {"runs": 0, "exit_codes": {}, "vanished_or_shrunk_messages": 0,
             "max_segments_seen": 0, "deleted_files_seen": 0, "first_base_offset_max": 0}
    try:
        c.start()
        t = "live"
        # Tiny segments that roll by size and by time, retention that deletes
        # them within seconds, and deletion without the default 60 s delay.
        # Segments of 256 KiB: above klf's memory-mapping threshold (64 KiB),
        # so a mapping of a file Kafka truncates would fault.
        seg = 256 * 1024
        c.driver("create", topic=t, assignment="1,2,3", config=topic_config({
            "internal.segment.bytes": seg, "segment.index.bytes": 64 * 1024,
            "min.insync.replicas": 1, "segment.ms": 2000, "segment.jitter.ms": 0,
            "retention.ms": 15000, "retention.bytes": 4 * seg,
            "file.delete.delay.ms": 500}))
        leader = c.describe(t)["leader"]
        dirs = [c.brokers[i].data for i in BROKERS]
        part_dirs = [os.path.join(d, f"{t}-0") for d in dirs]
        commands = [
            ["dump", "--format", "kafka", "--deep-iteration", "--print-data-log", part_dirs[0]],
            ["dump", "--format", "kafka", "--index-sanity-check", part_dirs[1]],
            ["dump", "--format", "json", dirs[2]],
            ["dump", "--format", "table", part_dirs[0]],
            ["check", *dirs],
            ["check", "--format", "json", *dirs],
            ["timeline", *dirs],
            ["diff", *dirs],
            ["diff", "--records", "--explain", *dirs],
            # a digest of a live node, to stdout (not a terminal here)
            ["digest", "-o", "-", dirs[0]],
            ["digest", "--verify", "--max-rate", "64M", "--threads", "1", "-o", "-", dirs[1]],
        ]

        def producing():
            nonlocal producer
            if producer is not None and producer.poll() is None:
                return
            if producer is not None:
                PROCS.pop(producer.pid, None)
                producer.communicate()
            producer = c.driver_bg("produce", topic=t, count=200000, value_size=300,
                                   acks="1", pause_every=200)

        def observe():
            for pd in part_dirs:
                try:
                    names = os.listdir(pd)
                except OSError:
                    continue
                logs = sorted(int(n.split(".")[0]) for n in names if n.endswith(".log"))
                stats["max_segments_seen"] = max(stats["max_segments_seen"], len(logs))
                stats["deleted_files_seen"] += sum(n.endswith(".deleted") for n in names)
                if logs:
                    stats["first_base_offset_max"] = max(stats["first_base_offset_max"], logs[0])

        def run_klf(args):
            try:
                r = subprocess.run([klf, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   stdin=subprocess.DEVNULL, timeout=120)
            except subprocess.TimeoutExpired:
                raise RuntimeError(f"klf {' '.join(args)} did not finish within 120 s")
            stats["runs"] += 1
            code = r.returncode
            stats["exit_codes"][str(code)] = stats["exit_codes"].get(str(code), 0) + 1
            err = r.stderr.decode(errors="replace")
            stats["vanished_or_shrunk_messages"] += len(re.findall(r"vanished|shrank|No such file", err))
            stats["live_dir_warnings"] = stats.get("live_dir_warnings", 0) + err.count("live log directory")
            if code < 0:
                raise RuntimeError(f"klf {' '.join(args)} died from signal {-code}:\n{err[-3000:]}")
            if code not in (0, 1, 2):
                raise RuntimeError(f"klf {' '.join(args)} exited {code}:\n{err[-3000:]}")
            if "memory-mapped file shrank" in err:
                raise RuntimeError(f"klf {' '.join(args)} mapped a live file that shrank (caught SIGBUS):\n{err[-3000:]}")
            if "panicked" in err:
                raise RuntimeError(f"klf {' '.join(args)} panicked:\n{err[-3000:]}")

        def klf_round():
            producing()
            for args in commands:
                run_klf(args)
                observe()

        # Load first, until the broker has rolled several segments.
        producing()
        c.wait_until("segments to roll", lambda: (observe(), stats["max_segments_seen"] >= 3)[1], timeout=120)
        start = time.time()
        # Phase 1: append, roll and delete under klf.
        while time.time() - start < seconds / 3:
            klf_round()
        # Phase 2: the followers are paused (SIGSTOP) while the leader takes
        # acks=1 writes alone, then the leader is killed (SIGKILL) and the
        # followers resume: the old leader holds records nobody else has and
        # must truncate when it comes back. klf keeps reading meanwhile.
        others = [b for b in BROKERS if b != leader]
        lpart = os.path.join(c.brokers[leader].data, f"{t}-0")

        def leader_end():
            try:
                logs = sorted(n for n in os.listdir(lpart) if n.endswith(".log"))
                return int(logs[-1].split(".")[0]), os.path.getsize(os.path.join(lpart, logs[-1]))
            except (OSError, IndexError):
                return (0, 0)
        producing()
        for b in others:
            c.brokers[b].pause()
        mark = leader_end()
        c.wait_until("the leader to take writes alone",
                     lambda: leader_end()[0] > mark[0] or leader_end()[1] > mark[1] + 32768, timeout=60)
        c.brokers[leader].kill9()
        for b in others:
            c.brokers[b].resume()
        producer.kill()
        producer.communicate()
        PROCS.pop(producer.pid, None)
        producer = None
        c.wait_until("a new leader", lambda: c.describe(t)["leader"] in others, timeout=90)
        while time.time() - start < 2 * seconds / 3:
            klf_round()
        # Phase 3: the old leader restarts, recovers its log and truncates to
        # the new leader's epoch while klf reads its directory.
        c.brokers[leader].start()
        # Kafka logs a truncation in several ways depending on the path it
        # takes (to an epoch end, to the high watermark, or fully to the
        # leader's log start when the replica fell behind retention).
        trunc_pat = re.compile(r"Truncating to offset \d+|Truncate fully|Deleting segments as part of log truncation"
                               r"|Truncating partition \S+ with TruncationState")

        def truncation_lines():
            return [m.group(0) for line in c.brokers[leader].log_text(since_start=True).splitlines()
                    if f"{t}-0" in line for m in [trunc_pat.search(line)] if m]
        truncated = False
        while time.time() - start < seconds or not truncated:
            klf_round()
            if c.brokers[leader].proc.poll() is not None:
                raise RuntimeError(f"broker {leader} exited after restart; see {c.brokers[leader].logfile}")
            truncated = bool(truncation_lines())
            if time.time() - start > seconds + 180:
                raise RuntimeError(f"broker {leader} logged no truncation within 180 s of the run's end")
        lines = truncation_lines()
        stats["truncations"] = {k: lines.count(k) for k in sorted(set(lines))}
        observe()
        if stats["max_segments_seen"] < 3:
            raise RuntimeError(f"Kafka never had 3 segments at once: {stats}")
        if stats["first_base_offset_max"] == 0 and stats["deleted_files_seen"] == 0:
            raise RuntimeError(f"Kafka deleted no segment while klf ran: {stats}")
        if not stats.get("live_dir_warnings"):
            raise RuntimeError(f"klf never recognised a live log directory (.lock held by the broker): {stats}")
        log(f"live: {stats['runs']} klf runs, exit codes {stats['exit_codes']}, "
            f"{stats['max_segments_seen']} segments at most, first segment up to offset "
            f"{stats['first_base_offset_max']}, {stats['deleted_files_seen']} .deleted files seen, "
            f"broker {leader} truncated {stats['truncations']}")
        if out_report:
            with open(out_report, "w") as f:
                json.dump(stats, f, indent=2, sort_keys=True)
                f.write("\n")
        return stats
    finally:
        if producer is not None and producer.poll() is None:
            producer.kill()
            producer.communicate()
        if producer is not None:
            PROCS.pop(producer.pid, None)
        c.stop_all()
        _kill_all()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kafka", help="the Kafka release to run (default: pom.xml's)")
    ap.add_argument("--mode", choices=("kraft", "zookeeper"), default="kraft",
                    help="zookeeper: brokers of pom-3.9.xml's release in ZooKeeper mode (no metadata log)")
    ap.add_argument("--ibp", default=ZK_IBP_DEFAULT,
                    help=f"inter.broker.protocol.version in ZooKeeper mode (default {ZK_IBP_DEFAULT}: below 2.7, "
                         "followers truncate through OffsetsForLeaderEpoch)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("setup")
    sub.add_parser("setup-dump", help="resolve only --kafka's kafka-dump-log (pom-dump.xml)")
    r = sub.add_parser("run")
    r.add_argument("--out", default=os.path.join(REPO, "testdata", "kafka"))
    r.add_argument("--no-golden", action="store_true", help="skip the kafka-dump-log golden files")
    r.add_argument("--klf", help="a klf binary: salvage the capture and replay it into the recovered cluster")
    r.add_argument("scenarios", nargs="*")
    g = sub.add_parser("golden")
    g.add_argument("dirs", nargs="+")
    gd = sub.add_parser("golden-decoders", help="golden-decoders/: the built-in Decoder classes on some files")
    gd.add_argument("dir")
    gd.add_argument("files", nargs="+")
    gr = sub.add_parser("golden-release", help="golden-X.Y/: what --kafka's kafka-dump-log prints differently on a capture")
    gr.add_argument("dirs", nargs="+")
    gp = sub.add_parser("golden-pack", help=f"pack a capture's golden-X.Y/ folders into {GOLDEN_ARCHIVE}")
    gp.add_argument("dirs", nargs="+")
    gu = sub.add_parser("golden-unpack", help=f"unpack {GOLDEN_ARCHIVE} into golden-X.Y/ folders")
    gu.add_argument("dirs", nargs="+")
    gdd = sub.add_parser("golden-dedupe", help="store golden-LINE/ against golden-BASE/ (mostly the same text)")
    gdd.add_argument("--line", required=True)
    gdd.add_argument("--base", required=True)
    gdd.add_argument("dirs", nargs="+")
    tr = sub.add_parser("truth", help="add loss_truth (kafka-dump-log on the capture) to scenario.json")
    tr.add_argument("dirs", nargs="+")
    hn = sub.add_parser("healthy", help="add healthy_nodes (derived from scenario.json) to captures")
    hn.add_argument("dirs", nargs="+")
    v = sub.add_parser("validate")
    v.add_argument("--no-golden", action="store_true")
    v.add_argument("dirs", nargs="+")
    lv = sub.add_parser("live", help="run a klf binary over and over on a live cluster's log directories")
    lv.add_argument("--klf", required=True, help="the klf binary")
    lv.add_argument("--seconds", type=int, default=60)
    lv.add_argument("--report", help="write the run's figures as JSON here")
    a = ap.parse_args()
    RELEASE[0] = a.kafka
    MODE[0] = a.mode
    IBP[0] = a.ibp
    if zookeeper_mode() and a.kafka and a.kafka not in ZK_RELEASES:
        sys.exit(f"--mode zookeeper runs Kafka {', '.join(ZK_RELEASES)} (pom-3.9.xml), not {a.kafka}")
    if a.cmd == "setup":
        setup()
    elif a.cmd == "setup-dump":
        setup_dump_tool()
    elif a.cmd == "run":
        setup()
        if a.klf:
            KLF[0] = os.path.abspath(a.klf)
        if zookeeper_mode():
            names = a.scenarios or list(ZK_SCENARIOS)
            for n in names:
                if n not in ZK_SCENARIOS:
                    sys.exit(f"scenario {n} does not run in ZooKeeper mode; those that do: {', '.join(ZK_SCENARIOS)}")
        else:
            names = a.scenarios or list(SCENARIOS) + ["legacy-formats"]
        for n in names:
            if n not in SCENARIOS and n != "legacy-formats":
                sys.exit(f"unknown scenario {n}; known: {', '.join(SCENARIOS)}")
        # share groups (KIP-932) are on by default from 4.2
        if not zookeeper_mode() and release_tuple() < (4, 2):
            if a.scenarios and any(n in SHARE_SCENARIOS for n in names):
                sys.exit(f"{', '.join(n for n in names if n in SHARE_SCENARIOS)} needs Kafka 4.2 or later "
                         "(share groups), not " + kafka_version())
            names = [n for n in names if n not in SHARE_SCENARIOS]
        # the dynamic quorum (KIP-853) from 4.0
        if not zookeeper_mode() and release_tuple() < (4, 0):
            if a.scenarios and any(n in DYNAMIC_QUORUM_SCENARIOS for n in names):
                sys.exit(f"{', '.join(n for n in names if n in DYNAMIC_QUORUM_SCENARIOS)} needs Kafka 4.0 or "
                         "later (a dynamic controller quorum), not " + kafka_version())
            names = [n for n in names if n not in DYNAMIC_QUORUM_SCENARIOS]
        for n in names:
            t0 = time.time()
            log(f"scenario {n}")
            run_scenario(n, os.path.abspath(a.out), make_golden=not a.no_golden)
            log(f"scenario {n} done in {time.time() - t0:.0f}s")
    elif a.cmd == "golden":
        setup()
        for d in a.dirs:
            golden(d)
    elif a.cmd == "golden-decoders":
        setup_dump_tool()
        golden_decoders(a.dir, a.files)
    elif a.cmd == "golden-release":
        setup_dump_tool()
        for d in a.dirs:
            golden_unpack(os.path.abspath(d))
            try:
                golden_release(d)
            finally:
                golden_pack(os.path.abspath(d))
    elif a.cmd == "golden-pack":
        for d in a.dirs:
            golden_pack(os.path.abspath(d))
    elif a.cmd == "golden-unpack":
        for d in a.dirs:
            golden_unpack(os.path.abspath(d))
    elif a.cmd == "golden-dedupe":
        for d in a.dirs:
            golden_unpack(os.path.abspath(d))
            try:
                golden_dedupe(d, a.line, a.base)
            finally:
                golden_pack(os.path.abspath(d))
    elif a.cmd == "truth":
        setup()
        for d in a.dirs:
            add_truth(os.path.abspath(d))
    elif a.cmd == "healthy":
        for d in a.dirs:
            add_healthy_file(os.path.abspath(d))
    elif a.cmd == "live":
        setup()
        live(a.klf, a.seconds, a.report)
    elif a.cmd == "validate":
        bad = []
        for d in a.dirs:
            bad += validate(d, need_golden=not a.no_golden)
        for b in bad:
            print(b)
        sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
