//! Subscriptions. In 2026-07-28, what the server sends on a `subscriptions/listen` request
//! is bound to it by its `_meta` subscription id, and only what the server acknowledged, of
//! what the application asked, reaches the application. In the handshake revisions,
//! `resources/subscribe` and `resources/unsubscribe` ask for a resource's updates, which
//! then come unasked.

use super::Client;
use crate::error::{Misuse, ProtocolViolation};
use crate::event::{Event, Op, Output, ServerNotification, SubscriptionEnded};
use crate::json::view::Object;
use crate::json::write::ObjectWriter;
use crate::json::RawObject;
use crate::message::Notification;
use crate::method::{ListKind, Method};
use crate::ops::listen::{Acknowledged, Listen};
use crate::ops::Operation;
use crate::subscription::{integer_id, subscription_of, Subscription};
use crate::time::Instant;
use crate::version::Era;

/// The notification that acknowledges a subscription.
const ACKNOWLEDGED: &str = "notifications/subscriptions/acknowledged";

/// Whether a notification of `method` belongs to subscriptions in 2026-07-28: the
/// acknowledgement and the changes a subscription may ask for.
fn on_subscriptions(method: &str) -> bool {
    matches!(
        method,
        ACKNOWLEDGED
            | "notifications/tools/list_changed"
            | "notifications/prompts/list_changed"
            | "notifications/resources/list_changed"
            | "notifications/resources/updated"
    )
}

impl Client {
    /// Subscribes to the changes `subscription` asks for, in a session of 2026-07-28: sends
    /// `subscriptions/listen`, whose answer is a stream that lasts. Until the server
    /// acknowledges it the operation has its one deadline, like any other; then
    /// [`Event::Subscribed`] says what the server honours, and the subscription stands with
    /// no deadline, its notifications counted against no request. Each change it honours
    /// arrives as [`Event::Notification`]
    /// ([`ListChanged`](ServerNotification::ListChanged),
    /// [`ResourceUpdated`](ServerNotification::ResourceUpdated)); whatever else comes tagged
    /// with it (a change not asked for or not honoured, anything before the acknowledgement)
    /// is dropped.
    ///
    /// It ends with its [`Event::Finished`]: `Ok(SubscriptionEnded)` when the server ends it
    /// (its result, or its `notifications/cancelled`),
    /// [`Error::Cancelled`](crate::Error::Cancelled) after [`cancel`](Self::cancel) (which tells
    /// the server as any cancel does: over stdio a `notifications/cancelled`, over Streamable HTTP
    /// by dropping the stream), or the error that lost it (an HTTP stream that broke, the
    /// connection). A lost subscription may have missed changes: list again, and listen again.
    ///
    /// While it stands it holds one of [`Limits::requests_in_flight`](crate::Limits).
    ///
    /// # Errors
    /// [`Misuse::NotInRevision`] in a session of an earlier revision, whose servers send
    /// their list changes unasked (there, [`subscribe_resource`](Self::subscribe_resource)
    /// asks for a resource's updates);
    /// [`Misuse::NotConnected`], [`Misuse::ConnectionFailed`],
    /// [`Misuse::TooManyInFlight`], or [`Misuse::FrameTooLong`] for URIs that do not fit in
    /// one frame.
    pub fn listen(
        &mut self,
        subscription: &Subscription,
        now: Instant,
    ) -> Result<Op<SubscriptionEnded>, Misuse> {
        let version = self.ready()?.connected.version;
        if version.era() != Era::Stateless {
            return Err(Misuse::NotInRevision {
                method: Method::Listen.as_str(),
                version,
            });
        }
        let listen = Listen::new(subscription.clone());
        self.start(
            Operation::Listen(alloc::boxed::Box::new(listen)),
            Method::Listen,
            now,
            |params| {
                params.key("notifications");
                let mut filter = ObjectWriter::open(params.out());
                subscription.write(&mut filter);
                filter.close();
            },
        )
    }

