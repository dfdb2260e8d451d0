//! Words of a command line as a message suggests them: a column name, a class label, in
//! a form a POSIX shell reads back as that one word, so that a suggested flag can be
//! copied as it is (`--skip-column 'sepal length (cm)'`).

use std::borrow::Cow;

/// `text` as one shell word: as it is when every character is one a shell takes
/// literally (letters, digits and `_ - . / : @ % + = ,`), else in single quotes, each `'`
/// written `'\''`.
pub fn word(text: &str) -> Cow<'_, str> {
    let literal = |c: char| c.is_ascii_alphanumeric() || "_-./:@%+=,".contains(c);
    if !text.is_empty() && text.chars().all(literal) {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(format!("'{}'", text.replace('\'', r"'\''")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each word read back by a real shell (`sh -c 'printf %s …'`) is the text itself.
    #[test]
    fn a_shell_reads_each_word_back_as_the_text() {
        let texts = ["plain", "x.1", "sepal length (cm)", "it's", "a\"b", "$HOME", "*", "", "tab\there", "é"];
        for text in texts {
            let quoted = word(text);
            let out = std::process::Command::new("sh").arg("-c").arg(format!("printf %s {quoted}")).output().unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), text, "{quoted}");
        }
        assert!(matches!(word("x0"), Cow::Borrowed("x0")));
    }
}
