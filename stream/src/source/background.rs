//! Reading on a thread of its own, so the reading side can wait with a timeout.
//!
//! A read from a pipe or a serial port can block for as long as the producer is silent,
//! and a signal does not interrupt it (handlers are installed with `SA_RESTART`). The
//! reader therefore runs on a thread that hands records over through a bounded
//! [`handoff`](super::handoff) (so memory stays constant, and a reader ahead of the
//! caller is woken once per batch, not per record), and [`Background::next`] waits at
//! most a given time: the caller can check for a signal between waits. Records are
//! recycled back to the thread, so reading allocates no more than reading in place.
//!
//! With the reading on another core a pipe streams as fast as a file read in place (a
//! linear SVM at d = 16, 2·10⁵ rows, medians of five runs on 2026-11-27: 5.3·10⁵ samples/s
//! in place, 6.2·10⁵ from a pipe; 5.8·10⁵ when the records went through a channel one at
//! a time), but at the cost of a second thread; so [`Records`] reads a regular file —
//! which never blocks for long — in place, and only anything else in the background.

use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread;
use std::time::Duration;

use super::handoff::{Empty, Taker, handoff};
use super::{ReadError, Record, RecordReader};

/// Records in the hand-over's queue (as many again in the batch the caller took, and
/// records waiting to be reused).
const IN_FLIGHT: usize = 256;

/// What [`Background::next`] found.
#[derive(Debug, PartialEq)]
pub enum Next {
    /// A record, now in the caller's `Record`.
    Record,
    /// A bad row; reading goes on with the next one.
    Bad(ReadError),
    /// The input ended.
    End,
    /// Nothing arrived within the wait.
    Waiting,
    /// Something the user should know, in words; reading goes on (a broker's connection
    /// lost and being made again).
    Notice(String),
    /// The input failed for good (a broker's connection that cannot be made again), in
    /// words.
    Lost(String),
}

/// Records from an input: read in place from a regular file, in the [`Background`]
/// from anything that may block (standard input, a pipe, a serial port).
pub enum Records {
    /// Read on the caller's thread.
    InPlace(Box<dyn RecordReader + Send>),
    /// Read on a thread of its own.
    Background(Background),
    /// Subscribed to an MQTT broker.
    #[cfg(feature = "mqtt")]
    Mqtt(crate::mqtt::MqttSource),
}

impl Records {
    /// Reads `reader`, opened from `input` as named on the command line, the way that suits it.
    pub fn new(reader: Box<dyn RecordReader + Send>, input: &str) -> Self {
        let named_file = input != "-" && !input.starts_with("serial:");
        let regular_file = named_file && std::fs::metadata(input).is_ok_and(|m| m.file_type().is_file());
        if regular_file { Records::InPlace(reader) } else { Records::Background(Background::spawn(reader)) }
    }

    /// The next record into `record`, waiting at most `wait` for it from the background
    /// (a read in place returns when the read does: never [`Next::Waiting`]).
    pub fn next(&mut self, record: &mut Record, wait: Duration) -> Next {
        match self {
            Records::InPlace(reader) => match reader.next_record(record) {
                Ok(true) => Next::Record,
                Ok(false) => Next::End,
                Err(e) => Next::Bad(e),
            },
            Records::Background(background) => background.next(record, wait),
            #[cfg(feature = "mqtt")]
            Records::Mqtt(source) => source.next(record, wait),
        }
    }

    /// The number of features a broker's rows have, as `--dim` gave it or, without it, once
    /// the first good row was handed out; `None` for other inputs.
    pub fn dim(&self) -> Option<usize> {
        #[cfg(feature = "mqtt")]
        if let Records::Mqtt(source) = self {
            return source.dim();
        }
        None
    }

    /// The features' names a broker's rows gave them (JSON objects of named fields,
    /// [`crate::mqtt::MqttSource::feature_names`]); `None` for other inputs, whose reader
    /// tells them before the first row.
    pub fn feature_names(&self) -> Option<Vec<String>> {
        #[cfg(feature = "mqtt")]
        if let Records::Mqtt(source) = self {
            return source.feature_names();
        }
        None
    }

    /// Whether the input is sent again after a restart (a broker's unacknowledged
    /// messages) rather than read again from its start.
    pub fn redelivers(&self) -> bool {
        #[cfg(feature = "mqtt")]
        if let Records::Mqtt(_) = self {
            return true;
        }
        false
    }

    /// Rows already consumed whose acknowledgement waits for a [`commit`](Self::commit)
    /// (messages of a broker; 0 for other inputs).
    pub fn unacked(&self, consumed: u64) -> usize {
        #[cfg(feature = "mqtt")]
        if let Records::Mqtt(source) = self {
            return source.unacked(consumed);
        }
        let _ = consumed;
        0
    }

    /// The first `consumed` rows handed out are done with (learned, and covered by a
    /// checkpoint when there is one): a broker's messages holding only them are
    /// acknowledged.
    pub fn commit(&mut self, consumed: u64) {
        #[cfg(feature = "mqtt")]
        if let Records::Mqtt(source) = self {
            source.commit(consumed);
        }
        let _ = consumed;
    }

