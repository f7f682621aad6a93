#!/usr/bin/env python3
"""Generates klf's message schema tables from Kafka's own JSON schemas.

klf decodes `__cluster_metadata` records, KRaft control records,
`__consumer_offsets`, `__transaction_state` and the consumer protocol's
subscription and assignment with a small schema interpreter
(src/format/metadata/schema.rs) driven by field tables. This script writes
those tables,

    src/format/metadata/tables.rs   metadata records, KRaft control records
    src/format/internal/tables.rs   group and transaction coordinator records,
                                    consumer protocol

reading the JSON message schemas (`common/metadata/*.json`,
`common/message/*.json`) straight out of the Kafka jars that
`oracle.py --kafka 4.4.0 setup` puts in tests/kafka-oracle/.cache/lib-4.4.0/
(SCHEMA_VERSION below: the newest release), and comparing them with each
older release's (`oracle.py --kafka X setup-dump`, OLDER_RELEASES) for what
that release's kafka-dump-log reads. The metadata.version levels come from
running MetadataVersions.java (javac and java) against the jars. Python's
standard library only.

    python3 tests/kafka-oracle/gen_schema_tables.py           rewrite the files
    python3 tests/kafka-oracle/gen_schema_tables.py --check   exit 1 with a diff
                                                              when they differ
"""

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# The schemas follow the newest release klf knows (older releases' records
# are the same messages at lower versions); its jars come from
# `oracle.py --kafka SCHEMA_VERSION setup`.
SCHEMA_VERSION = "4.4.0"
LIB = os.path.join(HERE, ".cache", f"lib-{SCHEMA_VERSION}")
# Older releases whose coordinator schemas are compared with the newest one:
# a tagged field a release's schema lacks is one its kafka-dump-log does not
# print (`oracle.py --kafka X setup-dump` fetches their jars).
OLDER_RELEASES = ("2.8.2", "3.0.2", "3.1.2", "3.2.3", "3.3.2", "3.4.1", "3.5.2", "3.6.2", "3.7.2",
                  "3.8.1", "3.9.2", "4.0.2", "4.1.1", "4.2.0", "4.3.1")


def release_messages(lib, folder):
    """Every message schema in `folder` of a release's Kafka jars, by name
    (which jar holds a schema changed between releases: the group records
    moved from the broker core to kafka-group-coordinator in 3.5)."""
    out = {}
    for f in sorted(os.listdir(lib)):
        if not (f.startswith("kafka") and f.endswith(".jar")) or f.endswith("-test.jar"):
            continue
        with zipfile.ZipFile(os.path.join(lib, f)) as z:
            for entry in z.namelist():
                d, _, base = entry.rpartition("/")
                if d == folder and base.endswith(".json"):
                    # the first JSON value, as Kafka's generator (Jackson) reads
                    # it: 2.8's DescribeProducersRequest.json has a stray `]}`
                    # after it
                    msg, _ = json.JSONDecoder().raw_decode(
                        strip_comments(z.read(entry).decode("utf-8")).strip())
                    out.setdefault(msg["name"], msg)
    return out


def serde_record_keys(lib):
    """The __consumer_offsets record key classes a release's decoder builds,
    by name, when it is the 3.x CoordinatorRecordSerde (a switch over the
    record types it reads; the jar may hold schemas of types it does not
    read): the generated key classes its class file names. None when the
    release's decoder reads every type its schemas define."""
    for f in sorted(os.listdir(lib)):
        if not f.startswith("kafka-group-coordinator-") or f.endswith("-test.jar"):
            continue
        with zipfile.ZipFile(os.path.join(lib, f)) as z:
            name = "org/apache/kafka/coordinator/group/CoordinatorRecordSerde.class"
            if name in z.namelist():
                data = z.read(name).decode("latin-1")
                return set(re.findall(r"coordinator/group/generated/(\w+Key)\b", data))
    return None


def max_version(msg):
    spec = msg["validVersions"]
    return int(spec.split("-")[-1])


def line_of(version):
    major, minor = version.split(".")[:2]
    return f"({int(major)}, {int(minor)})"


