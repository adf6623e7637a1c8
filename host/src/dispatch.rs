//! A model's tool call, checked before a byte is sent: routed, allowed, its arguments valid.

use std::fmt;

use mcp_sansio::{CallToolResult, Client, Instant, Misuse, Op, RawObject};
use serde_json::Value;

use crate::palette::Palette;

/// A checked call, ready for the client of the server behind it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Dispatch<'p> {
    /// The name the model called.
    pub name: &'p str,
    /// The id of the server behind it.
    pub server: &'p str,
    /// The tool's name on that server.
    pub tool: &'p str,
    /// The arguments, valid against the tool's inputSchema.
    pub arguments: RawObject,
}

impl Dispatch<'_> {
    /// Queues the call on `client`, the session with server [`server`](Self::server). The
    /// core checks its own allowlist once more before it queues anything.
    ///
    /// # Errors
    /// What [`Client::call_tool`] refuses.
    pub fn call(&self, client: &mut Client, now: Instant) -> Result<Op<CallToolResult>, Misuse> {
        client.call_tool(self.tool, &self.arguments, now)
    }
}

/// Why a model's tool call was refused before anything was sent. Each reads as one sentence
/// the model can act on.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// No offered tool has this name.
    UnknownTool {
        /// The name the model used.
        name: String,
    },
    /// The application does not allow the tool behind this name.
    NotAllowed {
        /// The name the model used.
        name: String,
    },
    /// The argument text is not one JSON object within this application's limits.
    ArgumentsNotAnObject {
        /// The name the model used.
        name: String,
        /// What was wrong with the text.
        reason: String,
    },
    /// The palette's search tool could not rank the query (its model failed); the call was
    /// the application's own, so nothing was sent to a server.
    SearchFailed {
        /// Why, as the ranker said.
        reason: String,
    },
    /// The arguments break the tool's inputSchema.
    InvalidArguments {
        /// The name the model used.
        name: String,
        /// One sentence per problem (`missing required argument 'amount'`), at most
        /// [`MAX_PROBLEMS`](crate::MAX_PROBLEMS).
        problems: Vec<String>,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::UnknownTool { name } => {
                write!(
                    f,
                    "there is no tool named '{name}'; call one of the tools offered"
                )
            }
            Refusal::NotAllowed { name } => {
                write!(f, "the tool '{name}' is not allowed by this application")
            }
            Refusal::ArgumentsNotAnObject { name, reason } => {
                write!(
                    f,
                    "the arguments for '{name}' must be one JSON object: {reason}"
                )
            }
            Refusal::SearchFailed { reason } => write!(f, "the tool search failed: {reason}"),
            Refusal::InvalidArguments { name: _, problems } => f.write_str(&problems.join("; ")),
        }
    }
}

impl std::error::Error for Refusal {}

impl Palette {
    /// Checks the model's call of `name` with argument text `arguments` and says where it
    /// goes: the name must be offered, the tool still allowed by its server's allowlist, and
    /// the arguments one JSON object valid against the inputSchema the server published.
    /// Empty argument text is read as `{}`. When tools are offered in strict form, a `null`
    /// for a top-level argument the schema does not require is read as the argument left out
    /// (strict form makes such arguments nullable; see [`OfferOptions`](crate::OfferOptions)).
    ///
    /// # Errors
    /// A [`Refusal`]; nothing is to be sent.
    pub fn dispatch(&self, name: &str, arguments: &str) -> Result<Dispatch<'_>, Refusal> {
        let Some((server, entry)) = self.entry(name) else {
            return Err(Refusal::UnknownTool {
                name: name.to_owned(),
            });
        };
        if !self.allows(server, &entry.tool.name) {
            return Err(Refusal::NotAllowed {
                name: name.to_owned(),
            });
        }
        let (raw, value) = self.read_arguments(name, arguments, &entry.schema)?;
        let problems = entry.input.problems(&value, "argument");
        if !problems.is_empty() {
            return Err(Refusal::InvalidArguments {
                name: name.to_owned(),
                problems,
            });
        }
        Ok(Dispatch {
            name: &entry.name,
            server,
            tool: &entry.tool.name,
            arguments: raw,
        })
    }
}

impl Palette {
    /// The model's argument text for tool `name` (offered with input `schema`) as one JSON
    /// object within the limits; empty text is `{}`, and in strict form a `null` for an
    /// optional top-level argument is the argument left out.
    pub(crate) fn read_arguments(
        &self,
        name: &str,
        arguments: &str,
        schema: &Value,
    ) -> Result<(RawObject, Value), Refusal> {
        let not_object = |reason: String| Refusal::ArgumentsNotAnObject {
            name: name.to_owned(),
            reason,
        };
        let text = if arguments.trim().is_empty() {
            "{}"
        } else {
            arguments
        };
        let limits = &self.config.limits;
        let mut raw = RawObject::parse(text, limits).map_err(|e| not_object(e.to_string()))?;
        let mut value: Value = raw.deserialize().map_err(|e| not_object(e.to_string()))?;
        if self.config.offer.strict && drop_optional_nulls(&mut value, schema) {
            raw =
                RawObject::from_serialize(&value, limits).map_err(|e| not_object(e.to_string()))?;
        }
        Ok((raw, value))
    }
}

/// Removes the top-level members of `arguments` that are `null` and not required by
/// `schema`. Returns whether any was removed.
fn drop_optional_nulls(arguments: &mut Value, schema: &Value) -> bool {
    let Some(members) = arguments.as_object_mut() else {
        return false;
    };
    let required = |key: &str| {
        schema
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|k| k.as_str() == Some(key)))
    };
    let before = members.len();
    members.retain(|key, value| !value.is_null() || required(key));
    members.len() != before
}
