//! Publishing to an MQTT broker at QoS 1: a stream's predictions, one message per row, and
//! its rolling metrics.
//!
//! [`MqttSink::publish`] queues a message and returns; when the client's queue is full
//! (the broker slow to acknowledge, or away while the connection is made again) it waits
//! for room, so a stream goes no faster than its broker takes its output.
//! [`MqttSink::publish_later`] holds a message back until [`MqttSink::send_held`] (or a
//! flush): a caller with more rows ready sends a burst of predictions at once, which wakes
//! the network thread once rather than once per message. The network
//! thread counts the broker's acknowledgements: [`MqttSink::flush`] waits until every
//! message published has one, which `kestrel stream` does before each checkpoint, so a
//! checkpoint never covers a prediction the broker may not have. Messages published after
//! the last checkpoint are published again by a resumed run: at least once.

use std::sync::mpsc::{Receiver, TryRecvError, sync_channel};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use rumqttc::{Client, Event, Incoming, QoS};

use super::{Broker, Happening, start};
use crate::source::OpenError;

/// Messages queued in the client before [`MqttSink::publish`] waits.
const QUEUED: usize = 1024;
/// How long closing waits for the messages to go out and the disconnection.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// What the network thread reports: the acknowledgements counted, and why the connection
/// failed for good.
#[derive(Default)]
struct Acks {
    count: u64,
    failed: Option<String>,
    /// Callers waiting for acknowledgements: the network thread signals only when there
    /// are some (a signal is a system call even when nobody waits).
    waiting: usize,
}

/// The broker's acknowledgements, and a signal when one comes.
type Shared = Arc<(Mutex<Acks>, Condvar)>;

/// A QoS 1 publisher to one broker.
pub struct MqttSink {
    client: Client,
    topic: String,
    name: String,
    /// Messages published.
    published: u64,
    /// Messages held back by [`MqttSink::publish_later`].
    held: Vec<Vec<u8>>,
    acks: Shared,
    /// What the network thread has to tell: the connection lost and made again.
    notices: Receiver<String>,
    /// Ends (disconnects) when the network thread does.
    done: Receiver<()>,
}

impl MqttSink {
    /// Connects to `broker` as `client_id` (a clean session: a publisher has nothing for
    /// the broker to keep) to publish on its topic; returns once the broker accepted.
    ///
    /// # Errors
    /// [`OpenError::Mqtt`] naming the broker when the topic holds a wildcard, the
    /// connection is refused, the credentials rejected, or no answer comes within
    /// `connect_timeout`.
    pub fn connect(broker: &Broker, client_id: &str, connect_timeout: Duration) -> Result<MqttSink, OpenError> {
        let name = broker.name();
        let error = |message: String| OpenError::Mqtt { name: name.clone(), message };
        if broker.topic.contains(['+', '#']) {
            return Err(error(format!("topic `{}`: a message is published to a topic without + or #", broker.topic)));
        }
        let options = broker.options(client_id, true).map_err(error)?;
        let (client, connection) = Client::new(options, QUEUED);
        let acks = Shared::default();
        let (notify, notices) = sync_channel(QUEUED);
        let shared = Arc::clone(&acks);
        let handle = move |happening| count(&shared, |notice| drop(notify.try_send(notice)), happening);
        let done = start(connection, connect_timeout, handle).map_err(error)?;
        let topic = broker.topic.clone();
        Ok(MqttSink { client, topic, name, published: 0, held: Vec::new(), acks, notices, done })
    }

    /// The broker's URL, without the password.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Publishes `payload` on the sink's topic, retained by the broker when `retain` (the
    /// last one a new subscriber gets at once); waits while the client's queue is full.
    ///
    /// # Errors
    /// Why the connection failed for good, naming the broker.
    pub fn publish(&mut self, payload: Vec<u8>, retain: bool) -> Result<(), String> {
        self.failed()?;
        let topic = self.topic.clone();
        self.client
            .publish(topic, QoS::AtLeastOnce, retain, payload)
            .map_err(|_| format!("{}: the connection ended", self.name))?;
        self.published += 1;
        Ok(())
    }

    /// Holds `payload` back, to be published (not retained) by [`send_held`](Self::send_held)
    /// or the next [`flush`](Self::flush), in the order held.
    pub fn publish_later(&mut self, payload: Vec<u8>) {
        self.held.push(payload);
    }

    /// Messages held back.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// Publishes the messages held back, as [`publish`](Self::publish) does.
    ///
    /// # Errors
    /// Why the connection failed for good, naming the broker (the messages not yet
    /// published stay held).
    pub fn send_held(&mut self) -> Result<(), String> {
        let held = std::mem::take(&mut self.held);
        let mut messages = held.into_iter();
        while let Some(payload) = messages.next() {
            if let Err(e) = self.publish(payload, false) {
                self.held.extend(messages);
                return Err(e);
            }
        }
        Ok(())
    }

    /// Publishes the messages held back, then waits at most `wait` for the broker to
    /// acknowledge every message published; false when some are still unacknowledged then.
    ///
    /// # Errors
    /// Why the connection failed for good, naming the broker.
    pub fn flush(&mut self, wait: Duration) -> Result<bool, String> {
        self.send_held()?;
        let deadline = Instant::now() + wait;
        let failed = || format!("{}: the network thread failed", self.name);
        let (lock, acked) = &*self.acks;
        let mut acks = lock.lock().map_err(|_| failed())?;
        while acks.count < self.published && acks.failed.is_none() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(false);
            }
            acks.waiting += 1;
            let waited = acked.wait_timeout(acks, left);
            acks = waited.map_err(|_| failed())?.0;
            acks.waiting -= 1;
        }
        match &acks.failed {
            Some(message) => Err(format!("{}: {message}", self.name)),
            None => Ok(true),
        }
    }

    /// The next thing the network thread has to tell (the connection lost or made again).
    pub fn notice(&self) -> Option<String> {
        match self.notices.try_recv() {
            Ok(notice) => Some(format!("{}: {notice}", self.name)),
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => None,
        }
    }

    /// Waits a few seconds at most for the messages to be acknowledged, then disconnects.
    pub fn close(&mut self) {
        let _ = self.flush(CLOSE_WAIT);
        if self.client.try_disconnect().is_ok() {
            let _ = self.done.recv_timeout(CLOSE_WAIT);
        }
    }

    /// The connection's failure, if it failed for good.
    fn failed(&self) -> Result<(), String> {
        let (lock, _) = &*self.acks;
        match lock.lock().map(|acks| acks.failed.clone()) {
            Ok(None) => Ok(()),
            Ok(Some(message)) => Err(format!("{}: {message}", self.name)),
            Err(_) => Err(format!("{}: the network thread failed", self.name)),
        }
    }
}

/// The network thread's part: counts the broker's acknowledgements into `acks`, records a
/// failure for good, and tells of a connection lost or made again.
fn count(acks: &Shared, tell: impl Fn(String), happening: Happening) -> bool {
    let (lock, acked) = &**acks;
    let update = |change: &dyn Fn(&mut Acks)| {
        let waiting = lock.lock().map_or(true, |mut acks| {
            change(&mut acks);
            acks.waiting > 0
        });
        if waiting {
            acked.notify_all();
        }
    };
    match happening {
        Happening::Packet(Event::Incoming(Incoming::PubAck(_))) => update(&|acks| acks.count += 1),
        Happening::Packet(_) => {}
        Happening::Reconnected { .. } => tell("connected again".into()),
        Happening::Retrying(message) => tell(message),
        Happening::Failed(message) => {
            update(&|acks| acks.failed = Some(message.clone()));
            return false;
        }
    }
    true
}
