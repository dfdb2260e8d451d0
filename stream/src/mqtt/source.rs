//! Rows from an MQTT subscription.
//!
//! The client subscribes at QoS 1 in a persistent session (clean session off, under a
//! client id the caller names), so the broker keeps what it delivered but was not
//! acknowledged, and what arrives while the client is away, and sends it again at the next
//! connection. Acknowledgements are manual: a message is acknowledged only when
//! [`MqttSource::commit`] says the rows it holds have been consumed — `kestrel stream`
//! calls it after learning them and, with `--checkpoint`, after the checkpoint covering
//! them is written. A run killed at any point is thus sent again, on resuming, every
//! message a checkpoint does not cover.
//!
//! A lost connection is made again (see [`super`]). The broker then sends again, marked
//! as duplicates, the messages it has no acknowledgement for: one whose rows were handed
//! out and whose acknowledgement has not gone out yet is dropped by its packet id (which
//! the broker cannot have given to another message meanwhile), so it is not consumed
//! twice. One whose acknowledgement went out just before the connection broke may come
//! again and be consumed twice: without sequence numbers, delivery is at least once.
//!
//! A message holds one row or several separated by newlines, each a CSV row (the label
//! last, no header), a LibSVM row, or a JSON object (see [`Payload::Json`]); the format is
//! given or detected row by row (`{` starts JSON, else [`detect`](crate::source::detect)).
//! A bad row — malformed, of another width than `dim`, not finite, in a message larger
//! than the limit — is a [`ReadError`] naming the topic and the message's number in the
//! run; the rows after it are read on. Without a given `dim`, the first good CSV or JSON
//! row fixes it ([`MqttSource::dim`]); a LibSVM row, which does not state its width, is
//! a bad row until then.
//!
//! The network runs on a thread of its own that parses messages into records and hands
//! them over through a bounded [`handoff`](crate::source::handoff), as
//! [`Background`](crate::source::Background) does, so the caller waits with a timeout,
//! memory stays bounded (the client buffers a message whole, up to the protocol's limit
//! of 256 MiB, before its size is checked), and a caller behind the network takes the
//! rows waiting in one batch, without a wake-up of either thread per row. The caller hands
//! the records back to be parsed into again, so rows cost no allocation.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rumqttc::{Client, Event, Incoming, Outgoing, Publish, QoS, SubscribeReasonCode};
use serde_json::{Map, Value};

use super::{Broker, Happening, start};
use crate::limits::MAX_DIM;
use crate::source::handoff::{Empty, Giver, Taker, handoff};
use crate::source::one_hot::OneHot;
use crate::source::{
    Categorical, CsvReader, Format, LabelColumn, Next, OpenError, ReadError, ReadErrorKind, Record, RecordReader,
    feature_value, in_column, parse_finite,
};

/// Records in flight between the network thread and the caller: the hand-over's queue
/// (and as many again in the batch the caller took from it).
const IN_FLIGHT: usize = 256;
/// Acknowledgements queued for the network thread, which sends them between bursts of
/// incoming messages: as many as MQTT has packet ids, so one is never refused for room.
const ACK_QUEUE: usize = 1 << 16;
/// How long closing waits for the acknowledgements and the disconnection to go out.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// The format of the rows in messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Payload {
    /// Told row by row: `{` starts JSON, else as [`detect`](crate::source::detect) says.
    #[default]
    Auto,
    /// CSV rows, the label last, no header.
    Csv,
    /// LibSVM rows.
    LibSvm,
    /// JSON objects, the features either an array `"x": [..]` or the object's other fields
    /// (numbers — `true` and `false` read as 1 and 0, and a string of a number, as firmware
    /// that prints its readings sends them, read as a CSV field is — in the order of their
    /// names, the same names in every row; then the
    /// fields [`Options::categorical`] names, one-hot encoded), the label
    /// `"y"` or the field [`LabelPlace::Field`] names (a number or a class name; a row
    /// without it is unlabelled), and an optional whole number `"seq"` (or the field
    /// [`SeqPlace::Field`] names), carried in [`Record::seq`].
    Json,
}

/// Where a row's sequence number is, if it has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeqPlace {
    /// A JSON object's field of this name; CSV and LibSVM rows have none.
    Field(String),
    /// A CSV row's column (1-based; not a feature, the fields found by splitting at
    /// commas), and a JSON object's field `"seq"`.
    Column(usize),
}

impl Default for SeqPlace {
    fn default() -> Self {
        SeqPlace::Field("seq".into())
    }
}

/// Where a row's label is.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum LabelPlace {
    /// A CSV row's last field; a JSON object's `"y"`.
    #[default]
    Standard,
    /// A JSON object's field of this name (a CSV row's label is still its last field).
    Field(String),
    /// None: every CSV field is a feature, a JSON object's label is not read.
    Unlabelled,
}

/// How to subscribe and read messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The client id: the broker keeps the session (subscription, unacknowledged
    /// messages) under it.
    pub client_id: String,
    /// The rows' format.
    pub payload: Payload,
    /// The number of features: every row has this width (CSV and JSON count it exactly,
    /// LibSVM indices past it are left to the learner). `None`: the first good CSV or JSON
    /// row fixes it.
    pub dim: Option<usize>,
    /// The largest message read; a larger one is a bad row.
    pub max_message_bytes: usize,
    /// What labels hold: numbers, class names, or told by the first.
    pub labels: LabelColumn,
    /// A row whose label is missing (a CSV row's empty field or word of
    /// [`MISSING_MARKERS`](crate::source::MISSING_MARKERS), a JSON row without its label
    /// field or with `null`) is read with the label `NaN` rather than as a bad row.
    pub unlabelled_rows: bool,
    /// Where the label is.
    pub label: LabelPlace,
    /// Where the sequence number is.
    pub seq: SeqPlace,
    /// JSON fields of categories, each with its categories given (`--categorical
    /// NAME=A,B,…`): after the numeric fields, a feature per category, named
    /// `NAME=category`, in the order given; another category is a bad row.
    pub categorical: Vec<Categorical>,
    /// JSON fields left out (`--skip-column`): neither read nor checked, as a timestamp or
    /// a device's name that firmware sends with its readings.
    pub skipped: Vec<String>,
    /// How long to wait for the broker to accept the first connection.
    pub connect_timeout: Duration,
}

