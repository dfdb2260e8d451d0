//! Rows from an MQTT broker: `mqtt://[USER[:PASS]@]HOST[:PORT]/TOPIC` (behind the `mqtt`
//! feature, which the `cli` feature enables).
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
//! A message holds one row or several separated by newlines, each a CSV row (the label
//! last, no header), a LibSVM row, or a JSON object `{"x": [..], "y": .., "seq": ..}`
//! (`x` dense, `y` a number or a class name, `seq` an optional sequence number, carried in
//! [`Record::seq`]); the format is given or detected row by row (`{` starts JSON, else
//! [`detect`](super::detect)). A bad row — malformed, of another width than `dim`, not
//! finite, in a message larger than the limit — is a [`ReadError`] naming the topic and
//! the message's number in the run; the rows after it are read on.
//!
//! The network runs on a thread of its own that parses messages into records and hands
//! them over through a bounded channel, as [`Background`](super::Background) does, so the
//! caller waits with a timeout and memory stays bounded (the client buffers a message
//! whole, up to the protocol's limit of 256 MiB, before its size is checked).

use std::collections::VecDeque;
use std::sync::mpsc::{Receiver, RecvTimeoutError, sync_channel};
use std::thread;
use std::time::{Duration, Instant};

use rumqttc::{Client, ConnectionError, Event, Incoming, MqttOptions, Outgoing, Publish, QoS, SubscribeReasonCode};
use serde_json::Value;

use super::{CsvReader, Format, LabelColumn, Next, OpenError, ReadError, ReadErrorKind, Record, RecordReader};

/// Records in flight between the network thread and the caller.
const IN_FLIGHT: usize = 256;
/// The largest packet MQTT can carry (its remaining length), plus its fixed header.
const MAX_PACKET_BYTES: usize = 268_435_455 + 5;
/// How long closing waits for the acknowledgements and the disconnection to go out.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// A broker and a topic filter, as named by an `mqtt://` URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Broker {
    /// Host name or address (an IPv6 address without its brackets).
    pub host: String,
    /// TCP port (1883 by default).
    pub port: u16,
    /// User name and password, when given.
    pub credentials: Option<(String, String)>,
    /// The topic filter (`+` and `#` allowed).
    pub topic: String,
}

impl Broker {
    /// Parses `mqtt://[USER[:PASS]@]HOST[:PORT]/TOPIC`; user and password may be
    /// percent-encoded (`%40` for `@`).
    ///
    /// # Errors
    /// What is wrong with the URL, in words.
    pub fn parse(url: &str) -> Result<Broker, String> {
        if url.starts_with("mqtts://") {
            return Err("TLS (mqtts://) is not supported yet: use mqtt://".into());
        }
        let rest = url.strip_prefix("mqtt://").ok_or("an MQTT URL starts with mqtt://")?;
        let (authority, topic) =
            rest.split_once('/').ok_or("no topic: the URL is mqtt://[USER[:PASS]@]HOST[:PORT]/TOPIC")?;
        let (userinfo, address) = match authority.rsplit_once('@') {
            Some((userinfo, address)) => (Some(userinfo), address),
            None => (None, authority),
        };
        let credentials = userinfo.map(|userinfo| {
            let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
            Ok::<_, String>((percent_decode(user)?, percent_decode(password)?))
        });
        let (host, port) = match address.strip_prefix('[') {
            Some(bracketed) => {
                let (host, after) = bracketed.split_once(']').ok_or("an IPv6 address lacks its closing `]`")?;
                (host, after.strip_prefix(':'))
            }
            None => match address.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (address, None),
            },
        };
        if host.is_empty() {
            return Err("no host: the URL is mqtt://[USER[:PASS]@]HOST[:PORT]/TOPIC".into());
        }
        let port = match port {
            None => 1883,
            Some(port) => port.parse::<u16>().ok().filter(|&p| p > 0).ok_or(format!("`{port}` is not a port"))?,
        };
        check_filter(topic)?;
        Ok(Broker { host: host.to_string(), port, credentials: credentials.transpose()?, topic: topic.to_string() })
    }

    /// The URL without the password, for messages and checkpoints.
    pub fn name(&self) -> String {
        let user = self.credentials.as_ref().map_or(String::new(), |(user, _)| format!("{user}@"));
        let host = if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() };
        format!("mqtt://{user}{host}:{}/{}", self.port, self.topic)
    }
}

