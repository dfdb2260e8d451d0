//! Publishing to an MQTT broker at QoS 1: a stream's predictions, one message per row, and
//! its rolling metrics.
//!
//! [`MqttSink::publish`] queues a message and returns; when [`HIGH_WATER`] messages wait
//! in the client's queue (the broker slow to acknowledge — the client sends no more than
//! its in-flight limit ahead of the acknowledgements — or away while the connection is made
//! again) it waits until no more than [`LOW_WATER`] do, so a stream goes no faster than its
//! broker takes its output. Waiting for a batch to drain, not for one free place, wakes the
//! caller once per batch: a full client queue would wake it (and the network thread) once
//! per message.
//! A caller that can be interrupted (a signal) says so with [`MqttSink::interrupt_when`]:
//! such a wait then ends a few seconds after the interruption instead of lasting while the
//! broker is away.
//! [`MqttSink::publish_later`] holds a message back until [`MqttSink::send_held`] (or a
//! flush): a caller with more rows ready sends a burst of predictions at once, which wakes
//! the network thread once rather than once per message. The network
//! thread counts the broker's acknowledgements: [`MqttSink::flush`] waits until every
//! message published has one, which `kestrel stream` does before each checkpoint, so a
//! checkpoint never covers a prediction the broker may not have. Messages published after
//! the last checkpoint are published again by a resumed run: at least once. A connection
//! lost and made again with a broker that did not keep the session takes the messages on
//! their way with it (rumqttc drops them): they are counted lost (a flush then does not
//! wait for them) and the notice says how many.

use std::sync::mpsc::{Receiver, TryRecvError, sync_channel};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use rumqttc::{Client, Event, Incoming, Outgoing, QoS};

use super::{Broker, Happening, start};
use crate::source::OpenError;

/// Messages the client's queue holds.
const QUEUED: usize = 1024;
/// Messages published and not yet sent at which [`MqttSink::publish`] waits: below
/// [`QUEUED`], so the client's queue does not fill.
const HIGH_WATER: u64 = QUEUED as u64 - 64;
/// Messages published and not yet sent when a waiting [`MqttSink::publish`] goes on.
const LOW_WATER: u64 = QUEUED as u64 / 2;
/// How long closing waits for the messages to go out and the disconnection.
const CLOSE_WAIT: Duration = Duration::from_secs(5);
/// How long a publish waiting for the broker goes on once its caller was interrupted
/// ([`MqttSink::interrupt_when`]).
const INTERRUPT_GRACE: Duration = Duration::from_secs(5);
/// How often a publish waiting for the broker asks whether its caller was interrupted.
const INTERRUPT_POLL: Duration = Duration::from_millis(100);

/// What the sink and its network thread share: the messages published, sent,
/// acknowledged and lost, and why the connection failed for good.
///
/// A connection lost takes with it the messages the client had sent and not yet had
/// acknowledged, and those waiting in its queue (rumqttc drains the queue then); it sends
/// them again if the broker kept the client's session, else they are gone. The messages
/// published when the network thread learns of the loss are those, give or take the few
/// published in that instant, after the client drained its queue: those are counted lost
/// yet go out, and their acknowledgements then count for later messages.
#[derive(Default)]
struct Acks {
    /// Acknowledgements received.
    count: u64,
    /// Messages sent, in the order published (so those in the client's queue are the
    /// published ones after the first `sent`).
    sent: u64,
    /// Messages handed to the client (counted by [`MqttSink::publish`] as it hands one).
    published: u64,
    /// Messages a connection lost took with it, the broker having lost the session.
    lost: u64,
    /// `published` when the connection was lost, until it is made again.
    lost_at: Option<u64>,
    failed: Option<String>,
    /// A caller waits until the counts reach `wake_at`: the network thread signals only
    /// then, or on failure (a signal is a system call even when nobody waits).
    wake_at: Option<Counts>,
}

/// Targets of [`Acks::resolved`] and [`Acks::sent`].
#[derive(Clone, Copy)]
struct Counts {
    resolved: u64,
    sent: u64,
}

impl Acks {
    /// Messages acknowledged or known lost: the first ones published.
    fn resolved(&self) -> u64 {
        self.count + self.lost
    }

    fn reached(&self, target: Counts) -> bool {
        self.resolved() >= target.resolved && self.sent >= target.sent
    }

