//! What an application asks a server of the stateless revision (2026-07-28) to tell it of, on
//! a `subscriptions/listen` stream, and what the server agreed to.

use alloc::{string::String, vec::Vec};

use crate::event::{Event, Op, Output, SubscriptionEnded};
use crate::kept::KeptEvents;

use crate::event::ServerNotification;
use crate::json::view::{JsonRef, Object};
use crate::json::write::{write_array, write_string, ObjectWriter};
use crate::method::ListKind;

/// The changes a subscription asks to hear of: the spec's `SubscriptionFilter`. Asked with
/// [`Client::listen`](crate::Client::listen); the server's acknowledgement says which of them
/// it honours ([`Event::Subscribed`](crate::Event::Subscribed)), and nothing else that
/// arrives on the subscription reaches the application.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Subscription {
    /// `notifications/tools/list_changed`: list the tools again.
    pub tools_list_changed: bool,
    /// `notifications/prompts/list_changed`.
    pub prompts_list_changed: bool,
    /// `notifications/resources/list_changed`.
    pub resources_list_changed: bool,
    /// `notifications/resources/updated` for exactly these URIs (read them again).
    pub resources: Vec<String>,
}

impl Subscription {
    /// A subscription to changes of the tool list alone: what a host that offers a
    /// server's tools needs to keep its palette true.
    #[must_use]
    pub fn tools() -> Self {
        Subscription {
            tools_list_changed: true,
            ..Subscription::default()
        }
    }

    /// Whether it asks for nothing at all.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        !self.tools_list_changed
            && !self.prompts_list_changed
            && !self.resources_list_changed
            && self.resources.is_empty()
    }

    /// Whether `notification` is one this subscription hears: a list change it asked for,
    /// or an update of a URI it names, exactly.
    pub(crate) fn admits(&self, notification: &ServerNotification) -> bool {
        match notification {
            ServerNotification::ListChanged(ListKind::Tools) => self.tools_list_changed,
            ServerNotification::ListChanged(ListKind::Prompts) => self.prompts_list_changed,
            ServerNotification::ListChanged(ListKind::Resources) => self.resources_list_changed,
            ServerNotification::ResourceUpdated { uri } => self.resources.contains(uri),
            _ => false,
        }
    }

    /// Writes the filter's members: only what is asked, as the spec's opt-in reads.
    pub(crate) fn write(&self, filter: &mut ObjectWriter<'_>) {
        for (asked, key) in [
            (self.tools_list_changed, "toolsListChanged"),
            (self.prompts_list_changed, "promptsListChanged"),
            (self.resources_list_changed, "resourcesListChanged"),
        ] {
            if asked {
                filter.boolean(key, true);
            }
        }
        if !self.resources.is_empty() {
            filter.key("resourceSubscriptions");
            write_array(filter.out(), &self.resources, |uri, out| {
                write_string(out, uri);
            });
        }
    }

    /// What the server's acknowledgement honours of this subscription: each flag it sets
    /// `true` and each URI it names that were asked, and nothing that was not, in the order
    /// asked. `None` when `filter` is not an object.
    pub(crate) fn honoured(&self, filter: JsonRef<'_>) -> Option<Subscription> {
        let filter = filter.as_object()?;
        let set = |key: &str| filter.get(key).and_then(JsonRef::as_bool) == Some(true);
        // Sorted, so that a long list costs a search per URI asked, not a scan.
        let mut named: Vec<String> = filter
            .get("resourceSubscriptions")
            .and_then(JsonRef::as_array)
            .map(|uris| {
                uris.filter_map(|uri| uri.as_str().map(alloc::borrow::Cow::into_owned))
                    .collect()
            })
            .unwrap_or_default();
        named.sort_unstable();
        Some(Subscription {
            tools_list_changed: self.tools_list_changed && set("toolsListChanged"),
            prompts_list_changed: self.prompts_list_changed && set("promptsListChanged"),
            resources_list_changed: self.resources_list_changed && set("resourcesListChanged"),
            resources: self
                .resources
                .iter()
                .filter(|uri| named.binary_search(uri).is_ok())
                .cloned()
                .collect(),
        })
    }
}

/// The subscription a notification of the server's names in
/// `_meta["io.modelcontextprotocol/subscriptionId"]`: `None` when it names none, else
/// `Some` of the integer id of the `subscriptions/listen` request it names, or `Some(None)`
/// when it names something no request of this client's could be (`"3"`, `3.0`).
pub(crate) fn subscription_of(params: &Object<'_>) -> Option<Option<i64>> {
    let id = params
        .get("_meta")?
        .as_object()?
        .get("io.modelcontextprotocol/subscriptionId")?;
    Some(integer_id(id))
}

/// `value` as one of this client's request ids, read as strictly as a response's id:
/// `"3"`, `3.0`, `3e0` and `true` are none.
pub(crate) fn integer_id(value: JsonRef<'_>) -> Option<i64> {
    let text = value.text();
    // Validated JSON: a number without a fraction or exponent is all digits, after a sign.
    if text.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        text.parse().ok()
    } else {
        None
    }
}

/// A subscription a blocking driver's `listen` started and saw acknowledged: its operation,
/// to cancel it or tell its end among the events, and what the server honours.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listening {
    /// The subscription's operation: it ends with an [`Event::Finished`] among the
    /// driver's events.
    pub op: Op<SubscriptionEnded>,
    /// What the server honours of what was asked.
    pub honoured: Subscription,
}

impl Listening {
    /// The subscription `op`, as a driver found it: acknowledged, honouring `honoured`, or
    /// ended before any acknowledgement (`None`): then it honours nothing, and its end is put
    /// back among `events` for the application to see there.
    pub fn new(
        op: Op<SubscriptionEnded>,
        honoured: Option<Subscription>,
        events: &mut KeptEvents,
    ) -> Self {
        let honoured = honoured.unwrap_or_else(|| {
            events.push(Event::Finished {
                op: op.id(),
                outcome: Ok(Output::Listen(SubscriptionEnded)),
            });
            Subscription::default()
        });
        Listening { op, honoured }
    }
}