/// Decodes `%XX` escapes.
fn percent_decode(text: &str) -> Result<String, String> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&byte, after)) = rest.split_first() {
        rest = after;
        if byte != b'%' {
            bytes.push(byte);
            continue;
        }
        let hex = rest.get(..2).and_then(|h| std::str::from_utf8(h).ok());
        let value = hex.and_then(|h| u8::from_str_radix(h, 16).ok()).ok_or(format!("bad %-escape in `{text}`"))?;
        bytes.push(value);
        rest = rest.get(2..).unwrap_or_default();
    }
    String::from_utf8(bytes).map_err(|_| format!("`{text}` does not decode to UTF-8"))
}

/// A topic filter MQTT accepts: not empty, `#` only as the last level, `+` and `#` alone
/// in their level.
fn check_filter(topic: &str) -> Result<(), String> {
    if topic.is_empty() {
        return Err("no topic: the URL is mqtt://[USER[:PASS]@]HOST[:PORT]/TOPIC".into());
    }
    let levels: Vec<&str> = topic.split('/').collect();
    for (i, level) in levels.iter().enumerate() {
        let wildcard = level.contains('+') || level.contains('#');
        if wildcard && level.len() != 1 {
            return Err(format!("topic `{topic}`: a wildcard (+ or #) must be a whole level"));
        }
        if *level == "#" && i + 1 != levels.len() {
            return Err(format!("topic `{topic}`: # must be the last level"));
        }
    }
    Ok(())
}

/// The format of the rows in messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Payload {
    /// Told row by row: `{` starts JSON, else as [`detect`](super::detect) says.
    #[default]
    Auto,
    /// CSV rows, the label last, no header.
    Csv,
    /// LibSVM rows.
    LibSvm,
    /// JSON objects `{"x": [..], "y": .., "seq": ..}`.
    Json,
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
    /// LibSVM indices past it are left to the learner).
    pub dim: usize,
    /// The largest message read; a larger one is a bad row.
    pub max_message_bytes: usize,
    /// What CSV and JSON labels hold.
    pub labels: LabelColumn,
    /// How long to wait for the broker to accept the connection.
    pub connect_timeout: Duration,
}

/// What the network thread hands over.
enum Item {
    /// A row, and with the last of a message the message.
    Row(Result<Record, ReadError>, Option<Publish>),
    /// A message without rows.
    End(Publish),
    /// The connection failed for good.
    Lost(String),
}

/// Records from an MQTT subscription, and the acknowledgement of the messages they came in.
pub struct MqttSource {
    client: Client,
    items: Option<Receiver<Item>>,
    /// Ends (disconnects) when the network thread does.
    done: Receiver<()>,
    /// Messages wholly handed out but not acknowledged, with the number of rows handed
    /// out at their end.
    unacked: VecDeque<(Publish, u64)>,
    /// Rows handed out (records and bad rows).
    handed: u64,
    name: String,
}

