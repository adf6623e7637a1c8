//! Subscriptions: a `subscriptions/listen` request (2026-07-28), acknowledged first, then
//! standing with no deadline until the server ends it or the application cancels it; and
//! `resources/subscribe` and `resources/unsubscribe` (the handshake revisions), each answered
//! at once with an empty result, as `logging/setLevel` is.

use crate::event::{Output, SubscriptionEnded};
use crate::json::view::Object;
use crate::subscription::Subscription;

use super::{Context, Machine, Step};

/// A subscription: what was asked, and once acknowledged, what the server honours.
#[derive(Debug)]
pub(crate) struct Listen {
    pub(crate) asked: Subscription,
    /// `None` until the acknowledgement; the request has its deadline until then, and none
    /// after.
    pub(crate) honoured: Option<Subscription>,
}

impl Listen {
    pub(crate) fn new(asked: Subscription) -> Self {
        Listen {
            asked,
            honoured: None,
        }
    }
}

impl Machine for Listen {
    /// The result ends the subscription on purpose (the server closing it, as at shutdown).
    fn on_result(&mut self, _result: &Object<'_>, _ctx: &Context<'_>) -> Step {
        Step::Done(Output::Listen(SubscriptionEnded))
    }
}

/// A request whose any result is the server's yes: `resources/subscribe`,
/// `resources/unsubscribe`, `logging/setLevel`.
#[derive(Debug)]
pub(crate) struct Acknowledged;

impl Machine for Acknowledged {
    fn on_result(&mut self, _result: &Object<'_>, _ctx: &Context<'_>) -> Step {
        Step::Done(Output::Acknowledged)
    }
}
