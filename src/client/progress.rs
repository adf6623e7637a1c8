//! Calls that wait on terms of their own: a deadline other than every operation's, and the
//! progress a server reports when asked (`_meta.progressToken`), which restarts that deadline
//! up to a hard maximum, as the spec's timeouts allow.

use alloc::string::String;
use core::time::Duration;

use super::{Client, InFlight};
use crate::event::{Event, OpId, ServerNotification};
use crate::time::Instant;

/// How one call waits, where the [`Limits::operation_timeout`](crate::Limits) every operation
/// gets does not suit it: a tool that takes minutes, or one that must answer at once.
///
/// ```
/// use core::time::Duration;
/// use mcp_sansio::CallOptions;
///
/// // Ten seconds of silence at most, two minutes in all, the server reporting as it goes.
/// let options = CallOptions::new()
///     .timeout(Duration::from_secs(10))
///     .progress_up_to(Duration::from_secs(120));
/// assert_eq!(options.timeout, Some(Duration::from_secs(10)));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallOptions {
    /// How long the call waits for its answer from when it is sent; with progress, from the
    /// last report that advanced. `None`: [`Limits::operation_timeout`](crate::Limits).
    pub timeout: Option<Duration>,
    /// Ask the server to report progress: the request carries a `progressToken` in its
    /// `_meta`, each report arrives as an [`Event::Progress`] of the call's operation (and is
    /// counted against no request's
    /// [`notifications_before_answer`](crate::Limits::notifications_before_answer)), and
    /// each report whose `progress` is higher than the last restarts
    /// [`timeout`](Self::timeout); but the call never waits longer than this in all, from
    /// when it was sent, however the server reports. `None`: no progress is asked for, and
    /// the call has one deadline.
    pub progress_up_to: Option<Duration>,
}

impl CallOptions {
    /// A call as every operation waits: [`Limits::operation_timeout`](crate::Limits), no
    /// progress asked for.
    #[must_use]
    pub const fn new() -> Self {
        CallOptions {
            timeout: None,
            progress_up_to: None,
        }
    }

    /// With [`timeout`](Self::timeout) set.
    #[must_use]
    pub const fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// With [`progress_up_to`](Self::progress_up_to) set.
    #[must_use]
    pub const fn progress_up_to(mut self, most: Duration) -> Self {
        self.progress_up_to = Some(most);
        self
    }
}

/// A call that asked for progress: how a report moves its deadline.
#[derive(Debug)]
pub(super) struct Progress {
    /// How long the call may wait after a report that advanced.
    every: Duration,
    /// The hard maximum: no report moves the deadline past it.
    until: Instant,
    /// The last `progress` that advanced.
    last: Option<f64>,
}

/// When a call sent at `now` under `options` must be answered by, and how progress moves
/// that, where `default` is every operation's timeout.
pub(super) fn waiting(
    options: CallOptions,
    default: Duration,
    now: Instant,
) -> (Instant, Option<Progress>) {
    let every = options.timeout.unwrap_or(default);
    let deadline = now.saturating_add(every);
    match options.progress_up_to {
        None => (deadline, None),
        Some(most) => {
            let until = now.saturating_add(most);
            let progress = Progress {
                every,
                until,
                last: None,
            };
            (deadline.min(until), Some(progress))
        }
    }
}

/// The token a call of operation `op` asks progress under: the operation's number, which
/// stays the call's across every request it sends (a round with input, a request sent again
/// under a new id).
pub(super) fn token(op: OpId) -> Option<i64> {
    i64::try_from(op.0).ok()
}

/// `meta` (an object's compact text, or none) with `progressToken` first.
pub(super) fn with_token(token: i64, meta: Option<&str>) -> String {
    let rest = meta
        .and_then(|meta| meta.strip_prefix('{'))
        .filter(|rest| *rest != "}");
    match rest {
        Some(rest) => alloc::format!("{{\"progressToken\":{token},{rest}"),
        None => alloc::format!("{{\"progressToken\":{token}}}"),
    }
}

impl Client {
    /// A progress report: where its token is a call's of this client that asked for
    /// progress, it becomes that call's [`Event::Progress`], moves its deadline if it
    /// advanced, and is taken (`None`); anything else is given back.
    pub(super) fn own_progress(
        &mut self,
        notification: ServerNotification,
    ) -> Option<ServerNotification> {
        let ServerNotification::Progress {
            token,
            progress,
            total,
            message,
        } = &notification
        else {
            return Some(notification);
        };
        // Integers only, written as integers: `"3"` or `3.0` is no token of this client's.
        let Ok(token) = token.as_str().parse::<i64>() else {
            return Some(notification);
        };
        let now = self.now;
        // One operation waits on one request at a time, so the token names one at most;
        // only a call that asked for progress takes the report.
        let Some(request) = self.of_token(token) else {
            return Some(notification);
        };
        let Some(wait) = &mut request.progress else {
            return Some(notification);
        };
        if wait.last.is_none_or(|last| *progress > last) {
            wait.last = Some(*progress);
            let next = now.saturating_add(wait.every).min(wait.until);
            request.deadline = request.deadline.max(next);
        }
        let op = request.op;
        self.events.push_back(Event::Progress {
            op,
            progress: *progress,
            total: *total,
            message: message.clone(),
        });
        None
    }

    /// The request in flight, or the call waiting for the application's answers, of the
    /// operation whose progress token is `token`.
    fn of_token(&mut self, token: i64) -> Option<&mut InFlight> {
        let ours = |request: &&mut InFlight| self::token(request.op) == Some(token);
        let in_flight = self.requests.iter_mut().map(|(_, request)| request);
        in_flight.chain(self.parked.iter_mut()).find(ours)
    }
}
