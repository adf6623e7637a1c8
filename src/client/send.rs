//! How requests and notifications leave: one writer for every request (the session's
//! `_meta` added where the revision needs it), into the transmit queue, bound in the request
//! table to the operation that sent it.

use alloc::boxed::Box;

use super::transmit::{Notice, Sent};
use super::{progress, CallOptions, Client, InFlight, Session, State};
use crate::asks::Asks;
use crate::error::{Error, Misuse, ProtocolViolation};
use crate::event::{Op, OpId};
use crate::json::write::{object_text, ObjectWriter};
use crate::message::{write_call, write_frame, write_integer_id};
use crate::method::{CallKind, ListKind, Method};
use crate::ops::call::{Again, Call};
use crate::ops::listing::Listing;
use crate::ops::{Next, Operation};
use crate::time::Instant;
use crate::version::Era;

impl Client {
    /// The session, once the handshake has finished and while the connection holds.
    pub(super) fn session(&self) -> Result<&Session, Misuse> {
        match &self.state {
            State::Ready(session) => Ok(session),
            State::Failed => Err(Misuse::ConnectionFailed),
            State::Idle | State::Connecting => Err(Misuse::NotConnected),
        }
    }

    /// The session, if commands may start: connected, not failed, with room in the table.
    pub(super) fn ready(&self) -> Result<&Session, Misuse> {
        let session = self.session()?;
        let limit = self.config.limits.requests_in_flight;
        // The level the client asks for itself takes no room of the application's.
        let own = usize::from(self.leveling.is_some());
        if self.requests.len().saturating_sub(own) >= limit {
            return Err(Misuse::TooManyInFlight { limit });
        }
        Ok(session)
    }

    /// The session, if commands that need `kind`'s capability may start.
    pub(super) fn ready_for(&self, kind: ListKind) -> Result<&Session, Misuse> {
        let session = self.ready()?;
        if !kind.offered(&session.connected.capabilities) {
            return Err(Misuse::CapabilityNotOffered {
                capability: kind.capability(),
            });
        }
        Ok(session)
    }

    pub(super) fn new_op(&mut self) -> OpId {
        self.next_op += 1;
        OpId(self.next_op)
    }

    pub(super) fn start_listing<T>(
        &mut self,
        kind: ListKind,
        now: Instant,
    ) -> Result<Op<T>, Misuse> {
        let era = self.ready_for(kind)?.connected.version.era();
        // Over Streamable HTTP in 2026-07-28, a tool's header markers must hold too.
        let header_markers = self.header_markers && era == Era::Stateless;
        let listing = Listing::new(kind, self.config.catalog_policy, era, header_markers);
        self.start(
            Operation::Listing(Box::new(listing)),
            Method::List(kind),
            now,
            |_| {},
        )
    }

