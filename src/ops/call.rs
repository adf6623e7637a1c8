//! Calls: one request, one typed result (`tools/call`, `resources/read`, `prompts/get`).

use crate::error::{Error, ProtocolViolation};
use crate::event::Output;
use crate::json::view::Object;
use crate::method::{CallKind, Method};
use crate::results::{CallToolResult, GetPromptResult, ResourceContents};

use super::{Context, Machine, Step};

/// A call in flight.
#[derive(Debug)]
pub(crate) struct Call(pub(crate) CallKind);

impl Machine for Call {
    fn on_result(&mut self, result: &Object<'_>, _ctx: &Context<'_>) -> Step {
        let read = match self.0 {
            CallKind::Tool => CallToolResult::read(result).map(Output::CallTool),
            CallKind::Resource => ResourceContents::read_all(result).map(Output::ReadResource),
            CallKind::Prompt => GetPromptResult::read(result).map(Output::GetPrompt),
        };
        match read {
            Ok(output) => Step::Done(output),
            Err(problem) => Step::Fail(Error::Protocol(ProtocolViolation::InvalidResult {
                method: Method::Call(self.0).as_str(),
                problem,
            })),
        }
    }
}
