//! Columnar results: the tables of a run (`flows`, `ports`, `timeseries`) as typed columns.
//!
//! The engine keeps what it reports as columns (`Vec<f64>`, `Vec<u64>`, strings as categorical
//! codes into a small table of levels) so that the Python bindings can hand each column to
//! numpy without touching its rows one by one, and the CSV files are rendered from the very
//! same columns.
//!
//! Rules:
//! - A [`Table`] is a list of named [`Column`]s of equal length, in output order.
//! - CSV rendering is the one and only text form: a header line, then one line per row, fields
//!   joined by `,` with no quoting (names and levels never hold a comma or a newline). Floats
//!   use Rust's shortest round-trip `Display` (`3`, `0.25`, `NaN`), integers their decimal form;
//!   the "optional" column kinds render a missing value (NaN, or `u64::MAX`) as an empty field.
//!   This is byte for byte what `flows.csv` and `ports.csv` have always been.
//! - Categorical codes are `u32` indices into `levels` (assigned in order of first appearance
//!   by [`CatBuilder`], so a table is a pure function of the run); `u32::MAX` is a missing value.

use std::fmt::Write as _;

/// One column of a table.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    /// Floats; NaN renders as `NaN`.
    F64(Vec<f64>),
    /// Floats where NaN means "no value" and renders as an empty field (`end_s`, `fct_s`).
    OptF64(Vec<f64>),
    /// Unsigned integers.
    U64(Vec<u64>),
    /// Unsigned integers where `u64::MAX` means "no value" (an empty field).
    OptU64(Vec<u64>),
    /// Strings as codes into `levels`; the code `u32::MAX` means "no value" (an empty field).
    Cat { codes: Vec<u32>, levels: Vec<String> },
}

impl Column {
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) | Column::OptF64(v) => v.len(),
            Column::U64(v) | Column::OptU64(v) => v.len(),
            Column::Cat { codes, .. } => codes.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The short name of the kind, as the bindings report it: `f64`, `opt_f64`, `u64`,
    /// `opt_u64`, `cat`.
    pub fn kind(&self) -> &'static str {
        match self {
            Column::F64(_) => "f64",
            Column::OptF64(_) => "opt_f64",
            Column::U64(_) => "u64",
            Column::OptU64(_) => "opt_u64",
            Column::Cat { .. } => "cat",
        }
    }

    fn write_cell(&self, row: usize, out: &mut String) {
        match self {
            Column::F64(v) => {
                let _ = write!(out, "{}", v[row]);
            }
            Column::OptF64(v) => {
                if !v[row].is_nan() {
                    let _ = write!(out, "{}", v[row]);
                }
            }
            Column::U64(v) => {
                let _ = write!(out, "{}", v[row]);
            }
            Column::OptU64(v) => {
                if v[row] != u64::MAX {
                    let _ = write!(out, "{}", v[row]);
                }
            }
            Column::Cat { codes, levels } => {
                if codes[row] != u32::MAX {
                    out.push_str(&levels[codes[row] as usize]);
                }
            }
        }
    }
}

/// Builds a categorical column, assigning codes in order of first appearance.
#[derive(Clone, Debug, Default)]
pub struct CatBuilder {
    codes: Vec<u32>,
    levels: Vec<String>,
    index: std::collections::HashMap<String, u32>,
}

impl CatBuilder {
    pub fn new() -> CatBuilder {
        CatBuilder::default()
    }

    /// The code of `level`, adding it to the levels if new.
    pub fn code(&mut self, level: &str) -> u32 {
        if let Some(&c) = self.index.get(level) {
            return c;
        }
        let c = self.levels.len() as u32;
        self.levels.push(level.to_string());
        self.index.insert(level.to_string(), c);
        c
    }

    pub fn push(&mut self, level: &str) {
        let c = self.code(level);
        self.codes.push(c);
    }

    /// Appends a code obtained from [`CatBuilder::code`].
    #[inline]
    pub fn push_code(&mut self, code: u32) {
        self.codes.push(code);
    }

    pub fn finish(self) -> Column {
        Column::Cat { codes: self.codes, levels: self.levels }
    }

    /// A categorical column from codes into a fixed table of `levels` (`u32::MAX`: missing),
    /// re-coded in order of first appearance and without the levels never used, as if it had
    /// been built row by row: the form every categorical column of a result takes.
    pub fn from_codes(codes: impl IntoIterator<Item = u32>, levels: &[String]) -> Column {
        let mut map = vec![u32::MAX; levels.len()];
        let mut b = CatBuilder::new();
        for c in codes {
            if c == u32::MAX {
                b.push_code(u32::MAX);
                continue;
            }
            let m = &mut map[c as usize];
            if *m == u32::MAX {
                *m = b.code(&levels[c as usize]);
            }
            b.push_code(*m);
        }
        b.finish()
    }
}

