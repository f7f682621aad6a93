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
  losing-N       N partitions on 3 brokers of which two lose data: the
                 committed capture `unclean-stale-hw` (its `stale-0` and
                 `stale-group-0` lose records in an unclean election, its
                 `__consumer_offsets-0` loses nothing) with N - 3 copies of
                 each broker's replica of `stale-0` once the brokers had
                 returned (`after/`, replicas that agree) under new names
                 (`healthy-I`, hard links); the copies are not in the
                 brokers' offset checkpoints (no high watermark: findings)

Nodes (`node`, for `klf digest`: one log directory, not a capture of
three brokers): one partition of `total` bytes of batches of about
`batch` bytes each, in segments rolled at `segment` bytes (Kafka's
default 1 GiB). Its batches are rebatched from the real records of the
same committed segment: the records, byte for byte but for their offset
and timestamp deltas, grouped the way a producer fills `batch.size`
(records while they fit, at least one), each batch given its own CRC-32C.
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
    `batches`, or `batches(i)` for the i-th when it is a function), with
    its offset and time index. Returns the next offset."""
    get = batches if callable(batches) else (lambda i: batches[i % len(batches)])
    name = os.path.join(part_dir, f"{base:020d}")
    offset = base
    position = 0
    since_index = 0
    index, timeindex = bytearray(), bytearray()
    max_ts = -1
    last_index_ts = -1
    with open(name + ".log", "wb") as log:
        for i in range(count):
            b, delta, ts = get(i)
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


LOSING = os.path.join(REPO, "testdata", "kafka", "unclean-stale-hw")


def losing(out, n):
    """`n` partitions on 3 brokers, two of which lose data (see the
    module's help)."""
    import shutil
    if os.path.exists(os.path.join(out, "done")):
        return out
    if os.path.exists(out):
        shutil.rmtree(out)
    for b in range(1, 4):
        bdir = os.path.join(out, f"broker-{b}")
        shutil.copytree(os.path.join(LOSING, f"broker-{b}"), bdir)
        one = os.path.join(out, f"healthy-{b}")
        shutil.copytree(os.path.join(LOSING, "after", f"broker-{b}", "stale-0"), one)
        names = sorted(os.listdir(one))
        for i in range(n - 3):
            d = os.path.join(bdir, f"healthy-{i}")
            os.mkdir(d)
            for f in names:
                os.link(os.path.join(one, f), os.path.join(d, f))
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
    if kind == "losing":
        return losing(out, n)
    return make(out, **SHAPES[kind](n))


def files(d):
    """Every file under d, sorted (what `cat` is given)."""
    return sorted(os.path.join(r, f) for r, _, fs in os.walk(d) for f in fs if f != "done")


# ---------------------------------------------------------------- nodes

def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_CRC32C = _crc32c_table()


def crc32c(data):
    """CRC-32C (Castagnoli), the checksum of a v2 batch."""
    c = 0xFFFFFFFF
    t = _CRC32C
    for x in data:
        c = t[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def _uvarint(b, pos):
    n = shift = 0
    while True:
        x = b[pos]
        pos += 1
        n |= (x & 0x7F) << shift
        if not x & 0x80:
            return n, pos
        shift += 7


def _varint(b, pos):
    n, pos = _uvarint(b, pos)
    return (n >> 1) ^ -(n & 1), pos


def _put_varint(n):
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def real_records(path=SOURCE):
    """The records of a segment's uncompressed v2 data batches, in order:
    (absolute timestamp, attributes byte, key, value and headers as
    written)."""
    out = []
    for b, _, _ in real_batches(path):
        attrs = struct.unpack_from(">h", b, 21)[0]
        if attrs & 0x07:
            continue    # compressed: its records are not readable in place
        base_ts = struct.unpack_from(">q", b, 27)[0]
        count = struct.unpack_from(">i", b, 57)[0]
        pos = 61
        for _ in range(count):
            length, pos = _varint(b, pos)
            end = pos + length
            rattrs = b[pos]
            ts_delta, p = _varint(b, pos + 1)
            _, p = _varint(b, p)        # offset delta: rewritten
            out.append((base_ts + ts_delta, rattrs, bytes(b[p:end])))
            pos = end
    if not out:
        raise SystemExit(f"no uncompressed record in {path}")
    return out


def rebatch(batch_bytes, distinct=32, path=SOURCE):
    """`distinct` v2 batches (codec none, no producer id) of at most
    `batch_bytes` each, the way a producer with batch.size=`batch_bytes`
    fills them: the real records of `path` in turn, again from the first
    when they run out (timestamps moved on by the span of the records, so
    that they keep growing), as many as fit. Returned as real_batches
    returns batches."""
    recs = real_records(path)
    span = max(r[0] for r in recs) - min(r[0] for r in recs) + 1
    k = 0
    out = []
    for _ in range(distinct):
        body = bytearray()
        n = 0
        base_ts = max_ts = None
        while True:
            ts, rattrs, rest = recs[k % len(recs)]
            ts += (k // len(recs)) * span
            if base_ts is None:
                base_ts = ts
            inner = bytes([rattrs]) + _put_varint(ts - base_ts) + _put_varint(n) + rest
            rec = _put_varint(len(inner)) + inner
            if n and 61 + len(body) + len(rec) > batch_bytes:
                break
            body += rec
            n += 1
            k += 1
            max_ts = ts if max_ts is None else max(max_ts, ts)
        # attributes .. record count, then the records: what the CRC covers
        tail = struct.pack(">hiqqqhii", 0, n - 1, base_ts, max_ts, -1, -1, -1, n) + body
        head = struct.pack(">qiib", 0, 4 + 1 + 4 + len(tail), 0, 2)
        b = head + struct.pack(">I", crc32c(tail)) + tail
        out.append((b, n - 1, max_ts))
    return out


def _gf2_apply(m, v):
    out, k = 0, 0
    while v:
        if v & 1:
            out ^= m[k]
        v >>= 1
        k += 1
    return out


def _zeros_tables(n):
    """What n zero bytes do to a CRC-32C register, as 4 tables (one per
    byte of the register): CRC-32C is linear, so a batch whose first bytes
    change by D has its CRC change by D's register run through the zero
    bytes after it (what zlib's crc32_combine does)."""
    t = _CRC32C
    op = [t[(1 << k) & 0xFF] ^ ((1 << k) >> 8) for k in range(32)]    # one zero byte
    m = [1 << k for k in range(32)]                                    # identity
    while n:
        if n & 1:
            m = [_gf2_apply(op, c) for c in m]
        op = [_gf2_apply(op, c) for c in op]
        n >>= 1
    return [[_gf2_apply(m, b << (8 * j)) for b in range(256)] for j in range(4)]


class Restamped:
    """Copies of `batches` (cycled) whose timestamps go on growing, each
    copy's base and max timestamp moved past the one before by a few
    milliseconds (the records' own timestamps are deltas from the base, so
    they move with it) and its CRC-32C updated to match: no two copies
    alike, as no two batches of a real log are (a digest compressing a
    repeated run of batches would be smaller than a real log's)."""

    def __init__(self, batches, seed=1):
        import random
        self.batches = batches
        self.rng = random.Random(seed)
        self.tables = {}
        self.next_ts = None
        self.last = (-1, None)

    def __call__(self, i):
        if self.last[0] == i:
            return self.last[1]
        b, delta, max_ts = self.batches[i % len(self.batches)]
        base_ts = struct.unpack_from(">q", b, 27)[0]
        if self.next_ts is None:
            self.next_ts = base_ts
        shift = self.next_ts - base_ts
        old = b[27:43]
        new = struct.pack(">qq", base_ts + shift, max_ts + shift)
        n = len(b) - 43      # bytes after the two timestamps, under the CRC
        tabs = self.tables.get(n)
        if tabs is None:
            tabs = self.tables[n] = _zeros_tables(n)
        t, r = _CRC32C, 0
        for x, y in zip(old, new):
            r = t[(r ^ x ^ y) & 0xFF] ^ (r >> 8)
        crc = struct.unpack_from(">I", b, 17)[0]
        crc ^= tabs[0][r & 0xFF] ^ tabs[1][(r >> 8) & 0xFF] ^ tabs[2][(r >> 16) & 0xFF] ^ tabs[3][r >> 24]
        out = (b[:17] + struct.pack(">I", crc) + b[21:27] + new + b[43:], delta, max_ts + shift)
        self.next_ts = max_ts + shift + self.rng.randint(0, 5)
        self.last = (i, out)
        return out


def node(out, total, batch, segment=1 << 30, topic="events"):
    """A node's one log directory, out/kafka-logs (returned), holding one
    partition of `total` bytes of batches of at most `batch` bytes (see
    the module's help): segments rolled as Kafka rolls them (a batch that
    would take the segment over `segment` bytes starts a new one), offset
    and time indexes, a partition's files and the broker's checkpoints at
    the log end."""
    logs = os.path.join(out, "kafka-logs")
    if os.path.exists(os.path.join(out, "done")):
        return logs
    batches = rebatch(batch)
    restamped = Restamped(batches)
    pdir = os.path.join(logs, f"{topic}-0")
    os.makedirs(pdir, exist_ok=True)
    # how many batches each segment takes
    counts, left, i = [], total, 0
    while left > 0:
        size = n = 0
        while left > 0:
            b = len(batches[i % len(batches)][0])
            if size + b > segment and n:
                break
            size += b
            left -= b
            n += 1
            i += 1
        counts.append(n)
    off = done = 0
    for n in counts:
        off = write_segment(pdir, off, n, lambda i, d=done: restamped(d + i))
        done += n
    write_partition_files(pdir, topic_id(topic))
    write_broker_files(logs, 1, {(topic, 0): off})
    open(os.path.join(out, "done"), "w").close()
    return logs
