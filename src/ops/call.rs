//! Calls: one request, one typed result (`tools/call`, `resources/read`, `prompts/get`), and
//! in 2026-07-28 the same request sent again with the input a server asked for: the roots,
//! which the client gives, and what the application answers (elicitation, sampling).

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

use crate::asks::{AskKind, Refusal};
use crate::error::{Error, Incompatible, ProtocolViolation};
use crate::event::Output;
use crate::json::view::{JsonRef, Object, Problem};
use crate::json::write::{object_text, ObjectWriter};
use crate::json::RawObject;
use crate::method::{CallKind, Method};
use crate::results::{CallToolResult, GetPromptResult, ResourceContents};
use crate::roots::roots_result;
use crate::version::Era;

use super::{Context, Machine, Next, Step};

/// A call in flight.
#[derive(Debug)]
pub(crate) struct Call {
    pub(crate) kind: CallKind,
    /// What sending the call again takes, kept only where the client can answer an
    /// `input_required` result: a 2026-07-28 session that gives roots or answers asks.
    pub(crate) again: Option<Box<Again>>,
}

/// A call that may be sent again with the input its server asked for.
#[derive(Debug)]
pub(crate) struct Again {
    /// The request's own params: compact object text, without `_meta`.
    pub(crate) params: String,
    /// How many times it was sent again so far.
    pub(crate) rounds: usize,
    /// The input being gathered for the next round: each key and its answer, in the
    /// server's order.
    pub(crate) input: Vec<(String, Input)>,
    /// The answer to `roots/list` (compact object text), written once for all the keys that
    /// ask for the roots.
    pub(crate) roots: String,
    /// The `requestState` to echo in the next round, as it came.
    pub(crate) state: Option<String>,
}

/// One answer of the input gathered for a call's next round.
#[derive(Debug)]
pub(crate) enum Input {
    /// The roots the application gives.
    Roots,
    /// What the application answered (compact object text).
    Given(String),
    /// Not answered yet.
    Waiting,
}

impl Input {
    /// The answer's text, where the roots' answer is `roots`.
    fn text<'a>(&'a self, roots: &'a str) -> &'a str {
        match self {
            Input::Roots => roots,
            Input::Given(text) => text,
            Input::Waiting => "{}",
        }
    }
}

impl Again {
    /// A call with `params` that has not been sent again yet.
    pub(crate) fn new(params: String) -> Self {
        Again {
            params,
            rounds: 0,
            input: Vec::new(),
            roots: String::new(),
            state: None,
        }
    }
}

/// What an `input_required` asks of the application: the requests it must answer before
/// the call can go again, each with its place among the call's input.
pub(crate) type Asked = Vec<(usize, AskKind, RawObject)>;

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

    /// The server asks for input: the roots are given where the application gives some,
    /// and what [`Config::asks`](crate::Config) declares waits for the application (see
    /// [`Call::give`]); then the call goes again under a new id, at most
    /// [`Limits::input_rounds`](crate::Limits) times. Anything else is refused.
    fn on_input_required(&mut self, result: &Object<'_>, ctx: &Context<'_>) -> Step {
        let Some(again) = self.again.as_deref_mut() else {
            return Step::Fail(Incompatible::InputRequired.into());
        };
        let limit = ctx.limits.input_rounds;
        if again.rounds >= limit {
            return Step::Fail(ProtocolViolation::TooManyInputRounds { limit }.into());
        }
        match gather(result, ctx, again) {
            Ok(Some(asked)) if asked.is_empty() => self.go_again(ctx.limits.frame_bytes),
            Ok(Some(asked)) => Step::Ask(asked),
            Ok(None) => Step::Fail(Incompatible::InputRequired.into()),
            Err(problem) => Step::Fail(self.invalid(problem)),
        }
    }
}

