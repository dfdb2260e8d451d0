//! SIGINT and SIGTERM as a flag the streaming loop checks between records (and a
//! broker's sink while it waits for the broker, [`Signals::flag`]).
//!
//! The handlers (signal-hook) only store the signal's number; the loop then writes the
//! final checkpoint and model and exits with the conventional code 128 + signal (130,
//! 143). A second signal of either kind ends the process at once with that code, for a
//! user who does not want to wait.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::flag;

/// The signals received so far.
pub struct Signals {
    received: Arc<AtomicUsize>,
}

impl Signals {
    /// Installs the handlers for SIGINT and SIGTERM.
    pub fn install() -> io::Result<Self> {
        let received = Arc::new(AtomicUsize::new(0));
        let pending = Arc::new(AtomicBool::new(false));
        for signal in [SIGINT, SIGTERM] {
            // Handlers run in the order registered: the shutdown sees the flag as the
            // previous signal left it.
            flag::register_conditional_shutdown(signal, 128 + signal, Arc::clone(&pending))?;
            flag::register(signal, Arc::clone(&pending))?;
            flag::register_usize(signal, Arc::clone(&received), signal as usize)?;
        }
        Ok(Signals { received })
    }

    /// A check, for other parts of the process, of whether a signal was received.
    pub fn flag(&self) -> impl Fn() -> bool + Send + 'static {
        let received = Arc::clone(&self.received);
        move || received.load(Ordering::SeqCst) != 0
    }

    /// The last signal received, if any.
    pub fn received(&self) -> Option<i32> {
        match self.received.load(Ordering::SeqCst) {
            0 => None,
            signal => i32::try_from(signal).ok(),
        }
    }
}

/// The signal's name for messages.
pub fn name(signal: i32) -> &'static str {
    match signal {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}
