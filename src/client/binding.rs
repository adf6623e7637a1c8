//! What a transport that carries each message on its own (Streamable HTTP) needs of the
//! client besides the run loop: which revision a request's headers name, whether a request
//! is still awaited, and ways to end a request that an HTTP reply left unanswered.

use super::{Answer, Client, State};
use crate::error::{Error, HttpError};
use crate::id::RequestId;
use crate::ops::handshake::Handshake;
use crate::ops::Operation;
use crate::rpc_error::RpcError;
use crate::time::Instant;
use crate::version::{Era, ProtocolVersion};
use crate::Config;

impl Client {
    /// A client whose catalogs are read as over Streamable HTTP: in 2026-07-28, tools whose
    /// `x-mcp-header` markers break the rules are left out.
    pub(crate) fn over_http(config: Config) -> Self {
        let mut client = Client::new(config);
        client.header_markers = true;
        client
    }

    /// The request of the `logging/setLevel` the client sent itself after a handshake
    /// ([`Config::log_level`](crate::Config::log_level), or a renewed session), while it
    /// waits for its answer: over HTTP, which keeps no order between requests, nothing else
    /// goes out until the server has answered it.
    pub(crate) fn leveling_request(&self) -> Option<i64> {
        let leveling = self.leveling?;
        self.requests
            .iter()
            .find(|(_, request)| request.op == leveling)
            .map(|(id, _)| id)
    }

    /// Whether request `id` still waits for its answer.
    pub(crate) fn waits_for(&self, id: i64) -> bool {
        self.requests.iter().any(|(waiting, _)| waiting == id)
    }

    /// The revision request `id`'s headers name: the one a `server/discover` in flight asks
    /// for, else the session's; `None` before a session (`initialize`).
    pub(crate) fn header_version(&self, id: i64) -> Option<ProtocolVersion> {
        let discovering = self.requests.iter().find_map(|(waiting, request)| {
            match (&request.operation, waiting == id) {
                (Operation::Handshake(handshake), true) => Some(handshake.discovering()),
                _ => None,
            }
        });
        match discovering {
            Some(asked) => asked,
            None => self.connection().map(|c| c.version),
        }
    }

    /// A JSON-RPC error in an HTTP error reply answers request `id`, whatever id the body
    /// names (servers write `null`, or a placeholder of their own, when they refuse a request
    /// before reading it).
    pub(crate) fn answer_error(&mut self, id: i64, error: RpcError, now: Instant) {
        self.handle_timeout(now);
        if !self.is_failed() {
            self.on_response(RequestId::from(id), Answer::Error(error));
        }
    }

    /// Request `id` will get no answer: its operation fails with `error`. The handshake's
    /// probe refused with a status that a server of the handshake revisions gives
    /// (`legacy`) moves on to `initialize` instead.
    pub(crate) fn refuse(&mut self, id: i64, error: Error, legacy: bool, now: Instant) {
        self.handle_timeout(now);
        let Some(mut request) = self.requests.remove(id) else {
            return;
        };
        self.requests.remember(id, false);
        let ctx = self.context();
        let fallback = match &mut request.operation {
            Operation::Handshake(handshake) if legacy => handshake.refused_as_legacy(&ctx),
            _ => None,
        };
        match fallback {
            Some(step) => self.apply(request, step),
            None => self.finish(request.op, Err(error)),
        }
    }

    /// Request `id`'s reply was lost before its answer (2026-07-28): the request is to be
    /// sent again under a new id, which this returns. Its operation keeps its deadline; the
    /// old id is remembered as abandoned, so an answer to it after all is late, not unknown.
    /// `None` when `id` no longer waits (its deadline passed), or when no id is left, and
    /// then its operation fails with `error`.
    pub(crate) fn reissue(&mut self, id: i64, error: Error, now: Instant) -> Option<i64> {
        self.handle_timeout(now);
        let request = self.requests.remove(id)?;
        self.requests.remember(id, false);
        let Some(new) = self.requests.next_id() else {
            self.finish(request.op, Err(error));
            return None;
        };
        self.requests.insert(new, request);
        Some(new)
    }

    /// The server ended the session. Every request in flight but `keep` fails (it may have
    /// run, so it is not sent again), and `initialize` is sent again; `keep`, which the old
    /// session never took, waits on under its own deadline for the transport to send it
    /// again. The renewal's end is not an event: when it fails, so does the connection.
    pub(crate) fn renew_session(&mut self, keep: Option<i64>, now: Instant) {
        self.handle_timeout(now);
        let version = match &self.state {
            State::Ready(session) if session.connected.version.era() == Era::Stateful => {
                session.connected.version
            }
            _ => return self.fail_connection(HttpError::SessionRenewalFailed.into()),
        };
        let ended: alloc::vec::Vec<i64> = self
            .requests
            .iter()
            .map(|(id, _)| id)
            .filter(|id| Some(*id) != keep)
            .collect();
        for id in ended {
            if let Some(request) = self.requests.abandon(id, false) {
                self.finish(request.op, Err(HttpError::SessionEnded.into()));
            }
        }
        let (handshake, first) = Handshake::renew(version);
        match self.start_with::<()>(Operation::Handshake(handshake), now, first) {
            Ok(op) => self.renewal = Some(op.id()),
            Err(misuse) => self.fail_connection(misuse.into()),
        }
    }

    /// The transport found the peer unusable: the connection fails with `error`.
    pub(crate) fn fail(&mut self, error: Error) {
        if !self.is_failed() {
            self.fail_connection(error);
        }
    }
}
