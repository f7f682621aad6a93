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

/// How many rows a [`StreamTable`] looks at to fix its column widths.
pub const STREAM_SAMPLE_ROWS: usize = 1000;

/// A table in klf's style written as its rows come, for tables too long to
/// hold (every batch or record of a segment): the column widths are fixed
/// from the header, the widths the caller knows in advance
/// ([`StreamTable::at_least`]) and the first [`STREAM_SAMPLE_ROWS`] rows,
/// narrowed to `max_width` columns when given (a terminal's width) by
/// narrowing the columns that wrap. A later cell wider than its column
/// wraps onto more lines of the row, but in a column marked
/// [`StreamTable::no_wrap`] (numbers: a wrapped number would read as two)
/// it is written whole and pushes the rest of its row right. Memory is that
/// of the sample, whatever the number of rows.
pub struct StreamTable {
    header: Vec<String>,
    max_width: Option<usize>,
    at_least: Vec<usize>,
    no_wrap: Vec<bool>,
    sample: Vec<Vec<String>>,
    widths: Option<Vec<usize>>,
    rows: usize,
}

fn width_of(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

/// `s` cut into lines of at most `w` display columns (at least one line).
fn wrap(s: &str, w: usize) -> Vec<String> {
    let w = w.max(1);
    let mut out = Vec::new();
    for part in s.split('\n') {
        let mut line = String::new();
        let mut used = 0;
        for c in part.chars() {
            let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
            if used + cw > w && !line.is_empty() {
                out.push(std::mem::take(&mut line));
                used = 0;
            }
            line.push(c);
            used += cw;
        }
        out.push(line);
    }
    out
}

impl StreamTable {
    /// A table with these column names; `max_width`: the most display
    /// columns a line may take (None: as wide as the cells).
    pub fn new(header: &[&str], max_width: Option<usize>) -> StreamTable {
        StreamTable {
            header: header.iter().map(|h| h.to_string()).collect(),
            max_width,
            at_least: vec![0; header.len()],
            no_wrap: vec![false; header.len()],
            sample: Vec::new(),
            widths: None,
            rows: 0,
        }
    }

    /// The columns are at least these widths (known before the rows come:
    /// the widest number a column will hold).
    pub fn at_least(mut self, widths: &[usize]) -> StreamTable {
        for (a, &w) in self.at_least.iter_mut().zip(widths) {
            *a = (*a).max(w);
        }
        self
    }

    /// These columns never wrap (and are never narrowed to fit a terminal).
    pub fn no_wrap(mut self, columns: &[usize]) -> StreamTable {
        for &c in columns {
            if let Some(n) = self.no_wrap.get_mut(c) {
                *n = true;
            }
        }
        self
    }

    /// Adds a row (as many cells as the header has columns).
    pub fn row(&mut self, w: &mut dyn std::io::Write, cells: Vec<String>) -> std::io::Result<()> {
        self.rows += 1;
        match &self.widths {
            Some(widths) => {
                let widths = widths.clone();
                self.write_row(w, &cells, &widths, "│", "┆")
            }
            None => {
                self.sample.push(cells);
                if self.sample.len() >= STREAM_SAMPLE_ROWS {
                    self.start(w)?;
                }
                Ok(())
            }
        }
    }

    /// Rows added so far.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Whether no row was added.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    fn start(&mut self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        let n = self.header.len();
        let mut widths: Vec<usize> = self
            .header
            .iter()
            .zip(&self.at_least)
            .map(|(h, &a)| width_of(h).max(a))
            .collect();
        for r in &self.sample {
            for (i, c) in r.iter().enumerate().take(n) {
                widths[i] = widths[i].max(c.split('\n').map(width_of).max().unwrap_or(0));
            }
        }
        if let Some(max) = self.max_width {
            // Borders and padding take 3 columns per column and one more.
            let fixed = 3 * n + 1;
            let budget = max.saturating_sub(fixed).max(n * 3);
            while widths.iter().sum::<usize>() > budget {
                let Some((i, &wmax)) = widths
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !self.no_wrap[*i])
                    .max_by_key(|(_, w)| **w)
                else {
                    break;
                };
                if wmax <= 3 {
                    break;
                }
                widths[i] = wmax - 1;
            }
        }
        let line = |l: &str, m: &str, r: &str, fill: &str| -> String {
            let mut s = String::from(l);
            for (i, wd) in widths.iter().enumerate() {
                if i > 0 {
                    s.push_str(m);
                }
                s.push_str(&fill.repeat(wd + 2));
            }
            s.push_str(r);
            s
        };
        writeln!(w, "{}", line("┌", "┬", "┐", "─"))?;
        let header = self.header.clone();
        self.write_row(w, &header, &widths, "│", "┆")?;
        writeln!(w, "{}", line("╞", "╪", "╡", "═"))?;
        for r in std::mem::take(&mut self.sample) {
            self.write_row(w, &r, &widths, "│", "┆")?;
        }
        self.widths = Some(widths);
        Ok(())
    }

    fn write_row(
        &self,
        w: &mut dyn std::io::Write,
        cells: &[String],
        widths: &[usize],
        border: &str,
        sep: &str,
    ) -> std::io::Result<()> {
        let lines: Vec<Vec<String>> = widths
            .iter()
            .enumerate()
            .map(|(i, &wd)| {
                let c = cells.get(i).map_or("", String::as_str);
                if self.no_wrap[i] {
                    vec![c.to_string()]
                } else {
                    wrap(c, wd)
                }
            })
            .collect();
        let height = lines.iter().map(Vec::len).max().unwrap_or(1);
        let mut s = String::new();
        for l in 0..height {
            s.clear();
            s.push_str(border);
            for (i, &wd) in widths.iter().enumerate() {
                if i > 0 {
                    s.push_str(sep);
                }
                let text = lines[i].get(l).map_or("", String::as_str);
                s.push(' ');
                s.push_str(text);
                s.push_str(&" ".repeat(wd.saturating_sub(width_of(text)) + 1));
            }
            s.push_str(border);
            writeln!(w, "{s}")?;
        }
        Ok(())
    }

    /// Writes what is held and the bottom border.
    pub fn finish(mut self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        if self.widths.is_none() {
            self.start(w)?;
        }
        let widths = self.widths.take().unwrap_or_default();
        let mut s = String::from("└");
        for (i, wd) in widths.iter().enumerate() {
            if i > 0 {
                s.push('┴');
            }
            s.push_str(&"─".repeat(wd + 2));
        }
        s.push('┘');
        writeln!(w, "{s}")
    }
}