def release_lib(version):
    for d in (f"lib-{version}", f"dump-{version}"):
        p = os.path.join(HERE, ".cache", d)
        if os.path.isdir(p):
            return p
    return os.path.join(HERE, ".cache", f"dump-{version}")


def tagged_fields(msg):
    """Names of the tagged fields of a message schema, nested ones too."""
    out = set()

    def walk(fields):
        for f in fields or []:
            if "taggedVersions" in f:
                out.add(f["name"])
            walk(f.get("fields"))
    walk(msg.get("fields"))
    # structures defined once and used by several fields
    for st in msg.get("commonStructs") or []:
        walk(st.get("fields"))
    return out


def field_pairs(new, old):
    """What an older release calls each field of the newest schema `new`
    (its schema `old`): {newest field name: the older name}, nested fields
    too; a field the older schema lacks is not in it. Tagged fields pair by
    tag, the others by name, or else, of the same type and versions, by
    their place among the untagged fields (a rename keeps both: 3.7's
    `LastKnownELR` is 3.8's `LastKnownElr`)."""
    out = {}

    def same_kind(a, b):
        return a["type"] == b["type"] and a.get("versions") == b.get("versions")

    def walk(nf, of):
        nf, of = nf or [], of or []
        old_tagged = {int(f["tag"]): f for f in of if "taggedVersions" in f}
        old_plain = [f for f in of if "taggedVersions" not in f]
        old_names = {f["name"] for f in old_plain}
        plain = [f for f in nf if "taggedVersions" not in f]
        new_names = {f["name"] for f in plain}
        for f in nf:
            if "taggedVersions" in f:
                o = old_tagged.get(int(f["tag"]))
                if o is not None and o["name"] != f["name"] and not same_kind(o, f):
                    o = None
            elif f["name"] in old_names:
                o = next(x for x in old_plain if x["name"] == f["name"])
            else:
                i = plain.index(f)
                o = old_plain[i] if i < len(old_plain) else None
                if o is not None and (o["name"] in new_names or not same_kind(o, f)):
                    o = None
            if o is None:
                continue
            out.setdefault(f["name"], o["name"])
            walk(f.get("fields"), o.get("fields"))
    walk(new.get("fields"), old.get("fields"))
    old_common = {st["name"]: st for st in old.get("commonStructs") or []}
    for st in new.get("commonStructs") or []:
        if st["name"] in old_common:
            walk(st.get("fields"), old_common[st["name"]].get("fields"))
    return out


def unpaired_old_fields(new, old):
    """Whether the older schema `old` has a field the newest schema `new`
    has no counterpart for, or one of another type: then the two lay out
    the same version differently, and the older release reads with its
    own schema (2.8 to 3.2's FeatureLevelRecord had Min/MaxFeatureLevel)."""
    pairs = field_pairs(new, old)
    paired_old = set(pairs.values())
    types_new = {}

    def walk(fields, into):
        for f in fields or []:
            into.setdefault(f["name"], f["type"])
            walk(f.get("fields"), into)
    walk(new.get("fields"), types_new)
    for st in new.get("commonStructs") or []:
        walk(st.get("fields"), types_new)
    types_old = {}
    walk(old.get("fields"), types_old)
    for st in old.get("commonStructs") or []:
        walk(st.get("fields"), types_old)
    for name, t in types_old.items():
        if name not in paired_old:
            return True
    for n, o in pairs.items():
        if types_new.get(n) != types_old.get(o):
            return True
    return False


def renamed_fields(newest, release_msgs, rel):
    """(message, newest JSON name, release line, that line's JSON name) for
    each field release `rel` names otherwise."""
    out = []
    for msg in newest:
        old = release_msgs.get(msg["name"])
        if old is None:
            continue
        for n, o in sorted(field_pairs(msg, old).items()):
            if json_name(n) != json_name(o):
                out.append((msg["name"], json_name(n), line_of(rel), json_name(o)))
    return out


SCRIPT = "tests/kafka-oracle/gen_schema_tables.py"


