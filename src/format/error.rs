//! The one error type of the parsers: where in the input, and why.

use std::borrow::Cow;

/// A parse failure at a byte position of the input the parser was given.
///
/// Callers that know the file add its path when they report it, giving the
/// `file:position: reason` form an operator can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("byte {pos}: {reason}")]
pub struct ParseError {
    /// Byte position in the parsed input (a file offset for whole-file parsers).
    pub pos: u64,
    /// Human-readable reason.
    pub reason: Cow<'static, str>,
}

impl ParseError {
    /// A new error at `pos`.
    pub fn new(pos: u64, reason: impl Into<Cow<'static, str>>) -> Self {
        ParseError {
            pos,
            reason: reason.into(),
        }
    }
}