    /// Whether more rows are ready now, without waiting (a broker's messages already
    /// received; false for other inputs).
    pub fn backlog(&self) -> bool {
        #[cfg(feature = "mqtt")]
        if let Records::Mqtt(source) = self {
            return source.backlog();
        }
        false
    }

    /// Ends reading: a broker is sent the acknowledgements committed and disconnected.
    pub fn close(&mut self) {
        #[cfg(feature = "mqtt")]
        if let Records::Mqtt(source) = self {
            source.close();
        }
    }
}

/// A [`RecordReader`] running on its own thread.
pub struct Background {
    records: Taker<Option<Result<Record, ReadError>>>,
    recycle: SyncSender<Record>,
}

impl Background {
    /// Starts reading `reader` on a new thread.
    pub fn spawn(mut reader: Box<dyn RecordReader + Send>) -> Self {
        let (sender, records) = handoff(IN_FLIGHT);
        let (recycle, reuse) = sync_channel::<Record>(IN_FLIGHT);
        thread::spawn(move || {
            loop {
                let mut record = reuse.try_recv().unwrap_or_default();
                let item = match reader.next_record(&mut record) {
                    Ok(true) => Some(Ok(record)),
                    Ok(false) => None,
                    Err(e) => Some(Err(e)),
                };
                let end = item.is_none();
                // The receiver has gone: nobody wants more records.
                if sender.give(item).is_err() || end {
                    break;
                }
            }
        });
        Background { records, recycle }
    }

    /// The next record into `record`, waiting at most `wait` for it.
    pub fn next(&mut self, record: &mut Record, wait: Duration) -> Next {
        match self.records.take(wait) {
            Ok(Some(Ok(next))) => {
                let used = std::mem::replace(record, next);
                // A full recycling channel only means one allocation more later.
                let _ = self.recycle.try_send(used);
                Next::Record
            }
            Ok(Some(Err(e))) => Next::Bad(e),
            Ok(None) | Err(Empty::Disconnected) => Next::End,
            Err(Empty::Timeout) => Next::Waiting,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::LibSvmReader;
    use std::io::{BufReader, Read};

    /// A reader whose input stalls after the first line until the test lets it go on.
    struct Stalling(std::sync::mpsc::Receiver<Vec<u8>>, Vec<u8>);

    impl Read for Stalling {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.1.is_empty() {
                match self.0.recv() {
                    Ok(bytes) => self.1 = bytes,
                    Err(_) => return Ok(0),
                }
            }
            let n = buf.len().min(self.1.len());
            buf[..n].copy_from_slice(&self.1[..n]);
            self.1.drain(..n);
            Ok(n)
        }
    }

    #[test]
    fn regular_files_are_read_in_place() {
        let path = std::env::temp_dir().join(format!("kestrel-records-{}.libsvm", std::process::id()));
        std::fs::write(&path, "1 1:2\n").unwrap();
        let name = path.to_str().unwrap();
        let mut records = Records::new(crate::source::open(name, &Default::default()).unwrap(), name);
        assert!(matches!(records, Records::InPlace(_)));
        let mut r = Record::default();
        assert_eq!((records.next(&mut r, Duration::ZERO), r.values.clone()), (Next::Record, vec![2.0]));
        assert_eq!(records.next(&mut r, Duration::ZERO), Next::End);
        std::fs::remove_file(&path).unwrap();
        let stdin = Records::new(Box::new(LibSvmReader::new(&b""[..], "-", 1024)), "-");
        assert!(matches!(stdin, Records::Background(_)));
    }

    #[test]
    fn waits_without_blocking_and_delivers_in_order() {
        let (feed, input) = std::sync::mpsc::channel();
        let reader = LibSvmReader::new(BufReader::new(Stalling(input, Vec::new())), "t", 1024);
        let mut background = Background::spawn(Box::new(reader));
        let mut r = Record::default();
        let wait = Duration::from_millis(20);
        assert_eq!(background.next(&mut r, wait), Next::Waiting);
        feed.send(b"1 1:0.5\n-1 2:x\n".to_vec()).unwrap();
        let mut next = background.next(&mut r, Duration::from_secs(10));
        assert_eq!((next, r.label, r.line), (Next::Record, 1.0, 1));
        next = background.next(&mut r, Duration::from_secs(10));
        assert!(matches!(next, Next::Bad(ReadError { line: 2, .. })), "{next:?}");
        assert_eq!(background.next(&mut r, wait), Next::Waiting);
        feed.send(b"0 3:2\n".to_vec()).unwrap();
        assert_eq!(background.next(&mut r, Duration::from_secs(10)), Next::Record);
        assert_eq!((r.label, r.indices.clone(), r.line), (0.0, vec![2], 3));
        drop(feed);
        assert_eq!(background.next(&mut r, Duration::from_secs(10)), Next::End);
    }
}
