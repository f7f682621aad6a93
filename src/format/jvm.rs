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
/// that hash (ties in insertion order), and a resize keeps both, so the
/// order is by (bucket of the final table, hash, insertion).
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
    keys.sort_by_key(|&(i, h)| ((h as usize) & (len - 1), h, i));
    keys.into_iter().map(|(i, _)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_and_partition_hashes() {
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("orders"), -1008770331);
        assert_eq!(topic_partition_hash("", 0), 961);
    }
}