/// What the network thread hands over.
enum Item {
    /// A row, and with the last of a message the message.
    Row(Result<Record, ReadError>, Option<Publish>),
    /// A message without rows.
    End(Publish),
    /// Something to tell: the connection lost and made again.
    Notice(String),
    /// The connection failed for good.
    Lost(String),
}

/// Records from an MQTT subscription, and the acknowledgement of the messages they came in.
pub struct MqttSource {
    client: Client,
    items: Option<Taker<Item>>,
    /// Records handed back to the network thread to parse into.
    recycle: SyncSender<Record>,
    /// Ends (disconnects) when the network thread does.
    done: Receiver<()>,
    /// Messages wholly handed out but not acknowledged, with the number of rows handed
    /// out at their end.
    unacked: VecDeque<(Publish, u64)>,
    /// Rows handed out (records and bad rows).
    handed: u64,
    name: String,
    /// The number of features, once given or fixed by the first good row.
    dim: Arc<OnceLock<usize>>,
    /// The parser's `names` and `positional`.
    names: Arc<OnceLock<Vec<String>>>,
    positional: Arc<AtomicBool>,
}

impl MqttSource {
    /// Connects to `broker` and subscribes to its topic at QoS 1, in the persistent
    /// session of `options.client_id`; returns once the broker accepted the connection.
    ///
    /// # Errors
    /// [`OpenError::Mqtt`] naming the broker when the topic filter is malformed, the
    /// connection is refused, the credentials rejected, or no answer comes within
    /// `options.connect_timeout`.
    pub fn connect(broker: &Broker, options: &Options) -> Result<MqttSource, OpenError> {
        let name = broker.name();
        let error = |message: String| OpenError::Mqtt { name: name.clone(), message };
        let mut mqtt = broker.options(&options.client_id, false).map_err(error)?;
        mqtt.set_manual_acks(true);
        let (client, connection) = Client::new(mqtt, ACK_QUEUE);
        client.try_subscribe(broker.topic.clone(), QoS::AtLeastOnce).map_err(|e| error(e.to_string()))?;
        let (items, received) = handoff(IN_FLIGHT);
        let (recycle, reuse) = sync_channel(IN_FLIGHT);
        let parser = MessageParser { reuse: Some(reuse), ..MessageParser::new(options) };
        let (dim, names, positional) =
            (Arc::clone(&parser.dim), Arc::clone(&parser.names), Arc::clone(&parser.positional));
        let mut listener = Listener {
            client: client.clone(),
            topic: broker.topic.clone(),
            parser,
            items,
            pending: HashSet::new(),
            listening: true,
        };
        let done =
            start(connection, "mqtt-source", options.connect_timeout, move |happening| listener.handle(happening))
                .map_err(error)?;
        let unacked = VecDeque::new();
        Ok(MqttSource {
            client,
            items: Some(received),
            recycle,
            done,
            unacked,
            handed: 0,
            name,
            dim,
            names,
            positional,
        })
    }

    /// The broker's URL, without the password.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The features' names: those of the JSON rows of named fields, unless a row's
    /// features were read by position (CSV, LibSVM, an array `"x"`); `None` before the
    /// first such row.
    pub fn feature_names(&self) -> Option<Vec<String>> {
        let positional = self.positional.load(Ordering::Relaxed);
        self.names.get().filter(|_| !positional).cloned()
    }

    /// The number of features: as given, or as the first good row had it (known once that
    /// row is handed out by [`MqttSource::next`]); `None` before.
    pub fn dim(&self) -> Option<usize> {
        self.dim.get().copied()
    }

    /// The next row into `record`, waiting at most `wait` for it; [`Next::Notice`] when
    /// the connection was lost or made again, [`Next::Lost`] when it failed for good.
    pub fn next(&mut self, record: &mut Record, wait: Duration) -> Next {
        let Some(items) = &mut self.items else { return Next::End };
        // The clock is read only when a message without rows makes the wait go on.
        let (mut left, mut deadline): (Duration, Option<Instant>) = (wait, None);
        loop {
            if let Some(deadline) = deadline {
                left = deadline.saturating_duration_since(Instant::now());
            }
            match items.take(left) {
                Ok(Item::Row(row, message)) => {
                    self.handed += 1;
                    if let Some(publish) = message {
                        self.unacked.push_back((publish, self.handed));
                    }
                    return match row {
                        Ok(next) => {
                            // A full recycling channel only means one allocation more later.
                            let _ = self.recycle.try_send(std::mem::replace(record, next));
                            Next::Record
                        }
                        Err(e) => Next::Bad(e),
                    };
                }
                Ok(Item::End(publish)) => {
                    self.unacked.push_back((publish, self.handed));
                    deadline = deadline.or_else(|| Some(Instant::now() + left));
                }
                Ok(Item::Notice(message)) => return Next::Notice(format!("{}: {message}", self.name)),
                Ok(Item::Lost(message)) => return Next::Lost(format!("{}: {message}", self.name)),
                Err(Empty::Timeout) => return Next::Waiting,
                Err(Empty::Disconnected) => {
                    return Next::Lost(format!("{}: the connection ended", self.name));
                }
            }
        }
    }

    /// Whether rows already received wait to be handed out.
    pub fn backlog(&self) -> bool {
        self.items.as_ref().is_some_and(Taker::has_more)
    }

