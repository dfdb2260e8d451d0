//! The `kestrel` command-line tool.

fn main() -> anyhow::Result<()> {
    Ok(())
}
