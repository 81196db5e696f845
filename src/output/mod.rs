//! Writing command results as a table (plain, `wide` or `name`), JSON or YAML. The JSON and
//! YAML shapes are the contract (design §3); it must not decide what goes in them. Every table
//! goes through [`Table`], so they all line up the same way and escape the same way;
//! `-o jsonpath=…` templates the JSON shape ([`jsonpath`]).

use std::io::Write;
use std::str::FromStr;

use serde::Serialize;

pub mod jsonpath;

use crate::safe_text::printable;

/// `-o`: how a command prints what it found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputFormat {
    /// Aligned columns for people.
    Table,
    /// The table with the columns it hides (labels, contexts, API versions, times).
    Wide,
    /// One name a line (`KIND/NS/NAME`, or cluster names for `clusters`), for scripts.
    Name,
    Json,
    Yaml,
    /// The JSON shape through a kubectl jsonpath template.
    JsonPath(jsonpath::Template),
}

impl FromStr for OutputFormat {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(match text {
            "table" => OutputFormat::Table,
            "wide" => OutputFormat::Wide,
            "name" => OutputFormat::Name,
            "json" => OutputFormat::Json,
            "yaml" => OutputFormat::Yaml,
            _ => match text.strip_prefix("jsonpath=") {
                Some(template) => OutputFormat::JsonPath(template.parse()?),
                None => {
                    return Err(format!(
                        "{text:?}: expected table, wide, name, json, yaml or jsonpath=TEMPLATE"
                    ));
                }
            },
        })
    }
}

/// Writes `value` as JSON or YAML, or the table `table` builds for the human forms.
pub fn write<T: Serialize>(
    out: &mut dyn Write,
    format: &OutputFormat,
    value: &T,
    table: impl FnOnce() -> Table,
) -> anyhow::Result<()> {
    match format {
        OutputFormat::Json => {
            // serde_json writes a token at a time: unbuffered, a large answer is a system
            // call per token.
            let mut buffered = std::io::BufWriter::with_capacity(1 << 16, &mut *out);
            serde_json::to_writer_pretty(&mut buffered, value)?;
            writeln!(buffered)?;
            buffered.flush()?;
        }
        OutputFormat::Yaml => {
            let text = serde_saphyr::to_string(value)?;
            out.write_all(text.as_bytes())?;
        }
        OutputFormat::Table => table().write(out, false)?,
        OutputFormat::Wide => table().write(out, true)?,
        OutputFormat::Name => table().write_names(out)?,
        OutputFormat::JsonPath(template) => {
            let value = serde_json::to_value(value)?;
            out.write_all(template.render(&value).as_bytes())?;
        }
    }
    out.flush()?;
    Ok(())
}

/// Spaces between two cells.
const GAP: u16 = 3;

/// `rows` as lines whose columns line up (by display width), without borders, the last
/// column unpadded: one line a row, so the cells must hold no newlines.
pub fn aligned(rows: &[Vec<String>]) -> Vec<String> {
    let mut grid = comfy_table::Table::new();
    grid.load_style(comfy_table::presets::NOTHING);
    for row in rows {
        grid.add_row(row.clone());
    }
    let last = grid.column_count().saturating_sub(1);
    for (index, column) in grid.column_iter_mut().enumerate() {
        column.set_padding((0, if index == last { 0 } else { GAP }));
    }
    grid.lines()
        .map(|line| line.trim_end().to_string())
        .collect()
}

/// A table as kubectl prints one: upper-case titles, each column as wide as its widest cell,
/// the last column unpadded. Columns marked wide appear only with `-o wide`. Each row has a
/// name (what `-o name` prints), may carry lines printed indented below it (a diff), and the
/// table may end with summary lines. Every cell and line is escaped with
/// [`printable`], since most of it is text flotilla did not write.
#[derive(Debug, Default)]
pub struct Table {
    columns: Vec<Column>,
    rows: Vec<Row>,
    footer: Vec<String>,
}

#[derive(Debug)]
struct Column {
    title: String,
    wide_only: bool,
}

#[derive(Debug)]
struct Row {
    name: String,
    cells: Vec<String>,
    details: Vec<String>,
}

impl Table {
    /// A table with these column titles, always shown.
    pub fn new(titles: &[&str]) -> Table {
        let mut table = Table::default();
        table.columns.extend(titles.iter().map(|title| Column {
            title: title.to_string(),
            wide_only: false,
        }));
        table
    }