impl MqttSource {
    /// Connects to `broker` and subscribes to its topic at QoS 1, in the persistent
    /// session of `options.client_id`; returns once the broker accepted the connection.
    ///
    /// # Errors
    /// [`OpenError::Mqtt`] naming the broker when the connection is refused, the
    /// credentials rejected, or no answer comes within `options.connect_timeout`.
    pub fn connect(broker: &Broker, options: &Options) -> Result<MqttSource, OpenError> {
        let name = broker.name();
        let error = |message: String| OpenError::Mqtt { name: name.clone(), message };
        if options.client_id.is_empty() {
            return Err(error("the client id is empty".into()));
        }
        let mut mqtt = MqttOptions::new(options.client_id.clone(), broker.host.clone(), broker.port);
        mqtt.set_clean_session(false)
            .set_manual_acks(true)
            .set_keep_alive(Duration::from_secs(30))
            .set_max_packet_size(MAX_PACKET_BYTES, 64 * 1024)
            .set_request_channel_capacity(IN_FLIGHT);
        if let Some((user, password)) = &broker.credentials {
            mqtt.set_credentials(user.clone(), password.clone());
        }
        let (client, mut connection) = Client::new(mqtt, IN_FLIGHT);
        client.try_subscribe(broker.topic.clone(), QoS::AtLeastOnce).map_err(|e| error(e.to_string()))?;
        let (items, received) = sync_channel(IN_FLIGHT);
        let (connected, status) = sync_channel(1);
        let (done_sender, done) = sync_channel::<()>(0);
        let mut parser = Parser::new(options);
        let topic = broker.topic.clone();
        thread::spawn(move || {
            // Dropped when the thread ends: `done` then disconnects.
            let _done = done_sender;
            let mut listening = true;
            let mut connecting = Some(connected);
            for event in connection.iter() {
                let item = match event {
                    Ok(Event::Incoming(Incoming::ConnAck(_))) => {
                        if let Some(connected) = connecting.take() {
                            let _ = connected.send(Ok(()));
                        }
                        continue;
                    }
                    Ok(Event::Incoming(Incoming::SubAck(ack))) => {
                        if !ack.return_codes.contains(&SubscribeReasonCode::Failure) {
                            continue;
                        }
                        Item::Lost(format!("the broker refused the subscription to `{topic}`"))
                    }
                    Ok(Event::Incoming(Incoming::Publish(publish))) => {
                        if listening {
                            // Each row is sent when the next is read, so that the last
                            // carries its message.
                            let mut previous = None;
                            parser.rows(&publish, |row| {
                                if let Some(previous) = previous.replace(row) {
                                    listening = items.send(Item::Row(previous, None)).is_ok();
                                }
                                listening
                            });
                            let last = match previous {
                                Some(row) => Item::Row(row, Some(publish)),
                                None => Item::End(publish),
                            };
                            listening = listening && items.send(last).is_ok();
                        }
                        continue;
                    }
                    Ok(Event::Outgoing(Outgoing::Disconnect)) => return,
                    Ok(_) => continue,
                    Err(e) => match connecting.take() {
                        Some(connected) => {
                            let _ = connected.send(Err(describe(&e)));
                            return;
                        }
                        None => Item::Lost(describe(&e)),
                    },
                };
                // A lost connection ends the run: reconnecting would deliver again rows
                // already handed out.
                let _ = items.send(item);
                return;
            }
        });
        let wait = options.connect_timeout;
        match status.recv_timeout(wait) {
            Ok(Ok(())) => {}
            Ok(Err(message)) => return Err(error(message)),
            Err(RecvTimeoutError::Timeout) => {
                return Err(error(format!("no answer from the broker within {} s", wait.as_secs_f64())));
            }
            Err(RecvTimeoutError::Disconnected) => return Err(error("the connection ended".into())),
        }
        Ok(MqttSource { client, items: Some(received), done, unacked: VecDeque::new(), handed: 0, name })
    }

