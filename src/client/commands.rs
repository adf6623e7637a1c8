//! The application's commands: each checks what it can refuse, then queues its first
//! request and starts its operation's one deadline. A refusal queues nothing.

use alloc::collections::BTreeSet;
use alloc::{string::String, vec::Vec};

use super::{CallOptions, Client, State};
use crate::catalog::Catalog;
use crate::client::Notice;
use crate::error::{Error, Misuse};
use crate::event::{Event, Op, OpId, Output};
use crate::id::RequestId;
use crate::json::write::ObjectWriter;
use crate::json::RawObject;
use crate::message::{encode_frame, Message, Outcome, Response};
use crate::method::{CallKind, ListKind, Method};
use crate::ops::handshake::Handshake;
use crate::ops::listen::Acknowledged;
use crate::ops::Operation;
use crate::results::{CallToolResult, GetPromptResult, Prompt, Resource, ResourceContents};
use crate::roots::roots_result;
use crate::server::Connected;
use crate::time::Instant;
use crate::version::Era;
use crate::{LogLevel, Root};

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
        self.read_resource_with(uri, CallOptions::new(), now)
    }

    /// [`read_resource`](Self::read_resource), waiting as `options` say: a deadline of its
    /// own, and the server's progress, which can restart it up to a hard maximum.
    ///
    /// # Errors
    /// As [`read_resource`](Self::read_resource).
    pub fn read_resource_with(
        &mut self,
        uri: &str,
        options: CallOptions,
        now: Instant,
    ) -> Result<Op<Vec<ResourceContents>>, Misuse> {
        self.start_call(CallKind::Resource, now, options, |params| {
            params.string("uri", uri);
        })
    }

    /// Expands the prompt `name` with string `arguments`, each argument named once.
    ///
    /// # Errors
    /// [`Misuse::PromptArgumentRepeated`] if two arguments share a name (nothing is sent),
    /// or the refusals of [`list_prompts`](Self::list_prompts).
    pub fn get_prompt(
        &mut self,
        name: &str,
        arguments: &[(&str, &str)],
        now: Instant,
    ) -> Result<Op<GetPromptResult>, Misuse> {
        self.get_prompt_with(name, arguments, CallOptions::new(), now)
    }

    /// [`get_prompt`](Self::get_prompt), waiting as `options` say: a deadline of its own,
    /// and the server's progress, which can restart it up to a hard maximum.
    ///
    /// # Errors
    /// As [`get_prompt`](Self::get_prompt).
    pub fn get_prompt_with(
        &mut self,
        name: &str,
        arguments: &[(&str, &str)],
        options: CallOptions,
        now: Instant,
    ) -> Result<Op<GetPromptResult>, Misuse> {
        // Each name once: the object they are sent as must not repeat a key.
        let mut named = BTreeSet::new();
        if let Some((name, _)) = arguments.iter().find(|(name, _)| !named.insert(*name)) {
            return Err(Misuse::PromptArgumentRepeated {
                name: String::from(*name),
            });
        }
        self.start_call(CallKind::Prompt, now, options, |params| {
            params.string("name", name);
            params.key("arguments");
            let mut args = ObjectWriter::open(params.out());
            for (key, value) in arguments {
                args.string(key, value);
            }
            args.close();
        })
    }

    /// [`get_prompt_with`](Self::get_prompt_with) for `prompt` as the server listed it
    /// ([`list_prompts`](Self::list_prompts)), its arguments checked against the ones it
    /// declares before a byte is sent: one it requires and `arguments` lack is the caller's
    /// mistake, which the server would only answer with an error (-32602). An argument it
    /// does not declare is sent as given, as the server may still read it.
    ///
    /// # Errors
    /// [`Misuse::PromptArgumentMissing`] for the first argument `prompt` requires that
    /// `arguments` do not name (nothing is sent), or those of
    /// [`get_prompt`](Self::get_prompt).
    pub fn get_listed_prompt(
        &mut self,
        prompt: &Prompt,
        arguments: &[(&str, &str)],
        options: CallOptions,
        now: Instant,
    ) -> Result<Op<GetPromptResult>, Misuse> {
        let given = |wanted: &str| arguments.iter().any(|(name, _)| *name == wanted);
        if let Some(missing) = prompt
            .arguments
            .iter()
            .find(|argument| argument.required && !given(&argument.name))
        {
            return Err(Misuse::PromptArgumentMissing {
                prompt: prompt.name.clone(),
                argument: missing.name.clone(),
            });
        }
        self.get_prompt_with(&prompt.name, arguments, options, now)
    }

    /// Asks the server for its log messages (`notifications/message`) at `level` and above,
    /// which then arrive as [`ServerNotification::Log`](crate::ServerNotification::Log)
    /// events; the operation ends when the request is made.
    ///
    /// - In 2025-06-18 and 2025-11-25 it sends `logging/setLevel`, and ends when the server
    ///   says yes. Until then a server may send every level, or none; what it sends after is
    ///   its own to keep to, and each event names its level for the application to judge.
    /// - In 2026-07-28, which has no such request and where a server sends no log messages
    ///   unless a request asks, every later request carries the level in its `_meta`
    ///   (`io.modelcontextprotocol/logLevel`), and a server sends the messages of that
    ///   request alongside it. Nothing is sent now, and the operation has ended when this
    ///   returns. A server need not declare `logging` for it (the official Python SDK's
    ///   servers honour it without).
    ///
    /// # Errors
    /// In a handshake revision, [`Misuse::CapabilityNotOffered`] unless the server declared
    /// `logging` (a server that did not has no `logging/setLevel` to answer), and
    /// [`Misuse::TooManyInFlight`]; in any, [`Misuse::NotConnected`] and
    /// [`Misuse::ConnectionFailed`].
    pub fn set_log_level(&mut self, level: LogLevel, now: Instant) -> Result<Op<()>, Misuse> {
        let version = self.session()?.connected.version;
        if version.era() == Era::Stateless {
            self.log_level = Some(level);
            let meta = self.stateless_meta(version);
            if let State::Ready(session) = &mut self.state {
                session.meta = Some(meta);
            }
            let op = self.new_op();
            self.events.push_back(Event::Finished {
                op,
                outcome: Ok(Output::Acknowledged),
            });
            return Ok(Op::new(op));
        }
        if !self.ready()?.connected.capabilities.logging {
            return Err(Misuse::CapabilityNotOffered {
                capability: "logging",
            });
        }
        let op = self.ask_level(level, now, CallOptions::new())?;
        // Asked for again if the session is renewed.
        self.log_level = Some(level);
        Ok(op)
    }

    /// Sends `logging/setLevel` for `level` (a handshake revision's), waiting as `options`
    /// say.
    pub(super) fn ask_level(
        &mut self,
        level: LogLevel,
        now: Instant,
        options: CallOptions,
    ) -> Result<Op<()>, Misuse> {
        self.start_waiting(
            Operation::Acknowledged(Acknowledged),
            Method::SetLevel,
            now,
            options,
            |params| params.string("level", level.as_str()),
        )
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