    /// Messages wholly among the first `consumed` rows handed out, not yet acknowledged.
    pub fn unacked(&self, consumed: u64) -> usize {
        self.unacked.partition_point(|(_, end)| *end <= consumed)
    }

    /// Acknowledges the messages whose rows are all among the first `consumed` handed out
    /// (in the order they came, as MQTT asks); one the client cannot take now is
    /// acknowledged at a later call.
    pub fn commit(&mut self, consumed: u64) {
        while let Some((publish, end)) = self.unacked.front() {
            if *end > consumed || self.client.try_ack(publish).is_err() {
                return;
            }
            self.unacked.pop_front();
        }
    }

    /// Stops reading, sends the acknowledgements given and disconnects, waiting for them to
    /// go out at most a few seconds; messages not acknowledged stay with the broker.
    pub fn close(&mut self) {
        // The thread may wait to hand a record over: it then stops handing them.
        self.items = None;
        if self.client.try_disconnect().is_ok() {
            let _ = self.done.recv_timeout(CLOSE_WAIT);
        }
    }
}

/// The network thread: drives the connection, parses messages into rows.
struct Listener {
    client: Client,
    topic: String,
    parser: MessageParser,
    items: Giver<Item>,
    /// The packet ids of the messages handed over whose acknowledgement has not gone out
    /// to the network yet: the broker cannot have given such an id to another message.
    pending: HashSet<u16>,
    /// The caller still takes items.
    listening: bool,
}

impl Listener {
    /// Takes what the connection brings; false when the subscription is refused or the
    /// connection failed for good (told to the caller as lost).
    fn handle(&mut self, happening: Happening) -> bool {
        match happening {
            Happening::Packet(Event::Incoming(Incoming::SubAck(ack)))
                if ack.return_codes.contains(&SubscribeReasonCode::Failure) =>
            {
                let _ = self.items.give(Item::Lost(format!("the broker refused the subscription to `{}`", self.topic)));
                return false;
            }
            Happening::Packet(Event::Incoming(Incoming::Publish(publish))) => self.forward(publish),
            Happening::Packet(Event::Outgoing(Outgoing::PubAck(pkid))) => {
                self.pending.remove(&pkid);
            }
            Happening::Packet(_) => {}
            Happening::Reconnected { session_present } => self.reconnected(session_present),
            Happening::Retrying(message) => self.tell(message),
            Happening::Failed(message) => {
                let _ = self.items.give(Item::Lost(message));
                return false;
            }
        }
        true
    }

    /// Connected again: a broker that lost the session (no persistence) has lost the
    /// subscription too, and what was published meanwhile.
    fn reconnected(&mut self, session_present: bool) {
        if session_present {
            self.tell("connected again".into());
            return;
        }
        let subscribed = self.client.try_subscribe(self.topic.clone(), QoS::AtLeastOnce);
        let how = if subscribed.is_ok() { "subscribed again" } else { "cannot subscribe again" };
        self.tell(format!(
            "connected again, but the broker had not kept the session: {how}; messages published meanwhile are lost"
        ));
    }

    fn tell(&mut self, message: String) {
        self.listening = self.listening && self.items.give(Item::Notice(message)).is_ok();
    }

    /// Hands the rows of `publish` over, unless it is one handed over before a lost
    /// connection and sent again.
    fn forward(&mut self, publish: Publish) {
        if !self.listening {
            return;
        }
        if publish.dup && self.pending.contains(&publish.pkid) {
            return;
        }
        self.pending.insert(publish.pkid);
        // Each row is sent when the next is read, so that the last carries its message.
        let mut previous = None;
        let (items, listening) = (&self.items, &mut self.listening);
        self.parser.rows(&publish.topic, &publish.payload, |row| {
            if let Some(previous) = previous.replace(row) {
                *listening = items.give(Item::Row(previous, None)).is_ok();
            }
            *listening
        });
        let last = match previous {
            Some(row) => Item::Row(row, Some(publish)),
            None => Item::End(publish),
        };
        self.listening = self.listening && self.items.give(last).is_ok();
    }
}

/// Turns the messages of a subscription into rows, as [`MqttSource`] reads them: each
/// message's rows in order, a bad row as a [`ReadError`] naming the topic and the message's
/// number (see the module doc). Public so that the rows of a message can be read without
/// a broker (the fuzz target `mqtt_message`).
pub struct MessageParser {
    payload: Payload,
    /// Set once: given, or by the first good CSV or JSON row.
    dim: Arc<OnceLock<usize>>,
    max_message_bytes: usize,
    labels: LabelColumn,
    unlabelled_rows: bool,
    label: LabelPlace,
    seq: SeqPlace,
    categorical: Vec<Categorical>,
    /// JSON fields left out ([`Options::skipped`]).
    skipped: Vec<String>,
    /// Their encoding, the features counted from 0 (after the numeric fields in a row).
    one_hot: OneHot,
    /// The feature names of JSON rows of named fields, as the first such row had them.
    names: Arc<OnceLock<Vec<String>>>,
    /// Set by a good row whose features are read by position (CSV, LibSVM, an array
    /// `"x"`): the names then name only some rows' features.
    positional: Arc<AtomicBool>,
    /// Messages seen.
    messages: u64,
    /// Records the caller is done with, to parse into again (no allocation per row).
    reuse: Option<Receiver<Record>>,
}

impl MessageParser {
    /// A parser of the messages `options` describe (their payload, label, sequence number,
    /// categories, width and size limit).
    pub fn new(options: &Options) -> Self {
        let dim = Arc::new(OnceLock::new());
        if let Some(given) = options.dim {
            dim.get_or_init(|| given);
        }
        MessageParser {
            payload: options.payload,
            dim,
            max_message_bytes: options.max_message_bytes,
            labels: options.labels,
            unlabelled_rows: options.unlabelled_rows,
            label: options.label.clone(),
            seq: options.seq.clone(),
            categorical: options.categorical.clone(),
            skipped: options.skipped.clone(),
            one_hot: OneHot::growing(options.categorical.len(), &fields_of(&options.categorical), 0),
            names: Arc::new(OnceLock::new()),
            positional: Arc::new(AtomicBool::new(false)),
            messages: 0,
            reuse: None,
        }
    }