    /// The broker's URL, without the password.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The next row into `record`, waiting at most `wait` for it; [`Next::Lost`] when the
    /// connection failed.
    pub fn next(&mut self, record: &mut Record, wait: Duration) -> Next {
        let deadline = Instant::now() + wait;
        let Some(items) = &self.items else { return Next::End };
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match items.recv_timeout(left) {
                Ok(Item::Row(row, message)) => {
                    self.handed += 1;
                    if let Some(publish) = message {
                        self.unacked.push_back((publish, self.handed));
                    }
                    return match row {
                        Ok(next) => {
                            *record = next;
                            Next::Record
                        }
                        Err(e) => Next::Bad(e),
                    };
                }
                Ok(Item::End(publish)) => self.unacked.push_back((publish, self.handed)),
                Ok(Item::Lost(message)) => return Next::Lost(format!("{}: {message}", self.name)),
                Err(RecvTimeoutError::Timeout) => return Next::Waiting,
                Err(RecvTimeoutError::Disconnected) => {
                    return Next::Lost(format!("{}: the connection ended", self.name));
                }
            }
        }
    }

    /// Messages wholly among the first `consumed` rows handed out, not yet acknowledged.
    pub fn unacked(&self, consumed: u64) -> usize {
        self.unacked.iter().take_while(|(_, end)| *end <= consumed).count()
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

/// A connection error in words.
fn describe(error: &ConnectionError) -> String {
    match error {
        ConnectionError::ConnectionRefused(code) => format!("the broker refused the connection: {code:?}"),
        ConnectionError::Io(e) => e.to_string(),
        other => other.to_string(),
    }
}

/// Turns messages into rows.
struct Parser {
    payload: Payload,
    dim: usize,
    max_message_bytes: usize,
    labels: LabelColumn,
    /// Messages seen.
    messages: u64,
}

impl Parser {
    fn new(options: &Options) -> Self {
        let Options { payload, dim, max_message_bytes, labels, .. } = *options;
        Parser { payload, dim, max_message_bytes, labels, messages: 0 }
    }

    /// Hands each row of `publish` to `each`, while it returns true.
    fn rows(&mut self, publish: &Publish, mut each: impl FnMut(Result<Record, ReadError>) -> bool) {
        self.messages += 1;
        let source_name = format!("{} (message {})", publish.topic, self.messages);
        let bad = |line, column, kind| Err(ReadError { source_name: source_name.clone(), line, column, kind });
        if publish.payload.len() > self.max_message_bytes {
            each(bad(1, 1, ReadErrorKind::MessageTooLarge(self.max_message_bytes)));
            return;
        }
        let Ok(text) = std::str::from_utf8(&publish.payload) else {
            each(bad(1, 1, ReadErrorKind::Malformed("the message is not UTF-8".into())));
            return;
        };
        for (line, row) in (1u64..).zip(text.split('\n')) {
            let row = row.strip_suffix('\r').unwrap_or(row);
            if row.trim().is_empty() {
                continue;
            }
            let mut record = Record::default();
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
            Payload::Auto => match super::detect(row) {
                Format::Csv => Payload::Csv,
                _ => Payload::LibSvm,
            },
            given => given,
        };
        record.clear(line);
        match format {
            Payload::LibSvm | Payload::Auto => super::parse_libsvm_line(row, record),
            Payload::Json => self.json(row, record).map_err(|kind| (1, kind)),
            Payload::Csv => {
                let fields = self.dim.saturating_add(1);
                let reader = CsvReader::without_header(row.as_bytes(), "", fields, self.max_message_bytes);
                let mut reader = reader.with_labels(self.labels);
                match reader.next_record(record) {
                    Ok(true) => {}
                    Ok(false) => return Err((1, ReadErrorKind::MissingLabel)),
                    Err(e) => return Err((e.column, e.kind)),
                }
                record.line = line;
                self.settle_labels(record);
                Ok(())
            }
        }
    }

    /// After the first label read, the column's kind is known: names or numbers.
    fn settle_labels(&mut self, record: &Record) {
        if self.labels == LabelColumn::Detect {
            self.labels = if record.class_name.is_empty() { LabelColumn::Numbers } else { LabelColumn::Names };
        }
    }

    /// `{"x": [..], "y": .., "seq": ..}`.
    fn json(&mut self, row: &str, record: &mut Record) -> Result<(), ReadErrorKind> {
        let malformed = |what: String| ReadErrorKind::Malformed(what);
        let value: Value = serde_json::from_str(row).map_err(|e| malformed(format!("not JSON: {e}")))?;
        let Value::Object(object) = value else { return Err(malformed("not a JSON object".into())) };
        let Some(Value::Array(x)) = object.get("x") else {
            return Err(malformed("no array \"x\" in the object".into()));
        };
        if x.len() != self.dim {
            return Err(ReadErrorKind::FieldCount { expected: self.dim, got: x.len() });
        }
        for (j, v) in (0u32..).zip(x) {
            let value = v.as_f64().ok_or_else(|| ReadErrorKind::NotANumber(v.to_string()))?;
            if !value.is_finite() {
                return Err(ReadErrorKind::NonFinite(v.to_string()));
            }
            if value != 0.0 {
                record.indices.push(j);
                record.values.push(value);
            }
        }
        match object.get("y") {
            Some(Value::Number(n)) if self.labels != LabelColumn::Names => {
                record.label = n.as_f64().filter(|v| v.is_finite()).ok_or(ReadErrorKind::NonFinite(n.to_string()))?;
            }
            Some(Value::String(name)) if self.labels != LabelColumn::Numbers && !name.is_empty() => {
                record.label = f64::NAN;
                record.class_name.push_str(name);
            }
            Some(other) => return Err(ReadErrorKind::NotANumber(other.to_string())),
            None => return Err(ReadErrorKind::MissingLabel),
        }
        self.settle_labels(record);
        record.seq = match object.get("seq") {
            None => None,
            Some(seq) => Some(seq.as_u64().ok_or(malformed(format!("\"seq\" {seq} is not a whole number")))?),
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_with_clear_errors() {
        let b = Broker::parse("mqtt://ann:p%40ss@broker.local:1884/plant/+/temp").unwrap();
        assert_eq!(b.host, "broker.local");
        assert_eq!(b.port, 1884);
        assert_eq!(b.credentials, Some(("ann".into(), "p@ss".into())));
        assert_eq!(b.topic, "plant/+/temp");
        assert_eq!(b.name(), "mqtt://ann@broker.local:1884/plant/+/temp");
        let b = Broker::parse("mqtt://[::1]/#").unwrap();
        assert_eq!((b.host.as_str(), b.port, b.name()), ("::1", 1883, "mqtt://[::1]:1883/#".to_string()));
        let error = |url| Broker::parse(url).unwrap_err();
        assert!(error("mqtt://host").starts_with("no topic"));
        assert!(error("mqtt://host/").starts_with("no topic"));
        assert!(error("mqtt:///t").starts_with("no host"));
        assert_eq!(error("mqtt://host:x/t"), "`x` is not a port");
        assert_eq!(error("mqtt://host/a/#/b"), "topic `a/#/b`: # must be the last level");
        assert_eq!(error("mqtt://host/a+"), "topic `a+`: a wildcard (+ or #) must be a whole level");
        assert!(error("mqtts://host/t").starts_with("TLS"));
    }

    fn parse(payload: Payload, labels: LabelColumn, message: &str) -> Vec<Result<Record, ReadError>> {
        let options = Options {
            client_id: "t".into(),
            payload,
            dim: 2,
            max_message_bytes: 128,
            labels,
            connect_timeout: Duration::from_secs(1),
        };
        let mut parser = Parser::new(&options);
        let mut rows = Vec::new();
        parser.rows(&Publish::new("s/a", QoS::AtLeastOnce, message), |row| {
            rows.push(row);
            true
        });
        rows
    }

    #[test]
    fn payloads_give_rows_and_bad_rows() {
        let rows =
            parse(Payload::Auto, LabelColumn::Detect, "0.5,0,1\n1 1:2\n\n{\"x\": [3, 4], \"y\": -1, \"seq\": 7}");
        let rows: Vec<Record> = rows.into_iter().map(Result::unwrap).collect();
        assert_eq!((rows[0].label, rows[0].indices.clone(), rows[0].values.clone()), (1.0, vec![0], vec![0.5]));
        assert_eq!((rows[1].label, rows[1].values.clone(), rows[1].line), (1.0, vec![2.0], 2));
        assert_eq!(
            (rows[2].label, rows[2].values.clone(), rows[2].seq, rows[2].line),
            (-1.0, vec![3.0, 4.0], Some(7), 4)
        );
        let bad = parse(
            Payload::Auto,
            LabelColumn::Detect,
            "1,2\n1,nan,0\n{\"x\": [1], \"y\": 0}\n{\"x\": [1, 2], \"y\": 0, \"seq\": -1}\n{x",
        );
        let kinds: Vec<ReadErrorKind> = bad.into_iter().map(|r| r.unwrap_err().kind).collect();
        assert_eq!(kinds[0], ReadErrorKind::FieldCount { expected: 3, got: 2 });
        assert_eq!(kinds[1], ReadErrorKind::NonFinite("nan".into()));
        assert_eq!(kinds[2], ReadErrorKind::FieldCount { expected: 2, got: 1 });
        assert!(matches!(&kinds[3], ReadErrorKind::Malformed(m) if m.contains("seq")), "{:?}", kinds[3]);
        assert!(matches!(&kinds[4], ReadErrorKind::Malformed(m) if m.starts_with("not JSON")), "{:?}", kinds[4]);
        let long = parse(Payload::Csv, LabelColumn::Detect, &"1,2,3\n".repeat(40));
        let e = long[0].as_ref().unwrap_err();
        assert_eq!(e.to_string(), "s/a (message 1):1:1: the message is larger than the limit of 128 bytes");
        let named = parse(Payload::Json, LabelColumn::Detect, "{\"x\": [1, 0], \"y\": \"cat\"}");
        assert_eq!(named[0].as_ref().unwrap().class_name, "cat");
    }
}
