//! Aligned plain-text tables: a header row, then rows; numbers right-aligned.

pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    /// Per column: right-align (numbers) or left-align (labels).
    right: Vec<bool>,
}

impl Table {
    pub fn new(header: &[&str], right: &[bool]) -> Self {
        Self {
            header: header.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
            right: right.to_vec(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Drops columns that are empty in every row.
    pub fn render(&self, indent: &str) -> String {
        let keep = self.kept();
        let widths: Vec<usize> = (0..self.header.len()).map(|c| self.width(c)).collect();
        let line = |cells: &[String]| {
            let parts: Vec<String> = keep
                .iter()
                .map(|&c| self.align(c, cells.get(c).map_or("", |s| s.as_str()), widths[c]))
                .collect();
            format!("{indent}{}", parts.join("  ").trim_end())
        };
        let mut out = line(&self.header);
        out.push('\n');
        for r in &self.rows {
            out += &line(r);
            out.push('\n');
        }
        out
    }

    /// The columns printed: the first, and those with a value in some row.
    fn kept(&self) -> Vec<usize> {
        (0..self.header.len())
            .filter(|&c| {
                c == 0
                    || self
                        .rows
                        .iter()
                        .any(|r| r.get(c).is_some_and(|v| !v.is_empty()))
            })
            .collect()
    }

    /// The widest cell of column `c`, its header included, in characters.
    fn width(&self, c: usize) -> usize {
        self.rows
            .iter()
            .filter_map(|r| r.get(c))
            .chain(std::iter::once(&self.header[c]))
            .map(|s| s.chars().count())
            .max()
            .unwrap_or(0)
    }

    fn align(&self, c: usize, v: &str, w: usize) -> String {
        if self.right.get(c).copied().unwrap_or(false) {
            format!("{v:>w$}")
        } else {
            format!("{v:<w$}")
        }
    }
}

/// A wrapped column narrower than this reads badly: below it, `render_fit` lays the
/// rows out as blocks instead.
const MIN_WRAP: usize = 16;

impl Table {
    /// The table in at most `width` characters per line: as `render` when it fits;
    /// otherwise the columns marked in `wrap` are narrowed (the widest most) and their
    /// words wrap onto more lines; when that would leave a wrapped column under
    /// `MIN_WRAP` characters, one block per row: its first cell on a line of its own,
    /// then each other cell under its header. A table with no column that may wrap is
    /// printed as it is.
    pub fn render_fit(&self, indent: &str, width: usize, wrap: &[bool]) -> String {
        let keep = self.kept();
        let natural: Vec<usize> = (0..self.header.len()).map(|c| self.width(c)).collect();
        let lead = indent.chars().count();
        let used = lead + keep.iter().map(|&c| natural[c]).sum::<usize>() + 2 * (keep.len() - 1);
        let wraps = |c: &usize| wrap.get(*c).copied().unwrap_or(false);
        if used <= width || !keep.iter().any(wraps) {
            return self.render(indent);
        }
        let fixed: usize = keep.iter().filter(|c| !wraps(c)).map(|&c| natural[c]).sum();
        let room = width.saturating_sub(lead + fixed + 2 * (keep.len() - 1));
        let wrapped: Vec<usize> = keep.iter().copied().filter(wraps).collect();
        let shares = share(
            room,
            &wrapped.iter().map(|&c| natural[c]).collect::<Vec<_>>(),
        );
        if shares.iter().any(|&w| w < MIN_WRAP) {
            return self.render_blocks(indent, width);
        }
        let mut widths = natural;
        for (c, w) in wrapped.iter().zip(shares) {
            widths[*c] = w;
        }
        let mut out = String::new();
        for cells in std::iter::once(&self.header).chain(&self.rows) {
            let columns: Vec<Vec<String>> = keep
                .iter()
                .map(|&c| {
                    let v = cells.get(c).map_or("", String::as_str);
                    if wraps(&c) {
                        wrap_words(v, widths[c])
                    } else {
                        vec![v.to_string()]
                    }
                })
                .collect();
            let height = columns.iter().map(Vec::len).max().unwrap_or(1);
            for i in 0..height {
                let parts: Vec<String> = keep
                    .iter()
                    .zip(&columns)
                    .map(|(&c, lines)| {
                        let v = lines.get(i).map_or("", String::as_str);
                        self.align(c, v, widths[c])
                    })
                    .collect();
                out += &format!("{indent}{}", parts.join("  ").trim_end());
                out.push('\n');
            }
        }
        out
    }

    /// One block per row, each at most `width` wide: the first cell, then
    /// `header  value` for the others, values wrapped under themselves.
    fn render_blocks(&self, indent: &str, width: usize) -> String {
        let keep = self.kept();
        let head = keep
            .iter()
            .skip(1)
            .map(|&c| self.header[c].chars().count())
            .max()
            .unwrap_or(0);
        let inner = format!("{indent}  ");
        let room = width
            .saturating_sub(inner.chars().count() + head + 2)
            .max(MIN_WRAP);
        let mut out = String::new();
        for row in &self.rows {
            out += &format!("{indent}{}\n", row.first().map_or("", String::as_str));
            for &c in keep.iter().skip(1) {
                let v = row.get(c).map_or("", String::as_str);
                if v.is_empty() {
                    continue;
                }
                for (i, line) in wrap_words(v, room).iter().enumerate() {
                    let label = if i == 0 { self.header[c].as_str() } else { "" };
                    out += &format!("{inner}{label:<head$}  {line}\n");
                }
            }
        }
        out
    }
}

/// The words of `text`, each number joined to the word after it, unless that makes
/// a piece wider than `width`.
fn unbroken(text: &str, width: usize) -> Vec<String> {
    let mut pieces: Vec<Vec<&str>> = Vec::new();
    for word in text.split_whitespace() {
        let joined = pieces
            .last()
            .and_then(|p| p.last())
            .is_some_and(|w| w.ends_with(|c: char| c.is_ascii_digit()));
        match pieces.last_mut() {
            Some(p) if joined => p.push(word),
            _ => pieces.push(vec![word]),
        }
    }
    pieces
        .into_iter()
        .flat_map(|p| {
            let whole = p.join(" ");
            if whole.chars().count() <= width {
                vec![whole]
            } else {
                p.into_iter().map(str::to_string).collect()
            }
        })
        .collect()
}

/// `room` characters shared among columns that want `wants`: a column that wants
/// less than an equal share gets what it wants, the rest share what is left.
fn share(room: usize, wants: &[usize]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..wants.len()).collect();
    order.sort_by_key(|&i| wants[i]);
    let mut given = vec![0; wants.len()];
    let mut left = room;
    for (n, &i) in order.iter().enumerate() {
        let fair = left / (wants.len() - n);
        given[i] = wants[i].min(fair);
        left -= given[i];
    }
    given
}

/// `text` in lines of at most `width` characters, broken between words but not
/// after a number (`39.31 µs`, `2 threads` stay together when they fit on a line; a
/// word longer than a line is cut); at least one line.
pub fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in unbroken(text, width) {
        let mut word: Vec<char> = word.chars().collect();
        let len = line.chars().count();
        if len > 0 && len + 1 + word.len() <= width {
            line.push(' ');
            line.extend(&word);
            continue;
        }
        if len > 0 {
            lines.push(std::mem::take(&mut line));
        }
        while word.len() > width {
            lines.push(word.drain(..width).collect());
        }
        line.extend(&word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_and_drops_empty_columns() {
        let mut t = Table::new(&["name", "unused", "value"], &[false, false, true]);
        t.row(vec!["a".into(), "".into(), "1".into()]);
        t.row(vec!["long name".into(), "".into(), "1,000".into()]);
        assert_eq!(
            t.render(""),
            "name       value\na              1\nlong name  1,000\n"
        );
    }

    fn summary() -> Table {
        let mut t = Table::new(&["area", "result", "verdict"], &[false; 3]);
        t.row(vec![
            "cpu".into(),
            "1 thread 1385 events/s, 2 threads 1559 events/s, scaling 56 %".into(),
            "cores do not scale: shared or oversold vCPUs, or a busy host".into(),
        ]);
        t.row(vec![
            "redis".into(),
            "skipped".into(),
            "redis-server not installed: install it (apt install redis-server), or give --redis URL".into(),
        ]);
        t
    }

    fn widest(text: &str) -> usize {
        text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
    }

    #[test]
    fn a_table_that_fits_is_not_wrapped() {
        let t = summary();
        let whole = t.render("  ");
        assert_eq!(
            t.render_fit("  ", widest(&whole), &[false, true, true]),
            whole
        );
        assert_eq!(
            t.render_fit("  ", 20, &[false; 3]),
            whole,
            "nothing may wrap"
        );
    }

    #[test]
    fn wide_cells_wrap_within_the_width_keeping_every_word() {
        let t = summary();
        for width in [60, 72, 80, 100] {
            let text = t.render_fit("  ", width, &[false, true, true]);
            assert!(widest(&text) <= width, "{width}:\n{text}");
            let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
            let mut all = words(&t.render("  "));
            let mut got = words(&text);
            all.sort();
            got.sort();
            assert_eq!(got, all, "{width}:\n{text}");
        }
        let text = t.render_fit("  ", 80, &[false, true, true]);
        // The area column stays put; continuation lines leave it blank.
        assert!(
            text.lines().nth(1).unwrap().starts_with("  cpu    "),
            "{text}"
        );
        assert!(
            text.lines().nth(2).unwrap().starts_with("         "),
            "{text}"
        );
    }

    #[test]
    fn too_narrow_for_columns_is_one_block_per_row() {
        let t = summary();
        let text = t.render_fit("  ", 40, &[false, true, true]);
        assert!(widest(&text) <= 40, "{text}");
        assert!(
            text.starts_with("  cpu\n    result   1 thread 1385"),
            "{text}"
        );
        assert!(
            text.contains("\n  redis\n    result   skipped\n    verdict  redis-server"),
            "{text}"
        );
    }

    #[test]
    fn words_wrap_and_long_words_are_cut() {
        assert_eq!(wrap_words("a bb ccc", 4), ["a bb", "ccc"]);
        assert_eq!(wrap_words("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap_words("", 4), [""]);
        // A number keeps its unit, unless the two do not fit on one line.
        assert_eq!(
            wrap_words("connect RTT 135.00 µs (loopback)", 16),
            ["connect RTT", "135.00 µs", "(loopback)"]
        );
        assert_eq!(wrap_words("p50 1.5 ms", 4), ["p50", "1.5", "ms"]);
        assert_eq!(share(30, &[5, 40, 40]), [5, 12, 13]);
    }
}
