//! MQTT brokers as inputs and outputs (behind the `mqtt` feature, which the `cli` feature
//! enables): [`MqttSource`] subscribes and hands out rows, acknowledging each message only
//! when its rows are consumed; [`MqttSink`] publishes a stream's predictions and metrics.
//!
//! A broker is named by a URL, `mqtt://[USER[:PASS]@]HOST[:PORT]/TOPIC` (port 1883) or
//! `mqtts://…` (TLS through rustls, port 8883, the server checked against the system's
//! root certificates or those of a CA file). Both ends run the client's network loop on a
//! thread of their own, and both survive a broker going away: a lost connection is tried
//! again after a pause that doubles from [`FIRST_RETRY`] up to [`LAST_RETRY`], the
//! learner's state untouched, and a failed authentication or a refused subscription ends
//! the run with an error naming the broker.
//!
//! Memory: a bounded number of messages in flight each way (a few hundred), each up to the
//! message limit the caller sets.

mod sink;
mod source;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::thread;
use std::time::Duration;

use rumqttc::{
    ConnectReturnCode, Connection, ConnectionError, Event, Incoming, MqttOptions, Outgoing, TlsConfiguration, Transport,
};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

pub use self::sink::MqttSink;
pub use self::source::{LabelPlace, MessageParser, MqttSource, Options, Payload, SeqPlace};

/// The first pause before connecting again to a broker that went away.
pub const FIRST_RETRY: Duration = Duration::from_millis(100);
/// The longest pause between two attempts to connect again.
pub const LAST_RETRY: Duration = Duration::from_secs(5);
/// The largest packet MQTT can carry (its remaining length), plus its fixed header.
const MAX_PACKET_BYTES: usize = 268_435_455 + 5;

/// A broker and a topic (a filter with `+` and `#` for a subscription), as named by an
/// `mqtt://` or `mqtts://` URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Broker {
    /// Host name or address (an IPv6 address without its brackets).
    pub host: String,
    /// TCP port (1883 by default, 8883 over TLS).
    pub port: u16,
    /// User name and password, when given.
    pub credentials: Option<(String, String)>,
    /// The topic, or topic filter.
    pub topic: String,
    /// Over TLS (`mqtts://`).
    pub tls: bool,
    /// The certificates (PEM) a TLS server's is checked against, instead of the system's.
    pub ca_file: Option<PathBuf>,
}

impl Broker {
    /// Parses `mqtt[s]://[USER[:PASS]@]HOST[:PORT]/TOPIC`; user and password may be
    /// percent-encoded (`%40` for `@`).
    ///
    /// # Errors
    /// What is wrong with the URL, in words.
    pub fn parse(url: &str) -> Result<Broker, String> {
        let (tls, rest) = match (url.strip_prefix("mqtts://"), url.strip_prefix("mqtt://")) {
            (Some(rest), _) => (true, rest),
            (None, Some(rest)) => (false, rest),
            (None, None) => return Err("an MQTT URL starts with mqtt:// or mqtts://".into()),
        };
        let shape = "the URL is mqtt[s]://[USER[:PASS]@]HOST[:PORT]/TOPIC";
        let (authority, topic) = rest.split_once('/').ok_or(format!("no topic: {shape}"))?;
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
            return Err(format!("no host: {shape}"));
        }
        let port = match port {
            None if tls => 8883,
            None => 1883,
            Some(port) => port.parse::<u16>().ok().filter(|&p| p > 0).ok_or(format!("`{port}` is not a port"))?,
        };
        if topic.is_empty() {
            return Err(format!("no topic: {shape}"));
        }
        check_filter(topic)?;
        let credentials = credentials.transpose()?;
        Ok(Broker { host: host.to_string(), port, credentials, topic: topic.to_string(), tls, ca_file: None })
    }

    /// The URL without the password, for messages and checkpoints.
    pub fn name(&self) -> String {
        let user = self.credentials.as_ref().map_or(String::new(), |(user, _)| format!("{user}@"));
        let host = if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() };
        let scheme = if self.tls { "mqtts" } else { "mqtt" };
        format!("{scheme}://{user}{host}:{}/{}", self.port, self.topic)
    }

    /// The client's options for a connection as `client_id`: keep-alive, credentials,
    /// TLS, and a persistent session unless `clean_session`.
    fn options(&self, client_id: &str, clean_session: bool) -> Result<MqttOptions, String> {
        if client_id.is_empty() {
            return Err("the client id is empty".into());
        }
        let mut options = MqttOptions::new(client_id, self.host.clone(), self.port);
        options
            .set_clean_session(clean_session)
            .set_keep_alive(Duration::from_secs(30))
            .set_max_packet_size(MAX_PACKET_BYTES, MAX_PACKET_BYTES);
        if let Some((user, password)) = &self.credentials {
            options.set_credentials(user.clone(), password.clone());
        }
        if self.tls {
            options.set_transport(Transport::Tls(TlsConfiguration::Rustls(Arc::new(self.tls_config()?))));
        } else if let Some(path) = &self.ca_file {
            return Err(format!("--ca-file {} is for mqtts:// (TLS) URLs", path.display()));
        }
        Ok(options)
    }

    /// TLS through rustls and its ring provider, trusting the CA file's certificates or
    /// else the system's.
    fn tls_config(&self) -> Result<rustls::ClientConfig, String> {
        let mut roots = rustls::RootCertStore::empty();
        match &self.ca_file {
            Some(path) => {
                for certificate in ca_certificates(path)? {
                    roots.add(certificate).map_err(|e| format!("--ca-file {}: {e}", path.display()))?;
                }
            }
            None => {
                let system = rustls_native_certs::load_native_certs();
                roots.add_parsable_certificates(system.certs);
                if roots.is_empty() {
                    return Err("no system root certificate found: name the broker's CA with --ca-file".into());
                }
            }
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?;
        Ok(config.with_root_certificates(roots).with_no_client_auth())
    }
}

