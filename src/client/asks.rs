//! What waits for the application: a stateful server's requests of it, and the input a
//! 2026-07-28 call's `input_required` asks of it. Each is handed over as an
//! [`Event::ServerRequest`] under a ticket, at most [`Limits::asks_waiting`](crate::Limits)
//! at once, and ends with [`Client::answer`] (or the server's withdrawal, the call's end,
//! the connection's failure).

use alloc::string::String;
use alloc::vec::Vec;

use super::{Client, InFlight};
use crate::asks::{AskKind, Reply, Responder, ServerRequest, Ticket};
use crate::error::{Error, Misuse, ProtocolViolation};
use crate::event::{Event, OpId};
use crate::id::RequestId;
use crate::json::view::Object;
use crate::json::RawObject;
use crate::message::{encode_frame, Message, Outcome, Response};
use crate::method::Method;
use crate::ops::call::Asked;
use crate::ops::Operation;
use crate::rpc_error::{ErrorCode, RpcError};

use super::transmit::Sent;

/// What a ticket's answer goes to.
#[derive(Debug)]
pub(super) enum Awaiting {
    /// The server's request with this id: the answer is its response.
    Request(RequestId),
    /// The input at `index` of the parked call `op`: the answer goes in its next round.
    Input { op: OpId, index: usize },
}

impl Client {
    /// Answers the server's request `ticket` (an [`Event::ServerRequest`]) with `reply`,
    /// exactly as given. In 2026-07-28 the reply is the input the server's call asked for:
    /// once every input of the call is answered, the call goes again with them; an error
    /// ends the call with [`Error::Refused`].
    ///
    /// # Errors
    /// [`Misuse::NotAsked`] if no request waits under `ticket` (answered already, withdrawn
    /// by the server's `notifications/cancelled`, its call ended, or never given by this
    /// client); [`Misuse::FrameTooLong`] if the answer would not fit in one frame, and the
    /// request still waits; [`Misuse::ConnectionFailed`] after a failure.
    pub fn answer(&mut self, ticket: Ticket, reply: Reply) -> Result<(), Misuse> {
        if self.is_failed() {
            return Err(Misuse::ConnectionFailed);
        }
        let at = self
            .asks
            .iter()
            .position(|(waiting, _)| *waiting == ticket)
            .ok_or(Misuse::NotAsked)?;
        let (op, index) = match self.asks.get(at) {
            Some((_, Awaiting::Request(id))) => {
                let outcome = match reply {
                    Reply::Result(result) => Outcome::Result(result),
                    Reply::Error(error) => Outcome::Error(error),
                };
                self.respond(id.clone(), outcome)?;
                self.asks.remove(at);
                return Ok(());
            }
            Some((_, Awaiting::Input { op, index })) => (*op, *index),
            None => return Err(Misuse::NotAsked),
        };
        self.asks.remove(at);
        let answer = match reply {
            Reply::Result(result) => result,
            Reply::Error(error) => {
                self.end_parked(op, |_| Error::Refused(error));
                return Ok(());
            }
        };
        let Some(at) = self.parked.iter().position(|request| request.op == op) else {
            return Ok(());
        };
        let step = match self
            .parked
            .get_mut(at)
            .map(|request| &mut request.operation)
        {
            Some(Operation::Call(call)) => call.give(
                index,
                String::from(answer.as_str()),
                self.config.limits.frame_bytes,
            ),
            _ => None,
        };
        if let Some(step) = step {
            let request = self.parked.remove(at);
            self.apply(request, step);
        }
        Ok(())
    }

    /// The next event, with every [`Event::ServerRequest`] before it answered by
    /// `responder` at once (and not given), when there is one. An answer that cannot be
    /// sent as given (it would not fit in a frame) is replaced by an error (-32603).
    #[must_use = "events carry the ends of operations"]
    pub fn poll_event_with<R: Responder + ?Sized>(
        &mut self,
        mut responder: Option<&mut R>,
    ) -> Option<Event> {
        loop {
            let event = self.events.pop_front()?;
            let (Event::ServerRequest(request), Some(responder)) = (&event, responder.as_mut())
            else {
                return Some(event);
            };
            let reply = responder.respond(request);
            if let Err(Misuse::FrameTooLong { .. }) = self.answer(request.ticket, reply) {
                let refusal = RpcError::new(
                    ErrorCode::INTERNAL_ERROR,
                    "the application's answer is too long",
                );
                let _ = self.answer(request.ticket, Reply::Error(refusal));
            }
        }
    }

    /// Hands the server's request of kind `kind` to the application under a new ticket;
    /// refuses it, with the error to answer, when [`Limits::asks_waiting`](crate::Limits)
    /// wait already.
    pub(super) fn hand_over(
        &mut self,
        awaiting: Awaiting,
        kind: AskKind,
        params: RawObject,
    ) -> Result<(), RpcError> {
        if self.asks.len() >= self.config.limits.asks_waiting {
            return Err(RpcError::new(
                ErrorCode::INTERNAL_ERROR,
                "too many requests wait for the application's answer",
            ));
        }
        let ticket = Ticket(self.next_ticket);
        self.next_ticket += 1;
        self.asks.push((ticket, awaiting));
        self.events.push_back(Event::ServerRequest(ServerRequest {
            ticket,
            kind,
            params,
        }));
        Ok(())
    }

    /// Parks `request`'s call until the application has answered all of `asked`, each
    /// handed over; a call that asks more than may wait at once fails instead.
    pub(super) fn park(&mut self, request: InFlight, asked: Asked) {
        let limit = self.config.limits.asks_waiting;
        if self.asks.len().saturating_add(asked.len()) > limit {
            let error = ProtocolViolation::TooManyAsks { limit };
            return self.finish(request.op, Err(error.into()));
        }
        let op = request.op;
        self.parked.push(request);
        for (index, kind, params) in asked {
            // Room for every one was checked above.
            let _ = self.hand_over(Awaiting::Input { op, index }, kind, params);
        }
    }

    /// Ends the parked call `op`, if there is one, with the error `why` gives for its
    /// method; its questions wait no more. Whether it was parked.
    pub(super) fn end_parked(&mut self, op: OpId, why: impl FnOnce(Method) -> Error) -> bool {
        let Some(at) = self.parked.iter().position(|request| request.op == op) else {
            return false;
        };
        let request = self.parked.remove(at);
        self.asks.retain(
            |(_, awaiting)| !matches!(awaiting, Awaiting::Input { op: of, .. } if *of == op),
        );
        self.finish(op, Err(why(request.method)));
        true
    }

    /// Queues the answer to the server's request `id`.
    pub(super) fn respond(&mut self, id: RequestId, outcome: Outcome) -> Result<(), Misuse> {
        let message = Message::Response(Response { id, outcome });
        if self.room_to_send().is_err() {
            return Err(Misuse::ConnectionFailed);
        }
        let limits = &self.config.limits;
        self.transmit.push(Sent::Response, |out| {
            let start = out.len();
            encode_frame(&message, limits, out).map(|()| out.len() - start)
        })
    }

    /// The server withdrew its request: if it waits for the application, it waits no more.
    pub(super) fn on_cancelled(&mut self, params: Option<&RawObject>) {
        let Some(id) = params.and_then(|p| Object::of(p).get("requestId")) else {
            return;
        };
        self.asks.retain(|(_, awaiting)| {
            let Awaiting::Request(waiting) = awaiting else {
                return true;
            };
            let mut text = Vec::new();
            waiting.write_json(&mut text);
            text != id.text().as_bytes()
        });
    }
}