    pub(super) fn start_call<T>(
        &mut self,
        kind: CallKind,
        now: Instant,
        options: CallOptions,
        members: impl FnOnce(&mut ObjectWriter<'_>),
    ) -> Result<Op<T>, Misuse> {
        self.ready_for(kind.needs())?;
        // Where the call may have to go again with the input its server asks for (roots the
        // application gives, or what it answers), its params are kept for that; nowhere else
        // is anything kept.
        let stateless = self
            .connection()
            .is_some_and(|c| c.version.era() == Era::Stateless);
        if stateless && (self.config.roots.is_some() || self.config.asks != Asks::NONE) {
            let params = object_text(members);
            let call = Call {
                kind,
                again: Some(Box::new(Again::new(params.clone()))),
            };
            let method = Method::Call(kind);
            return self.start_waiting(Operation::Call(call), method, now, options, |writer| {
                writer.members_of_text(&params);
            });
        }
        let call = Operation::Call(Call::once(kind));
        self.start_waiting(call, Method::Call(kind), now, options, members)
    }

    /// Sends an operation's first request, written by `members`, and starts its deadline.
    pub(super) fn start<T>(
        &mut self,
        operation: Operation,
        method: Method,
        now: Instant,
        members: impl FnOnce(&mut ObjectWriter<'_>),
    ) -> Result<Op<T>, Misuse> {
        self.start_waiting(operation, method, now, CallOptions::new(), members)
    }

    /// [`start`](Self::start), the operation waiting as `options` say.
    pub(super) fn start_waiting<T>(
        &mut self,
        operation: Operation,
        method: Method,
        now: Instant,
        options: CallOptions,
        members: impl FnOnce(&mut ObjectWriter<'_>),
    ) -> Result<Op<T>, Misuse> {
        let op = self.new_op();
        let (deadline, progress) =
            progress::waiting(options, self.config.limits.operation_timeout, now);
        let request = InFlight {
            op,
            method,
            deadline,
            progress,
            operation,
        };
        self.queue_request(request, None, members)?;
        Ok(Op::new(op))
    }

    /// Starts an operation whose first request is a [`Next`] (the handshake's).
    pub(super) fn start_with<T>(
        &mut self,
        operation: Operation,
        now: Instant,
        first: Next,
    ) -> Result<Op<T>, Misuse> {
        let request = InFlight {
            op: self.new_op(),
            method: first.method(),
            deadline: now.saturating_add(self.config.limits.operation_timeout),
            progress: None,
            operation,
        };
        let op = request.op;
        self.send(request, first)?;
        Ok(Op::new(op))
    }

    /// Sends the request `next` describes for `request`'s operation, which keeps its
    /// deadline.
    pub(super) fn send(&mut self, mut request: InFlight, next: Next) -> Result<(), Misuse> {
        let own_meta = next.meta(&self.client_info, self.capabilities(Era::Stateless));
        // Only the handshake, later pages and a call's later rounds come here: the copy is
        // not on the path of a call's first request.
        let client_info = self.client_info.clone();
        let capabilities = alloc::string::String::from(self.capabilities(Era::Stateful));
        request.method = next.method();
        self.queue_request(request, own_meta.as_deref(), |params| {
            next.write_params(params, &client_info, &capabilities);
        })
    }

    /// Writes the request of `request`'s operation into the transmit queue (`members`, then
    /// the `_meta` the request brings, `own_meta`, or in a stateless session the session's)
    /// and binds its id to the operation in the request table. Refuses, queuing nothing, if
    /// it cannot be sent.
    pub(super) fn queue_request(
        &mut self,
        request: InFlight,
        own_meta: Option<&str>,
        members: impl FnOnce(&mut ObjectWriter<'_>),
    ) -> Result<(), Misuse> {
        self.room_to_send().map_err(|_| Misuse::ConnectionFailed)?;
        let method = request.method;
        let id = self.requests.next_id().ok_or(Misuse::IdsExhausted)?;
        let session_meta = match &self.state {
            State::Ready(session) if method.carries_session_meta() => session.meta.as_deref(),
            _ => None,
        };
        let meta = own_meta.or(session_meta);
        // A call that asked for progress names its token in every request it sends.
        let with_token = request
            .progress
            .as_ref()
            .and_then(|_| progress::token(request.op))
            .map(|token| progress::with_token(token, meta));
        let meta = with_token.as_deref().or(meta);
        let limit = self.config.limits.frame_bytes;
        self.transmit.push(Sent::Request { id, method }, |out| {
            write_frame(out, limit, |out| {
                write_integer_id(out, id);
                let params = |params: &mut ObjectWriter<'_>| {
                    members(params);
                    if let Some(meta) = meta {
                        params.raw("_meta", meta);
                    }
                };
                write_call(out, method.as_str(), Some(params));
            })
        })?;
        self.requests.insert(id, request);
        Ok(())
    }

    /// Queues a notification, with params if `members` is given to write them.
    pub(super) fn queue_notification(
        &mut self,
        notice: Notice,
        members: Option<&dyn Fn(&mut ObjectWriter<'_>)>,
    ) {
        let method = notice.method();
        if self.room_to_send().is_err() {
            return;
        }
        let limit = self.config.limits.frame_bytes;
        // A notification of this client's own is far below any frame limit a transport
        // could work with; were it not, it is dropped, never sent cut.
        let _ = self.transmit.push(Sent::Notification(notice), |out| {
            write_frame(out, limit, |out| {
                let params =
                    members.map(|members| move |params: &mut ObjectWriter<'_>| members(params));
                write_call(out, method, params);
            })
        });
    }

    /// Whether the transmit queue may take another frame. Past
    /// [`Limits::unsent_bytes`](crate::Limits) the server is not reading its input: the
    /// connection fails (every operation in the table ends), nothing more is queued, and the
    /// error is returned for an operation outside the table.
    pub(super) fn room_to_send(&mut self) -> Result<(), Error> {
        let limit = self.config.limits.unsent_bytes;
        if self.transmit.unsent() <= limit {
            return Ok(());
        }
        let error = Error::from(ProtocolViolation::NotReading { limit });
        if !self.is_failed() {
            self.fail_connection(error.clone());
        }
        Err(error)
    }

    pub(super) fn queue_cancel(&mut self, id: i64, reason: &Error) {
        let reason = alloc::format!("{reason}");
        self.queue_notification(
            Notice::Cancelled { id },
            Some(&|params: &mut ObjectWriter<'_>| {
                params.integer("requestId", id);
                params.string("reason", &reason);
            }),
        );
    }
}
