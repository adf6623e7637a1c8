//! Time as a value the caller passes in.

use core::time::Duration;

/// A point in time: milliseconds since an origin the caller chooses.
///
/// The core never reads a clock. A transport passes `Instant`s from its own monotonic clock
/// (for example milliseconds since it started); a test passes whatever it likes and moves
/// time by hand. Arithmetic saturates, so no input can overflow it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant(u64);

impl Instant {
    /// The origin.
    pub const ZERO: Instant = Instant(0);

    /// The instant `millis` milliseconds after the origin.
    pub const fn from_millis(millis: u64) -> Self {
        Instant(millis)
    }

    /// Milliseconds since the origin.
    pub const fn as_millis(self) -> u64 {
        self.0
    }

    /// This instant plus `duration`, saturating at the far future.
    pub fn saturating_add(self, duration: Duration) -> Self {
        let millis = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
        Instant(self.0.saturating_add(millis))
    }

    /// How long after `earlier` this instant is; zero if it is not after it.
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration::from_millis(self.0.saturating_sub(earlier.0))
    }
}
