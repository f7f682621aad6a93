//! The iteration orders of the JVM hash collections kafka-dump-log prints
//! through: Java's `HashMap` (the per-file summaries of the Java tool) and
//! Scala 2.13's `mutable.HashMap` and `mutable.HashSet` (the members of a
//! group and the partitions of a transaction in the Scala coordinators'
//! text). Each is a pure function of the keys' hash codes and the order
//! they were put in.

/// Java's `String.hashCode` (over UTF-16 code units).
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// `TopicPartition.hashCode`: `31 * (31 + partition) + topic.hashCode()`.
pub fn topic_partition_hash(topic: &str, partition: i32) -> i32 {
    31i32
        .wrapping_mul(31i32.wrapping_add(partition))
        .wrapping_add(java_string_hash(topic))
}

/// The spread both libraries apply to a hash code before masking it.
fn spread(h: i32) -> u32 {
    let h = h as u32;
    h ^ (h >> 16)
}

/// The order in which a Java `HashMap` with these distinct keys, put in this
/// order, iterates them: by bucket (the spread hash masked to the table
/// size the map has grown to: 16, doubled whenever it holds more than
/// three quarters of that), then in insertion order within a bucket (a
/// resize keeps it). Buckets of 8 or more keys, which Java turns into
/// trees, are not modelled: they need colliding path hashes.
pub fn java_hash_map_order<'k>(keys: impl Iterator<Item = &'k str>) -> Vec<usize> {
    let hashes: Vec<i32> = keys.map(java_string_hash).collect();
    let mut cap: usize = 16;
    while hashes.len() * 4 > cap * 3 {
        cap *= 2;
    }
    let mut idx: Vec<usize> = (0..hashes.len()).collect();
    idx.sort_by_key(|&i| ((spread(hashes[i]) as usize) & (cap - 1), i));
    idx
}

/// One step of filling a Scala 2.13 `mutable.HashMap` or `mutable.HashSet`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalaPut {
    /// `put` / `add` of one key (the table grows first when the count would
    /// reach the threshold, whether or not the key is new).
    One(i32),
    /// `addAll` of a collection whose size is known (`sizeHint` first:
    /// the table is sized for it at once).
    SizeHint(usize),
    /// A key added by `addAll` of an `immutable.HashSet` (no threshold
    /// check: the size hint made room).
    Bulk(i32),
}

