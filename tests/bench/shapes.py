"""Captures of a chosen shape made from real Kafka batches, for measuring
how klf's time and memory grow with the shape of a capture.

The batches are Kafka's own: the record batches of a committed capture's
segment (`testdata/kafka/divergence`, written by Kafka 4.1.1's producer
with 4 KiB batches of 100-byte records), copied byte for byte. Only the
base offset of each copy is rewritten, so the copies follow one another;
a v2 batch's CRC-32C covers everything after its leader epoch and magic,
so every copy's checksum still holds. Around them: the files Kafka keeps
with such a log, consistent with it (`.index` and `.timeindex` as Kafka
appends them, every 4096 bytes; `leader-epoch-checkpoint`,
`partition.metadata`, the four offset checkpoints listing every
partition at its log end; a ZooKeeper-mode `meta.properties`). Every
replica of a partition holds the same bytes, so the replicas agree.

Shapes (each made once under DIR/shapes/, reused after):
  batches-N      one partition, 3 replicas, one segment of N batches each
  segments-N     one partition, 3 replicas, N segments of 200 batches each
  partitions-N   N partitions of one topic on 3 brokers, each replica one
                 segment of 20 batches (hard links to one file: the disk
                 holds it once)
  brokers-N      N brokers holding 100 partitions, each partition on every
                 broker
  crashed-N      N partitions on 3 brokers as a killed broker leaves them:
                 3 segments of 20 batches, the active one with Kafka's
                 preallocated (sparse) 10 MiB `.index` and `.timeindex`
                 and a producer snapshot (Kafka's own, from the capture)
  folders-N      N empty partition folders on each of 3 brokers (a broker
                 whose segments were not copied)
"""

import base64
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SOURCE = os.path.join(REPO, "testdata", "kafka", "divergence", "broker-2", "diverge-0",
                      "00000000000000000000.log")
INDEX_INTERVAL = 4096


def real_batches(path=SOURCE):
    """The v2 data batches of a Kafka segment: (bytes, last offset delta,
    max timestamp)."""
    data = open(path, "rb").read()
    out, pos = [], 0
    while pos + 61 <= len(data):
        length = struct.unpack_from(">i", data, pos + 8)[0]
        end = pos + 12 + length
        if end > len(data):
            break
        magic = data[pos + 16]
        attrs = struct.unpack_from(">h", data, pos + 21)[0]
        if magic == 2 and not attrs & 0x20:
            delta = struct.unpack_from(">i", data, pos + 23)[0]
            max_ts = struct.unpack_from(">q", data, pos + 35)[0]
            out.append((data[pos:end], delta, max_ts))
        pos = end
    if not out:
        raise SystemExit(f"no data batch in {path}")
    return out


def write_segment(part_dir, base, count, batches):
    """A segment of `count` batches from `base` (cycling through
    `batches`), with its offset and time index. Returns the next offset."""
    name = os.path.join(part_dir, f"{base:020d}")
    offset = base
    position = 0
    since_index = 0
    index, timeindex = bytearray(), bytearray()
    max_ts = -1
    last_index_ts = -1
    with open(name + ".log", "wb") as log:
        for i in range(count):
            b, delta, ts = batches[i % len(batches)]
            last = offset + delta
            if since_index > INDEX_INTERVAL:
                index += struct.pack(">ii", last - base, position)
                if max_ts > last_index_ts:
                    timeindex += struct.pack(">qi", max_ts, last - base)
                    last_index_ts = max_ts
                since_index = 0
            log.write(struct.pack(">q", offset) + b[8:])
            max_ts = max(max_ts, ts)
            position += len(b)
            since_index += len(b)
            offset = last + 1
    with open(name + ".index", "wb") as f:
        f.write(index)
    with open(name + ".timeindex", "wb") as f:
        f.write(timeindex)
    return offset


def write_partition_files(part_dir, topic_id):
    with open(os.path.join(part_dir, "leader-epoch-checkpoint"), "w") as f:
        f.write("0\n1\n0 0\n")
    with open(os.path.join(part_dir, "partition.metadata"), "w") as f:
        f.write(f"version: 0\ntopic_id: {topic_id}\n")


def write_broker_files(broker_dir, broker_id, ends):
    """meta.properties and the offset checkpoints listing `ends`
    ({(topic, partition): log end offset})."""
    with open(os.path.join(broker_dir, "meta.properties"), "w") as f:
        f.write(f"version=0\nbroker.id={broker_id}\ncluster.id=klfbenchshapes0000000\n")
    lines = [f"{t} {p} {o}" for (t, p), o in sorted(ends.items())]
    zero = [f"{t} {p} 0" for (t, p) in sorted(ends)]
    for name, rows in (("replication-offset-checkpoint", lines), ("recovery-point-offset-checkpoint", lines),
                       ("log-start-offset-checkpoint", zero), ("cleaner-offset-checkpoint", [])):
        with open(os.path.join(broker_dir, name), "w") as f:
            f.write(f"0\n{len(rows)}\n" + "".join(r + "\n" for r in rows))