    /// Marks the columns of these titles as shown only with `-o wide`.
    pub fn wide_only(mut self, titles: &[&str]) -> Table {
        for column in &mut self.columns {
            if titles.contains(&column.title.as_str()) {
                column.wide_only = true;
            }
        }
        self
    }

    /// Adds a row named `name`, one cell per column (missing cells are empty).
    pub fn row(&mut self, name: impl Into<String>, cells: Vec<String>) {
        self.rows.push(Row {
            name: name.into(),
            cells,
            details: Vec::new(),
        });
    }

    /// Adds lines printed indented below the last row (ignored before the first row).
    pub fn details(&mut self, lines: impl IntoIterator<Item = String>) {
        if let Some(row) = self.rows.last_mut() {
            row.details.extend(lines);
        }
    }

    /// Adds a line printed after the rows (not with `-o name`).
    pub fn footer(&mut self, line: impl Into<String>) {
        self.footer.push(line.into());
    }

    /// Writes the table, with the wide-only columns when `wide`. A table without rows prints
    /// no header, only its footer.
    pub fn write(&self, out: &mut dyn Write, wide: bool) -> std::io::Result<()> {
        if !self.rows.is_empty() {
            let shown: Vec<usize> = (0..self.columns.len())
                .filter(|&index| wide || !self.columns[index].wide_only)
                .collect();
            let cell = |row: &Row, index: usize| {
                printable(row.cells.get(index).map_or("", String::as_str), false)
            };
            let mut grid = vec![
                shown
                    .iter()
                    .map(|&index| self.columns[index].title.clone())
                    .collect(),
            ];
            grid.extend(
                self.rows
                    .iter()
                    .map(|row| shown.iter().map(|&index| cell(row, index)).collect()),
            );
            let mut lines = aligned(&grid).into_iter();
            writeln!(out, "{}", lines.next().unwrap_or_default())?;
            for row in &self.rows {
                writeln!(out, "{}", lines.next().unwrap_or_default())?;
                for detail in &row.details {
                    writeln!(out, "    {}", printable(detail, true))?;
                }
            }
        }
        for footer in &self.footer {
            writeln!(out, "{}", printable(footer, false))?;
        }
        Ok(())
    }

    /// Writes each row's name, one a line, as `kubectl get -o name` does; a name several rows
    /// share (a resource on several clusters) is written once, where it first appears.
    pub fn write_names(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let mut written = std::collections::HashSet::new();
        for row in &self.rows {
            if written.insert(row.name.as_str()) {
                writeln!(out, "{}", printable(&row.name, false))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut table = Table::new(&["NAME", "HEALTH", "REGION"]).wide_only(&["REGION"]);
        table.row("a", vec!["a".into(), "Ready".into(), "eu".into()]);
        table.row(
            "long-name",
            vec!["long-name".into(), "NotReady".into(), "us".into()],
        );
        table.details(["- old".to_string()]);
        table.row("a", vec!["a".into(), "Ready".into(), "eu".into()]);
        table.footer("2 clusters.");
        table
    }

    fn text(table: &Table, wide: bool) -> String {
        let mut out = Vec::new();
        table.write(&mut out, wide).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn columns_line_up_and_wide_ones_show_only_when_asked() {
        assert_eq!(
            text(&sample(), false),
            "NAME        HEALTH\na           Ready\nlong-name   NotReady\n    - old\na           Ready\n2 clusters.\n"
        );
        assert_eq!(
            text(&sample(), true),
            "NAME        HEALTH     REGION\na           Ready      eu\nlong-name   NotReady   us\n    - old\na           Ready      eu\n2 clusters.\n"
        );
        let mut names = Vec::new();
        sample().write_names(&mut names).unwrap();
        assert_eq!(String::from_utf8(names).unwrap(), "a\nlong-name\n");
    }

    #[test]
    fn control_characters_are_escaped_and_counted_as_printed() {
        let mut table = Table::new(&["NAME", "X"]);
        table.row("e\u{1b}[2J", vec!["e\u{1b}[2J".into(), "1".into()]);
        table.row("plain", vec!["plain".into(), "2".into()]);
        let printed = text(&table, false);
        assert!(!printed.contains('\u{1b}'), "{printed:?}");
        let lines: Vec<&str> = printed.lines().collect();
        assert_eq!(lines[1].rfind('1'), lines[2].rfind('2'), "{printed}");
    }
}
