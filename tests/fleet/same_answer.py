#!/usr/bin/env python3
"""Checks that `klf diff --format json` over digests gives the same answer as
over the node trees themselves (tests/fleet/run.sh).

usage: same_answer.py DIR_JSON DIGEST_JSON NODE=TREE=DIGEST...

A file inside a digest is named `DIGEST!/path/in/node`; on the node tree the
same file is `TREE/path/in/node`. Both are rewritten to `<NODE>/path/in/node`
wherever they appear in a string (file fields, messages). The "bytes_read"
fields are read statistics (a digest holds batch summaries, not the bytes),
so they are dropped. Everything else must be equal. Exit 0 when equal, 1
with the differing places listed when not, 2 on bad input.
"""
import json
import sys


def rewrite(value, prefixes):
    if isinstance(value, dict):
        return {k: rewrite(v, prefixes) for k, v in value.items() if k != "bytes_read"}
    if isinstance(value, list):
        return [rewrite(v, prefixes) for v in value]
    if isinstance(value, str):
        for prefix, label in prefixes:
            value = value.replace(prefix, label)
        return value
    return value


def differences(a, b, where="$"):
    if type(a) is not type(b):
        yield f"{where}: {a!r} (directories) vs {b!r} (digests)"
    elif isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in b:
                yield f"{where}.{k}: only in the directories' answer"
            elif k not in a:
                yield f"{where}.{k}: only in the digests' answer"
            else:
                yield from differences(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list):
        if len(a) != len(b):
            yield f"{where}: {len(a)} items (directories) vs {len(b)} (digests)"
        for i, (x, y) in enumerate(zip(a, b)):
            yield from differences(x, y, f"{where}[{i}]")
    elif a != b:
        yield f"{where}: {a!r} (directories) vs {b!r} (digests)"


def main(argv):
    if len(argv) < 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    dir_json, digest_json, nodes = argv[1], argv[2], argv[3:]
    on_trees, on_digests = [], []
    for spec in nodes:
        parts = spec.split("=")
        if len(parts) != 3:
            print(f"not NODE=TREE=DIGEST: {spec}", file=sys.stderr)
            return 2
        node, tree, digest = parts
        on_trees.append((tree.rstrip("/"), f"<{node}>"))
        on_digests.append((digest + "!", f"<{node}>"))
    # longest first, so that no prefix is cut by a shorter one it starts with
    on_trees.sort(key=lambda p: -len(p[0]))
    on_digests.sort(key=lambda p: -len(p[0]))
    with open(dir_json) as f:
        a = rewrite(json.load(f), on_trees)
    with open(digest_json) as f:
        b = rewrite(json.load(f), on_digests)
    found = list(differences(a, b))
    if found:
        print(f"{len(found)} difference(s) between the answers on directories and on digests:", file=sys.stderr)
        for line in found[:40]:
            print("  " + line, file=sys.stderr)
        return 1
    partitions = len(a.get("partitions", [])) if isinstance(a, dict) else 0
    print(f"same answer on digests as on directories ({partitions} partitions, paths normalised, bytes_read dropped)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
