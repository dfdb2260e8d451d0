//! `--report FILE.html`: one self-contained page of what a command did — a header block
//! (the command line, the data source, the learner's parameters, the final figures) and
//! the figures, each an inline SVG drawn by [`chart`] (plotters' SVG backend: text stays
//! `<text>`, no font or script is fetched). Every text from the user (paths, class names,
//! flag values) is HTML-escaped.
//!
//! | module | the figures of |
//! |---|---|
//! | [`chart`] | every command: lines, bands, marks, heat maps, scatters, bars |
//! | [`history`] | `stream` and `demo`: a run's [`kestrel_stream::history::History`] |
//! | [`eval`] | `eval`: confusion matrix, ROC curve, predicted against true |
//!
//! A page holds what its figures draw and no more: a stream's history is bounded
//! (256 buckets a series), an evaluation's scatter a fixed sample of its rows, so a report
//! is a few hundred kilobytes whatever the input's length.

pub mod chart;
pub mod eval;
pub mod history;

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use kestrel_stream::file;

/// A report page: its title, header facts and figures, in order.
pub struct Report {
    title: String,
    facts: Vec<(String, String)>,
    figures: Vec<Figure>,
}

/// One figure: a heading, a caption saying how to read it, and its SVG.
struct Figure {
    heading: String,
    caption: String,
    svg: String,
}

impl Report {
    /// A page titled `title` whose header starts with the command line that made it.
    pub fn new(title: &str) -> Self {
        let command = std::env::args().map(|arg| shell_word(&without_password(&arg))).collect::<Vec<_>>().join(" ");
        Report { title: title.to_string(), facts: vec![("command".into(), command)], figures: Vec::new() }
    }

    /// Adds a header line `label: value`.
    pub fn fact(&mut self, label: &str, value: impl std::fmt::Display) -> &mut Self {
        self.facts.push((label.to_string(), value.to_string()));
        self
    }

    /// Adds a header line per `(flag, value)`, under `label`, as `--flag value` pairs.
    pub fn flags<'a>(&mut self, label: &str, flags: impl Iterator<Item = (&'a str, &'a str)>) -> &mut Self {
        let text = flags.map(|(flag, value)| format!("{flag} {}", shell_word(value))).collect::<Vec<_>>().join(" ");
        self.fact(label, text)
    }

    /// Adds the final figures: the fields of the JSON `summary` a command prints.
    pub fn summary(&mut self, summary: &serde_json::Value) -> &mut Self {
        // A field that holds fields (what `chosen` holds) reads as one field each.
        let text = |key: &str, value: &serde_json::Value| match value {
            serde_json::Value::Object(inner) => {
                inner.iter().map(|(name, value)| format!("{key} {name} {value}")).collect::<Vec<_>>().join(", ")
            }
            value => format!("{key} {value}"),
        };
        let text = match summary {
            serde_json::Value::Object(fields) => {
                fields.iter().map(|(key, value)| text(key, value)).collect::<Vec<_>>().join(", ")
            }
            other => other.to_string(),
        };
        self.fact("final figures", text)
    }

    /// Adds a figure.
    pub fn figure(&mut self, heading: &str, caption: &str, svg: String) -> &mut Self {
        self.figures.push(Figure { heading: heading.into(), caption: caption.into(), svg });
        self
    }

    /// The page.
    pub fn html(&self) -> String {
        let mut page = String::new();
        let title = escape(&self.title);
        // Writing to a String does not fail.
        let _ = write!(
            page,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n<table class=\"facts\">\n"
        );
        for (label, value) in &self.facts {
            let _ = writeln!(page, "<tr><th>{}</th><td>{}</td></tr>", escape(label), escape(value));
        }
        page.push_str("</table>\n");
        for figure in &self.figures {
            let _ = write!(
                page,
                "<section>\n<h2>{}</h2>\n<p>{}</p>\n<figure>{}</figure>\n</section>\n",
                escape(&figure.heading),
                escape(&figure.caption),
                figure.svg
            );
        }
        page.push_str("</body>\n</html>\n");
        page
    }

    /// Writes the page to `path` atomically.
    ///
    /// # Errors
    /// When `path` cannot be written.
    pub fn write(&self, path: &Path) -> Result<()> {
        file::write_output(path, self.html().as_bytes()).with_context(|| format!("--report {}", path.display()))
    }
}

/// The page's style: system fonts only, nothing fetched.
const STYLE: &str = "body{font-family:sans-serif;max-width:960px;margin:1em auto;color:#222}\
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em}\
table.facts{border-collapse:collapse;font-size:.9em}\
table.facts th{text-align:left;padding:2px 12px 2px 0;vertical-align:top;white-space:nowrap}\
table.facts td{font-family:monospace;word-break:break-all}\
figure{margin:0}figure svg{max-width:100%;height:auto}p{font-size:.9em;color:#555}";

/// `text` with the characters HTML gives a meaning escaped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `arg` with the password of a URL's `user:password@` replaced by `***`.
fn without_password(arg: &str) -> String {
    let Some((scheme, rest)) = arg.split_once("://") else { return arg.to_string() };
    let Some((credentials, host)) = rest.split_once('@') else { return arg.to_string() };
    match credentials.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => arg.to_string(),
    }
}

/// `word` as a shell reads it back: quoted when it holds anything but plain characters.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:=,@+%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_text_is_escaped_and_the_page_fetches_nothing() {
        let mut report = Report::new("a <test> & more");
        report.fact("input", "data/<script>alert(1)</script>.csv").flags("flags", [("--c", "1 2")].into_iter());
        report.figure("Figure \"one\"", "read it", "<svg></svg>".into());
        let page = report.html();
        assert!(page.contains("<title>a &lt;test&gt; &amp; more</title>"));
        assert!(page.contains("data/&lt;script&gt;alert(1)&lt;/script&gt;.csv"));
        assert!(page.contains("--c &#39;1 2&#39;"));
        assert!(page.contains("<figure><svg></svg></figure>"));
        for fetch in ["<script", "<link", "src=", "href=", "@import", "url("] {
            assert!(!page.contains(fetch), "{fetch}");
        }
    }

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("--input"), "--input");
        assert_eq!(shell_word("my file.csv"), "'my file.csv'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
        assert_eq!(without_password("mqtt://ann:s3cret@host:1883/t"), "mqtt://ann:***@host:1883/t");
        assert_eq!(without_password("mqtt://host/t@x"), "mqtt://host/t@x");
    }
}