/// The certificates of a PEM file: at least one.
fn ca_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let context = |e: rustls::pki_types::pem::Error| format!("--ca-file {}: {e}", path.display());
    let certificates = CertificateDer::pem_file_iter(path).map_err(context)?;
    let certificates = certificates.collect::<Result<Vec<_>, _>>().map_err(context)?;
    if certificates.is_empty() {
        return Err(format!("--ca-file {}: no certificate (PEM) in the file", path.display()));
    }
    Ok(certificates)
}

/// A topic filter MQTT accepts: `#` only as the last level, `+` and `#` alone in their
/// level.
fn check_filter(topic: &str) -> Result<(), String> {
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

/// A connection error in words.
fn describe(error: &ConnectionError) -> String {
    match error {
        ConnectionError::ConnectionRefused(code) => format!("the broker refused the connection: {code:?}"),
        ConnectionError::Io(e) => e.to_string(),
        ConnectionError::Tls(e) => {
            format!("TLS: {e} (the broker's certificate is checked against the system's roots, or --ca-file's)")
        }
        other => other.to_string(),
    }
}

/// Whether connecting again cannot help: the broker refused the client itself (its
/// credentials, its id, its protocol), or the TLS set-up failed.
fn is_final(error: &ConnectionError) -> bool {
    match error {
        ConnectionError::ConnectionRefused(code) => *code != ConnectReturnCode::ServiceUnavailable,
        ConnectionError::Tls(_) => true,
        _ => false,
    }
}

/// What a connection's network thread hands its end, once the first connection is made.
enum Happening {
    /// A packet received or sent.
    Packet(Event),
    /// Connected again after a loss; whether the broker kept the session.
    Reconnected { session_present: bool },
    /// The connection was lost: the message says when it is tried again.
    Retrying(String),
    /// The connection failed for good (refused, or TLS): why.
    Failed(String),
}

/// Starts the network thread of `connection` (named `thread_name`, as `top -H` and a
/// debugger show it), which hands what happens to `handle` until
/// the client disconnects, the connection fails for good, or `handle` returns false; returns
/// once the broker accepted the first connection, with a receiver that disconnects when the
/// thread ends.
///
/// # Errors
/// Why the first connection failed, or that no answer came within `wait`.
fn start(
    connection: Connection,
    thread_name: &str,
    wait: Duration,
    handle: impl FnMut(Happening) -> bool + Send + 'static,
) -> Result<Receiver<()>, String> {
    let (connected, status) = sync_channel(1);
    let (done_sender, done) = sync_channel::<()>(0);
    thread::Builder::new()
        .name(thread_name.into())
        .spawn(move || {
            // Dropped when the thread ends: `done` then disconnects.
            let _done = done_sender;
            drive(connection, connected, handle);
        })
        .map_err(|e| format!("cannot start the network thread: {e}"))?;
    match status.recv_timeout(wait) {
        Ok(Ok(())) => Ok(done),
        Ok(Err(message)) => Err(message),
        Err(RecvTimeoutError::Timeout) => Err(format!("no answer from the broker within {} s", wait.as_secs_f64())),
        Err(RecvTimeoutError::Disconnected) => Err("the connection ended".into()),
    }
}

/// The network thread: tells `connected` how the first attempt went, then connects again
/// after each loss, pausing as [`Backoff`] says.
fn drive(
    mut connection: Connection,
    connected: SyncSender<Result<(), String>>,
    mut handle: impl FnMut(Happening) -> bool,
) {
    let (mut connecting, mut backoff) = (Some(connected), Backoff::new());
    for event in connection.iter() {
        let happening = match event {
            Ok(Event::Incoming(Incoming::ConnAck(ack))) => {
                backoff.connected();
                match connecting.take() {
                    Some(connected) => {
                        let _ = connected.send(Ok(()));
                        continue;
                    }
                    None => Happening::Reconnected { session_present: ack.session_present },
                }
            }
            Ok(Event::Outgoing(Outgoing::Disconnect)) => return,
            Ok(event) => Happening::Packet(event),
            Err(e) => {
                if let Some(connected) = connecting.take() {
                    let _ = connected.send(Err(describe(&e)));
                    return;
                }
                if is_final(&e) {
                    handle(Happening::Failed(describe(&e)));
                    return;
                }
                let pause = backoff.pause();
                let message =
                    format!("connection lost ({}): connecting again in {} s", describe(&e), pause.as_secs_f64());
                if !handle(Happening::Retrying(message)) {
                    return;
                }
                thread::sleep(pause);
                continue;
            }
        };
        if !handle(happening) {
            return;
        }
    }
}

/// Pauses between attempts to connect again: doubling from [`FIRST_RETRY`] to
/// [`LAST_RETRY`], back to the first once connected.
#[derive(Clone, Copy, Debug)]
struct Backoff {
    next: Duration,
}

impl Backoff {
    fn new() -> Self {
        Backoff { next: FIRST_RETRY }
    }

    /// The pause before the next attempt.
    fn pause(&mut self) -> Duration {
        let pause = self.next;
        self.next = (self.next * 2).min(LAST_RETRY);
        pause
    }

    fn connected(&mut self) {
        self.next = FIRST_RETRY;
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
        let b = Broker::parse("mqtts://iot.example/s").unwrap();
        assert_eq!((b.tls, b.port, b.name()), (true, 8883, "mqtts://iot.example:8883/s".to_string()));
        let error = |url| Broker::parse(url).unwrap_err();
        assert!(error("mqtt://host").starts_with("no topic"));
        assert!(error("mqtt://host/").starts_with("no topic"));
        assert!(error("mqtt:///t").starts_with("no host"));
        assert_eq!(error("mqtt://host:x/t"), "`x` is not a port");
        assert_eq!(error("http://host/t"), "an MQTT URL starts with mqtt:// or mqtts://");
    }

    #[test]
    fn filters_have_whole_wildcard_levels() {
        assert_eq!(check_filter("plant/+/temp"), Ok(()));
        assert_eq!(check_filter("#"), Ok(()));
        assert_eq!(check_filter("a/#/b").unwrap_err(), "topic `a/#/b`: # must be the last level");
        assert_eq!(check_filter("a+").unwrap_err(), "topic `a+`: a wildcard (+ or #) must be a whole level");
    }

    #[test]
    fn tls_needs_certificates_it_can_read() {
        let mut broker = Broker::parse("mqtts://host/t").unwrap();
        let dir = std::env::temp_dir().join(format!("kestrel-mqtt-ca-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "no certificate here\n").unwrap();
        broker.ca_file = Some(empty.clone());
        let e = broker.options("c", true).unwrap_err();
        assert_eq!(e, format!("--ca-file {}: no certificate (PEM) in the file", empty.display()));
        broker.ca_file = Some(dir.join("absent.pem"));
        assert!(broker.options("c", true).unwrap_err().starts_with("--ca-file "));
        let mut plain = Broker::parse("mqtt://host/t").unwrap();
        plain.ca_file = Some(empty);
        assert!(plain.options("c", true).unwrap_err().ends_with("is for mqtts:// (TLS) URLs"));
        assert_eq!(plain.options("", true).unwrap_err(), "the client id is empty");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn pauses_double_up_to_the_last() {
        let mut backoff = Backoff::new();
        let pauses: Vec<Duration> = (0..8).map(|_| backoff.pause()).collect();
        assert_eq!(pauses[0], FIRST_RETRY);
        assert_eq!(pauses[1], FIRST_RETRY * 2);
        assert_eq!(pauses[7], LAST_RETRY);
        backoff.connected();
        assert_eq!(backoff.pause(), FIRST_RETRY);
    }
}