def kafka_version():
    return SCHEMA_VERSION


# ---------------------------------------------------------------- reading

def strip_comments(text):
    """Kafka's schema files are JSON with `//` line comments (outside strings)."""
    out = []
    i, n, in_string = 0, len(text), False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == '"':
                in_string = False
            i += 1
        elif c == '"':
            in_string = True
            out.append(c)
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        else:
            out.append(c)
            i += 1
    return "".join(out)


class Jar:
    def __init__(self, lib, artifact, version):
        self.file = f"{artifact}-{version}.jar"
        path = os.path.join(lib, self.file)
        if not os.path.exists(path):
            print(f"{SCRIPT}: {path} is missing; run "
                  "`python3 tests/kafka-oracle/oracle.py setup` first", file=sys.stderr)
            sys.exit(2)
        self.zip = zipfile.ZipFile(path)

    def schemas(self, folder, names=None):
        """The message schemas in `folder` of the jar (all, or those named),
        sorted by message name."""
        out = []
        for entry in self.zip.namelist():
            d, _, base = entry.rpartition("/")
            if d != folder or not base.endswith(".json"):
                continue
            msg = json.loads(strip_comments(self.zip.read(entry).decode("utf-8")))
            if names is None or msg["name"] in names:
                out.append(msg)
        if names is not None:
            missing = set(names) - {m["name"] for m in out}
            if missing:
                raise ValueError(f"{self.file} has no {folder}/ schema for "
                                 + ", ".join(sorted(missing)))
        return sorted(out, key=lambda m: m["name"])


# ---------------------------------------------------------------- mapping

PRIMITIVES = {
    "bool": "Bool", "int8": "I8", "int16": "I16", "uint16": "U16",
    "int32": "I32", "uint32": "U32", "int64": "I64", "float64": "F64",
    "uuid": "Uuid", "string": "Str", "bytes": "Bytes",
}
INTEGERS = {"int8", "int16", "uint16", "int32", "uint32", "int64"}


def versions(spec):
    """A Kafka version spec ("3", "0-2", "4+", "none") as a Rust `Vr`."""
    if spec is None or spec == "none":
        return "NONE"
    spec = str(spec)
    if spec.endswith("+"):
        return f"Vr({int(spec[:-1])}, MAX)"
    lo, _, hi = spec.partition("-")
    return f"Vr({int(lo)}, {int(hi or lo)})"


def rust_str(s):
    out = []
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif c.isprintable():
            out.append(c)
        else:
            out.append(f"\\u{{{ord(c):x}}}")
    return '"' + "".join(out) + '"'


def json_name(name):
    """The key the generated JSON converters write: first letter lower-cased."""
    return name[:1].lower() + name[1:]


def constant(name):
    """`KRaftVersionRecord` -> `KRAFT_VERSION_RECORD`: `_` before a capital
    that follows a lower-case letter or digit (MetadataRecordType's rule)."""
    out, prev_lower = [], False
    for c in name:
        if c.isupper() and prev_lower:
            out.append("_")
        prev_lower = c.islower() or c.isdigit()
        out.append(c.upper())
    return "".join(out)


def default(field, type_name, is_array, is_struct):
    """The Rust `Def` of a field, as the generated constructor initialises it:
    only the string "null" means null; otherwise the type's zero unless the
    schema gives a value (a JSON `null` there counts as no value)."""
    value = field.get("default")
    if value == "null":
        return "Def::Null"
    if is_array:
        return "Def::Empty"
    if is_struct:
        return "Def::Struct"
    if type_name == "bytes":
        return "Def::Empty"
    if type_name == "string":
        return f"Def::Str({rust_str('' if value is None else str(value))})"
    if type_name == "bool":
        return "Def::Bool(true)" if str(value).lower() == "true" else "Def::Bool(false)"
    if type_name in INTEGERS:
        if value is None or value == "":
            return "Def::Int(0)"
        return f"Def::Int({value if isinstance(value, int) else int(str(value), 0)})"
    if type_name == "float64":
        return f"Def::F64({float(value or 0)!r})"
    if type_name == "uuid":
        if value not in (None, "", "AAAAAAAAAAAAAAAAAAAAAA"):
            raise ValueError(f"field {field['name']}: uuid default {value!r} not supported")
        return "Def::ZeroUuid"
    raise ValueError(f"field {field['name']}: no default for type {type_name}")


