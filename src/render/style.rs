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

/// Below this many columns a [`Sheet`] is written as a list of blocks, one
/// per row, instead of a table whose columns would be squeezed to a few
/// characters (as ripgrep and fd degrade on a narrow terminal); at this
/// width or more, when its table would not fit whole.
pub const LIST_BELOW: usize = 100;

/// How results are laid out: colour, and the display columns a line may
/// take (the terminal's width when stdout is one; None: as wide as the
/// content, for pipes and files).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Look {
    /// Colour (see [`paint`]).
    pub color: bool,
    /// The most display columns a line may take.
    pub width: Option<usize>,
}

impl Look {
    /// Whether every row is written as a block (a width below
    /// [`LIST_BELOW`]).
    pub fn list(&self) -> bool {
        self.width.is_some_and(|w| w < LIST_BELOW)
    }
}

/// One cell of a [`Sheet`]: its text and colour.
#[derive(Clone, Debug, Default)]
pub struct Cell {
    text: String,
    paint: Option<Paint>,
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell { text, paint: None }
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Cell {
        Cell::from(text.to_string())
    }
}

/// A table cell, coloured as `p` when `color` (and `p` is given).
pub fn cell(color: bool, text: impl Into<String>, p: Option<Paint>) -> Cell {
    Cell {
        text: text.into(),
        paint: if color { p } else { None },
    }
}

/// Rows of results, written as a table when it fits the [`Look`]'s width
/// whole (no cell is ever wrapped or shortened in a table), else, and
/// always below [`LIST_BELOW`] columns, as one block per row: the first
/// [`Sheet::title`] cells on a line of their own, the other non-empty
/// cells as `name: value` packed into lines that fit, and the
/// [`Sheet::prose`] column as wrapped text. Blocks are broken at spaces
/// only ([`fit_line`]): a path, a topic name or an id is never cut, and
/// one too long for the line stands whole on a line of its own. Displayed
/// with `{}`.
pub struct Sheet {
    look: Look,
    header: Vec<String>,
    rows: Vec<Vec<Cell>>,
    title: usize,
    prose: Option<usize>,
}

impl Sheet {
    /// An empty sheet in this look.
    pub fn new(look: Look) -> Sheet {
        Sheet {
            look,
            header: Vec::new(),
            rows: Vec::new(),
            title: 1,
            prose: None,
        }
    }

    /// The column names.
    pub fn set_header<S: AsRef<str>>(&mut self, names: impl IntoIterator<Item = S>) -> &mut Sheet {
        self.header = names.into_iter().map(|n| n.as_ref().to_string()).collect();
        self
    }

    /// How many leading cells head a row's block in the list layout.
    pub fn title(&mut self, n: usize) -> &mut Sheet {
        self.title = n;
        self
    }

    /// A column of sentences: in the list layout written as wrapped text
    /// under the block's fields, without its name.
    pub fn prose(&mut self, column: usize) -> &mut Sheet {
        self.prose = Some(column);
        self
    }

    /// Adds a row.
    pub fn add_row<C: Into<Cell>>(&mut self, cells: Vec<C>) -> &mut Sheet {
        self.rows.push(cells.into_iter().map(Into::into).collect());
        self
    }

    /// Whether no row was added.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The display columns of the table with no cell wrapped.
    fn natural_width(&self) -> usize {
        let mut widths: Vec<usize> = self.header.iter().map(|h| width_of(h)).collect();
        for row in &self.rows {
            for (j, c) in row.iter().enumerate() {
                let w = c.text.split('\n').map(width_of).max().unwrap_or(0);
                if j >= widths.len() {
                    widths.resize(j + 1, 0);
                }
                widths[j] = widths[j].max(w);
            }
        }
        widths.iter().map(|w| w + 3).sum::<usize>() + 1
    }

    /// Whether the rows are written as blocks: on a terminal narrower than
    /// [`LIST_BELOW`], or one too narrow for the whole table with every
    /// cell whole.
    pub fn as_list(&self) -> bool {
        self.look.list() || self.look.width.is_some_and(|w| self.natural_width() > w)
    }

