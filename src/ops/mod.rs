//! Operations as sub-machines, all with one small interface ([`Machine`]): the answer to
//! their request goes in (a result, or a JSON-RPC error), and a [`Step`] comes out: send
//! one more request, done with an output, or failed. The handshake also has a timer of its
//! own (the probe), which makes a `Step` in the same way. [`Client`](crate::Client) only dispatches
//! between the request table and these machines; it knows nothing of what any one of them does.

pub(crate) mod call;
pub(crate) mod handshake;
pub(crate) mod listen;
pub(crate) mod listing;

use alloc::{boxed::Box, string::String};

use crate::error::{Error, Incompatible};
use crate::event::Output;
use crate::json::view::Object;
use crate::json::write::ObjectWriter;
use crate::method::{ListKind, Method};
use crate::rpc_error::RpcError;
use crate::time::Instant;
use crate::version::{ProtocolChoice, ProtocolVersion};
use crate::{Asks, Limits, Root};

/// What the operations may read of the client's settings.
pub(crate) struct Context<'a> {
    pub(crate) limits: &'a Limits,
    pub(crate) choice: ProtocolChoice,
    /// The oldest revision accepted where the choice does not pin one.
    pub(crate) oldest: ProtocolVersion,
    /// The roots the application gives, if it declared them.
    pub(crate) roots: Option<&'a [Root]>,
    /// What the application answers itself.
    pub(crate) asks: Asks,
}

/// What an operation does next.
#[derive(Debug)]
pub(crate) enum Step {
    /// Send this request; the operation's one deadline goes on.
    Send(Next),
    /// The operation succeeded.
    Done(Output),
    /// The operation failed.
    Fail(Error),
    /// The operation waits for the application to answer these requests (a call in
    /// 2026-07-28), under its one deadline.
    Ask(call::Asked),
}

/// A request an operation sends after its first one, described by what it needs.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// The next page of a listing.
    Page {
        /// What is listed.
        kind: ListKind,
        /// The server's cursor.
        cursor: String,
    },
    /// `server/discover`, asking for this revision.
    Discover(ProtocolVersion),
    /// `initialize`, offering this revision.
    Initialize(ProtocolVersion),
    /// A call sent again, with the input its server asked for.
    Again {
        /// Which call.
        kind: crate::method::CallKind,
        /// Its params, whole: compact object text, without `_meta`.
        params: String,
    },
}

impl Next {
    /// The request's method.
    pub(crate) fn method(&self) -> Method {
        match self {
            Next::Page { kind, .. } => Method::List(*kind),
            Next::Discover(_) => Method::Discover,
            Next::Initialize(_) => Method::Initialize,
            Next::Again { kind, .. } => Method::Call(*kind),
        }
    }

    /// The request's own `_meta`, where it brings one (discovery states its revision and
    /// the client's `capabilities`).
    pub(crate) fn meta(&self, client_info: &str, capabilities: &str) -> Option<String> {
        match self {
            Next::Discover(version) => Some(handshake::request_meta(
                *version,
                client_info,
                capabilities,
                None,
            )),
            Next::Page { .. } | Next::Initialize(_) | Next::Again { .. } => None,
        }
    }

    /// Writes the request's params; `initialize` declares `capabilities` (a compact object).
    pub(crate) fn write_params(
        &self,
        params: &mut ObjectWriter<'_>,
        client_info: &str,
        capabilities: &str,
    ) {
        match self {
            Next::Page { cursor, .. } => params.string("cursor", cursor),
            Next::Discover(_) => {}
            Next::Again { params: whole, .. } => params.members_of_text(whole),
            Next::Initialize(version) => {
                params.string("protocolVersion", version.as_str());
                params.raw("capabilities", capabilities);
                params.raw("clientInfo", client_info);
            }
        }
    }
}

/// One operation's interface: what its request's answer, or its own timer, makes it do.
pub(crate) trait Machine {
    /// The request's result arrived; `result` is a validated object whose `resultType`
    /// says it is complete.
    fn on_result(&mut self, result: &Object<'_>, ctx: &Context<'_>) -> Step;

    /// The request was answered with a JSON-RPC error. Most operations fail with it.
    fn on_error(&mut self, error: RpcError, _ctx: &Context<'_>) -> Step {
        Step::Fail(Error::Rpc(error))
    }

    /// The result says the server needs input first (`resultType: input_required`, a
    /// validated object). Only a call may provide it (going again, or waiting for the
    /// application with [`Step::Ask`]); every other operation fails.
    fn on_input_required(&mut self, _result: &Object<'_>, _ctx: &Context<'_>) -> Step {
        Step::Fail(Incompatible::InputRequired.into())
    }
}

/// An operation in progress.
#[derive(Debug)]
pub(crate) enum Operation {
    Handshake(handshake::Handshake),
    Listing(Box<listing::Listing>),
    Call(call::Call),
    Listen(Box<listen::Listen>),
    Acknowledged(listen::Acknowledged),
}

impl Operation {
    pub(crate) fn machine(&mut self) -> &mut dyn Machine {
        match self {
            Operation::Handshake(machine) => machine,
            Operation::Listing(machine) => &mut **machine,
            Operation::Call(machine) => machine,
            Operation::Listen(machine) => &mut **machine,
            Operation::Acknowledged(machine) => machine,
        }
    }

    /// Whether the operation stands with no deadline: an acknowledged subscription, which
    /// lasts until it ends and waits for nothing in the meantime.
    pub(crate) fn standing(&self) -> bool {
        matches!(self, Operation::Listen(listen) if listen.honoured.is_some())
    }

    /// When the operation's own timer fires, besides its deadline: only the handshake's
    /// probe has one.
    pub(crate) fn timer(&self) -> Option<Instant> {
        match self {
            Operation::Handshake(machine) => machine.probe_until(),
            Operation::Listing(_)
            | Operation::Call(_)
            | Operation::Listen(_)
            | Operation::Acknowledged(_) => None,
        }
    }

    /// What the operation does when its [`timer`](Self::timer) has fired by `now`; `None`
    /// if it has not (or the operation has none). The request in flight is abandoned.
    pub(crate) fn on_timer(&mut self, now: Instant, ctx: &Context<'_>) -> Option<Step> {
        match self {
            Operation::Handshake(machine) => machine.probe_expired(now, ctx),
            Operation::Listing(_)
            | Operation::Call(_)
            | Operation::Listen(_)
            | Operation::Acknowledged(_) => None,
        }
    }
}