class Tables:
    """Numbers the field tables of one group (`M_F1`, `M_F2`, ...): a
    structure's nested structures come before it (depth first, in field
    order), and a common structure gets its own copy at every use."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.statics = []  # (name, [field lines])

    def struct(self, fields, common):
        lines = [self.field(f, common) for f in fields]
        name = f"{self.prefix}_F{len(self.statics) + 1}"
        self.statics.append((name, lines))
        return name

    def field(self, f, common):
        t = f["type"]
        is_array = t.startswith("[]")
        elem = t[2:] if is_array else t
        is_struct = elem not in PRIMITIVES
        if is_struct:
            nested = f.get("fields")
            if nested is None:
                if elem not in common:
                    raise ValueError(f"field {f['name']}: type {t} is neither a primitive "
                                     "the interpreter knows nor a structure of the schema")
                nested = common[elem]["fields"]
            ty = f"Ty::Struct({self.struct(nested, common)})"
        else:
            ty = f"Ty::{PRIMITIVES[elem]}"
        if is_array:
            ty = f"Ty::Arr(&{ty})"
        # A field without "versions" exists in its tagged versions (Kafka's
        # FieldSpec rule).
        ver = versions(f.get("versions", f.get("taggedVersions")))
        tagged = versions(f.get("taggedVersions"))
        tag = f.get("tag", 0) if tagged != "NONE" else 0
        flex = f.get("flexibleVersions")
        flex = "None" if flex is None else f"Some({versions(flex)})"
        return (f"Field {{ name: {rust_str(json_name(f['name']))}, ty: {ty}, ver: {ver}, "
                f"nullable: {versions(f.get('nullableVersions'))}, tagged: {tagged}, "
                f"tag: {tag}, default: {default(f, elem, is_array, is_struct)}, flex: {flex} }},")

    def message(self, msg):
        common = {c["name"]: c for c in msg.get("commonStructs", [])}
        return self.struct(msg["fields"], common)

    def render(self):
        out = []
        for name, lines in self.statics:
            if not lines:
                out.append(f"static {name}: &[Field] = &[];")
                continue
            out.append(f"static {name}: &[Field] = &[")
            out.extend("    " + line for line in lines)
            out.append("];")
        return out


def schema_value(msg, fields):
    return (f"Schema {{ name: {rust_str(msg['name'])}, api_key: {msg.get('apiKey', -1)}, "
            f"valid: {versions(msg['validVersions'])}, "
            f"flex: {versions(msg.get('flexibleVersions', 'none'))}, fields: {fields} }}")


def schema_list(doc, name, entries):
    """A `&[Schema]` static of (message, fields) pairs, by api key."""
    out = [f"/// {doc}", f"pub(crate) static {name}: &[Schema] = &["]
    for msg, fields in sorted(entries, key=lambda e: e[0]["apiKey"]):
        out.append(f"    {schema_value(msg, fields)},")
    out.append("];")
    return out


def named_schemas(entries):
    """One `Schema` static per message, named after it, alphabetically."""
    return [f"pub(crate) static {constant(msg['name'])}: Schema = {schema_value(msg, fields)};"
            for msg, fields in sorted(entries, key=lambda e: e[0]["name"])]


def wrap_comment(text, width=79):
    words, lines, cur = text.split(), [], "//"
    for w in words:
        if len(cur) + 1 + len(w) > width and cur != "//":
            lines.append(cur)
            cur = "//"
        cur += " " + w
    lines.append(cur)
    return lines


# ---------------------------------------------------------------- the two files

def metadata_tables(lib, version):
    series = ".".join(version.split(".")[:2])
    meta = Jar(lib, "kafka-metadata", version)
    clients = Jar(lib, "kafka-clients", version)
    records = meta.schemas("common/metadata")
    control = clients.schemas("common/message", {
        "KRaftVersionRecord", "LeaderChangeMessage", "SnapshotFooterRecord",
        "SnapshotHeaderRecord", "VotersRecord"})
    storage = Jar(lib, "kafka-storage", version)
    remote = storage.schemas("message", {
        "RemoteLogSegmentMetadataRecord", "RemoteLogSegmentMetadataUpdateRecord",
        "RemotePartitionDeleteMetadataRecord", "RemoteLogSegmentMetadataSnapshotRecord"})

    out = wrap_comment(
        f"@generated by {SCRIPT} from the JSON message schemas in {meta.file} "
        f"(common/metadata/*.json), {clients.file} (common/message/"
        + ", ".join(f"{m['name']}.json" for m in control)
        + f") and {storage.file} (message/"
        + ", ".join(f"{m['name']}.json" for m in remote)
        + f"). Do not edit by hand: change the script and run it; CI runs it "
        "with --check, which fails when this file differs from its output.")
    out += [
        "",
        f"//! Field tables of the Kafka {series} metadata record schemas",
        "//! (`metadata/src/main/resources/common/metadata/*.json`).",
        "use super::schema::{Def, Field, Schema, Ty, Vr, MAX, NONE};",
        "",
    ]
    m = Tables("M")
    entries = [(msg, m.message(msg)) for msg in records]
    out += m.render()
    out += schema_list("Metadata record schemas, by api key.", "METADATA_SCHEMAS", entries)
    # what each older release's decoder knows: record types and versions
    # (a type it lacks prints `Unknown metadata id`, a version above its
    # highest `Failed to deserialize record with type`), and tagged fields
    out += [
        "/// The metadata record versions each older release line reads: (line,",
        "/// [(api key, highest version)]); a type missing is one that line does not",
        "/// know. Compared with the newest release's schemas above.",
        "pub(crate) static METADATA_MAX_VERSIONS: &[((u8, u8), &[(i16, i16)])] = &[",
    ]
    newest_tagged = {msg["name"]: tagged_fields(msg) for msg in records}
    since = {}
    for rel in OLDER_RELEASES:
        known = release_messages(release_lib(rel), "common/metadata")
        pairs = []
        for msg in records:
            old = known.get(msg["name"])
            if old is not None:
                pairs.append(f"({msg['apiKey']}, {min(max_version(old), max_version(msg))})")
        out.append(f"    ({line_of(rel)}, &[{', '.join(pairs)}]),")
    renames = []
    by_name = {msg["name"]: msg for msg in records}
    for rel in reversed(OLDER_RELEASES):
        known = release_messages(release_lib(rel), "common/metadata")
        for name, fields in newest_tagged.items():
            if name not in known:
                continue
            pairs = field_pairs(by_name[name], known[name])
            for f in fields:
                if f not in pairs:
                    since.setdefault((name, f), next_release(rel))
        renames += renamed_fields(records, known, rel)
    out.append("];")
    out += [
        "/// Tagged fields of the metadata record schemas that older releases' schemas",
        "/// lack (their kafka-dump-log does not print them): (message, field, first",
        "/// release line that has it).",
        "pub(crate) static METADATA_TAGGED_SINCE: &[(&str, &str, (u8, u8))] = &[",
    ]
    for (name, f), line in sorted(since.items()):
        out.append(f"    ({rust_str(name)}, {rust_str(json_name(f))}, {line_of(line)}),")
    out.append("];")
    out += renames_table("METADATA_RENAMED", "metadata record", renames)
    # records an older release lays out otherwise: its own schema
    layouts = []
    o = Tables("O")
    for rel in OLDER_RELEASES:
        known = release_messages(release_lib(rel), "common/metadata")
        for msg in records:
            old = known.get(msg["name"])
            if old is not None and unpaired_old_fields(msg, old):
                layouts.append((rel, old, o.message(old)))
    out += o.render()
    out += [
        "/// Metadata records an older release line lays out otherwise than the newest",
        "/// schema (fields the newest lacks): (line, that line's own schema), which",
        "/// its kafka-dump-log reads the record with.",
        "pub(crate) static METADATA_OLD_LAYOUTS: &[((u8, u8), &Schema)] = &[",
    ]
    for rel, old, body in layouts:
        out.append(f"    ({line_of(rel)}, &{schema_value(old, body)}),")
    out.append("];")
    levels = metadata_versions([lib, release_lib("3.9.2")])
    out += [
        "/// Every `metadata.version` feature level and its version (`3.3-IV3`), from",
        f"/// `MetadataVersion` of Kafka {version} and, for the levels 4.x dropped, 3.9.2.",
        "pub(crate) static METADATA_VERSIONS: &[(i16, &str)] = &[",
    ]
    for level in sorted(levels):
        out.append(f"    ({level}, {rust_str(levels[level])}),")
    out.append("];")
    c = Tables("C")
    entries = [(msg, c.message(msg)) for msg in control]
    out += c.render()
    out += named_schemas(entries)
    r = Tables("R")
    entries = [(msg, r.message(msg)) for msg in remote]
    out += r.render()
    out += schema_list("`__remote_log_metadata` record schemas (TopicBasedRemoteLogMetadataManager), by "
                       "api key.", "REMOTE_LOG_METADATA_SCHEMAS", entries)
    return "\n".join(out) + "\n"


def renames_table(name, what, renames):
    out = [
        f"/// Fields of the {what} schemas that older release lines name otherwise",
        "/// (their kafka-dump-log prints that name): (message, newest JSON name, line,",
        "/// that line's JSON name).",
        f"pub(crate) static {name}: &[(&str, &str, (u8, u8), &str)] = &[",
    ]
    for msg, n, line, o in sorted(renames):
        out.append(f"    ({rust_str(msg)}, {rust_str(n)}, {line}, {rust_str(o)}),")
    out.append("];")
    return out


def metadata_versions(libs):
    """{feature level: "X.Y-IVn"} from `MetadataVersion` of each release's
    jars (MetadataVersions.java, compiled against the first): a later
    release's name wins, levels below 1 are left out."""
    classes = os.path.join(HERE, ".cache", "classes-metadata-versions")
    os.makedirs(classes, exist_ok=True)
    src = os.path.join(HERE, "MetadataVersions.java")
    subprocess.run(["javac", "-cp", os.path.join(libs[0], "*"), "-d", classes, src], check=True)
    out = {}
    for lib in reversed(libs):
        text = subprocess.run(["java", "-cp", classes + os.pathsep + os.path.join(lib, "*"),
                               "MetadataVersions"], check=True, capture_output=True, text=True).stdout
        for line in text.splitlines():
            level, name = line.split()
            if int(level) >= 1:
                out[int(level)] = name
    return out


