//! What a finished `kestrel` process said: its exit status checked, its summary line read.

use std::process::Output;

use serde_json::Value;

/// `output`, after checking the process succeeded (its standard error in the message if not).
pub fn succeeded(output: &Output) -> &Output {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{:?}: {stderr}", output.status);
    output
}

/// The summary line without the rate, which depends on the machine.
pub fn summary(output: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut summary: Value = serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap();
    summary.as_object_mut().unwrap().remove("samples_per_sec");
    summary
}
