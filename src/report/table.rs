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
        let cols = self.header.len();
        let keep: Vec<usize> = (0..cols)
            .filter(|&c| {
                c == 0
                    || self
                        .rows
                        .iter()
                        .any(|r| r.get(c).is_some_and(|v| !v.is_empty()))
            })
            .collect();
        let width = |c: usize| {
            self.rows
                .iter()
                .filter_map(|r| r.get(c))
                .chain(std::iter::once(&self.header[c]))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        };
        let widths: Vec<usize> = (0..cols).map(width).collect();
        let line = |cells: &[String]| {
            let parts: Vec<String> = keep
                .iter()
                .map(|&c| {
                    let v = cells.get(c).map_or("", |s| s.as_str());
                    if self.right.get(c).copied().unwrap_or(false) {
                        format!("{v:>w$}", w = widths[c])
                    } else {
                        format!("{v:<w$}", w = widths[c])
                    }
                })
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
}
