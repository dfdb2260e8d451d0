//! [`Scratch`]: a test's own directory, removed when the test passes (kept to look at
//! when it fails).

use std::ops::Deref;
use std::path::{Path, PathBuf};

/// A scratch directory, removed when the test passes.
pub struct Scratch(PathBuf);

impl Scratch {
    /// `kestrel-SUITE-NAME-PID` in the temporary directory, empty: the suite and the name
    /// keep the tests of one binary, which run in parallel, apart.
    pub fn new(suite: &str, name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("kestrel-{suite}-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    /// `file` in the directory.
    pub fn path(&self, file: &str) -> PathBuf {
        self.0.join(file)
    }

    /// `file` in the directory, as a string (for command lines).
    pub fn str(&self, file: &str) -> String {
        self.path(file).to_str().unwrap().to_string()
    }
}

impl Deref for Scratch {
    type Target = Path;

    /// The directory itself, for `join` and for helpers that take a `&Path`.
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
