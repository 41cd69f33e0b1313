//! What records cost a session: time in proportion to their bytes, so that no session writes the
//! log faster than [`CHARGE_BYTES_PER_SECOND`] past a burst of [`CHARGE_BURST_BYTES`].
//!
//! A GCRA: the session's records are paid for at `paid_until`; each record moves it by its bytes
//! at the rate, and the session waits whatever lies beyond the burst. The transport reads no
//! line while the session owes anything, and every record comes from a line: a request other
//! than a tool call is recorded as it is read, a rejected line as it is rejected, and a tool call
//! when it ends, so a tool call is charged [`MAX_RECORD_BYTES`] as its line is read (however
//! many calls are then in flight, none is admitted unpaid) and refunded the difference when its
//! record is written. Hence the bound: a session's records take at most
//! `CHARGE_BURST_BYTES + CHARGE_BYTES_PER_SECOND × t + MAX_RECORD_BYTES` bytes after `t` seconds.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::record::MAX_RECORD_BYTES;

/// What a record costs the session: one second per this many bytes, past the burst. A refused
/// call's record is about 4 KB at most, so a flood of them is answered some 16 times a second;
/// an answered call's record is usually under 1 KB.
pub const CHARGE_BYTES_PER_SECOND: u64 = 64 * 1024;
/// Bytes of records a session may write before it waits (at [`CHARGE_BYTES_PER_SECOND`], four
/// seconds' worth): an agent's ordinary work never waits.
pub const CHARGE_BURST_BYTES: u64 = 256 * 1024;

/// One session's account.
#[derive(Debug)]
pub(super) struct Charge {
    account: Mutex<Account>,
}

#[derive(Debug)]
struct Account {
    /// When the session's records are paid for (the GCRA's theoretical arrival time).
    paid_until: Instant,
    /// Tool calls charged [`MAX_RECORD_BYTES`] as their line was read whose record is not
    /// written yet.
    reserved_calls: u64,
}

impl Charge {
    pub(super) fn new() -> Charge {
        Charge {
            account: Mutex::new(Account {
                paid_until: Instant::now(),
                reserved_calls: 0,
            }),
        }
    }

    fn account(&self) -> std::sync::MutexGuard<'_, Account> {
        self.account
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// What the session owes now.
    pub(super) fn pending(&self) -> Duration {
        owed(self.account().paid_until, Instant::now())
    }

    /// Charge a tool call whose line was just read the most its record can take; what the
    /// session owes now.
    pub(super) fn reserve_call(&self) -> Duration {
        let now = Instant::now();
        let mut account = self.account();
        account.paid_until = account.paid_until.max(now) + cost(MAX_RECORD_BYTES as u64);
        account.reserved_calls += 1;
        owed(account.paid_until, now)
    }

    /// Charge a record of `bytes`; `settles_call`: it is a tool call's record, whose line may
    /// have been charged already ([`Charge::reserve_call`]), and then only the difference is
    /// settled (a refund: a record never takes more than [`MAX_RECORD_BYTES`]). What the
    /// session owes now.
    pub(super) fn charge(&self, bytes: u64, settles_call: bool) -> Duration {
        let now = Instant::now();
        let mut account = self.account();
        if settles_call && account.reserved_calls > 0 {
            account.reserved_calls -= 1;
            let reserved = MAX_RECORD_BYTES as u64;
            if bytes <= reserved {
                let refund = cost(reserved - bytes);
                // Never below now: a refund pays back what was charged, it earns no credit.
                account.paid_until = account
                    .paid_until
                    .checked_sub(refund)
                    .map_or(now, |earlier| earlier.max(now));
            } else {
                account.paid_until = account.paid_until.max(now) + cost(bytes - reserved);
            }
        } else {
            account.paid_until = account.paid_until.max(now) + cost(bytes);
        }
        owed(account.paid_until, now)
    }
}

/// The time `bytes` cost at [`CHARGE_BYTES_PER_SECOND`].
fn cost(bytes: u64) -> Duration {
    Duration::from_secs_f64(bytes as f64 / CHARGE_BYTES_PER_SECOND as f64)
}

/// What a session still owes at `now` when its records are paid for at `paid_until`.
fn owed(paid_until: Instant, now: Instant) -> Duration {
    paid_until
        .saturating_duration_since(now)
        .saturating_sub(cost(CHARGE_BURST_BYTES))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_the_burst_nothing_is_owed_and_past_it_every_byte_is() {
        let charge = Charge::new();
        let record = 4096;
        let within = CHARGE_BURST_BYTES / record;
        for _ in 0..within {
            assert_eq!(charge.charge(record, false), Duration::ZERO);
        }
        let mut owed = Duration::ZERO;
        for _ in 0..16 {
            owed = charge.charge(record, false);
        }
        let expected = cost(16 * record);
        assert!(owed <= expected, "{owed:?} > {expected:?}");
        assert!(owed + Duration::from_millis(200) >= expected, "{owed:?}");
        assert!(charge.pending() <= owed);
    }

    #[test]
    fn a_tool_call_is_charged_its_largest_record_when_read_and_refunded_when_recorded() {
        let charge = Charge::new();
        // Enough calls in flight to pass the burst on their reservations alone.
        let calls = CHARGE_BURST_BYTES / MAX_RECORD_BYTES as u64 + 8;
        let mut owed = Duration::ZERO;
        for _ in 0..calls {
            owed = charge.reserve_call();
        }
        assert!(owed > Duration::ZERO, "the reservations passed no burst");
        // Their records are small: each settles at its own bytes.
        for _ in 0..calls {
            charge.charge(500, true);
        }
        assert_eq!(charge.pending(), Duration::ZERO);
        // A record with no reservation (a call no line announced) pays its own bytes; a
        // reservation is never settled twice.
        let before = charge.charge(0, false);
        let after = charge.charge(CHARGE_BURST_BYTES + 65_536, true);
        assert!(after >= before + Duration::from_millis(900), "{after:?}");
    }

    #[test]
    fn a_refund_earns_no_credit() {
        let charge = Charge::new();
        charge.reserve_call();
        std::thread::sleep(Duration::from_millis(300));
        charge.charge(100, true);
        // Paid for already: the refund could not push the account into the past.
        for _ in 0..(CHARGE_BURST_BYTES / 4096) {
            assert_eq!(charge.charge(4096, false), Duration::ZERO);
        }
        assert!(charge.charge(4096 * 8, false) > Duration::ZERO);
    }
}