    /// Hands each row of the message `payload` published on `topic` to `each`, while it
    /// returns true.
    pub fn rows(&mut self, topic: &str, payload: &[u8], mut each: impl FnMut(Result<Record, ReadError>) -> bool) {
        self.messages += 1;
        // The message's name is written only for a bad row.
        let number = self.messages;
        let bad = |line, column, kind| {
            let source_name = format!("{topic} (message {number})");
            Err(ReadError { source_name, line, column, kind })
        };
        if payload.len() > self.max_message_bytes {
            each(bad(1, 1, ReadErrorKind::MessageTooLarge(self.max_message_bytes)));
            return;
        }
        let Ok(text) = std::str::from_utf8(payload) else {
            each(bad(1, 1, ReadErrorKind::Malformed("the message is not UTF-8".into())));
            return;
        };
        for (line, row) in (1u64..).zip(text.split('\n')) {
            let row = row.strip_suffix('\r').unwrap_or(row);
            if row.trim().is_empty() {
                continue;
            }
            let mut record = self.reuse.as_ref().and_then(|reuse| reuse.try_recv().ok()).unwrap_or_default();
            let parsed = self.row(row, line, &mut record).map(|()| record);
            let parsed = parsed.or_else(|(column, kind)| bad(line, column, kind));
            if !each(parsed) {
                return;
            }
        }
    }

    /// Parses one row; on error, the column and what is wrong.
    fn row(&mut self, row: &str, line: u64, record: &mut Record) -> Result<(), (usize, ReadErrorKind)> {
        let format = match self.payload {
            Payload::Auto if row.trim_start().starts_with('{') => Payload::Json,
            Payload::Auto => match crate::source::detect(row) {
                Format::Csv => Payload::Csv,
                _ => Payload::LibSvm,
            },
            given => given,
        };
        record.clear(line);
        if format != Payload::Json && !self.categorical.is_empty() {
            let message = "--categorical names the fields of JSON rows: this row has none";
            return Err((1, ReadErrorKind::Malformed(message.into())));
        }
        let width = match format {
            Payload::LibSvm | Payload::Auto if self.dim.get().is_none() => {
                let unstated = "a LibSVM row does not state the number of features (--dim), and no row fixed it yet";
                return Err((1, ReadErrorKind::Malformed(unstated.into())));
            }
            Payload::LibSvm | Payload::Auto => {
                crate::source::parse_libsvm_line(row, record)?;
                self.positional.store(true, Ordering::Relaxed);
                return Ok(());
            }
            Payload::Json => self.json(row, record).map_err(|kind| (1, kind))?,
            Payload::Csv => {
                let width = self.csv(row, line, record)?;
                self.positional.store(true, Ordering::Relaxed);
                width
            }
        };
        if !(1..=MAX_DIM).contains(&width) {
            return Err((1, ReadErrorKind::Malformed(format!("{width} features: a row has 1 to {MAX_DIM}"))));
        }
        self.dim.get_or_init(|| width);
        Ok(())
    }

    /// The number of features a row must have: `dim`, or what this row has (`got`)
    /// while no row has fixed it.
    fn width(&self, got: usize) -> usize {
        self.dim.get().copied().unwrap_or(got)
    }

    /// A CSV row: `dim` features, then the label unless rows are unlabelled; the
    /// sequence number's column taken out first. Its fields are separated by semicolons (a
    /// number may then have a decimal comma), else by commas, else by tabs. Returns the
    /// number of features.
    fn csv(&mut self, row: &str, line: u64, record: &mut Record) -> Result<usize, (usize, ReadErrorKind)> {
        let labels = usize::from(self.label != LabelPlace::Unlabelled);
        let delimiter = crate::source::csv_row_delimiter(row.as_bytes());
        let separator = char::from(delimiter);
        let without_seq;
        let (row, seq) = match self.seq {
            SeqPlace::Column(column) => {
                let mut fields: Vec<&str> = row.split(separator).collect();
                let got = fields.len();
                let expected = self.width(got.saturating_sub(labels + 1)) + labels + 1;
                let Some(at) = column.checked_sub(1).filter(|&at| at < got) else {
                    return Err((1, ReadErrorKind::FieldCount { expected, got }));
                };
                let seq = fields.remove(at).trim();
                let seq = seq.parse::<u64>().map_err(|_| {
                    (1, ReadErrorKind::Malformed(format!("the sequence number `{seq}` is not a whole number")))
                })?;
                without_seq = fields.join(&separator.to_string());
                (without_seq.as_str(), Some(seq))
            }
            SeqPlace::Field(_) => (row, None),
        };
        let dim = self.width(row.split(separator).count().saturating_sub(labels));
        let reader =
            CsvReader::without_header(row.as_bytes(), "", dim.saturating_add(1), delimiter, self.max_message_bytes);
        let mut reader = match self.label {
            LabelPlace::Unlabelled => reader.without_labels(dim),
            _ => reader.with_labels(self.labels).with_unlabelled_rows(self.unlabelled_rows),
        };
        match reader.next_record(record) {
            Ok(true) => {}
            Ok(false) => return Err((1, ReadErrorKind::MissingLabel)),
            Err(e) => return Err((e.column, e.kind)),
        }
        (record.line, record.seq) = (line, seq);
        self.settle_labels(record);
        Ok(dim)
    }

