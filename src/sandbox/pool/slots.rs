//! The concurrency bound: worker slots, the calls waiting in line for one, and what a call that
//! gave up waiting is told.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use super::internal;
use crate::protocol::Failure;

/// Why a request to a worker did not produce a reply.
#[derive(Debug)]
pub enum RunError {
    /// The deadline passed; the worker was killed.
    Timeout,
    /// The caller cancelled; the worker was killed (or, while it waited for a slot, none ran).
    Cancelled,
    /// No worker slot came free within the queue bound; nothing ran.
    Busy(Busy),
    /// The worker failed before or while answering (crash, malformed or oversized reply).
    Worker(Failure),
}

/// What a call that gave up waiting for a worker slot saw: the answer to "how busy is it".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Busy {
    /// Requests holding a worker slot when the call gave up.
    pub running: usize,
    /// Calls that were waiting in line ahead of this one when it joined the line. (When it gives
    /// up they have all given up or got a slot too: every call waits the same bound, in order.)
    pub waiting_ahead: usize,
    /// How long the call waited.
    pub waited: Duration,
}

impl Busy {
    /// The message for the agent: how many calls were ahead and that a retry is the way on.
    pub fn message(&self) -> String {
        let running = match self.running {
            1 => "1 query is running".to_string(),
            n => format!("{n} queries are running"),
        };
        let waiting = match self.waiting_ahead {
            0 => "no other call was waiting ahead of this one".to_string(),
            1 => "1 was waiting ahead of this one".to_string(),
            n => format!("{n} were waiting ahead of this one"),
        };
        format!(
            "The server is busy: {running} and {waiting}; no worker came free within {} s, so this query did not run. Retry in a few seconds.",
            self.waited.as_secs_f64().round() as u64
        )
    }
}

/// The concurrency bound: `capacity` slots, and the calls waiting for one, in arrival order
/// (tokio's semaphore is fair, so that is also the order slots are handed out in).
///
/// A slot is free again only once its worker has exited and been reaped, not when its reply
/// is in: so at most `capacity` query workers exist at once, which the memory budget counts on
/// (`crate::sandbox::budget`).
#[derive(Debug)]
pub(super) struct Slots {
    semaphore: Arc<Semaphore>,
    capacity: usize,
    line: std::sync::Mutex<WaitLine>,
    /// Slots whose worker has replied and is being killed and reaped: each comes free within
    /// milliseconds, so a call that finds one waits for it ([`REAP_WAIT`]) even when the
    /// operator allows no queueing; those are not "other calls" holding the worker.
    pub(super) reaping: Arc<AtomicUsize>,
}

/// The longest a call waits for a slot whose worker has already replied.
pub(super) const REAP_WAIT: Duration = Duration::from_secs(2);

/// Tickets of the calls waiting for a slot.
#[derive(Debug, Default)]
struct WaitLine {
    next: u64,
    waiting: BTreeSet<u64>,
}

impl WaitLine {
    /// Join the line: the ticket and how many are ahead.
    fn join(&mut self) -> (u64, usize) {
        let ticket = self.next;
        self.next += 1;
        let ahead = self.waiting.len();
        self.waiting.insert(ticket);
        (ticket, ahead)
    }

    fn leave(&mut self, ticket: u64) {
        self.waiting.remove(&ticket);
    }
}

/// A place in the line, left however the wait ends (slot, bound, cancel, or the caller dropped).
struct InLine<'a> {
    line: &'a std::sync::Mutex<WaitLine>,
    ticket: u64,
}

impl Drop for InLine<'_> {
    fn drop(&mut self) {
        if let Ok(mut line) = self.line.lock() {
            line.leave(self.ticket);
        }
    }
}

impl Slots {
    pub(super) fn new(capacity: usize) -> Slots {
        let capacity = capacity.max(1);
        Slots {
            semaphore: Arc::new(Semaphore::new(capacity)),
            reaping: Arc::new(AtomicUsize::new(0)),
            capacity,
            line: std::sync::Mutex::new(WaitLine::default()),
        }
    }