impl Call {
    /// The application answered the input at `index` with `answer` (compact object text):
    /// once every answer is in, the call goes again (within `frame_bytes`); until then,
    /// `None`.
    pub(crate) fn give(
        &mut self,
        index: usize,
        answer: String,
        frame_bytes: usize,
    ) -> Option<Step> {
        let again = self.again.as_deref_mut()?;
        if let Some((_, slot)) = again.input.get_mut(index) {
            *slot = Input::Given(answer);
        }
        again
            .input
            .iter()
            .all(|(_, answer)| !matches!(answer, Input::Waiting))
            .then(|| self.go_again(frame_bytes))
    }

    /// The call sent again: its params, then `inputResponses` with every answer gathered,
    /// then the `requestState` as it came. A server that asks for the roots under so many
    /// keys that the request would not fit in `frame_bytes` fails the call before any of
    /// it is written.
    fn go_again(&mut self, frame_bytes: usize) -> Step {
        let Some(again) = self.again.as_deref_mut() else {
            return Step::Fail(Incompatible::InputRequired.into());
        };
        again.rounds += 1;
        let input = core::mem::take(&mut again.input);
        let state = again.state.take();
        let roots = again.roots.as_str();
        // Each member costs at most its key escaped (six bytes a character), its answer, and
        // four bytes of punctuation.
        let size = input.iter().fold(again.params.len(), |size, (key, given)| {
            size.saturating_add(key.len().saturating_mul(6))
                .saturating_add(given.text(roots).len())
                .saturating_add(4)
        });
        if size.saturating_add(state.as_ref().map_or(0, String::len)) >= frame_bytes {
            return Step::Fail(self.invalid("the input it asks for would not fit in one frame"));
        }
        let params = object_text(|params| {
            params.members_of_text(&again.params);
            if !input.is_empty() {
                params.key("inputResponses");
                let mut responses = ObjectWriter::open(params.out());
                for (key, given) in &input {
                    responses.raw(key, given.text(roots));
                }
                responses.close();
            }
            if let Some(state) = &state {
                params.raw("requestState", state);
            }
        });
        Step::Send(Next::Again {
            kind: self.kind,
            params,
        })
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

/// Reads `result`'s `inputRequests` into `again`: the roots answered at once, what the
/// application answers listed in what this returns. `None` when the server asks for
/// anything this client did not declare.
fn gather(
    result: &Object<'_>,
    ctx: &Context<'_>,
    again: &mut Again,
) -> Result<Option<Asked>, Problem> {
    let [requests, state] = result.fields(["inputRequests", "requestState"]);
    if requests.is_none() && state.is_none() {
        return Err("input_required with neither inputRequests nor requestState");
    }
    again.state = state.map(|state| String::from(state.text()));
    again.input.clear();
    again.roots.clear();
    let mut asked = Vec::new();
    let Some(requests) = requests else {
        return Ok(Some(asked));
    };
    let requests = requests
        .as_object()
        .ok_or("inputRequests is not an object")?;
    for (key, request) in requests.members() {
        let request = request.as_object();
        let [method, params] = request.map_or([None, None], |r| r.fields(["method", "params"]));
        let method = method
            .and_then(JsonRef::as_str)
            .ok_or("an input request without a method")?;
        let answer = match (method.as_ref(), ctx.roots) {
            ("roots/list", Some(roots)) => {
                if again.roots.is_empty() {
                    again.roots = roots_result(roots);
                }
                Input::Roots
            }
            _ => {
                let params = params.and_then(JsonRef::as_object).map(Object::to_raw);
                match ctx.asks.read(&method, params.as_ref(), Era::Stateless) {
                    None | Some(Err(Refusal::Mode)) => return Ok(None),
                    Some(Err(Refusal::Malformed(why))) => return Err(why),
                    Some(Ok(kind)) => {
                        let params = params.unwrap_or_else(RawObject::empty);
                        asked.push((again.input.len(), kind, params));
                        Input::Waiting
                    }
                }
            }
        };
        again.input.push((String::from(key.as_ref()), answer));
    }
    Ok(Some(asked))
}