    fn painted(&self, c: &Cell) -> String {
        match c.paint {
            Some(p) => paint(true, &c.text, p),
            None => c.text.clone(),
        }
    }

    fn write_list(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let width = self.look.width.unwrap_or(LIST_BELOW).max(20);
        for row in &self.rows {
            let title: Vec<String> = row
                .iter()
                .take(self.title)
                .enumerate()
                .filter(|(_, c)| !c.text.is_empty())
                .map(|(j, c)| {
                    // a bare number heads its block with its column's name
                    let name = self.header.get(j).map(String::as_str).unwrap_or("");
                    if c.text.parse::<i64>().is_ok() && !name.is_empty() {
                        format!("{name} {}", self.painted(c))
                    } else {
                        self.painted(c)
                    }
                })
                .collect();
            for line in fit_line(&title.join("  "), width) {
                writeln!(f, "{line}")?;
            }
            let mut line = String::from(" ");
            for (j, c) in row.iter().enumerate().skip(self.title) {
                if c.text.is_empty() || Some(j) == self.prose {
                    continue;
                }
                let name = self.header.get(j).map(String::as_str).unwrap_or("");
                let item = format!("{name}: {}", self.painted(c));
                if line.len() > 1 && display_width(&line) + 2 + display_width(&item) > width {
                    for l in fit_line(&line, width) {
                        writeln!(f, "{l}")?;
                    }
                    line = String::from(" ");
                }
                line.push(' ');
                if line.len() > 2 {
                    line.push(' ');
                }
                line.push_str(&item);
            }
            if line.len() > 1 {
                for l in fit_line(&line, width) {
                    writeln!(f, "{l}")?;
                }
            }
            if let Some(c) = self.prose.and_then(|p| row.get(p)) {
                if !c.text.is_empty() {
                    for l in fit_line(&format!("  {}", self.painted(c)), width) {
                        writeln!(f, "{l}")?;
                    }
                }
            }
        }
        Ok(())
    }
}

impl std::fmt::Display for Sheet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.as_list() {
            return self.write_list(f);
        }
        // the table fits (or the width is not known): no cell is wrapped
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED);
        t.set_content_arrangement(ContentArrangement::Disabled);
        if self.look.color {
            t.enforce_styling();
        }
        t.set_header(self.header.clone());
        for row in &self.rows {
            t.add_row(row.iter().map(|c| {
                let cc = comfy_table::Cell::new(&c.text);
                match c.paint {
                    Some(Paint::Bad) => cc
                        .fg(comfy_table::Color::Red)
                        .add_attribute(comfy_table::Attribute::Bold),
                    Some(Paint::Warn) => cc.fg(comfy_table::Color::Yellow),
                    Some(Paint::Good) => cc.fg(comfy_table::Color::Green),
                    None => cc,
                }
            }));
        }
        write!(f, "{t}")
    }
}

/// The display columns of `s`, not counting colour escapes (`ESC [ ... m`).
pub fn display_width(s: &str) -> usize {
    let mut w = 0;
    let mut esc = false;
    for c in s.chars() {
        if esc {
            esc = c != 'm';
        } else if c == '\x1b' {
            esc = true;
        } else {
            w += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        }
    }
    w
}

/// `line` broken at spaces into lines of at most `width` display columns,
/// every line after the first indented two more than the first's leading
/// spaces. A word is never cut: one that does not fit where the line has
/// got to starts the next line, and one wider than a whole line stands on
/// a line of its own, whole, past the edge (a path, a topic name or an id
/// must stay one piece that can be pasted back into klf). Colour escapes
/// count for nothing. A table's lines are left whole.
pub fn fit_line(line: &str, width: usize) -> Vec<String> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let boxed = line
        .trim_start()
        .starts_with(['│', '┌', '├', '╞', '└', '┆']);
    if display_width(line) <= width || boxed {
        return vec![line.to_string()];
    }
    let hang = (indent + 2).min(width / 2);
    let mut out = Vec::new();
    let mut cur = " ".repeat(indent);
    let mut cur_w = indent;
    let mut fresh = true;
    for word in line[indent..].split(' ') {
        let ww = display_width(word);
        if !fresh && cur_w + 1 + ww > width {
            out.push(cur.trim_end_matches(' ').to_string());
            cur = " ".repeat(hang);
            cur_w = hang;
            fresh = true;
        }
        if fresh && word.is_empty() {
            // the second space of a double space where the line broke
            continue;
        }
        if !fresh {
            cur.push(' ');
            cur_w += 1;
        }
        cur.push_str(word);
        cur_w += ww;
        fresh = false;
    }
    out.push(cur);
    out
}