    /// Asks the server for `notifications/resources/updated` whenever the resource at `uri`
    /// changes (`resources/subscribe`, 2025-06-18 and 2025-11-25); the operation ends when
    /// the server says yes. Updates then arrive unasked, as
    /// [`ServerNotification::ResourceUpdated`], for `uri` or, as servers may send, a
    /// resource under it. In 2026-07-28, [`listen`](Self::listen) with
    /// [`Subscription::resources`] asks for the same.
    ///
    /// # Errors
    /// [`Misuse::NotInRevision`] in a 2026-07-28 session;
    /// [`Misuse::CapabilityNotOffered`] unless the server declared `resources.subscribe`;
    /// the refusals of [`list_resources`](Self::list_resources).
    pub fn subscribe_resource(&mut self, uri: &str, now: Instant) -> Result<Op<()>, Misuse> {
        self.resource_updates(Method::Subscribe, uri, now)
    }

    /// Asks the server to stop sending updates of the resource at `uri`
    /// (`resources/unsubscribe`); the operation ends when the server says yes.
    ///
    /// # Errors
    /// As [`subscribe_resource`](Self::subscribe_resource).
    pub fn unsubscribe_resource(&mut self, uri: &str, now: Instant) -> Result<Op<()>, Misuse> {
        self.resource_updates(Method::Unsubscribe, uri, now)
    }

    /// `method` (`resources/subscribe` or `resources/unsubscribe`) for `uri`.
    fn resource_updates(
        &mut self,
        method: Method,
        uri: &str,
        now: Instant,
    ) -> Result<Op<()>, Misuse> {
        let version = self.ready()?.connected.version;
        if version.era() != Era::Stateful {
            return Err(Misuse::NotInRevision {
                method: method.as_str(),
                version,
            });
        }
        let connected = &self.ready_for(ListKind::Resources)?.connected;
        if !connected.capabilities.resource_subscriptions {
            return Err(Misuse::CapabilityNotOffered {
                capability: "resources.subscribe",
            });
        }
        self.start(
            Operation::Acknowledged(Acknowledged),
            method,
            now,
            |params| params.string("uri", uri),
        )
    }

    /// Takes a notification that belongs to a subscription: the acknowledgement of one
    /// waiting for it, or a change on one that stands (an event if it honours it, dropped
    /// if not); neither counts against the requests waiting for answers, as a subscription's
    /// notifications are its own. Anything tagged with a subscription that is not in flight
    /// is dropped, and counted. Gives back what belongs to none, for the notifications'
    /// usual path.
    pub(super) fn on_subscription(&mut self, notification: Notification) -> Option<Notification> {
        if !on_subscriptions(&notification.method) {
            return Some(notification);
        }
        let Some(tag) = notification
            .params
            .as_ref()
            .and_then(|params| subscription_of(&Object::of(params)))
        else {
            return Some(notification);
        };
        let Some((id, op, Operation::Listen(listen))) = tag.and_then(|id| {
            let request = self.requests.get_mut(id)?;
            Some((id, request.op, &mut request.operation))
        }) else {
            self.count_message();
            return None;
        };
        if notification.method == ACKNOWLEDGED {
            if listen.honoured.is_some() {
                return None;
            }
            let filter = notification
                .params
                .as_ref()
                .and_then(|params| Object::of(params).get("notifications"));
            match filter.and_then(|filter| listen.asked.honoured(filter)) {
                Some(honoured) => {
                    listen.honoured = Some(honoured.clone());
                    self.events.push_back(Event::Subscribed { op, honoured });
                }
                None => self.expire(id, ProtocolViolation::InvalidAcknowledgement.into()),
            }
            return None;
        }
        let change = ServerNotification::read(notification);
        if listen.honoured.as_ref().is_some_and(|h| h.admits(&change)) {
            self.events.push_back(Event::Notification(change));
        }
        None
    }

    /// The server's `notifications/cancelled` for a subscription of this client's ends it,
    /// as its result would: on purpose, nothing to cancel back.
    pub(super) fn on_listen_cancelled(&mut self, params: Option<&RawObject>) {
        let Some(id) = params.and_then(|p| integer_id(Object::of(p).get("requestId")?)) else {
            return;
        };
        let listening = self
            .requests
            .get(id)
            .is_some_and(|r| matches!(r.operation, Operation::Listen(_)));
        if let (true, Some(request)) = (listening, self.requests.remove(id)) {
            self.requests.remember(id, false);
            self.finish(request.op, Ok(Output::Listen(SubscriptionEnded)));
        }
    }
}
