//! What `klf digest` is asked to do and what it did: plain data the
//! engine passes between the command and the digest's maker.

/// How to make a digest.
#[derive(Debug, Clone)]
pub struct Options {
    /// Check every batch's checksum (reads every byte of every segment).
    pub verify: bool,
    /// Largest file shipped whole (other than an internal topic's segment).
    pub max_file: u64,
    /// Largest internal topic segment shipped whole; a larger one is
    /// summarised.
    pub max_internal: u64,
    /// The node's Kafka logs given with `--logs [NODE=]PATH` (a file, or a
    /// folder of them), shipped beside those found in its folders.
    pub logs: Vec<(Option<i32>, std::path::PathBuf)>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            verify: false,
            max_file: 64 << 20,
            max_internal: 1 << 30,
            logs: Vec::new(),
        }
    }
}

/// What a digest holds and what making it read.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Made {
    /// Files shipped whole.
    pub files_shipped: u64,
    /// Files listed without their bytes.
    pub files_listed: u64,
    /// Kafka logs shipped as their reduced copies.
    pub logs: u64,
    /// Lines of those logs.
    pub log_lines: u64,
    /// Lines of them kept (the records that state an event klf reads).
    pub log_lines_kept: u64,
    /// Data segments summarised.
    pub segments: u64,
    /// Batches summarised.
    pub batches: u64,
    /// Bytes of the node's files.
    pub bytes_on_node: u64,
    /// Bytes of the data segments summarised.
    pub segment_bytes: u64,
    /// Bytes klf read.
    pub bytes_read: u64,
    /// Bytes of the pages klf brought into the page cache and dropped
    /// again (whole pages).
    pub bytes_dropped_from_cache: u64,
    /// Bytes of the digest.
    pub digest_bytes: u64,
    /// Problems met (each is also in the digest).
    pub notes: Vec<(String, String)>,
}