    /// After the first label read, the column's kind is known: names or numbers.
    fn settle_labels(&mut self, record: &Record) {
        let labelled = !record.label.is_nan() || !record.class_name.is_empty();
        if self.labels == LabelColumn::Detect && labelled {
            self.labels = if record.class_name.is_empty() { LabelColumn::Numbers } else { LabelColumn::Names };
        }
    }

    /// A JSON object (see [`Payload::Json`]); returns the number of features.
    fn json(&mut self, row: &str, record: &mut Record) -> Result<usize, ReadErrorKind> {
        let malformed = |what: String| ReadErrorKind::Malformed(what);
        let value: Value = serde_json::from_str(row).map_err(|e| malformed(format!("not JSON: {e}")))?;
        let Value::Object(object) = value else { return Err(malformed("not a JSON object".into())) };
        let label_key = match &self.label {
            LabelPlace::Standard => Some("y".to_string()),
            LabelPlace::Field(name) => Some(name.clone()),
            LabelPlace::Unlabelled => None,
        };
        let seq_key = match &self.seq {
            SeqPlace::Field(name) => name.clone(),
            SeqPlace::Column(_) => "seq".into(),
        };
        let dim = match object.get("x") {
            Some(Value::Array(_)) if !self.categorical.is_empty() => {
                return Err(malformed("--categorical names fields: an array \"x\" has none".into()));
            }
            Some(Value::Array(x)) => {
                self.positional.store(true, Ordering::Relaxed);
                self.dense(x.iter(), record)?
            }
            _ => self.named(&object, [label_key.as_deref(), Some(seq_key.as_str())], record)?,
        };
        record.label = f64::NAN;
        match (label_key.as_deref().and_then(|key| object.get(key)), &self.label) {
            (Some(label), _) => self.json_label(label, record)?,
            (None, LabelPlace::Field(name)) if !self.unlabelled_rows => {
                return Err(malformed(format!("no label field \"{name}\"")));
            }
            (None, _) => {}
        }
        record.seq = match object.get(&seq_key) {
            None => None,
            Some(seq) => Some(seq.as_u64().ok_or(malformed(format!("\"{seq_key}\" {seq} is not a whole number")))?),
        };
        Ok(dim)
    }

    /// Features from `values`, which must be `dim` finite numbers; returns their number.
    fn dense<'v>(
        &self,
        values: impl ExactSizeIterator<Item = &'v Value>,
        record: &mut Record,
    ) -> Result<usize, ReadErrorKind> {
        let (got, dim) = (values.len(), self.width(values.len()));
        if got != dim {
            return Err(ReadErrorKind::FieldCount { expected: dim, got });
        }
        push_numbers(values.map(|value| (None, value)), record)?;
        Ok(dim)
    }

    /// Features from the object's fields other than the label and the sequence number
    /// (the `other` fields): the numbers in the order of their names, which must be those
    /// of the first such row, then the given categories of the fields `categorical` names.
    fn named(
        &mut self,
        object: &Map<String, Value>,
        other: [Option<&str>; 2],
        record: &mut Record,
    ) -> Result<usize, ReadErrorKind> {
        let categorical = |name: &str| self.categorical.iter().any(|c| c.column == name);
        let skipped = |name: &str| self.skipped.iter().any(|skipped| skipped == name);
        let features = || {
            object.iter().filter(|(name, _)| {
                !other.contains(&Some(name.as_str())) && !categorical(name.as_str()) && !skipped(name.as_str())
            })
        };
        let (numbers, given) = (features().count(), self.one_hot.names().len());
        let count = numbers + given;
        let dim = self.width(count);
        if self.names.get().is_none() && count != dim {
            return Err(ReadErrorKind::FieldCount { expected: dim, got: count });
        }
        let names = self.names.get_or_init(|| {
            features().map(|(name, _)| name.clone()).chain(self.one_hot.names().iter().cloned()).collect()
        });
        let mismatch = names.len() != count || features().zip(names.iter()).any(|((a, _), b)| a != b);
        if mismatch {
            let got: Vec<&str> = features().map(|(name, _)| name.as_str()).collect();
            let names = names.get(..numbers.min(names.len().saturating_sub(given))).unwrap_or_default();
            let message = format!("fields {got:?} are not those of the first row, {names:?} (or no array \"x\")");
            return Err(ReadErrorKind::Malformed(message));
        }
        push_numbers(features().map(|(name, value)| (Some(name.as_str()), value)), record)?;
        if !self.categorical.is_empty() {
            self.categories(object, numbers, record)?;
        }
        Ok(dim)
    }

    /// The features of the categories of `object`'s fields `categorical` names, from
    /// feature `first` on ([`OneHot`]).
    fn categories(
        &mut self,
        object: &Map<String, Value>,
        first: usize,
        record: &mut Record,
    ) -> Result<(), ReadErrorKind> {
        self.one_hot.start_row();
        for (field, Categorical { column, .. }) in self.categorical.iter().enumerate() {
            let category = match object.get(column) {
                Some(Value::String(text)) => text.clone(),
                Some(Value::Number(number)) => number.to_string(),
                Some(other) => return Err(ReadErrorKind::Malformed(format!("\"{column}\" {other} is not a category"))),
                None => return Err(ReadErrorKind::Malformed(format!("no field \"{column}\" (--categorical)"))),
            };
            self.one_hot.read(field, &category)?;
        }
        for &feature in self.one_hot.finish_row() {
            let index = first + feature as usize;
            record.indices.push(u32::try_from(index).map_err(|_| ReadErrorKind::IndexTooLarge(index))?);
            record.values.push(1.0);
        }
        Ok(())
    }

    /// A JSON label: a number, or a class name; where labels are numbers (a regressor's
    /// targets, or a stream's labels so far), a string of a number too, as firmware that
    /// prints its readings sends them and as a feature's is read.
    fn json_label(&mut self, label: &Value, record: &mut Record) -> Result<(), ReadErrorKind> {
        match label {
            Value::Number(n) if self.labels != LabelColumn::Names => {
                record.label = n.as_f64().filter(|v| v.is_finite()).ok_or(ReadErrorKind::NonFinite(n.to_string()))?;
            }
            Value::String(text) if self.labels == LabelColumn::Numbers => record.label = parse_finite(text.trim())?,
            Value::String(name) if self.labels != LabelColumn::Numbers && !name.trim().is_empty() => {
                record.class_name.push_str(name.trim());
            }
            Value::Null if self.unlabelled_rows => {}
            other => return Err(ReadErrorKind::NotANumber(other.to_string())),
        }
        self.settle_labels(record);
        Ok(())
    }
}

