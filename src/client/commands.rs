//! The application's commands: each checks what it can refuse, then queues its first
//! request and starts its operation's one deadline. A refusal queues nothing.

use alloc::{string::String, vec::Vec};

use super::{CallOptions, Client, State};
use crate::catalog::Catalog;
use crate::client::Notice;
use crate::error::{Error, Misuse};
use crate::event::{Op, OpId};
use crate::id::RequestId;
use crate::json::write::ObjectWriter;
use crate::json::RawObject;
use crate::message::{encode_frame, Message, Outcome, Response};
use crate::method::{CallKind, ListKind};
use crate::ops::handshake::Handshake;
use crate::ops::Operation;
use crate::results::{CallToolResult, GetPromptResult, Prompt, Resource, ResourceContents};
use crate::roots::roots_result;
use crate::server::Connected;
use crate::time::Instant;
use crate::version::Era;
use crate::Root;

impl Client {
    /// Starts the handshake the configured [`ProtocolChoice`](crate::ProtocolChoice) calls for.
    ///
    /// # Errors
    /// [`Misuse::AlreadyConnecting`] if it was started before, [`Misuse::ConnectionFailed`]
    /// after a failure, [`Misuse::FrameTooLong`] if the answer to `roots/list` with
    /// [`Config::roots`](crate::Config::roots) would not fit in one frame.
    pub fn connect(&mut self, now: Instant) -> Result<Op<Connected>, Misuse> {
        match self.state {
            State::Idle => {}
            State::Failed => return Err(Misuse::ConnectionFailed),
            State::Connecting | State::Ready(_) => return Err(Misuse::AlreadyConnecting),
        }
        if let Some(roots) = &self.config.roots {
            fits_in_a_frame(roots, &self.config.limits)?;
        }
        let limits = &self.config.limits;
        let (handshake, first) = Handshake::start(
            self.config.protocol,
            self.config.probe_timeout,
            limits.operation_timeout,
            now,
        );
        let op = self.start_with(Operation::Handshake(handshake), now, first)?;
        self.state = State::Connecting;
        Ok(op)
    }

    /// Replaces the roots given to servers (see [`Config::roots`](crate::Config::roots)):
    /// every later `roots/list` is answered with `roots`, and a connected 2025 session sends
    /// `notifications/roots/list_changed`, after which a server that keeps to its roots asks
    /// for them again. Before the handshake it only replaces them.
    ///
    /// # Errors
    /// [`Misuse::RootsNotDeclared`] if [`Config::roots`](crate::Config::roots) is `None`:
    /// the capability is declared in the handshake or never. [`Misuse::FrameTooLong`] if
    /// the answer to `roots/list` would not fit in one frame. [`Misuse::ConnectionFailed`]
    /// after a failure. Each refusal leaves the roots as they were.
    pub fn set_roots(&mut self, roots: Vec<Root>) -> Result<(), Misuse> {
        if self.config.roots.is_none() {
            return Err(Misuse::RootsNotDeclared);
        }
        if self.is_failed() {
            return Err(Misuse::ConnectionFailed);
        }
        fits_in_a_frame(&roots, &self.config.limits)?;
        self.config.roots = Some(roots);
        let stateful = matches!(
            &self.state,
            State::Ready(session) if session.connected.version.era() == Era::Stateful
        );
        if stateful {
            self.queue_notification(Notice::RootsChanged, None);
        }
        Ok(())
    }

    /// Lists the server's tools, following `nextCursor` across pages within
    /// [`Limits::pages_per_listing`](crate::Limits::pages_per_listing) and
    /// [`Limits::tools_per_catalog`](crate::Limits::tools_per_catalog). The result becomes the
    /// client's current catalog.
    ///
    /// # Errors
    /// [`Misuse`] when not connected, when the server lacks the tools capability, or when
    /// too many requests are in flight.
    pub fn list_tools(&mut self, now: Instant) -> Result<Op<Catalog>, Misuse> {
        self.start_listing(ListKind::Tools, now)
    }

    /// Lists the server's resources, all pages.
    ///
    /// # Errors
    /// As [`list_tools`](Self::list_tools), for the resources capability.
    pub fn list_resources(&mut self, now: Instant) -> Result<Op<Vec<Resource>>, Misuse> {
        self.start_listing(ListKind::Resources, now)
    }