/// Named columns of equal length.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub names: Vec<String>,
    pub columns: Vec<Column>,
}

impl Table {
    pub fn new() -> Table {
        Table::default()
    }

    /// Appends a column. Panics if its length differs from the columns already there (a bug).
    pub fn push(&mut self, name: impl Into<String>, col: Column) {
        if let Some(first) = self.columns.first() {
            assert_eq!(first.len(), col.len(), "column lengths differ");
        }
        self.names.push(name.into());
        self.columns.push(col);
    }

    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, Column::len)
    }

    pub fn column(&self, name: &str) -> Option<&Column> {
        self.names.iter().position(|n| n == name).map(|i| &self.columns[i])
    }

    /// The CSV text: header, then one line per row (see the module rules).
    pub fn to_csv(&self) -> String {
        let mut s = String::with_capacity(64 * (self.rows() + 1));
        s.push_str(&self.names.join(","));
        s.push('\n');
        for r in 0..self.rows() {
            self.write_row(r, &mut s);
        }
        s
    }

    /// The same text as [`Table::to_csv`], written to `out` a block of lines at a time (for
    /// big tables: no copy of the whole text in memory).
    pub fn write_csv<W: std::io::Write>(&self, out: &mut W) -> std::io::Result<()> {
        let mut s = String::with_capacity(1 << 16);
        s.push_str(&self.names.join(","));
        s.push('\n');
        for r in 0..self.rows() {
            self.write_row(r, &mut s);
            if s.len() >= 1 << 15 {
                out.write_all(s.as_bytes())?;
                s.clear();
            }
        }
        out.write_all(s.as_bytes())
    }

    fn write_row(&self, r: usize, s: &mut String) {
        for (i, c) in self.columns.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            c.write_cell(r, s);
        }
        s.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // --- rendering ------------------------------------------------------------------------
    #[test]
    fn csv_of_every_kind() {
        let mut cat = CatBuilder::new();
        for l in ["tcp", "udp", "tcp"] {
            cat.push(l);
        }
        let mut t = Table::new();
        t.push("a", Column::F64(vec![1.0, 0.25, f64::NAN]));
        t.push("b", Column::OptF64(vec![f64::NAN, 2.5, 3.0]));
        t.push("c", Column::U64(vec![0, 7, u64::MAX]));
        t.push("d", Column::OptU64(vec![u64::MAX, 1, 2]));
        t.push("kind", cat.finish());
        t.push("opt", Column::Cat { codes: vec![u32::MAX, 0, u32::MAX], levels: vec!["x".into()] });
        assert_eq!(
            t.to_csv(),
            "a,b,c,d,kind,opt\n1,,0,,tcp,\n0.25,2.5,7,1,udp,x\nNaN,3,18446744073709551615,2,tcp,\n"
        );
        assert_eq!(t.rows(), 3);
    }

    #[test]
    fn codes_follow_first_appearance() {
        let mut cat = CatBuilder::new();
        for l in ["b", "a", "b", "c"] {
            cat.push(l);
        }
        assert_eq!(cat.finish(), Column::Cat { codes: vec![0, 1, 0, 2], levels: vec!["b".into(), "a".into(), "c".into()] });
    }

    #[test]
    fn written_csv_is_the_csv_text() {
        let mut t = Table::new();
        t.push("a", Column::F64((0..5000).map(|i| i as f64 / 7.0).collect()));
        t.push("b", Column::OptU64((0..5000).map(|i| if i % 3 == 0 { u64::MAX } else { i }).collect()));
        let mut out = Vec::new();
        t.write_csv(&mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), t.to_csv());
    }

    #[test]
    fn codes_from_a_fixed_table_follow_first_appearance() {
        let levels: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let col = CatBuilder::from_codes([2, u32::MAX, 0, 2], &levels);
        assert_eq!(col, Column::Cat { codes: vec![0, u32::MAX, 1, 0], levels: vec!["c".into(), "a".into()] });
    }

    #[test]
    fn empty_table_has_a_header_only() {
        let mut t = Table::new();
        t.push("x", Column::U64(vec![]));
        assert_eq!(t.to_csv(), "x\n");
    }

    #[test]
    #[should_panic(expected = "column lengths differ")]
    fn unequal_columns_are_a_bug() {
        let mut t = Table::new();
        t.push("x", Column::U64(vec![1]));
        t.push("y", Column::U64(vec![]));
    }
}