/// The order a Scala 2.13 `mutable.HashMap`/`mutable.HashSet` (default
/// capacity 16, load factor 0.75) iterates the keys put by `steps`, as
/// indexes into the hashes of `steps` (a key equal to an earlier one, as
/// `same` tells, is not added twice). The table is an array of buckets
/// indexed by the spread hash; within a bucket nodes are kept sorted by
/// that hash (a signed comparison; ties in insertion order), and a resize
/// keeps both, so the order is by (bucket of the final table, hash,
/// insertion).
pub fn scala_hash_order(steps: &[ScalaPut], same: impl Fn(usize, usize) -> bool) -> Vec<usize> {
    let mut len: usize = 16;
    let threshold = |len: usize| (len as f64 * 0.75) as usize;
    let mut keys: Vec<(usize, u32)> = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let hash = match *step {
            ScalaPut::SizeHint(n) => {
                // tableSizeFor: twice the highest power of two at most
                // capacity - 1 (at least 4), at most 2^30
                let capacity = ((n + 1) as f64 / 0.75) as usize;
                let x = capacity.saturating_sub(1).max(4);
                let highest_one_bit = 1usize << (usize::BITS - 1 - x.leading_zeros());
                let target = (highest_one_bit * 2).min(1 << 30);
                if target > len {
                    len = target;
                }
                continue;
            }
            ScalaPut::One(h) => {
                if keys.len() + 1 >= threshold(len) {
                    len *= 2;
                }
                h
            }
            ScalaPut::Bulk(h) => h,
        };
        if keys.iter().any(|&(j, _)| same(i, j)) {
            continue;
        }
        keys.push((i, spread(hash)));
    }
    // within a bucket by the hash as a signed Int (`n.hash <= hash`)
    keys.sort_by_key(|&(i, h)| ((h as usize) & (len - 1), h as i32, i));
    keys.into_iter().map(|(i, _)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Orders printed by scala-library 2.13.12 (the one Kafka 3.7.2 ships)
    /// for a `mutable.HashMap` filled with `consumer-N-member`, N = 0..n, in
    /// order: the first growth of the table comes at the 12th key.
    #[test]
    fn scala_hash_map_orders_as_scala_library() {
        for (n, want) in [
            (11, &[3, 1, 9, 2, 0, 5, 8, 6, 4, 7, 10][..]),
            (12, &[3, 1, 2, 0, 5, 6, 4, 11, 10, 9, 8, 7][..]),
            (13, &[3, 1, 2, 0, 5, 6, 4, 11, 10, 12, 9, 8, 7][..]),
            (
                24,
                &[
                    3, 1, 2, 0, 5, 6, 4, 17, 16, 18, 19, 23, 22, 9, 8, 7, 11, 10, 20, 21, 14, 12,
                    15, 13,
                ][..],
            ),
            (
                25,
                &[
                    3, 1, 2, 0, 5, 6, 4, 17, 16, 18, 19, 24, 23, 22, 9, 8, 7, 11, 10, 20, 21, 14,
                    12, 15, 13,
                ][..],
            ),
        ] {
            let keys: Vec<String> = (0..n).map(|i| format!("consumer-{i}-member")).collect();
            let steps: Vec<ScalaPut> = keys
                .iter()
                .map(|k| ScalaPut::One(java_string_hash(k)))
                .collect();
            assert_eq!(
                scala_hash_order(&steps, |a, b| keys[a] == keys[b]),
                want,
                "{n} keys"
            );
        }
    }

    /// The same for a `mutable.HashSet[TopicPartition]` filled as Kafka's
    /// `TransactionMetadata.addPartitions` does, one topic's partitions
    /// (an immutable set) at a time.
    #[test]
    fn scala_hash_set_orders_as_scala_library() {
        for (topics, want) in [
            (
                &[("wide", 14), ("side", 3)][..],
                "side-1,side-2,wide-0,wide-1,wide-2,wide-3,wide-4,side-0,wide-13,wide-5,wide-6,wide-7,wide-8,wide-9,wide-10,wide-11,wide-12",
            ),
            (&[("side", 3)][..], "side-1,side-2,side-0"),
            (
                &[("a", 2), ("b", 2), ("c", 2), ("d", 2), ("e", 2), ("f", 2), ("g", 2)][..],
                "a-1,a-0,b-1,b-0,c-1,c-0,d-1,d-0,e-1,e-0,f-1,f-0,g-1,g-0",
            ),
            (
                &[("t", 30)][..],
                "t-21,t-19,t-17,t-15,t-13,t-11,t-9,t-7,t-5,t-3,t-1,t-28,t-26,t-24,t-22,t-20,t-18,t-16,t-14,t-12,t-10,t-8,t-6,t-4,t-2,t-0,t-29,t-27,t-25,t-23",
            ),
        ] {
            let mut steps = Vec::new();
            let mut names = Vec::new();
            for (t, n) in topics {
                steps.push(ScalaPut::SizeHint(*n));
                names.push(String::new());
                for p in 0..*n {
                    let h = topic_partition_hash(t, p as i32);
                    steps.push(if *n > 4 {
                        ScalaPut::Bulk(h)
                    } else {
                        ScalaPut::One(h)
                    });
                    names.push(format!("{t}-{p}"));
                }
            }
            let order = scala_hash_order(&steps, |a, b| names[a] == names[b]);
            let got: Vec<&str> = order.iter().map(|&i| names[i].as_str()).collect();
            assert_eq!(got.join(","), want);
        }
    }

    #[test]
    fn string_and_partition_hashes() {
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("orders"), -1008770331);
        assert_eq!(topic_partition_hash("", 0), 961);
    }
}