    /// Lists the server's prompts, all pages.
    ///
    /// # Errors
    /// As [`list_tools`](Self::list_tools), for the prompts capability.
    pub fn list_prompts(&mut self, now: Instant) -> Result<Op<Vec<Prompt>>, Misuse> {
        self.start_listing(ListKind::Prompts, now)
    }

    /// Calls a tool that is both in the application's allowlist and in the current catalog.
    /// Otherwise refuses, and not one byte is queued.
    ///
    /// # Errors
    /// [`Misuse::ToolNotAllowed`], [`Misuse::ToolNotAdvertised`], or the refusals of
    /// [`list_tools`](Self::list_tools).
    pub fn call_tool(
        &mut self,
        name: &str,
        arguments: &RawObject,
        now: Instant,
    ) -> Result<Op<CallToolResult>, Misuse> {
        self.call_tool_with(name, arguments, CallOptions::new(), now)
    }

    /// [`call_tool`](Self::call_tool), waiting as `options` say: a deadline of its own, and
    /// the server's progress, which can restart it up to a hard maximum.
    ///
    /// # Errors
    /// As [`call_tool`](Self::call_tool).
    pub fn call_tool_with(
        &mut self,
        name: &str,
        arguments: &RawObject,
        options: CallOptions,
        now: Instant,
    ) -> Result<Op<CallToolResult>, Misuse> {
        // The application's word first: a tool it does not allow is refused as such,
        // whatever the state of the connection.
        if !self.config.allowlist.allows(name) {
            return Err(Misuse::ToolNotAllowed {
                name: String::from(name),
            });
        }
        self.ready_for(ListKind::Tools)?;
        if self.catalog.as_ref().and_then(|c| c.get(name)).is_none() {
            return Err(Misuse::ToolNotAdvertised {
                name: String::from(name),
            });
        }
        self.start_call(CallKind::Tool, now, options, |params| {
            params.string("name", name);
            params.raw("arguments", arguments.as_str());
        })
    }

    /// Reads the resource at `uri`.
    ///
    /// # Errors
    /// As [`list_resources`](Self::list_resources).
    pub fn read_resource(
        &mut self,
        uri: &str,
        now: Instant,
    ) -> Result<Op<Vec<ResourceContents>>, Misuse> {
        let options = CallOptions::new();
        self.start_call(CallKind::Resource, now, options, |params| {
            params.string("uri", uri);
        })
    }

    /// Expands the prompt `name` with string `arguments`.
    ///
    /// # Errors
    /// As [`list_prompts`](Self::list_prompts).
    pub fn get_prompt(
        &mut self,
        name: &str,
        arguments: &[(&str, &str)],
        now: Instant,
    ) -> Result<Op<GetPromptResult>, Misuse> {
        self.start_call(CallKind::Prompt, now, CallOptions::new(), |params| {
            params.string("name", name);
            params.key("arguments");
            let mut args = ObjectWriter::open(params.out());
            for (key, value) in arguments {
                args.string(key, value);
            }
            args.close();
        })
    }

    /// Cancels an operation: it ends with [`Error::Cancelled`], its request (unless it is
    /// `initialize`) is cancelled with the server, and a late answer is reported as late.
    /// Cancelling the handshake fails the connection.
    ///
    /// # Errors
    /// [`Misuse::UnknownOperation`] if the operation is not in progress.
    pub fn cancel(&mut self, op: impl Into<OpId>) -> Result<(), Misuse> {
        let op = op.into();
        if self.end_parked(op, |_| Error::Cancelled) {
            return Ok(());
        }
        let id = self
            .requests
            .iter()
            .find(|(_, request)| request.op == op)
            .map(|(id, _)| id)
            .ok_or(Misuse::UnknownOperation)?;
        self.expire(id, Error::Cancelled);
        Ok(())
    }
}

/// Whether the answer to a `roots/list` with `roots` fits in one frame, under the longest
/// integer id a server could send.
fn fits_in_a_frame(roots: &[Root], limits: &crate::Limits) -> Result<(), Misuse> {
    let answer = Message::Response(Response {
        id: RequestId::from(i64::MIN),
        outcome: Outcome::Result(RawObject::from_trusted_text(roots_result(roots))),
    });
    encode_frame(&answer, limits, &mut Vec::new())
}