/// A writer that breaks every line longer than `width` display columns
/// with [`fit_line`] (None: passes everything through). Text after the last
/// line break is written on [`std::io::Write::flush`] or when dropped.
pub struct Fit<W: std::io::Write> {
    inner: W,
    width: Option<usize>,
    line: Vec<u8>,
}

impl<W: std::io::Write> Fit<W> {
    /// Lines written to `inner` fitted to `width`.
    pub fn new(inner: W, width: Option<usize>) -> Fit<W> {
        Fit {
            inner,
            width,
            line: Vec::new(),
        }
    }

    fn emit(&mut self, newline: bool) -> std::io::Result<()> {
        let Some(width) = self.width else {
            return Ok(());
        };
        let text = String::from_utf8_lossy(&self.line).into_owned();
        self.line.clear();
        let lines = fit_line(&text, width);
        for (i, l) in lines.iter().enumerate() {
            self.inner.write_all(l.as_bytes())?;
            if i + 1 < lines.len() || newline {
                self.inner.write_all(b"\n")?;
            }
        }
        Ok(())
    }
}

impl<W: std::io::Write> std::io::Write for Fit<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.width.is_none() {
            return self.inner.write(buf);
        }
        let mut rest = buf;
        while let Some(nl) = rest.iter().position(|&b| b == b'\n') {
            self.line.extend_from_slice(&rest[..nl]);
            self.emit(true)?;
            rest = &rest[nl + 1..];
        }
        self.line.extend_from_slice(rest);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.line.is_empty() {
            self.emit(false)?;
        }
        self.inner.flush()
    }
}

impl<W: std::io::Write> Drop for Fit<W> {
    fn drop(&mut self) {
        if !self.line.is_empty() {
            let _ = self.emit(false);
        }
    }
}

/// How many rows a [`StreamTable`] looks at to fix its column widths.
pub const STREAM_SAMPLE_ROWS: usize = 1000;

/// A table in klf's style written as its rows come, for tables too long to
/// hold (every batch or record of a segment): the column widths are fixed
/// from the header, the widths the caller knows in advance
/// ([`StreamTable::at_least`]) and the first [`STREAM_SAMPLE_ROWS`] rows,
/// narrowed to `max_width` columns when given (a terminal's width) by
/// narrowing the columns that wrap (those wider than their longest word
/// first). A cell wider than its column wraps onto more lines of the row,
/// at spaces: a word is never cut (a path, a topic name, an id or a key
/// must stay one piece to be pasted back), and one wider than its column
/// has a line of the cell to itself, written whole, pushing the rest of
/// that line right. In a column marked [`StreamTable::no_wrap`] (numbers:
/// a wrapped number would read as two) the cell is always written whole;
/// in one marked [`StreamTable::cut_words`] (record bytes, already cut to
/// a length) a long word is cut at the column's edge. Memory is that of
/// the sample, whatever the number of rows.
pub struct StreamTable {
    header: Vec<String>,
    max_width: Option<usize>,
    at_least: Vec<usize>,
    no_wrap: Vec<bool>,
    cut_words: Vec<bool>,
    sample: Vec<Vec<String>>,
    widths: Option<Vec<usize>>,
    rows: usize,
}