    /// The connection made again after a loss: the messages it took are sent again when
    /// the broker kept the session, else counted lost; returns how many were lost.
    fn reconnected(&mut self, session_present: bool) -> u64 {
        let Some(mark) = self.lost_at.take() else { return 0 };
        let gone = mark.saturating_sub(self.resolved());
        if session_present {
            // The client sends them again, in order: counted as sent once more.
            self.sent = self.resolved();
            0
        } else {
            (self.lost, self.sent) = (self.lost + gone, mark.max(self.sent));
            gone
        }
    }
}

/// The broker's acknowledgements, and a signal when one comes.
type Shared = Arc<(Mutex<Acks>, Condvar)>;

/// A QoS 1 publisher to one broker.
pub struct MqttSink {
    client: Client,
    topic: String,
    name: String,
    /// Messages held back by [`MqttSink::publish_later`].
    held: Vec<Vec<u8>>,
    acks: Shared,
    /// What the network thread has to tell: the connection lost and made again.
    notices: Receiver<String>,
    /// Ends (disconnects) when the network thread does.
    done: Receiver<()>,
    /// Whether the caller was interrupted ([`MqttSink::interrupt_when`]), and since when.
    interrupted: Option<Box<dyn Fn() -> bool + Send>>,
    interrupted_at: Option<Instant>,
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
        let done = start(connection, "mqtt-sink", connect_timeout, handle).map_err(error)?;
        let topic = broker.topic.clone();
        let (interrupted, interrupted_at) = (None, None);
        Ok(MqttSink { client, topic, name, held: Vec::new(), acks, notices, done, interrupted, interrupted_at })
    }

    /// The broker's URL, without the password.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Publishes `payload` on the sink's topic, retained by the broker when `retain` (the
    /// last one a new subscriber gets at once); with 960 messages published and not yet
    /// sent, waits until no more than 512 are.
    ///
    /// # Errors
    /// Why the connection failed for good, naming the broker; that the wait was given up
    /// after an interruption ([`interrupt_when`](Self::interrupt_when)), the message not
    /// published.
    pub fn publish(&mut self, payload: Vec<u8>, retain: bool) -> Result<(), String> {
        if !self.make_room()? {
            return Err(format!("{}: stopped while waiting for the broker to take the messages", self.name));
        }
        self.send(payload, retain)
    }

    /// Hands `payload` to the client, counted already ([`make_room`](Self::make_room)).
    ///
    /// # Errors
    /// The connection ended.
    fn send(&self, payload: Vec<u8>, retain: bool) -> Result<(), String> {
        let topic = self.topic.clone();
        self.client
            .publish(topic, QoS::AtLeastOnce, retain, payload)
            .map_err(|_| format!("{}: the connection ended", self.name))
    }

    /// Lets `interrupted` (a signal received, say) end a wait for the broker: once it
    /// returns true, a publish waiting for the client's queue to drain goes on at most
    /// five seconds more, then gives up — [`publish`](Self::publish) then fails,
    /// [`send_held`](Self::send_held) keeps the messages it has not handed over, and
    /// [`flush`](Self::flush) reports them unacknowledged. Without it, a publish waits
    /// while the broker is away, however long.
    pub fn interrupt_when(&mut self, interrupted: impl Fn() -> bool + Send + 'static) {
        self.interrupted = Some(Box::new(interrupted));
    }

    /// Counts the message about to be published (see [`hand_over`](Self::hand_over)),
    /// first waiting, when [`HIGH_WATER`] messages wait in the client's queue, until no
    /// more than [`LOW_WATER`] do; false when the wait was given up after an
    /// interruption (the message not counted).
    ///
    /// # Errors
    /// The connection's failure, if it failed for good.
    fn make_room(&mut self) -> Result<bool, String> {
        while let Some(published) = self.hand_over()? {
            let drained = |_: &Acks| Counts { resolved: 0, sent: published - LOW_WATER };
            let poll = self.interrupted.is_some().then(|| Instant::now() + INTERRUPT_POLL);
            if !self.wait_for(drained, poll)? && self.given_up() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// True once [`INTERRUPT_GRACE`] has passed since the caller was first seen
    /// interrupted.
    fn given_up(&mut self) -> bool {
        if self.interrupted_at.is_none() && self.interrupted.as_ref().is_some_and(|interrupted| interrupted()) {
            self.interrupted_at = Some(Instant::now());
        }
        self.interrupted_at.is_some_and(|at| at.elapsed() >= INTERRUPT_GRACE)
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

    /// Publishes the messages held back, as [`publish`](Self::publish) does; those it
    /// has not handed over when a wait is given up after an interruption stay held.
    ///
    /// # Errors
    /// Why the connection failed for good, naming the broker (the messages not yet
    /// published stay held).
    pub fn send_held(&mut self) -> Result<(), String> {
        let mut messages = std::mem::take(&mut self.held).into_iter();
        while let Some(payload) = messages.next() {
            let room = self.make_room();
            if !matches!(room, Ok(true)) {
                self.held.push(payload);
                self.held.extend(messages);
                return room.map(drop);
            }
            if let Err(e) = self.send(payload, false) {
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
        if !self.held.is_empty() {
            return Ok(false);
        }
        let every_one = |acks: &Acks| Counts { resolved: acks.published, sent: 0 };
        self.wait_for(every_one, Some(Instant::now() + wait))
    }

    /// [`wait_for`] on this sink's counts, its errors naming the broker.
    fn wait_for(&self, target: impl FnOnce(&Acks) -> Counts, deadline: Option<Instant>) -> Result<bool, String> {
        wait_for(&self.acks, target, deadline).map_err(|message| format!("{}: {message}", self.name))
    }

    /// The next thing the network thread has to tell (the connection lost or made again).
    pub fn notice(&self) -> Option<String> {
        match self.notices.try_recv() {
            Ok(notice) => Some(format!("{}: {notice}", self.name)),
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => None,
        }
    }

    /// Waits a few seconds at most for the messages to be acknowledged, then disconnects
    /// (without waiting for the disconnection once a wait was given up: the broker is
    /// away).
    pub fn close(&mut self) {
        let _ = self.flush(CLOSE_WAIT);
        if self.client.try_disconnect().is_ok() && !self.given_up() {
            let _ = self.done.recv_timeout(CLOSE_WAIT);
        }
    }

    /// Counts the message about to be published among those a connection lost now would
    /// take — unless [`HIGH_WATER`] messages published before it wait in the client's
    /// queue: then it counts nothing and returns the messages published so far.
    ///
    /// # Errors
    /// The connection's failure, if it failed for good.
    fn hand_over(&self) -> Result<Option<u64>, String> {
        let (lock, _) = &*self.acks;
        let mut acks = lock.lock().map_err(|_| format!("{}: the network thread failed", self.name))?;
        if let Some(message) = &acks.failed {
            return Err(format!("{}: {message}", self.name));
        }
        let published = acks.published;
        if published.saturating_sub(acks.sent) >= HIGH_WATER {
            return Ok(Some(published));
        }
        acks.published += 1;
        Ok(None)
    }
}

/// Waits until the messages sent and acknowledged reach `target` (of the counts when the
/// wait begins), or `deadline` passes (then false).
///
/// # Errors
/// Why the connection failed for good.
fn wait_for(acks: &Shared, target: impl FnOnce(&Acks) -> Counts, deadline: Option<Instant>) -> Result<bool, String> {
    let failed = || "the network thread failed".to_string();
    let (lock, acked) = &**acks;
    let mut acks = lock.lock().map_err(|_| failed())?;
    let target = target(&acks);
    while !acks.reached(target) && acks.failed.is_none() {
        acks.wake_at = Some(target);
        acks = match deadline {
            None => acked.wait(acks).map_err(|_| failed())?,
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    acks.wake_at = None;
                    return Ok(false);
                }
                acked.wait_timeout(acks, left).map_err(|_| failed())?.0
            }
        };
        acks.wake_at = None;
    }
    acks.failed.clone().map_or(Ok(true), Err)
}

/// The network thread's part: counts the broker's acknowledgements into `acks`, records a
/// failure for good, and tells of a connection lost or made again.
fn count(acks: &Shared, tell: impl Fn(String), happening: Happening) -> bool {
    let (lock, acked) = &**acks;
    let update = |change: &mut dyn FnMut(&mut Acks)| {
        let due = lock.lock().map_or(true, |mut acks| {
            change(&mut acks);
            acks.wake_at.is_some_and(|target| acks.reached(target)) || acks.failed.is_some()
        });
        if due {
            acked.notify_all();
        }
    };
    match happening {
        Happening::Packet(Event::Incoming(Incoming::PubAck(_))) => update(&mut |acks| acks.count += 1),
        Happening::Packet(Event::Outgoing(Outgoing::Publish(_))) => update(&mut |acks| acks.sent += 1),
        Happening::Packet(_) => {}
        Happening::Reconnected { session_present } => {
            let mut lost = 0;
            update(&mut |acks| lost = acks.reconnected(session_present));
            tell(match lost {
                0 => "connected again".into(),
                n => format!(
                    "connected again, but the broker had not kept the session: {n} messages not acknowledged are lost"
                ),
            });
        }
        Happening::Retrying(message) => {
            update(&mut |acks| {
                acks.lost_at.get_or_insert(acks.published);
            });
            tell(message);
        }
        Happening::Failed(message) => {
            update(&mut |acks| acks.failed = Some(message.clone()));
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use std::thread;

    use rumqttc::PubAck;

    use super::*;

    fn sent() -> Happening {
        Happening::Packet(Event::Outgoing(Outgoing::Publish(1)))
    }

    fn acknowledged() -> Happening {
        Happening::Packet(Event::Incoming(Incoming::PubAck(PubAck::new(1))))
    }

    #[test]
    fn a_waiter_goes_on_once_its_counts_are_reached() {
        let acks = Shared::default();
        let shared = Arc::clone(&acks);
        let target = Counts { resolved: 2, sent: 3 };
        let (result, waited) = std::sync::mpsc::channel();
        thread::spawn(move || result.send(wait_for(&shared, |_| target, None)));
        // The counts come once it waits, without a deadline: only the network thread's
        // signal can wake it (without one, the receive below times out).
        while acks.0.lock().unwrap().wake_at.is_none() {
            thread::yield_now();
        }
        for happening in [sent(), acknowledged(), sent(), acknowledged(), sent()] {
            assert!(count(&acks, |_| {}, happening));
        }
        assert_eq!(waited.recv_timeout(Duration::from_secs(30)), Ok(Ok(true)), "the waiter was not woken");
        let counts = acks.0.lock().unwrap();
        assert_eq!((counts.sent, counts.count, counts.wake_at.is_none()), (3, 2, true));
    }

    #[test]
    fn a_lost_session_counts_what_was_on_its_way_lost_and_a_kept_one_sends_it_again() {
        for session_present in [false, true] {
            let acks = Shared::default();
            {
                let mut counts = acks.0.lock().unwrap();
                counts.published = 10;
            }
            for happening in [sent(), sent(), sent(), acknowledged()] {
                count(&acks, |_| {}, happening);
            }
            // Lost with 10 published: 1 acknowledged, 2 sent and unacknowledged, 7 queued.
            count(&acks, |_| {}, Happening::Retrying("lost".into()));
            acks.0.lock().unwrap().published = 12;
            let told = Mutex::new(Vec::new());
            count(&acks, |notice| told.lock().unwrap().push(notice), Happening::Reconnected { session_present });
            let counts = acks.0.lock().unwrap();
            let told = told.into_inner().unwrap();
            if session_present {
                // The client sends the 9 again: they count as sent once more.
                assert_eq!((counts.lost, counts.sent, counts.resolved()), (0, 1, 1));
                assert_eq!(told, ["connected again"]);
            } else {
                // The 9 are gone; the 2 published since wait in the queue.
                assert_eq!((counts.lost, counts.sent, counts.resolved()), (9, 10, 10));
                assert!(told[0].ends_with(": 9 messages not acknowledged are lost"), "{told:?}");
            }
            assert!(counts.lost_at.is_none());
        }
    }

    #[test]
    fn a_deadline_ends_the_wait_and_a_failure_wakes_the_waiter() {
        let acks = Shared::default();
        count(&acks, |_| {}, sent());
        let soon = Some(Instant::now() + Duration::from_millis(20));
        assert_eq!(wait_for(&acks, |_| Counts { resolved: 0, sent: 2 }, soon), Ok(false));
        assert_eq!(wait_for(&acks, |_| Counts { resolved: 0, sent: 1 }, soon), Ok(true));
        let shared = Arc::clone(&acks);
        let waiter = thread::spawn(move || wait_for(&shared, |_| Counts { resolved: 1, sent: 0 }, None));
        assert!(!count(&acks, |_| {}, Happening::Failed("refused".into())));
        assert_eq!(waiter.join().unwrap(), Err("refused".to_string()));
    }
}
