#!/usr/bin/env python3
"""Builds the seed corpora of the fuzz targets from the real Kafka captures
in testdata/kafka (nothing is committed: run.sh calls this when a corpus
directory is missing or empty).

Usage: seeds.py OUT_DIR   (writes OUT_DIR/<target>/<sha1>)
"""
import hashlib
import os
import re
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "testdata", "kafka")
MAX = 32 * 1024


def files(pred):
    for root, dirs, names in os.walk(DATA):
        dirs[:] = sorted(d for d in dirs if d != "golden")
        for n in sorted(names):
            if pred(n, root):
                yield os.path.join(root, n)


def read(p, limit=MAX):
    with open(p, "rb") as f:
        return f.read(limit)


def varint(b, i):
    shift = result = 0
    while True:
        if i >= len(b) or shift > 63:
            raise ValueError("varint")
        c = b[i]
        i += 1
        result |= (c & 0x7F) << shift
        if c & 0x80 == 0:
            return (result >> 1) ^ -(result & 1), i
        shift += 7


def v2_batches(seg):
    """(attributes, records area) of each complete v2 batch."""
    p = 0
    while p + 61 <= len(seg):
        size = struct.unpack(">i", seg[p + 8 : p + 12])[0]
        if size < 49 or p + 12 + size > len(seg):
            return
        if seg[p + 16] == 2:
            attrs = struct.unpack(">h", seg[p + 21 : p + 23])[0]
            yield attrs, seg[p + 61 : p + 12 + size]
        p += 12 + size


def v2_records(area):
    """(key, value) of each record of an uncompressed records area."""
    i = 0
    while i < len(area):
        try:
            ln, i = varint(area, i)
            end = i + ln
            i += 1
            _, i = varint(area, i)
            _, i = varint(area, i)
            kl, i = varint(area, i)
            key = None if kl < 0 else area[i : i + kl]
            i += max(kl, 0)
            vl, i = varint(area, i)
            val = None if vl < 0 else area[i : i + vl]
            yield key, val
            i = end
        except ValueError:
            return


