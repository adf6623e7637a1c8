//! Calls: one request, one typed result (`tools/call`, `resources/read`, `prompts/get`), and
//! in 2026-07-28 the same request sent again with the roots a server asked for.

use alloc::boxed::Box;
use alloc::string::String;

use crate::error::{Error, Incompatible, ProtocolViolation};
use crate::event::Output;
use crate::json::view::{JsonRef, Object, Problem};
use crate::json::write::object_text;
use crate::method::{CallKind, Method};
use crate::results::{CallToolResult, GetPromptResult, ResourceContents};
use crate::roots::{roots_result, Root};

use super::{Context, Machine, Next, Step};

/// A call in flight.
#[derive(Debug)]
pub(crate) struct Call {
    pub(crate) kind: CallKind,
    /// What sending the call again takes, kept only where the client can answer an
    /// `input_required` result: a 2026-07-28 session that gives roots.
    pub(crate) again: Option<Box<Again>>,
}

/// A call that may be sent again with the input its server asked for.
#[derive(Debug)]
pub(crate) struct Again {
    /// The request's own params: compact object text, without `_meta`.
    pub(crate) params: String,
    /// How many times it was sent again so far.
    pub(crate) rounds: usize,
}

impl Call {
    /// A call that is never sent again.
    pub(crate) fn once(kind: CallKind) -> Self {
        Call { kind, again: None }
    }
}

impl Machine for Call {
    fn on_result(&mut self, result: &Object<'_>, _ctx: &Context<'_>) -> Step {
        let read = match self.kind {
            CallKind::Tool => CallToolResult::read(result).map(Output::CallTool),
            CallKind::Resource => ResourceContents::read_all(result).map(Output::ReadResource),
            CallKind::Prompt => GetPromptResult::read(result).map(Output::GetPrompt),
        };
        match read {
            Ok(output) => Step::Done(output),
            Err(problem) => Step::Fail(self.invalid(problem)),
        }
    }

    /// The server asks for input: where it asks only for the roots and the application
    /// gives some, the call goes again under a new id with them, at most
    /// [`Limits::input_rounds`](crate::Limits) times; anything else is refused.
    fn on_input_required(&mut self, result: &Object<'_>, ctx: &Context<'_>) -> Step {
        let (Some(again), Some(roots)) = (self.again.as_deref_mut(), ctx.roots) else {
            return Step::Fail(Incompatible::InputRequired.into());
        };
        let limit = ctx.limits.input_rounds;
        if again.rounds >= limit {
            return Step::Fail(ProtocolViolation::TooManyInputRounds { limit }.into());
        }
        match answered(result, roots, &again.params) {
            Ok(Some(params)) => {
                again.rounds += 1;
                Step::Send(Next::Again {
                    kind: self.kind,
                    params,
                })
            }
            Ok(None) => Step::Fail(Incompatible::InputRequired.into()),
            Err(problem) => Step::Fail(self.invalid(problem)),
        }
    }
}

impl Call {
    fn invalid(&self, problem: Problem) -> Error {
        Error::Protocol(ProtocolViolation::InvalidResult {
            method: Method::Call(self.kind).as_str(),
            problem,
        })
    }
}

/// The params of the call sent again: `params`' members, then `inputResponses` answering
/// each of `result`'s `inputRequests` with `roots`, then its `requestState` as it came.
/// `None` when the server asks for anything but the roots.
fn answered(result: &Object<'_>, roots: &[Root], params: &str) -> Result<Option<String>, Problem> {
    let [requests, state] = result.fields(["inputRequests", "requestState"]);
    if requests.is_none() && state.is_none() {
        return Err("input_required with neither inputRequests nor requestState");
    }
    let responses = match requests {
        None => None,
        Some(requests) => {
            let requests = requests
                .as_object()
                .ok_or("inputRequests is not an object")?;
            for (_, request) in requests.members() {
                let method = request
                    .as_object()
                    .and_then(|request| request.get("method"))
                    .and_then(JsonRef::as_str)
                    .ok_or("an input request without a method")?;
                if method != "roots/list" {
                    return Ok(None);
                }
            }
            let listed = roots_result(roots);
            Some(object_text(|responses| {
                for (key, _) in requests.members() {
                    responses.raw(&key, &listed);
                }
            }))
        }
    };
    Ok(Some(object_text(|again| {
        again.members_of_text(params);
        if let Some(responses) = &responses {
            again.raw("inputResponses", responses);
        }
        if let Some(state) = state {
            again.raw("requestState", state.text());
        }
    })))
}