/// The fields `categorical` names, numbered in its order, as [`OneHot`] takes them.
fn fields_of(categorical: &[Categorical]) -> Vec<(usize, Categorical)> {
    categorical.iter().cloned().enumerate().collect()
}

/// Appends `values`, finite numbers (or truth values, or strings of numbers), each with
/// its field's name if it has one (named in its error), to `record` as its features from 0
/// on.
fn push_numbers<'v>(
    values: impl Iterator<Item = (Option<&'v str>, &'v Value)>,
    record: &mut Record,
) -> Result<(), ReadErrorKind> {
    for (j, (name, v)) in (0u32..).zip(values) {
        let value = match v {
            Value::Number(number) => number.as_f64().ok_or_else(|| ReadErrorKind::NotANumber(v.to_string())),
            Value::Bool(truth) => Ok(f64::from(u8::from(*truth))),
            Value::String(text) => feature_value(text.trim(), false),
            _ => Err(ReadErrorKind::NotANumber(v.to_string())),
        }
        .map_err(|kind| in_column(kind, name, false))?;
        if !value.is_finite() {
            return Err(ReadErrorKind::NonFinite(v.to_string()));
        }
        if value != 0.0 {
            record.indices.push(j);
            record.values.push(value);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_with(payload: Payload, label: LabelPlace, message: &str) -> Vec<Result<Record, ReadError>> {
        parse_dim(payload, label, Some(2), message)
    }

    fn parse_dim(
        payload: Payload,
        label: LabelPlace,
        dim: Option<usize>,
        message: &str,
    ) -> Vec<Result<Record, ReadError>> {
        read(&Options { dim, ..options(payload, label) }, message)
    }

    /// The tests' options: `payload` and `label`, labels detected, the width fixed by the
    /// first good row, messages of at most 128 bytes, nothing else.
    fn options(payload: Payload, label: LabelPlace) -> Options {
        Options {
            client_id: "t".into(),
            payload,
            dim: None,
            max_message_bytes: 128,
            labels: LabelColumn::Detect,
            unlabelled_rows: false,
            label,
            seq: SeqPlace::default(),
            categorical: Vec::new(),
            skipped: Vec::new(),
            connect_timeout: Duration::from_secs(1),
        }
    }

    /// The rows of `message` as one parser of `options` reads them.
    fn read(options: &Options, message: &str) -> Vec<Result<Record, ReadError>> {
        let mut rows = Vec::new();
        MessageParser::new(options).rows("s/a", message.as_bytes(), |row| {
            rows.push(row);
            true
        });
        rows
    }

    fn parse(payload: Payload, message: &str) -> Vec<Result<Record, ReadError>> {
        parse_with(payload, LabelPlace::Standard, message)
    }

    #[test]
    fn payloads_give_rows_and_bad_rows() {
        let rows = parse(Payload::Auto, "0.5,0,1\n1 1:2\n\n{\"x\": [3, 4], \"y\": -1, \"seq\": 7}");
        let rows: Vec<Record> = rows.into_iter().map(Result::unwrap).collect();
        assert_eq!((rows[0].label, rows[0].indices.clone(), rows[0].values.clone()), (1.0, vec![0], vec![0.5]));
        assert_eq!((rows[1].label, rows[1].values.clone(), rows[1].line), (1.0, vec![2.0], 2));
        assert_eq!(
            (rows[2].label, rows[2].values.clone(), rows[2].seq, rows[2].line),
            (-1.0, vec![3.0, 4.0], Some(7), 4)
        );
        let bad =
            parse(Payload::Auto, "1,2\n1,nan,0\n{\"x\": [1], \"y\": 0}\n{\"x\": [1, 2], \"y\": 0, \"seq\": -1}\n{x");
        let kinds: Vec<ReadErrorKind> = bad.into_iter().map(|r| r.unwrap_err().kind).collect();
        assert_eq!(kinds[0], ReadErrorKind::FieldCount { expected: 3, got: 2 });
        assert_eq!(kinds[1], ReadErrorKind::NonFinite("nan".into()));
        assert_eq!(kinds[2], ReadErrorKind::FieldCount { expected: 2, got: 1 });
        assert!(matches!(&kinds[3], ReadErrorKind::Malformed(m) if m.contains("seq")), "{:?}", kinds[3]);
        assert!(matches!(&kinds[4], ReadErrorKind::Malformed(m) if m.starts_with("not JSON")), "{:?}", kinds[4]);
        let long = parse(Payload::Csv, &"1,2,3\n".repeat(40));
        let e = long[0].as_ref().unwrap_err();
        assert_eq!(e.to_string(), "s/a (message 1):1:1: the message is larger than the limit of 128 bytes");
        let named = parse(Payload::Json, "{\"x\": [1, 0], \"y\": \"cat\"}");
        assert_eq!(named[0].as_ref().unwrap().class_name, "cat");
    }

    /// A message of tab- or semicolon-separated fields reads as one of commas (with
    /// semicolons, a number may have a decimal comma).
    #[test]
    fn csv_messages_separated_by_tabs_or_semicolons() {
        for message in ["0.5\t-2\t1\n3\t4\t0", "0.5;-2;1\n3;4;0", "0,5;-2;1\n3;4,0;0"] {
            let rows: Vec<Record> = parse(Payload::Auto, message).into_iter().map(Result::unwrap).collect();
            assert_eq!((rows[0].label, rows[0].values.clone()), (1.0, vec![0.5, -2.0]), "{message:?}");
            assert_eq!((rows[1].label, rows[1].values.clone()), (0.0, vec![3.0, 4.0]), "{message:?}");
        }
    }

    /// `--categorical mode=idle,run`: the field's category is a feature after the numeric
    /// fields, named `mode=category`; another category, a missing field, an array `"x"`
    /// and a CSV row are bad rows.
    #[test]
    fn json_fields_of_categories_are_one_hot_encoded() {
        let categorical = vec!["mode=idle,run".parse().unwrap()];
        let options = Options { max_message_bytes: 256, categorical, ..options(Payload::Auto, LabelPlace::Standard) };
        let message = "{\"b\": 2, \"mode\": \"run\", \"a\": 1, \"y\": 1}\n{\"a\": 0, \"mode\": \"idle\", \"b\": 5, \"y\": 0}\n\
                       {\"a\": 1, \"b\": 2, \"mode\": \"off\", \"y\": 1}\n{\"a\": 1, \"b\": 2, \"y\": 1}\n\
                       {\"x\": [1, 2, 0, 1], \"y\": 1}\n1,2,0,1,1";
        let mut parser = MessageParser::new(&options);
        let mut rows = Vec::new();
        parser.rows("s/a", message.as_bytes(), |row| {
            rows.push(row);
            true
        });
        let features = |i: usize| rows[i].as_ref().map(|r| (r.indices.clone(), r.values.clone())).unwrap();
        assert_eq!(features(0), (vec![0, 1, 3], vec![1.0, 2.0, 1.0]));
        assert_eq!(features(1), (vec![1, 2], vec![5.0, 1.0]));
        assert_eq!(parser.names.get().unwrap(), &["a", "b", "mode=idle", "mode=run"]);
        assert_eq!(parser.dim.get(), Some(&4));
        let kinds: Vec<String> = rows[2..].iter().map(|r| r.as_ref().unwrap_err().kind.to_string()).collect();
        assert_eq!(kinds[0], "`off` is not one of the categories given for column `mode` (--categorical)");
        assert_eq!(kinds[1], "no field \"mode\" (--categorical)");
        assert_eq!(kinds[2], "--categorical names fields: an array \"x\" has none");
        assert_eq!(kinds[3], "--categorical names the fields of JSON rows: this row has none");
    }

    #[test]
    fn json_features_by_name_in_name_order() {
        let rows = parse_with(
            Payload::Json,
            LabelPlace::Field("state".into()),
            "{\"b\": 2, \"a\": 1, \"state\": \"idle\", \"seq\": 3}\n{\"a\": 0, \"state\": \"run\", \"b\": 5}\n\
             {\"a\": 1, \"c\": 2, \"state\": \"idle\"}\n{\"a\": 1, \"b\": 2}",
        );
        let first = rows[0].as_ref().unwrap();
        assert_eq!((first.values.clone(), first.class_name.as_str(), first.seq), (vec![1.0, 2.0], "idle", Some(3)));
        let second = rows[1].as_ref().unwrap();
        assert_eq!((second.indices.clone(), second.values.clone()), (vec![1], vec![5.0]));
        let other = rows[2].as_ref().unwrap_err();
        assert!(matches!(&other.kind, ReadErrorKind::Malformed(m) if m.contains("[\"a\", \"c\"]")), "{other}");
        let unlabelled = rows[3].as_ref().unwrap_err();
        assert_eq!(unlabelled.kind, ReadErrorKind::Malformed("no label field \"state\"".into()));
        // Truth values and strings of numbers, as firmware that prints its readings sends
        // them, are read as a CSV's fields are; a string of no number is not one.
        let rows = parse_with(
            Payload::Json,
            LabelPlace::Standard,
            "{\"on\": true, \"t\": \" 21.5\", \"y\": 1}\n{\"on\": false, \"t\": \"warm\", \"y\": 0}\n\
             {\"x\": [\"1e3\", false], \"y\": 1}\n{\"on\": null, \"t\": 1, \"y\": 0}",
        );
        assert_eq!(rows[0].as_ref().unwrap().values, [1.0, 21.5]);
        let warm = ReadErrorKind::FeatureNotANumber { text: "warm".into(), column: "t".into() };
        assert_eq!(rows[1].as_ref().unwrap_err().kind, warm);
        assert_eq!(rows[2].as_ref().unwrap().values, [1e3]);
        let null = ReadErrorKind::MissingMarker { text: "null".into(), column: "on".into() };
        assert_eq!(rows[3].as_ref().unwrap_err().kind, null);
        // The first row of another width fixes nothing.
        let rows = parse_with(Payload::Json, LabelPlace::Standard, "{\"a\": 1}\n{\"a\": 1, \"b\": 2, \"y\": 1}");
        assert_eq!(rows[0].as_ref().unwrap_err().kind, ReadErrorKind::FieldCount { expected: 2, got: 1 });
        assert_eq!(rows[1].as_ref().unwrap().label, 1.0);
    }

    /// Fields `--skip-column` names (a timestamp, a device's name) are left out of every
    /// row that has them; without it, a timestamp's row names its field.
    #[test]
    fn json_fields_left_out_are_not_read() {
        let message = "{\"ts\": \"2026-12-04T10:00:01Z\", \"temp\": 21.5, \"device\": \"a7\", \"y\": 1}\n\
                       {\"temp\": 22, \"y\": 0}";
        let skipping = |skipped: &[&str]| {
            let skipped = skipped.iter().map(|s| s.to_string()).collect();
            let options = Options { max_message_bytes: 1024, skipped, ..options(Payload::Json, LabelPlace::Standard) };
            read(&options, message).into_iter().map(|row| row.map(|r| r.values)).collect::<Vec<_>>()
        };
        let rows = skipping(&["ts", "device"]);
        assert_eq!((rows[0].as_ref().unwrap(), rows[1].as_ref().unwrap()), (&vec![21.5], &vec![22.0]));
        let rows = skipping(&["device"]);
        let date = ReadErrorKind::DateOrTime { text: "2026-12-04T10:00:01Z".into(), column: "ts".into() };
        assert_eq!(rows[0].as_ref().unwrap_err().kind, date);
    }

    /// Where labels are numbers, a label sent as a string of a number is that number; a
    /// string of none is a bad row; where they are detected, a string is a class name,
    /// trimmed.
    #[test]
    fn json_labels_of_numbers_may_be_strings() {
        let message = "{\"t\": 1, \"y\": \" 21.5\"}\n{\"t\": 2, \"y\": \"warm\"}\n{\"t\": 3, \"y\": 7}";
        let labelled = |labels| {
            let options = Options { max_message_bytes: 1024, labels, ..options(Payload::Json, LabelPlace::Standard) };
            let rows = read(&options, message).into_iter();
            rows.map(|row| row.map(|r| (r.label, r.class_name)).map_err(|e| e.kind)).collect::<Vec<_>>()
        };
        let rows = labelled(LabelColumn::Numbers);
        assert_eq!(rows[0], Ok((21.5, String::new())));
        assert_eq!(rows[1], Err(ReadErrorKind::NotANumber("warm".into())));
        assert_eq!(rows[2], Ok((7.0, String::new())));
        let rows = labelled(LabelColumn::Detect);
        // Trimmed, as a CSV field is.
        assert!(matches!(&rows[0], Ok((label, name)) if label.is_nan() && name == "21.5"), "{rows:?}");
    }

    #[test]
    fn sequence_numbers_from_a_csv_column_or_a_named_field() {
        let rows = |seq, message: &str| {
            read(&Options { dim: Some(2), seq, ..options(Payload::Auto, LabelPlace::Standard) }, message)
        };
        let csv = rows(SeqPlace::Column(1), "17,0.5,2,1\nx,0.5,2,1\n5,1\n{\"x\": [1, 2], \"seq\": 4}");
        let first = csv[0].as_ref().unwrap();
        assert_eq!((first.seq, first.values.clone(), first.label), (Some(17), vec![0.5, 2.0], 1.0));
        let e = &csv[1].as_ref().unwrap_err().kind;
        assert_eq!(*e, ReadErrorKind::Malformed("the sequence number `x` is not a whole number".into()));
        assert_eq!(csv[2].as_ref().unwrap_err().kind, ReadErrorKind::FieldCount { expected: 3, got: 1 });
        assert_eq!(csv[3].as_ref().unwrap().seq, Some(4));
        let json = rows(SeqPlace::Field("n".into()), "{\"a\": 1, \"b\": 2, \"n\": 9, \"y\": 1}");
        let first = json[0].as_ref().unwrap();
        assert_eq!((first.seq, first.values.clone()), (Some(9), vec![1.0, 2.0]));
    }

    #[test]
    fn unlabelled_rows_read_every_field_as_a_feature() {
        let rows = parse_with(Payload::Auto, LabelPlace::Unlabelled, "0.5,2\n{\"x\": [1, 2], \"y\": 7}\n1,2,3");
        let first = rows[0].as_ref().unwrap();
        assert!(first.label.is_nan());
        assert_eq!(first.values, vec![0.5, 2.0]);
        assert!(rows[1].as_ref().unwrap().label.is_nan());
        assert_eq!(rows[2].as_ref().unwrap_err().kind, ReadErrorKind::FieldCount { expected: 2, got: 3 });
        // Without "y", a JSON row is unlabelled.
        let rows = parse(Payload::Json, "{\"x\": [1, 2]}");
        assert!(rows[0].as_ref().unwrap().label.is_nan());
    }

    #[test]
    fn without_a_given_width_the_first_good_row_fixes_it() {
        let csv = parse_dim(
            Payload::Auto,
            LabelPlace::Standard,
            None,
            "1 1:2
1,nan,0,1
1,2,3,0
4,5,1
1,2,3,4,1",
        );
        let kinds: Vec<Option<ReadErrorKind>> = csv.into_iter().map(|r| r.err().map(|e| e.kind)).collect();
        assert!(matches!(&kinds[0], Some(ReadErrorKind::Malformed(m)) if m.contains("--dim")), "{:?}", kinds[0]);
        // A bad row fixes nothing: the first good one, three features, does.
        assert_eq!(kinds[1], Some(ReadErrorKind::NonFinite("nan".into())));
        assert_eq!(kinds[2], None);
        assert_eq!(kinds[3], Some(ReadErrorKind::FieldCount { expected: 4, got: 3 }));
        assert_eq!(kinds[4], Some(ReadErrorKind::FieldCount { expected: 4, got: 5 }));
        let json = parse_dim(Payload::Json, LabelPlace::Standard, None, "{\"x\": [1, 2, 3]}\n{\"x\": [1]}");
        assert_eq!(json[0].as_ref().unwrap().values, vec![1.0, 2.0, 3.0]);
        assert_eq!(json[1].as_ref().unwrap_err().kind, ReadErrorKind::FieldCount { expected: 3, got: 1 });
        let named = parse_dim(Payload::Auto, LabelPlace::Unlabelled, None, "{\"a\": 1, \"b\": 2}\n1,2");
        assert_eq!(named[0].as_ref().unwrap().values, vec![1.0, 2.0]);
        assert_eq!(named[1].as_ref().unwrap().values, vec![1.0, 2.0]);
    }
}
