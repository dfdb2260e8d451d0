//! A bounded queue from one thread to another that wakes the other side once per batch.
//!
//! A channel that hands items over one at a time makes two threads take turns item by item
//! when one is faster: the producer fills the channel and sleeps, the consumer takes one
//! item and wakes it, the producer puts one and sleeps again — a wake-up, and on a busy
//! machine two context switches, per item. Here the consumer takes the whole queue at once
//! into a batch of its own, and a producer that found the queue full is woken only then, so
//! a saturated hand-over costs one wake-up per batch of up to [`handoff`]'s `capacity`
//! items. A consumer that finds nothing waits for the next item and is woken by it (an
//! idle consumer costs one wake-up per item, as before, and no latency).
//!
//! Memory: up to `2 × capacity` items, the queue and the consumer's batch.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The producing end.
pub struct Giver<T> {
    shared: Arc<Shared<T>>,
}

/// The consuming end.
pub struct Taker<T> {
    shared: Arc<Shared<T>>,
    /// The items taken from the queue and not yet handed out, in order.
    batch: VecDeque<T>,
}

/// Why [`Taker::take`] gave no item.
#[derive(Debug, PartialEq, Eq)]
pub enum Empty {
    /// Nothing came within the wait.
    Timeout,
    /// The giver is gone and every item was taken.
    Disconnected,
}

struct Shared<T> {
    state: Mutex<State<T>>,
    /// Signalled when an item comes to a waiting taker, or the giver goes.
    ready: Condvar,
    /// Signalled when a waiting giver has room again, or the taker goes.
    room: Condvar,
    capacity: usize,
}

struct State<T> {
    queue: VecDeque<T>,
    taker_waits: bool,
    giver_waits: bool,
    giver_gone: bool,
    taker_gone: bool,
}

/// A queue of at most `capacity` items (at least one) between a [`Giver`] and a [`Taker`].
pub fn handoff<T>(capacity: usize) -> (Giver<T>, Taker<T>) {
    let capacity = capacity.max(1);
    let state = State {
        queue: VecDeque::with_capacity(capacity),
        taker_waits: false,
        giver_waits: false,
        giver_gone: false,
        taker_gone: false,
    };
    let shared = Arc::new(Shared { state: Mutex::new(state), ready: Condvar::new(), room: Condvar::new(), capacity });
    let taker = Taker { shared: Arc::clone(&shared), batch: VecDeque::with_capacity(capacity) };
    (Giver { shared }, taker)
}

impl<T> Shared<T> {
    /// The state; a panic of the other thread while it held the lock left it consistent
    /// (every change under the lock is a single push, swap or flag).
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T> Giver<T> {
    /// Puts `item` in the queue, waiting while the queue is full; gives it back when the
    /// taker is gone.
    ///
    /// # Errors
    /// The item, when the taker is gone.
    pub fn give(&self, item: T) -> Result<(), T> {
        let shared = &*self.shared;
        let mut state = shared.lock();
        while state.queue.len() >= shared.capacity && !state.taker_gone {
            state.giver_waits = true;
            state = shared.room.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        if state.taker_gone {
            return Err(item);
        }
        state.queue.push_back(item);
        if state.taker_waits {
            state.taker_waits = false;
            shared.ready.notify_one();
        }
        Ok(())
    }
}

impl<T> Drop for Giver<T> {
    fn drop(&mut self) {
        self.shared.lock().giver_gone = true;
        self.shared.ready.notify_one();
    }
}

impl<T> Taker<T> {
    /// Whether items taken from the queue wait to be handed out (more are ready without
    /// waiting; false does not say the queue is empty).
    pub fn has_more(&self) -> bool {
        !self.batch.is_empty()
    }

    /// The next item, waiting at most `wait` for one.
    ///
    /// # Errors
    /// [`Empty::Timeout`] when none came within `wait`; [`Empty::Disconnected`] when the
    /// giver is gone and every item it gave was taken.
    pub fn take(&mut self, wait: Duration) -> Result<T, Empty> {
        if let Some(item) = self.batch.pop_front() {
            return Ok(item);
        }
        let shared = &*self.shared;
        // A wait too long to add to the clock is a wait without end.
        let deadline = Instant::now().checked_add(wait);
        let mut state = shared.lock();
        while state.queue.is_empty() {
            if state.giver_gone {
                return Err(Empty::Disconnected);
            }
            let left = deadline.map_or(Duration::MAX, |d| d.saturating_duration_since(Instant::now()));
            if left.is_zero() {
                return Err(Empty::Timeout);
            }
            state.taker_waits = true;
            state = shared.ready.wait_timeout(state, left).unwrap_or_else(PoisonError::into_inner).0;
            state.taker_waits = false;
        }
        std::mem::swap(&mut self.batch, &mut state.queue);
        if state.giver_waits {
            state.giver_waits = false;
            shared.room.notify_one();
        }
        drop(state);
        self.batch.pop_front().ok_or(Empty::Timeout)
    }
}

impl<T> Drop for Taker<T> {
    fn drop(&mut self) {
        self.shared.lock().taker_gone = true;
        self.shared.room.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;

    #[test]
    fn items_arrive_in_order_through_a_full_queue() {
        let (giver, mut taker) = handoff::<u32>(4);
        let producer = thread::spawn(move || {
            for i in 0..1000 {
                giver.give(i).unwrap();
            }
        });
        let got: Vec<u32> = (0..1000).map(|_| taker.take(Duration::from_secs(10)).unwrap()).collect();
        assert_eq!(got, (0..1000).collect::<Vec<_>>());
        producer.join().unwrap();
        assert_eq!(taker.take(Duration::from_secs(10)), Err(Empty::Disconnected));
    }

    #[test]
    fn a_taker_waits_the_time_given_then_gets_a_late_item() {
        let (giver, mut taker) = handoff::<u32>(2);
        assert_eq!(taker.take(Duration::from_millis(20)), Err(Empty::Timeout));
        let producer = thread::spawn(move || {
            thread::sleep(Duration::from_millis(30));
            giver.give(7).unwrap();
        });
        assert_eq!(taker.take(Duration::from_secs(10)), Ok(7));
        producer.join().unwrap();
        assert_eq!(taker.take(Duration::ZERO), Err(Empty::Disconnected));
    }

    #[test]
    fn a_giver_waiting_on_a_full_queue_gets_its_item_back_when_the_taker_goes() {
        let (giver, taker) = handoff::<u32>(1);
        giver.give(1).unwrap();
        let producer = thread::spawn(move || giver.give(2));
        thread::sleep(Duration::from_millis(20));
        drop(taker);
        assert_eq!(producer.join().unwrap(), Err(2));
    }

    #[test]
    fn items_given_before_the_giver_went_are_still_taken() {
        let (giver, mut taker) = handoff::<u32>(8);
        for i in 0..3 {
            giver.give(i).unwrap();
        }
        drop(giver);
        let got: Vec<_> = (0..4).map(|_| taker.take(Duration::ZERO)).collect();
        assert_eq!(got, vec![Ok(0), Ok(1), Ok(2), Err(Empty::Disconnected)]);
    }
}
