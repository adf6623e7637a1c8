//! What goes back to the model after a call: the tool's answer, the tool's own error, or a
//! failure, never one passed off as another.

use std::fmt;

use mcp_sansio::{CallOptions, CallToolResult, Error};
use serde_json::Value;

use crate::dispatch::Refusal;
use crate::palette::Palette;

/// What the model is told about one call.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Observation {
    /// The tool ran and answered.
    Answer {
        /// Its text blocks, joined by newlines; its structured content as JSON text when it
        /// has no text.
        text: String,
    },
    /// The tool ran and said it failed (`isError`): its own words, which the model may act on.
    ToolError {
        /// Its text blocks, joined by newlines.
        text: String,
    },
    /// There is no result: the call was refused before it was sent, or it failed on the way
    /// (a deadline, a server that broke the protocol, closed or refused the request).
    Failure {
        /// One sentence saying what happened, naming the tool.
        sentence: String,
    },
}

impl Observation {
    /// The text for the model.
    pub fn text(&self) -> &str {
        match self {
            Observation::Answer { text } | Observation::ToolError { text } => text,
            Observation::Failure { sentence } => sentence,
        }
    }

    /// Whether the model should read it as an error (Anthropic's `is_error`).
    pub fn is_error(&self) -> bool {
        !matches!(self, Observation::Answer { .. })
    }

    /// A call of `name` that the dispatcher refused: nothing was sent.
    pub fn refused(refusal: &Refusal) -> Self {
        Observation::Failure {
            sentence: format!("not called: {refusal}"),
        }
    }

    /// A call of `name` that failed in the core: it has no result.
    pub fn failed(name: &str, error: &Error) -> Self {
        let sentence = match error {
            Error::Timeout { .. } => {
                format!("the {name} tool did not answer before its deadline; there is no result")
            }
            Error::Closed => {
                format!("the server behind {name} stopped before answering; there is no result")
            }
            Error::Rpc(e) => format!(
                "the server refused the {name} call (error {}): {}; there is no result",
                e.code, e.message
            ),
            Error::Misuse(e) => {
                format!("not called: this application refused the {name} call: {e}")
            }
            Error::Cancelled => format!("the {name} call was cancelled; there is no result"),
            other => format!("the {name} call failed: {other}; there is no result"),
        };
        Observation::Failure { sentence }
    }

    /// A call of `name` that got no answer within `deadline` (the operation timeout it was
    /// sent under): "the word_count tool did not answer within 1 s".
    pub fn timed_out(name: &str, deadline: core::time::Duration) -> Self {
        let within = if deadline.subsec_millis() == 0 {
            format!("{} s", deadline.as_secs())
        } else {
            format!("{} ms", deadline.as_millis())
        };
        Observation::Failure {
            sentence: format!("the {name} tool did not answer within {within}; there is no result"),
        }
    }

    /// A call of `name` sent under `options` that timed out, where `timeout` is the
    /// operation timeout of its server: [`timed_out`](Self::timed_out) with the deadline the
    /// call had, its own or the server's; a call that asked for progress had its deadline
    /// moved by the server's reports, so it is said to have missed its deadline, no more.
    pub fn timed_out_under(
        name: &str,
        options: CallOptions,
        timeout: core::time::Duration,
    ) -> Self {
        match options.progress_up_to {
            None => Observation::timed_out(name, options.timeout.unwrap_or(timeout)),
            Some(_) => Observation::failed(
                name,
                &Error::Timeout {
                    operation: "tools/call",
                },
            ),
        }
    }

    /// A call of `name` that failed outside the core (the transport): it has no result.
    pub fn lost(name: &str, why: &dyn fmt::Display) -> Self {
        Observation::Failure {
            sentence: format!("the {name} call failed: {why}; there is no result"),
        }
    }
}

impl fmt::Display for Observation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text())
    }
}

impl Palette {
    /// What the model is told about `result`, the answer to its call of `name`. When the
    /// tool published an `outputSchema`, a successful result must carry `structuredContent`
    /// valid against it; one that does not is a failure, not an answer.
    pub fn observe(&self, name: &str, result: &CallToolResult) -> Observation {
        let text = result.text().into_owned();
        if result.is_error {
            return Observation::ToolError { text };
        }
        let structured = match &result.structured_content {
            None => None,
            Some(raw) => match raw.deserialize::<Value>() {
                Ok(value) => Some(value),
                Err(e) => return mismatch(name, &e.to_string()),
            },
        };
        if let Some(output) = self.entry(name).and_then(|(_, e)| e.output.as_ref()) {
            let Some(value) = &structured else {
                return mismatch(name, "it has no structuredContent");
            };
            let problems = output.problems(value, "member");
            if !problems.is_empty() {
                return mismatch(name, &problems.join("; "));
            }
        }
        match structured {
            Some(value) if text.is_empty() => Observation::Answer {
                text: value.to_string(),
            },
            _ => Observation::Answer { text },
        }
    }
}

fn mismatch(name: &str, why: &str) -> Observation {
    Observation::Failure {
        sentence: format!(
            "the {name} tool's result does not match its output schema ({why}); there is no result"
        ),
    }
}