def internal_tables(lib, version):
    series = ".".join(version.split(".")[:2])
    group = Jar(lib, "kafka-group-coordinator", version)
    txn = Jar(lib, "kafka-transaction-coordinator", version)
    clients = Jar(lib, "kafka-clients", version)
    group_msgs = group.schemas("common/message")
    share = Jar(lib, "kafka-share-coordinator", version)
    share_msgs = share.schemas("common/message")
    other = sorted(
        clients.schemas("common/message", {"ConsumerProtocolAssignment",
                                           "ConsumerProtocolSubscription"})
        + txn.schemas("common/message"),
        key=lambda msg: msg["name"])

    out = wrap_comment(
        f"@generated by {SCRIPT} from the JSON message schemas in {group.file} "
        f"(common/message/*.json), {txn.file} (common/message/*.json), "
        f"{share.file} (common/message/*.json) and "
        f"{clients.file} (common/message/ConsumerProtocolAssignment.json, "
        "ConsumerProtocolSubscription.json). Do not edit by hand: change the "
        "script and run it; CI runs it with --check, which fails when this file "
        "differs from its output.")
    out += [
        "",
        f"//! Field tables of the Kafka {series} group-coordinator,",
        "//! transaction-coordinator and share-coordinator record schemas, and of",
        "//! the consumer embedded protocol's subscription and assignment.",
        "use crate::format::metadata::schema::{Def, Field, Schema, Ty, Vr, MAX, NONE};",
        "",
    ]
    g = Tables("G")
    group_entries = [(msg, g.message(msg)) for msg in group_msgs]
    out += g.render()
    t = Tables("T")
    other_entries = [(msg, t.message(msg)) for msg in other]
    out += t.render()
    sh = Tables("S")
    share_entries = [(msg, sh.message(msg)) for msg in share_msgs]
    out += sh.render()
    for kind, doc, name in [
        ("coordinator-key", "`__consumer_offsets` record keys, by record type.", "GROUP_KEYS"),
        ("coordinator-value", "`__consumer_offsets` record values, by record type.", "GROUP_VALUES"),
    ]:
        out += schema_list(doc, name, [e for e in group_entries if e[0]["type"] == kind])
    for kind, doc, name in [
        ("coordinator-key", "`__share_group_state` record keys, by record type.", "SHARE_KEYS"),
        ("coordinator-value", "`__share_group_state` record values, by record type.", "SHARE_VALUES"),
    ]:
        out += schema_list(doc, name, [e for e in share_entries if e[0]["type"] == kind])
    out += named_schemas(other_entries)
    # tagged fields each older release does not know
    newest = {m["name"]: tagged_fields(m) for m in group_msgs + other + share_msgs}
    since = {}
    types_since = {}
    renames = []
    for rel in reversed(OLDER_RELEASES):
        msgs = release_messages(release_lib(rel), "common/message")
        all_msgs = {m["name"]: m for m in group_msgs + other + share_msgs}
        for name, fields in newest.items():
            pairs = field_pairs(all_msgs[name], msgs[name]) if name in msgs else {}
            for f in fields:
                if f not in pairs:
                    since.setdefault((name, f), ".".join(str(int(x)) for x in
                                     next_release(rel).split(".")[:2]))
        if tuple(int(x) for x in rel.split(".")[:2]) >= (3, 8):
            # (up to 3.7 the Scala decoders print no field names)
            renames += renamed_fields(group_msgs + other + share_msgs, msgs, rel)
        # __consumer_offsets record types 0-2 (offset commits, group
        # metadata) every release reads; a later type it reads when it has
        # the type's key message
        read_keys = serde_record_keys(release_lib(rel))
        for msg in group_msgs:
            known_key = msg["name"] in msgs and (read_keys is None or msg["name"] in read_keys)
            if msg["type"] == "coordinator-key" and msg["apiKey"] > 2 and not known_key:
                types_since.setdefault(msg["apiKey"], next_release(rel))
    out += [
        "/// Tagged fields of these schemas that older releases' schemas lack (their",
        "/// kafka-dump-log does not print them): (message, field, first release line",
        "/// that has it), compared with " + ", ".join(OLDER_RELEASES) + ".",
        "pub(crate) static TAGGED_SINCE: &[(&str, &str, (u8, u8))] = &[",
    ]
    for (name, f), line in sorted(since.items()):
        major, minor = line.split(".")
        out.append(f"    ({rust_str(name)}, {rust_str(json_name(f))}, ({major}, {minor})),")
    out.append("];")
    # the Scala group coordinator (kafka-dump-log's --offsets-decoder up to
    # 3.7) reads offset commit keys 0-1 and the group metadata key 2, and
    # values up to the highest versions its schemas have
    out += [
        "/// The `__consumer_offsets` value versions the Scala group coordinator of each",
        "/// older release line reads (its kafka-dump-log `--offsets-decoder` up to 3.7):",
        "/// (line, highest `OffsetCommitValue`, highest `GroupMetadataValue`); a higher",
        "/// version stops the tool. Its keys are `OffsetCommitKey` 0-1 and",
        "/// `GroupMetadataKey` 2 in every line.",
        "pub(crate) static SCALA_GROUP_VALUE_MAX: &[((u8, u8), i16, i16)] = &[",
    ]
    for rel in OLDER_RELEASES:
        if tuple(int(x) for x in rel.split(".")[:2]) >= (3, 8):
            continue
        msgs = release_messages(release_lib(rel), "common/message")
        for name, spec in (("OffsetCommitKey", "0-1"), ("GroupMetadataKey", "2")):
            if name not in msgs or msgs[name]["validVersions"] != spec:
                raise ValueError(f"Kafka {rel}'s {name} is not versions {spec}")
        out.append(f"    ({line_of(rel)}, {max_version(msgs['OffsetCommitValue'])}, "
                   f"{max_version(msgs['GroupMetadataValue'])}),")
    out.append("];")
    # the Scala transaction coordinator (--transaction-log-decoder up to 4.0)
    # reads TransactionLogKey 0 and values up to its schema's highest version
    out += [
        "/// The `TransactionLogValue` versions the Scala transaction coordinator of",
        "/// each older release line reads (its `--transaction-log-decoder` up to 4.0):",
        "/// (line, highest version); a higher version stops the tool. Its key is",
        "/// `TransactionLogKey` 0 in every line.",
        "pub(crate) static SCALA_TXN_VALUE_MAX: &[((u8, u8), i16)] = &[",
    ]
    for rel in OLDER_RELEASES:
        if tuple(int(x) for x in rel.split(".")[:2]) >= (4, 1):
            continue
        msgs = release_messages(release_lib(rel), "common/message")
        if msgs["TransactionLogKey"]["validVersions"] != "0":
            raise ValueError(f"Kafka {rel}'s TransactionLogKey is not version 0")
        out.append(f"    ({line_of(rel)}, {max_version(msgs['TransactionLogValue'])}),")
    out.append("];")
    out += renames_table("COORDINATOR_RENAMED", "coordinator record", renames)
    out += [
        "/// `__consumer_offsets` record types older releases' decoders do not read",
        "/// (they print `Unknown record type`): (type, first release line that reads it).",
        "pub(crate) static GROUP_TYPES_SINCE: &[(i16, (u8, u8))] = &[",
    ]
    for t, line in sorted(types_since.items()):
        out.append(f"    ({t}, {line_of(line)}),")
    out.append("];")
    return "\n".join(out) + "\n"