/// The display columns a table may take on stdout: the terminal's width
/// when stdout is one, else None (natural width).
pub fn terminal_width() -> Option<usize> {
    Table::new().width().map(usize::from).filter(|_| {
        use std::io::IsTerminal;
        std::io::stdout().is_terminal()
    })
}

#[cfg(test)]
mod stream_tests {
    use super::*;

    fn render(t: &mut Table) -> String {
        t.load_preset(UTF8_FULL_CONDENSED);
        format!("{t}\n")
    }

    #[test]
    fn a_stream_table_looks_like_comfy_tables_at_natural_width() {
        for rows in [0usize, 1, 5, STREAM_SAMPLE_ROWS + 7] {
            let mut comfy = Table::new();
            comfy.set_header(vec!["position", "offsets", "kéy"]);
            let mut s = StreamTable::new(&["position", "offsets", "kéy"], None);
            let mut out = Vec::new();
            for i in 0..rows {
                let cells = vec![
                    (i * 70).to_string(),
                    format!("[{i}, {})", i + 1),
                    "v".repeat(i % 7),
                ];
                comfy.add_row(cells.clone());
                s.row(&mut out, cells).unwrap();
            }
            s.finish(&mut out).unwrap();
            if rows <= STREAM_SAMPLE_ROWS {
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    render(&mut comfy),
                    "{rows} rows"
                );
            } else {
                // Past the sample, a wider cell wraps inside its column.
                let text = String::from_utf8(out).unwrap();
                let widths: std::collections::BTreeSet<usize> =
                    text.lines().map(width_of).collect();
                assert_eq!(widths.len(), 1, "every line as wide: {widths:?}");
                assert!(text.contains("[1006, 1007)") || text.contains("[1006, 100"));
            }
        }
    }

    #[test]
    fn a_narrow_stream_table_wraps_within_the_width() {
        let mut s = StreamTable::new(&["a", "value"], Some(20)).no_wrap(&[0]);
        let mut out = Vec::new();
        s.row(&mut out, vec!["1".into(), "x".repeat(50)]).unwrap();
        s.finish(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.lines().all(|l| width_of(l) <= 20), "{text}");
        assert_eq!(text.matches('x').count(), 50);
    }

    #[test]
    fn a_number_wider_than_its_column_is_written_whole() {
        let mut s = StreamTable::new(&["offset", "key"], None)
            .at_least(&[3, 0])
            .no_wrap(&[0]);
        let mut out = Vec::new();
        for i in 0..STREAM_SAMPLE_ROWS {
            s.row(&mut out, vec![i.to_string(), "k".into()]).unwrap();
        }
        s.row(&mut out, vec!["12345678".into(), "k".into()])
            .unwrap();
        s.finish(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("│ 12345678 ┆ k   │"), "{text}");
    }
}
