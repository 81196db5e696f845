//! Writing command results as a table, JSON or YAML. The JSON and YAML shapes are the
//! contract (design §3); it must not decide what goes in them.

use std::io::Write;

use serde::Serialize;

use crate::cli::OutputFormat;

/// Writes `value` as JSON or YAML, or calls `table` for the human form.
pub fn write<T: Serialize>(
    out: &mut dyn Write,
    format: OutputFormat,
    value: &T,
    table: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    match format {
        OutputFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, value)?;
            writeln!(out)?;
        }
        OutputFormat::Yaml => {
            let text = serde_saphyr::to_string(value)?;
            out.write_all(text.as_bytes())?;
        }
        OutputFormat::Table => table(out)?,
    }
    out.flush()?;
    Ok(())
}
