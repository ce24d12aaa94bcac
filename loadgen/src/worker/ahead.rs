//! Waking ahead of a scheduled instant: a sleeping event loop is woken by its timer some tens of
//! microseconds late (the idle CPU's wake-up, on a VM the host's), and an open-loop event that
//! starts late carries that lateness in its latency (which counts from the intended start).
//! The loop asks the kernel to wake it by an estimate of its own lateness early and waits the
//! rest on the clock; the estimate is kept below the typical lateness so that rest is short.

use std::time::{Duration, Instant};

/// Never ask for a wake-up more than this much early (and so never spin longer).
const MAX_LEAD: Duration = Duration::from_micros(50);

/// How much of the observed mean lateness to wake ahead by: less than all of it, so that a
/// wake-up that comes sooner than usual leaves only a short wait on the clock.
const LEAD_FRACTION: f64 = 0.75;

/// Weight of a new observation in the running mean of the lateness.
const GAIN: f64 = 1.0 / 16.0;

/// The running estimate of how late the loop's timed waits return.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct WakeAhead {
    /// Mean lateness of timed wake-ups, in nanoseconds.
    mean_ns: f64,
}

impl WakeAhead {
    /// The instant to ask the kernel to wake at, for something due at `due`.
    pub(super) fn ask(&self, due: Instant) -> Instant {
        due.checked_sub(self.lead()).unwrap_or(due)
    }

    /// How early [`Self::ask`] wakes.
    fn lead(&self) -> Duration {
        Duration::from_nanos((self.mean_ns * LEAD_FRACTION) as u64).min(MAX_LEAD)
    }

    /// Records a timed wait that asked to return at `asked` and returned at `woke` (a wait that
    /// returned earlier, for I/O, says nothing about the timer and is ignored).
    pub(super) fn observe(&mut self, asked: Instant, woke: Instant) {
        if let Some(late) = woke.checked_duration_since(asked) {
            // a return far past the ask (the loop was descheduled) is not the timer's lateness
            let late = late.min(4 * MAX_LEAD).as_nanos() as f64;
            self.mean_ns += GAIN * (late - self.mean_ns);
        }
    }

    /// Waits on the clock until `due` if it is at most the lead away (a wake-up that came ahead
    /// of time, as asked); returns the time read last.
    pub(super) fn finish(&self, due: Instant, now: Instant) -> Instant {
        let mut now = now;
        if due > now && due - now <= self.lead() {
            while now < due {
                std::hint::spin_loop();
                now = Instant::now();
            }
        }
        now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wakes_ahead_by_part_of_the_observed_lateness_and_no_more_than_the_cap() {
        let mut w = WakeAhead::default();
        let t0 = Instant::now();
        let due = t0 + Duration::from_millis(5);
        assert_eq!(w.ask(due), due, "no observation yet: no lead");
        for _ in 0..200 {
            w.observe(t0, t0 + Duration::from_micros(20));
        }
        let lead = due - w.ask(due);
        assert!(
            lead > Duration::from_micros(14) && lead <= Duration::from_micros(15),
            "{lead:?}"
        );
        // an early return (I/O) leaves the estimate alone
        w.observe(t0 + Duration::from_micros(10), t0);
        assert_eq!(due - w.ask(due), lead);
        for _ in 0..200 {
            w.observe(t0, t0 + Duration::from_millis(2));
        }
        assert_eq!(due - w.ask(due), MAX_LEAD);
    }

    #[test]
    fn finishes_on_the_clock_only_within_the_lead() {
        let mut w = WakeAhead::default();
        let t0 = Instant::now();
        for _ in 0..200 {
            w.observe(t0, t0 + Duration::from_micros(40));
        }
        let now = Instant::now();
        let due = now + Duration::from_micros(20);
        assert!(w.finish(due, now) >= due);
        let far = Instant::now() + Duration::from_millis(1);
        assert!(
            w.finish(far, Instant::now()) < far,
            "too far ahead: no spin"
        );
    }
}