def next_release(version):
    """The release line after `version` among the compared ones and the newest."""
    lines = list(OLDER_RELEASES) + [SCHEMA_VERSION]
    return lines[lines.index(version) + 1]


OUTPUTS = [
    ("src/format/metadata/tables.rs", metadata_tables),
    ("src/format/internal/tables.rs", internal_tables),
]


def rustfmt(text):
    """`text` as rustfmt writes it, so that the generated files pass
    `rustfmt --check` like every other source file."""
    r = subprocess.run(["rustfmt", "--edition", "2021", "--emit", "stdout"], input=text,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise ValueError(f"rustfmt refused the generated text: {r.stderr.strip()}")
    return r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 with a diff when a file differs")
    ap.add_argument("--lib", default=LIB, help="folder holding the Kafka jars")
    args = ap.parse_args()
    version = kafka_version()
    stale = 0
    for rel, generate in OUTPUTS:
        try:
            text = rustfmt(generate(args.lib, version))
        except ValueError as e:
            print(f"{SCRIPT}: {rel}: {e}", file=sys.stderr)
            sys.exit(2)
        path = os.path.join(REPO, rel)
        try:
            with open(path, encoding="utf-8", newline="") as f:
                current = f.read()
        except FileNotFoundError:
            current = ""
        if current == text:
            continue
        if args.check:
            stale += 1
            sys.stdout.writelines(difflib.unified_diff(
                current.splitlines(keepends=True), text.splitlines(keepends=True),
                f"a/{rel}", f"b/{rel} (generated)"))
        else:
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(text)
            print(f"wrote {rel}")
    if stale:
        print(f"{SCRIPT}: {stale} file(s) differ from what the Kafka {version} schemas "
              f"generate; run `python3 {SCRIPT}`", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