fn width_of(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

/// `s` broken at spaces (and at its line breaks) into lines of at most `w`
/// display columns (at least one line). A word wider than `w` gets a line
/// of its own, whole, or when `cut` cut into pieces of `w`.
fn wrap(s: &str, w: usize, cut: bool) -> Vec<String> {
    let w = w.max(1);
    let mut out = Vec::new();
    for part in s.split('\n') {
        let mut line = String::new();
        let mut used = 0;
        let mut fresh = true;
        for word in part.split(' ') {
            let ww = width_of(word);
            if !fresh && used + 1 + ww > w {
                out.push(std::mem::take(&mut line));
                used = 0;
                fresh = true;
                if word.is_empty() {
                    // the second space of a double space where the line broke
                    continue;
                }
            }
            if !fresh {
                line.push(' ');
                used += 1;
            }
            if cut && ww > w {
                for c in word.chars() {
                    let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
                    if used + cw > w && used > 0 {
                        out.push(std::mem::take(&mut line));
                        used = 0;
                    }
                    line.push(c);
                    used += cw;
                }
            } else {
                line.push_str(word);
                used += ww;
            }
            fresh = false;
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
            cut_words: vec![false; header.len()],
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

    /// In these columns a word wider than the column is cut at its edge
    /// (text that is never pasted back: record bytes shown in part).
    pub fn cut_words(mut self, columns: &[usize]) -> StreamTable {
        for &c in columns {
            if let Some(n) = self.cut_words.get_mut(c) {
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
            // the longest word of each column in the sample: a column
            // narrower than it writes that word past its edge
            let mut word = vec![0; n];
            for r in &self.sample {
                for (i, c) in r.iter().enumerate().take(n) {
                    let longest = c.split(['\n', ' ']).map(width_of).max().unwrap_or(0);
                    word[i] = word[i].max(longest);
                }
            }
            while widths.iter().sum::<usize>() > budget {
                let widest_above = |floor: &dyn Fn(usize) -> usize| {
                    widths
                        .iter()
                        .enumerate()
                        .filter(|&(i, &w)| !self.no_wrap[i] && w > floor(i))
                        .max_by_key(|(_, w)| **w)
                        .map(|(i, _)| i)
                };
                let Some(i) = widest_above(&|i| word[i].max(3)).or_else(|| widest_above(&|_| 3))
                else {
                    break;
                };
                widths[i] -= 1;
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
                    wrap(c, wd, self.cut_words[i])
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

/// The lines of the terminal stdout is, else None.
pub fn terminal_height() -> Option<usize> {
    console::Term::stdout()
        .size_checked()
        .map(|(rows, _)| usize::from(rows))
        .filter(|&rows| rows > 0)
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
                // (at its spaces: a word is not cut)
                assert!(
                    text.contains("[1006, 1007)")
                        || text.contains("┆ [1006,") && text.contains("┆ 1007)"),
                    "{text}"
                );
            }
        }
    }

    #[test]
    fn a_narrow_stream_table_wraps_within_the_width() {
        let mut s = StreamTable::new(&["a", "value"], Some(20))
            .no_wrap(&[0])
            .cut_words(&[1]);
        let mut out = Vec::new();
        s.row(&mut out, vec!["1".into(), "x".repeat(50)]).unwrap();
        s.row(&mut out, vec!["2".into(), "one two three four five".into()])
            .unwrap();
        s.finish(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.lines().all(|l| width_of(l) <= 20), "{text}");
        assert_eq!(text.matches('x').count(), 50);
        // words wrap at spaces, each whole
        for w in ["one", "two", "three", "four", "five"] {
            assert!(
                text.lines().any(|l| l.split(' ').any(|x| x == w)),
                "{w}: {text}"
            );
        }
    }

    #[test]
    fn a_word_wider_than_its_column_is_written_whole_on_a_line_of_its_own() {
        let path = "/a/long/scratch/folder/broker-1/orders-0/00000000000000000000.log";
        let mut s = StreamTable::new(&["offset", "name"], Some(37)).no_wrap(&[0]);
        let mut out = Vec::new();
        s.row(&mut out, vec!["7".into(), format!("in {path} at 12")])
            .unwrap();
        s.row(&mut out, vec!["8".into(), "short words only here".into()])
            .unwrap();
        s.finish(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let long: Vec<&str> = text.lines().filter(|l| width_of(l) > 37).collect();
        assert_eq!(long.len(), 1, "only the path's line is wider: {text}");
        assert!(long[0].contains(&format!("┆ {path} │")), "{text}");
        assert!(text.contains("┆ in "), "{text}");
        // the column was narrowed for the short words, not below them
        assert!(text.lines().any(|l| l.contains("┆ short words")), "{text}");
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

#[cfg(test)]
mod fit_tests {
    use super::*;

    #[test]
    fn long_lines_break_at_spaces_with_a_hanging_indent() {
        let l = fit_line("  ! broker 1: one two three four five six", 20);
        assert_eq!(
            l,
            vec!["  ! broker 1: one", "    two three four", "    five six"]
        );
        for x in &l {
            assert!(display_width(x) <= 20);
        }
        // colour escapes count nothing
        let red = paint(true, "xxxxxxx", Paint::Bad);
        assert_eq!(
            fit_line(&format!("{red} {red} {red}"), 16),
            vec![format!("{red} {red}"), format!("  {red}")]
        );
        // a word wider than the line stands whole on a line of its own
        let path = "/srv/kafka/broker-1/unclean-0/00000000000000000000.log";
        for width in [37, 50] {
            let l = fit_line(&format!("  file: {path}  position: 0"), width);
            assert_eq!(
                l,
                vec!["  file:", &format!("    {path}"), "    position: 0"]
            );
        }
        let l = fit_line(&format!("  file: {path}  position: 0"), 10);
        assert_eq!(
            l,
            vec!["  file:", &format!("    {path}"), "    position:", "    0"]
        );
        let l = fit_line(&format!("{path}:4: bad crc"), 20);
        assert_eq!(l, vec![format!("{path}:4:"), "  bad crc".to_string()]);
        // a table's lines are left alone
        let row = "│ 1 ┆ a long cell of a table that is wider │";
        assert_eq!(fit_line(row, 10), vec![row.to_string()]);
    }

    #[test]
    fn a_sheet_is_a_table_when_it_fits_and_blocks_when_not() {
        let mut s = Sheet::new(Look {
            color: false,
            width: Some(120),
        });
        s.set_header(["broker", "log end", "message"]).prose(2);
        s.add_row(vec!["1", "250", "short"]);
        assert!(s.to_string().starts_with('┌'), "{s}");
        s.add_row(vec!["2", "", &"word ".repeat(40)]);
        let list = s.to_string();
        assert!(
            list.starts_with("broker 1\n  log end: 250\n  short\nbroker 2\n  word"),
            "{list}"
        );
        assert!(list.lines().all(|l| display_width(l) <= 120), "{list}");
        // without a width (a pipe), always the table
        let mut p = Sheet::new(Look::default());
        p.set_header(["a"]).add_row(vec!["x".repeat(500)]);
        assert!(p.to_string().starts_with('┌'));
    }

    #[test]
    fn a_path_is_never_shortened_a_table_too_narrow_for_it_becomes_blocks() {
        let path = format!("/{}/broker-3/__cluster_metadata-0", "x".repeat(120));
        for width in [37, 80, 150, 220] {
            let mut s = Sheet::new(Look {
                color: false,
                width: Some(width),
            });
            s.set_header(["severity", "code", "file", "position"])
                .title(2);
            s.add_row(vec!["error", "crc-mismatch", &path, "12"]);
            let out = s.to_string();
            assert!(
                out.lines()
                    .any(|l| l.trim() == path || l.contains(&format!(" {path} "))),
                "{width} columns: {out}"
            );
            let table = out.starts_with('┌');
            assert_eq!(table, width == 220, "{width} columns: {out}");
            // only the path's own line is wider than the terminal
            for l in out.lines().filter(|l| display_width(l) > width) {
                assert_eq!(l.trim(), path, "{width} columns: {out}");
            }
        }
    }
}