def topic_id(topic):
    return base64.urlsafe_b64encode(topic.encode().ljust(16, b"\0")[:16]).decode().rstrip("=")


def make(out, brokers, partitions, segments, batches_per_segment, topic="shape"):
    """A capture: `partitions` partitions of `topic` on every one of
    `brokers` brokers, each replica `segments` segments of
    `batches_per_segment` batches. Replicas after the first are hard links
    to the first's files."""
    if os.path.exists(os.path.join(out, "done")):
        return out
    batches = real_batches()
    tid = topic_id(topic)
    first = None
    ends = {}
    for b in range(1, brokers + 1):
        bdir = os.path.join(out, f"broker-{b}")
        os.makedirs(bdir, exist_ok=True)
        for p in range(partitions):
            pdir = os.path.join(bdir, f"{topic}-{p}")
            os.makedirs(pdir, exist_ok=True)
            if first is None:
                off = 0
                for _ in range(segments):
                    off = write_segment(pdir, off, batches_per_segment, batches)
                write_partition_files(pdir, tid)
                first = (pdir, off)
            else:
                for f in os.listdir(first[0]):
                    dst = os.path.join(pdir, f)
                    if not os.path.exists(dst):
                        os.link(os.path.join(first[0], f), dst)
            ends[(topic, p)] = first[1]
        write_broker_files(bdir, b, ends)
    open(os.path.join(out, "done"), "w").close()
    return out


# Kafka's preallocated index sizes (segment.index.bytes, 10 MiB, rounded
# down to whole entries)
PREALLOCATED = {".index": (10 << 20) // 8 * 8, ".timeindex": (10 << 20) // 12 * 12}
SNAPSHOT = os.path.join(REPO, "testdata", "kafka", "divergence", "broker-2", "diverge-0",
                        "00000000000000000134.snapshot")


def crashed(out, partitions):
    """`partitions` partitions on 3 brokers, as a killed broker leaves its
    active segments (see the module's help)."""
    if os.path.exists(os.path.join(out, "done")):
        return out
    make(out, brokers=3, partitions=partitions, segments=3, batches_per_segment=20)
    os.remove(os.path.join(out, "done"))
    first = os.path.join(out, "broker-1", "shape-0")
    active = sorted(f for f in os.listdir(first) if f.endswith(".log"))[-1][:-4]
    for ext, size in PREALLOCATED.items():
        # every replica's file is a hard link to this one
        os.truncate(os.path.join(first, active + ext), size)
    snap = os.path.join(first, active + ".snapshot")
    with open(SNAPSHOT, "rb") as src, open(snap, "wb") as dst:
        dst.write(src.read())
    for b in range(1, 4):
        for p in range(partitions):
            d = os.path.join(out, f"broker-{b}", f"shape-{p}")
            if d != first and not os.path.exists(os.path.join(d, active + ".snapshot")):
                os.link(snap, os.path.join(d, active + ".snapshot"))
    open(os.path.join(out, "done"), "w").close()
    return out


def folders(out, n):
    """`n` empty partition folders on each of 3 brokers."""
    if os.path.exists(os.path.join(out, "done")):
        return out
    for b in range(1, 4):
        bdir = os.path.join(out, f"broker-{b}")
        os.makedirs(bdir, exist_ok=True)
        with open(os.path.join(bdir, "meta.properties"), "w") as f:
            f.write(f"version=0\nbroker.id={b}\ncluster.id=klfbenchshapes0000000\n")
        for p in range(n):
            os.makedirs(os.path.join(bdir, f"bare-{p}"), exist_ok=True)
    open(os.path.join(out, "done"), "w").close()
    return out


SHAPES = {
    "batches": lambda n: dict(brokers=3, partitions=1, segments=1, batches_per_segment=n),
    "segments": lambda n: dict(brokers=3, partitions=1, segments=n, batches_per_segment=200),
    "partitions": lambda n: dict(brokers=3, partitions=n, segments=1, batches_per_segment=20),
    "brokers": lambda n: dict(brokers=n, partitions=100, segments=1, batches_per_segment=20),
}


def shape(data, kind, n):
    """The capture of shape `kind` at size `n` (made if needed)."""
    out = os.path.join(data, "shapes", f"{kind}-{n}")
    if kind == "crashed":
        return crashed(out, n)
    if kind == "folders":
        return folders(out, n)
    return make(out, **SHAPES[kind](n))


def files(d):
    """Every file under d, sorted (what `cat` is given)."""
    return sorted(os.path.join(r, f) for r, _, fs in os.walk(d) for f in fs if f != "done")