def main(out):
    seeds = {}

    def add(target, data):
        seeds.setdefault(target, {})[hashlib.sha1(data).hexdigest()] = data

    logs = list(files(lambda n, r: n.endswith(".log")))
    for p in logs:
        seg = read(p)
        add("segment_v2", seg)
        # Window sizes 1, 17, 61 and 256 over the segment's start.
        for w in (0, 16, 60, 255):
            add("windows", bytes([w]) + seg[: 64 * 1024])
        if "legacy" in p:
            add("legacy", b"\x00" + seg)
            # The same message set as the inner set of a gzip (mode 2) and a
            # snappy (mode 10) wrapper, magic 1.
            add("legacy", bytes([2 | 4]) + seg[:4096])
            add("legacy", bytes([2 | 4 | 8]) + seg[:4096])
        for attrs, area in v2_batches(read(p, 1 << 22)):
            codec = attrs & 7
            if 1 <= codec <= 4:
                sel = next(s for s in range(128) if s % 5 == codec and (s >> 3) % 3 == 2)
                add("codec", bytes([sel, 0xF8, 0xFF]) + area)
            elif attrs & 0x20:
                for k, v in v2_records(area):
                    if v is not None:
                        add("records", b"\x01" + v)
            else:
                internal = "__consumer_offsets" in p or "__transaction_state" in p
                meta = "__cluster_metadata" in p
                for k, v in list(v2_records(area))[:20]:
                    if meta and v is not None:
                        add("records", b"\x00" + v)
                    elif internal and k is not None:
                        sel = 2 if "__consumer_offsets" in p else 3
                        if v is None:
                            sel |= 4
                        add("records", bytes([sel]) + struct.pack("<H", len(k)) + k + (v or b""))
    for p in files(lambda n, r: n.endswith(".index") or n.endswith(".timeindex")):
        # a segment's own name, or a remote segment's (<offset>-<id>, and
        # <offset>_<id> in a broker's remote-log-index-cache)
        base = int(re.match(r"\d+", os.path.basename(p)).group(0))
        log = p.rsplit(".", 1)[0] + ".log"
        idx = read(p, 8192)
        logb = read(log, MAX) if os.path.exists(log) else b""
        sel = 0x10 if p.endswith(".index") else 0x11
        if sel == 0x11:
            oidx = p.rsplit(".", 1)[0] + ".index"
            logb = logb + (read(oidx, 8192) if os.path.exists(oidx) else b"")
        add("indexes", bytes([sel]) + struct.pack("<q", base) + struct.pack("<H", len(idx)) + idx + logb)
    for p in files(lambda n, r: n.endswith(".txnindex")):
        add("indexes", b"\x02" + read(p))
    for p in files(lambda n, r: n.endswith(".snapshot")):
        add("snapshot", read(p))
    for p in files(lambda n, r: n.endswith("checkpoint") or n in ("meta.properties", "partition.metadata", "quorum-state")):
        add("checkpoints", read(p))
    # Whole captures for the tree target: the first segment and the files
    # around it of one topic partition on two brokers, renamed to t-0.
    names = [
        "broker-1/meta.properties",
        "broker-1/replication-offset-checkpoint",
        "broker-1/recovery-point-offset-checkpoint",
        "broker-1/log-start-offset-checkpoint",
        "broker-1/t-0/00000000000000000000.log",
        "broker-1/t-0/00000000000000000000.index",
        "broker-1/t-0/00000000000000000000.timeindex",
        "broker-1/t-0/00000000000000000000.txnindex",
        "broker-1/t-0/00000000000000000100.log",
        "broker-1/t-0/00000000000000000100.index",
        "broker-1/t-0/00000000000000000100.snapshot",
        "broker-1/t-0/leader-epoch-checkpoint",
        "broker-1/t-0/partition.metadata",
        "broker-1/__cluster_metadata-0/00000000000000000000.log",
        "broker-1/__cluster_metadata-0/quorum-state",
        "broker-1/__cluster_metadata-0/00000000000000000010-0000000001.checkpoint",
        "broker-2/meta.properties",
        "broker-2/replication-offset-checkpoint",
        "broker-2/t-0/00000000000000000000.log",
        "broker-2/t-0/00000000000000000000.index",
        "broker-2/t-0/00000000000000000050.log.deleted",
        "broker-2/t-0/leader-epoch-checkpoint",
        "broker-2/t-0/00000000000000000000.snapshot",
        "broker-2/__consumer_offsets-0/00000000000000000000.log",
    ]
    for scen in sorted(os.listdir(DATA)):
        sdir = os.path.join(DATA, scen)
        if not os.path.isdir(os.path.join(sdir, "broker-1")) or not os.path.isdir(os.path.join(sdir, "broker-2")):
            continue
        parts = sorted(
            d for d in os.listdir(os.path.join(sdir, "broker-1"))
            if re.match(r".+-\d+$", d) and not d.startswith("__")
            and os.path.isdir(os.path.join(sdir, "broker-2", d))
        )
        for part in parts[:2]:
            topic = part.rsplit("-", 1)[0]
            enc = b""
            for sel, name in enumerate(names):
                b, rest = name.split("/", 1)
                real = os.path.join(sdir, b, rest.replace("t-0/", part + "/"))
                if not os.path.exists(real):
                    continue
                body = read(real, 12 * 1024)
                if not rest.startswith(("t-0/", "__")):
                    body = re.sub(rb"(?m)^" + re.escape(topic.encode()) + rb" ", b"t ", body)
                enc += bytes([sel]) + struct.pack("<H", len(body)) + body
            add("tree", enc)
    # Archives for the archive target: a tar (plain, gzip, zstd when the
    # module is there) of one partition of each capture, plus small ones
    # with PAX and GNU long names, links and duplicates.
    import io, tarfile, gzip
    for scen in sorted(os.listdir(DATA)):
        part = os.path.join(DATA, scen, "broker-1")
        if not os.path.isdir(part):
            continue
        for fmt in (tarfile.PAX_FORMAT, tarfile.GNU_FORMAT):
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
                for root, dirs, fs in os.walk(part):
                    dirs.sort()
                    for n in sorted(fs)[:6]:
                        p = os.path.join(root, n)
                        data = read(p, 8 * 1024)
                        ti = tarfile.TarInfo(os.path.relpath(p, os.path.dirname(part)))
                        ti.size = len(data)
                        t.addfile(ti, io.BytesIO(data))
                long = tarfile.TarInfo("broker-1/" + "x" * 150 + "/" + "y" * 120)
                long.size = 3
                t.addfile(long, io.BytesIO(b"abc"))
                link = tarfile.TarInfo("broker-1/link")
                link.type = tarfile.SYMTYPE
                link.linkname = "meta.properties"
                t.addfile(link)
                dup = tarfile.TarInfo("broker-1/link")
                dup.size = 1
                t.addfile(dup, io.BytesIO(b"z"))
            raw = buf.getvalue()
            add("archive", raw[: 64 * 1024])
            add("archive", gzip.compress(raw[: 64 * 1024]))
        break
    # Digests for the digest target: klf's own, of a few nodes, when a
    # klf binary has been built (cut to the first 64 KiB).
    import subprocess, tempfile
    klf = next(
        (b for b in (os.path.join(HERE, "..", "target", k, "klf") for k in ("release", "debug")) if os.path.isfile(b)),
        None,
    )
    if klf:
        with tempfile.TemporaryDirectory() as tmp:
            for scen in ("unclean", "transactions", "torn-write", "jbod"):
                node = os.path.join(DATA, scen, "broker-1")
                if not os.path.isdir(node):
                    continue
                dst = os.path.join(tmp, scen + ".klfd")
                r = subprocess.run([klf, "digest", "-q", node, "-o", dst])
                if r.returncode == 0:
                    add("digest", read(dst, 64 * 1024))
    for target, d in seeds.items():
        os.makedirs(os.path.join(out, target), exist_ok=True)
        for h, data in d.items():
            with open(os.path.join(out, target, h), "wb") as f:
                f.write(data)
        print(f"{target}: {len(d)} seeds", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus"))
