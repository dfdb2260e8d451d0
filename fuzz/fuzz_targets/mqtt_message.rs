//! The rows of MQTT messages, as `kestrel stream --input mqtt://…` reads them from a broker
//! (`mqtt::MessageParser`, without the network), on arbitrary bytes.
//!
//! The first [`FLAGS`] bytes choose the options as the stream's flags would: the payload
//! (auto, CSV, LibSVM, JSON), the width (given 1…4, or fixed by the first good row), the
//! labels (detected, numbers, names), the label's place (standard, a JSON field `label`,
//! none), whether a row whose label is missing is read unlabelled, the sequence number's
//! place (the JSON field `seq` or `n`, a CSV column 1…3), a JSON field `mode` of
//! categories `a,b` or none, a JSON field `ts` left out or not, and the size limit (64 B to
//! 4 KiB). The
//! rest is messages separated by the byte 0xFF, read one after another by one parser (the
//! first good row fixes the width for the next), on one topic.
//!
//! Checks: no panic, no allocation over the rss limit; every row a message gives is a
//! record whose invariants hold (finite values and label or a class name, strictly
//! increasing indices: `common::check_record`) or an error whose position is 1-based and
//! which names the topic and message; a message over the limit gives that one error; with
//! the width given, no CSV or JSON record has a feature past it; a message gives at most a
//! row per line.

#![no_main]

mod common;

use std::time::Duration;

use kestrel_stream::mqtt::{LabelPlace, MessageParser, Options, Payload, SeqPlace};
use kestrel_stream::source::{LabelColumn, ReadErrorKind};
use libfuzzer_sys::fuzz_target;

/// Bytes of options before the messages.
const FLAGS: usize = 4;

/// The most messages one input is split into.
const MAX_MESSAGES: usize = 64;

fuzz_target!(|data: &[u8]| {
    let Some((flags, messages)) = data.split_first_chunk::<FLAGS>() else { return };
    let options = options(flags);
    let mut parser = MessageParser::new(&options);
    // A JSON row without its label field is unlabelled (NaN), whatever the label's place,
    // and so is every row whose label is missing when the options take such rows.
    let unlabelled =
        options.label == LabelPlace::Unlabelled || options.payload != Payload::Csv || options.unlabelled_rows;
    for (number, message) in (1..).zip(messages.split(|&b| b == 0xFF).take(MAX_MESSAGES)) {
        let mut rows = 0usize;
        parser.rows("plant/line1", message, |row| {
            rows += 1;
            match row {
                Ok(record) => {
                    common::check_record(&record, unlabelled);
                    // A LibSVM row's indices past the width are the learner's to refuse.
                    if let Some(dim) = options.dim.filter(|_| matches!(options.payload, Payload::Csv | Payload::Json)) {
                        assert!(record.dim() <= dim, "a row of {} features past the width {dim}", record.dim());
                    }
                }
                Err(e) => {
                    common::check_error(&e);
                    assert_eq!(e.source_name, format!("plant/line1 (message {number})"));
                    if message.len() > options.max_message_bytes {
                        assert!(matches!(e.kind, ReadErrorKind::MessageTooLarge(_)), "{e}");
                    }
                }
            }
            true
        });
        if message.len() > options.max_message_bytes {
            assert_eq!(rows, 1, "a message over the limit is one bad row");
        }
        // Rows are separated by newlines: no more rows than lines.
        assert!(rows <= message.split(|&b| b == b'\n').count(), "{rows} rows");
    }
});

/// The options the flag bytes choose.
fn options(f: &[u8; FLAGS]) -> Options {
    let payload = [Payload::Auto, Payload::Csv, Payload::LibSvm, Payload::Json][usize::from(f[0] % 4)];
    let dim = (f[0] & 0x10 != 0).then_some(1 + usize::from(f[0] >> 5 & 3));
    let labels = [LabelColumn::Detect, LabelColumn::Numbers, LabelColumn::Names][usize::from(f[1] % 3)];
    let label = match f[1] / 3 % 3 {
        0 => LabelPlace::Standard,
        1 => LabelPlace::Field("label".into()),
        _ => LabelPlace::Unlabelled,
    };
    let seq = match f[2] % 4 {
        0 => SeqPlace::default(),
        1 => SeqPlace::Field("n".into()),
        k => SeqPlace::Column(usize::from(k) - 1 + usize::from(f[2] >> 7)),
    };
    let categorical = match f[2] & 0x10 {
        0 => Vec::new(),
        _ => vec!["mode=a,b".parse().expect("a categorical column")],
    };
    Options {
        client_id: "fuzz".into(),
        payload,
        dim,
        max_message_bytes: 64 << (f[3] % 7),
        labels,
        unlabelled_rows: f[2] & 0x20 != 0,
        label,
        seq,
        categorical,
        skipped: if f[2] & 0x40 != 0 { vec!["ts".into()] } else { Vec::new() },
        connect_timeout: Duration::from_secs(1),
    }
}
