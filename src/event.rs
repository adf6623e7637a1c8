//! What comes out of a [`Client`](crate::Client): operation handles, their outputs, server
//! notifications, and the events that carry them.

use alloc::{boxed::Box, string::String, vec::Vec};
use core::fmt;
use core::hash::{Hash, Hasher};
use core::marker::PhantomData;

use crate::asks::ServerRequest;
use crate::catalog::Catalog;
use crate::error::Error;
use crate::id::RequestId;
use crate::json::view::{JsonRef, Object};
use crate::json::RawJson;
use crate::logging::LogLevel;
use crate::message::Notification;
use crate::method::ListKind;
use crate::results::{CallToolResult, GetPromptResult, Prompt, Resource, ResourceContents};
use crate::server::Connected;
use crate::subscription::Subscription;

/// Names one operation: the untyped form of an [`Op`], carried by the event that ends it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OpId(pub(crate) u64);

/// A command's handle on the operation it started; `T` is what the operation produces
/// ([`Connected`], [`Catalog`], [`CallToolResult`], ...).
///
/// Its end arrives as an [`Event::Finished`] with an untyped [`Output`];
/// [`finished`](Self::finished) takes that event and gives the typed outcome, so a driver
/// awaiting `call_tool` gets a `CallToolResult` and writes no arm for outputs that cannot
/// happen.
#[must_use = "an operation's handle is how its end is told apart from other events"]
pub struct Op<T> {
    id: OpId,
    output: PhantomData<fn() -> T>,
}

impl<T> Op<T> {
    pub(crate) fn new(id: OpId) -> Self {
        Op {
            id,
            output: PhantomData,
        }
    }

    /// The operation's id, as events carry it.
    #[must_use]
    pub fn id(self) -> OpId {
        self.id
    }
}

impl<T: Awaited> Op<T> {
    /// If `event` is this operation's [`Event::Finished`], its typed outcome; any other
    /// event is given back unchanged.
    ///
    /// # Errors
    /// `Err(event)` when the event is not this operation's end.
    pub fn finished(self, event: Event) -> Result<Result<T, Error>, Event> {
        match event {
            Event::Finished { op, outcome } if op == self.id => match outcome {
                Err(error) => Ok(Err(error)),
                Ok(output) => T::from_output(output)
                    .map(Ok)
                    .map_err(|output| Event::Finished {
                        op,
                        outcome: Ok(output),
                    }),
            },
            other => Err(other),
        }
    }
}

impl<T> Clone for Op<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Op<T> {}

impl<T> PartialEq for Op<T> {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl<T> Eq for Op<T> {}

impl<T> Hash for Op<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.id.hash(state);
    }
}

impl<T> fmt::Debug for Op<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Op({})", self.id.0)
    }
}

impl<T> From<Op<T>> for OpId {
    fn from(op: Op<T>) -> Self {
        op.id
    }
}

mod sealed {
    pub trait Sealed {}
}

/// What one kind of operation produces: the `T` of an [`Op<T>`]. Sealed: only this crate's
/// commands make operations.
pub trait Awaited: sealed::Sealed + Sized {
    /// The typed value inside `output`, or `output` back if it is another kind.
    #[doc(hidden)]
    fn from_output(output: Output) -> Result<Self, Output>;
}

macro_rules! awaited {
    ($($ty:ty => $variant:ident $(($unbox:tt))?),* $(,)?) => {$(
        impl sealed::Sealed for $ty {}
        impl Awaited for $ty {
            fn from_output(output: Output) -> Result<Self, Output> {
                match output {
                    Output::$variant(value) => Ok(awaited!(@take value $($unbox)?)),
                    other => Err(other),
                }
            }
        }
    )*};
    (@take $value:ident) => { $value };
    (@take $value:ident box) => { *$value };
}

awaited! {
    Connected => Connect(box),
    Catalog => ListTools,
    CallToolResult => CallTool,
    Vec<Resource> => ListResources,
    Vec<ResourceContents> => ReadResource,
    Vec<Prompt> => ListPrompts,
    GetPromptResult => GetPrompt,
    SubscriptionEnded => Listen,
}

impl sealed::Sealed for () {}
impl Awaited for () {
    fn from_output(output: Output) -> Result<Self, Output> {
        match output {
            Output::Acknowledged => Ok(()),
            other => Err(other),
        }
    }
}

/// The end of a subscription that the server chose
/// ([`Client::listen`](crate::Client::listen)): the result of its `subscriptions/listen`
/// request, or the server's `notifications/cancelled` for it, as when it shuts down. Nothing
/// was lost that a new subscription and a fresh listing would not recover; listen again if
/// the changes still matter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubscriptionEnded;

/// What an operation produced, named after the command that started it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Output {
    /// [`connect`](crate::Client::connect): the handshake finished.
    Connect(Box<Connected>),
    /// [`list_tools`](crate::Client::list_tools), every page; also kept as the client's
    /// current catalog.
    ListTools(Catalog),
    /// [`call_tool`](crate::Client::call_tool).
    CallTool(CallToolResult),
    /// [`list_resources`](crate::Client::list_resources), every page.
    ListResources(Vec<Resource>),
    /// [`read_resource`](crate::Client::read_resource).
    ReadResource(Vec<ResourceContents>),
    /// [`list_prompts`](crate::Client::list_prompts), every page.
    ListPrompts(Vec<Prompt>),
    /// [`get_prompt`](crate::Client::get_prompt).
    GetPrompt(GetPromptResult),
    /// [`listen`](crate::Client::listen): the server ended the subscription.
    Listen(SubscriptionEnded),
    /// [`subscribe_resource`](crate::Client::subscribe_resource) or
    /// [`unsubscribe_resource`](crate::Client::unsubscribe_resource): the server said yes.
    Acknowledged,
}

