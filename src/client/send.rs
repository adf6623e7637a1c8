//! How requests and notifications leave: one writer for every request (the session's
//! `_meta` added where the revision needs it), into the transmit queue, bound in the request
//! table to the operation that sent it.

use alloc::boxed::Box;

use super::transmit::{Notice, Sent};
use super::{Client, InFlight, Session, State};
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
    /// The session, if commands may start: connected, not failed, with room in the table.
    pub(super) fn ready(&self) -> Result<&Session, Misuse> {
        let session = match &self.state {
            State::Ready(session) => session,
            State::Failed => return Err(Misuse::ConnectionFailed),
            State::Idle | State::Connecting => return Err(Misuse::NotConnected),
        };
        let limit = self.config.limits.requests_in_flight;
        if self.requests.len() >= limit {
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
            return self.start(Operation::Call(call), Method::Call(kind), now, |writer| {
                writer.members_of_text(&params);
            });
        }
        self.start(
            Operation::Call(Call::once(kind)),
            Method::Call(kind),
            now,
            members,
        )
    }

    /// Sends an operation's first request, written by `members`, and starts its deadline.
    pub(super) fn start<T>(
        &mut self,
        operation: Operation,
        method: Method,
        now: Instant,
        members: impl FnOnce(&mut ObjectWriter<'_>),
    ) -> Result<Op<T>, Misuse> {
        let op = self.new_op();
        let deadline = now.saturating_add(self.config.limits.operation_timeout);
        let request = InFlight {
            op,
            method,
            deadline,
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
        let op = self.new_op();
        let deadline = now.saturating_add(self.config.limits.operation_timeout);
        self.send(op, deadline, operation, first)?;
        Ok(Op::new(op))
    }

    /// Sends the request `next` describes for operation `op`, which keeps its deadline.
    pub(super) fn send(
        &mut self,
        op: OpId,
        deadline: Instant,
        operation: Operation,
        next: Next,
    ) -> Result<(), Misuse> {
        let own_meta = next.meta(&self.client_info, self.capabilities(Era::Stateless));
        // Only the handshake and later pages come here, never a call: the copy is not on
        // the per-call path.
        let client_info = self.client_info.clone();
        let capabilities = alloc::string::String::from(self.capabilities(Era::Stateful));
        let request = InFlight {
            op,
            method: next.method(),
            deadline,
            operation,
        };
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