    /// Wait for a slot at most `queue_timeout`. Only the run that follows counts against the
    /// call's deadline: a call that waited in line is not told it "timed out".
    pub(super) async fn acquire(
        &self,
        queue_timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<OwnedSemaphorePermit, RunError> {
        // A free slot with nobody waiting for it is taken without joining the line.
        if let Ok(permit) = Arc::clone(&self.semaphore).try_acquire_owned() {
            return Ok(permit);
        }
        let bound = if self.reaping.load(Ordering::SeqCst) > 0 {
            queue_timeout.max(REAP_WAIT)
        } else {
            queue_timeout
        };
        let waiting_since = tokio::time::Instant::now();
        let (ticket, waiting_ahead) = self
            .line
            .lock()
            .map(|mut line| line.join())
            .unwrap_or((0, 0));
        let _in_line = InLine {
            line: &self.line,
            ticket,
        };
        tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(RunError::Cancelled),
            permit = Arc::clone(&self.semaphore).acquire_owned() => permit.map_err(|_| RunError::Worker(internal("the worker pool is shut down".into()))),
            _ = tokio::time::sleep(bound) => Err(RunError::Busy(Busy {
                running: self.capacity.saturating_sub(self.semaphore.available_permits()),
                waiting_ahead,
                waited: waiting_since.elapsed(),
            })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: Duration = Duration::from_secs(30);

    #[test]
    fn the_line_counts_who_is_ahead_and_forgets_who_left() {
        let mut line = WaitLine::default();
        let (a, ahead_a) = line.join();
        let (b, ahead_b) = line.join();
        assert_eq!((ahead_a, ahead_b), (0, 1));
        line.leave(a);
        let (_, ahead_c) = line.join();
        assert_eq!(ahead_c, 1, "only b is still waiting");
        line.leave(b);
        line.leave(b);
        assert_eq!(line.waiting.len(), 1);
    }

    #[test]
    fn the_busy_message_names_the_calls_ahead_and_says_to_retry() {
        let busy = Busy {
            running: 4,
            waiting_ahead: 3,
            waited: Duration::from_millis(10_020),
        };
        assert_eq!(
            busy.message(),
            "The server is busy: 4 queries are running and 3 were waiting ahead of this one; no worker came free within 10 s, so this query did not run. Retry in a few seconds."
        );
        let one = Busy {
            running: 1,
            waiting_ahead: 1,
            waited: Duration::from_secs(2),
        }
        .message();
        assert!(
            one.contains("1 query is running and 1 was waiting ahead"),
            "{one}"
        );
        let none = Busy {
            running: 2,
            waiting_ahead: 0,
            waited: Duration::from_secs(2),
        }
        .message();
        assert!(
            none.contains("2 queries are running and no other call was waiting"),
            "{none}"
        );
        assert!(!none.to_lowercase().contains("timed out"), "{none}");
    }

    #[tokio::test]
    async fn a_free_slot_is_taken_at_once_even_with_no_queue_time() {
        let slots = Slots::new(2);
        let cancel = CancellationToken::new();
        let _a = slots
            .acquire(Duration::ZERO, &cancel)
            .await
            .expect("a free slot");
        let _b = slots
            .acquire(Duration::ZERO, &cancel)
            .await
            .expect("a free slot");
        match slots.acquire(Duration::ZERO, &cancel).await {
            Err(RunError::Busy(busy)) => assert_eq!(busy.running, 2),
            other => panic!("expected busy, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_call_waiting_past_the_bound_is_busy_with_those_ahead_counted() {
        let slots = Slots::new(1);
        let cancel = CancellationToken::new();
        let _running = slots.acquire(LONG, &cancel).await.expect("a free slot");
        // `join!` polls in order: the first waiter joins the line first.
        let (first, second) = tokio::join!(
            slots.acquire(Duration::from_millis(400), &cancel),
            slots.acquire(Duration::from_millis(100), &cancel),
        );
        match second {
            Err(RunError::Busy(busy)) => {
                assert_eq!((busy.running, busy.waiting_ahead), (1, 1));
                assert!(busy.waited >= Duration::from_millis(100), "{busy:?}");
            }
            other => panic!("expected busy, got {other:?}"),
        }
        match first {
            Err(RunError::Busy(busy)) => assert_eq!((busy.running, busy.waiting_ahead), (1, 0)),
            other => panic!("expected busy, got {other:?}"),
        }
        assert!(slots.line.lock().unwrap().waiting.is_empty());
    }

    #[tokio::test]
    async fn a_slot_freed_in_time_goes_to_the_waiting_call() {
        let slots = Slots::new(1);
        let cancel = CancellationToken::new();
        let running = slots.acquire(LONG, &cancel).await.expect("a free slot");
        let (waiter, ()) = tokio::join!(slots.acquire(LONG, &cancel), async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            drop(running);
        });
        assert!(waiter.is_ok());
        assert!(slots.line.lock().unwrap().waiting.is_empty());
    }

    #[tokio::test]
    async fn cancelling_a_waiting_call_answers_cancelled_at_once() {
        let slots = Slots::new(1);
        let cancel = CancellationToken::new();
        let _running = slots
            .acquire(LONG, &CancellationToken::new())
            .await
            .expect("a free slot");
        let started = std::time::Instant::now();
        let (waiter, ()) = tokio::join!(slots.acquire(LONG, &cancel), async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            cancel.cancel();
        });
        assert!(matches!(waiter, Err(RunError::Cancelled)), "{waiter:?}");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(slots.line.lock().unwrap().waiting.is_empty());
    }
}
