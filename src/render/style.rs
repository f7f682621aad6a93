//! How results look on a terminal: tables fitted to its width, and the
//! colours of errors, warnings and clean verdicts. Whether to colour is
//! decided once, by the command line (`--color`, `NO_COLOR`, a terminal);
//! renderers take it as a flag.

use comfy_table::{presets::UTF8_FULL_CONDENSED, ContentArrangement, Table};

/// A colour for [`paint`] and [`cell`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Paint {
    /// Errors, data loss.
    Bad,
    /// Warnings.
    Warn,
    /// Clean.
    Good,
}

/// `text` in the colour of `p` when `on`.
pub fn paint(on: bool, text: &str, p: Paint) -> String {
    if !on {
        return text.to_string();
    }
    let code = match p {
        Paint::Bad => "1;31",
        Paint::Warn => "33",
        Paint::Good => "32",
    };
    format!("\x1b[{code}m{text}\x1b[0m")
}

/// An empty table in klf's style, fitted to the terminal's width when stdout
/// is a terminal (cells wrap), at natural width otherwise. With `color`,
/// cell colours set with [`cell`] are written even into a pipe.
pub fn table(color: bool) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_content_arrangement(ContentArrangement::Dynamic);
    if color {
        t.enforce_styling();
    }
    t
}

/// A table cell, coloured as `p` when `color` (and `p` is given).
pub fn cell(color: bool, text: impl Into<String>, p: Option<Paint>) -> comfy_table::Cell {
    let c = comfy_table::Cell::new(text.into());
    match (color, p) {
        (true, Some(Paint::Bad)) => c
            .fg(comfy_table::Color::Red)
            .add_attribute(comfy_table::Attribute::Bold),
        (true, Some(Paint::Warn)) => c.fg(comfy_table::Color::Yellow),
        (true, Some(Paint::Good)) => c.fg(comfy_table::Color::Green),
        _ => c,
    }
}
