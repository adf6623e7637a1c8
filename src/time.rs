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

    /// The instant `at` is on a clock whose origin is `origin`, both read from std's
    /// monotonic clock by the caller (the core reads no clock itself); an `at` before
    /// `origin` is the origin.
    #[cfg(feature = "std")]
    pub fn from_std(origin: std::time::Instant, at: std::time::Instant) -> Self {
        let millis = at.saturating_duration_since(origin).as_millis();
        Instant(u64::try_from(millis).unwrap_or(u64::MAX))
    }

    /// How long after `earlier` this instant is; zero if it is not after it.
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration::from_millis(self.0.saturating_sub(earlier.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "std")]
    #[test]
    fn std_instants_become_whole_milliseconds_since_the_origin() {
        let origin = std::time::Instant::now();
        let later = origin + Duration::from_micros(2_999_999);
        assert_eq!(
            Instant::from_std(origin, later),
            Instant::from_millis(2_999)
        );
        assert_eq!(Instant::from_std(later, origin), Instant::ZERO);
    }
}