/// A notification from the server.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ServerNotification {
    /// `notifications/progress`.
    Progress {
        /// The progress token of the request it reports on.
        token: RawJson,
        /// Progress so far.
        progress: f64,
        /// The total, if known.
        total: Option<f64>,
        /// A message, if any.
        message: Option<String>,
    },
    /// `notifications/message`: a log line. One whose level is none of the eight is
    /// malformed, and kept whole as [`Other`](Self::Other).
    Log {
        /// Its level.
        level: LogLevel,
        /// The logger's name, if given.
        logger: Option<String>,
        /// The logged data.
        data: RawJson,
    },
    /// `notifications/{tools,resources,prompts}/list_changed`: list again. In 2026-07-28 it
    /// comes only on a subscription that asked for it and was honoured.
    ListChanged(ListKind),
    /// `notifications/resources/updated`: the resource at `uri` changed; read it again. In
    /// 2026-07-28 it comes only for a URI a subscription asked for and was honoured.
    ResourceUpdated {
        /// The resource's URI.
        uri: String,
    },
    /// `notifications/elicitation/complete` (2025-11-25): the interaction a URL
    /// elicitation sent the user to has ended.
    ElicitationComplete {
        /// The `elicitationId` of the URL elicitation.
        elicitation_id: String,
    },
    /// Any other notification, or one of the above that was malformed, kept whole.
    Other(Notification),
}

impl ServerNotification {
    /// Reads a notification the server sent; anything not understood is kept whole.
    pub(crate) fn read(notification: Notification) -> Self {
        read_known(&notification).unwrap_or(ServerNotification::Other(notification))
    }
}

fn read_known(n: &Notification) -> Option<ServerNotification> {
    let object = n.params.as_ref().map(Object::of);
    Some(match n.method.as_str() {
        "notifications/progress" => {
            let [token, progress, total, message] =
                object?.fields(["progressToken", "progress", "total", "message"]);
            ServerNotification::Progress {
                token: token?.to_raw(),
                progress: progress?.as_f64()?,
                total: total.and_then(JsonRef::as_f64),
                message: message.and_then(JsonRef::as_str).map(String::from),
            }
        }
        "notifications/message" => {
            let [level, logger, data] = object?.fields(["level", "logger", "data"]);
            ServerNotification::Log {
                level: LogLevel::from_name(&level?.as_str()?)?,
                logger: logger.and_then(JsonRef::as_str).map(String::from),
                data: data?.to_raw(),
            }
        }
        "notifications/tools/list_changed" => ServerNotification::ListChanged(ListKind::Tools),
        "notifications/resources/list_changed" => {
            ServerNotification::ListChanged(ListKind::Resources)
        }
        "notifications/prompts/list_changed" => ServerNotification::ListChanged(ListKind::Prompts),
        "notifications/resources/updated" => ServerNotification::ResourceUpdated {
            uri: String::from(object?.get("uri")?.as_str()?),
        },
        "notifications/elicitation/complete" => ServerNotification::ElicitationComplete {
            elicitation_id: String::from(object?.get("elicitationId")?.as_str()?),
        },
        _ => return None,
    })
}

/// Something the application should know. Drain them with
/// [`Client::poll_event`](crate::Client::poll_event).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// An operation ended: exactly once for every operation a command started. Take the
    /// typed outcome with [`Op::finished`].
    Finished {
        /// The operation.
        op: OpId,
        /// What it produced, or why it failed.
        outcome: Result<Output, Error>,
    },
    /// The server sent a notification.
    Notification(ServerNotification),
    /// The server reported the progress of call `op`, which asked for it
    /// ([`CallOptions::progress_up_to`](crate::CallOptions::progress_up_to)). A report whose
    /// `progress` is higher than the last restarted the call's timeout.
    Progress {
        /// The call's operation.
        op: OpId,
        /// Progress so far, as the server counts it.
        progress: f64,
        /// The total, if known.
        total: Option<f64>,
        /// A message, if any.
        message: Option<String>,
    },
    /// The server acknowledged subscription `op` ([`Client::listen`](crate::Client::listen)):
    /// from now on it stands with no deadline, and what it honours arrives as
    /// [`Event::Notification`]s, until its [`Event::Finished`] (the server ended it, it was
    /// cancelled, or its transport lost it).
    Subscribed {
        /// The subscription's operation.
        op: OpId,
        /// What the server honours of what was asked: never more.
        honoured: Subscription,
    },
    /// An answer arrived for a request abandoned at its deadline or cancelled. It is bound
    /// to nothing.
    LateResponse {
        /// The abandoned request's id.
        id: RequestId,
    },
    /// The server asks the application (see [`Asks`](crate::Asks)): answer it with
    /// [`Client::answer`](crate::Client::answer). It waits, unanswered, until then.
    ServerRequest(ServerRequest),
    /// The connection failed; every operation in flight has ended with this error, and new
    /// commands are refused. Start a new client (and a new transport) to go on.
    Failed(Error),
}
