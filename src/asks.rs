//! What a server may ask of the application: elicitation (a question for the user) and
//! sampling (a completion from the application's model).
//!
//! Both are requests a server sends in the middle of its own work, and only the application
//! can answer them: the user decides what to tell a server, and the application decides
//! whether its model runs for one and what it costs. So the client declares them only where
//! [`Config::asks`](crate::Config) says so, checks each request's shape, hands it to the
//! application as an [`Event::ServerRequest`](crate::Event), and sends exactly the
//! [`Reply`] the application gives with [`Client::answer`](crate::Client::answer). A server
//! cannot make the client answer for the application, and cannot keep more than
//! [`Limits::asks_waiting`](crate::Limits) of its requests waiting at once.
//!
//! They are declared in the `initialize` of 2025-06-18 and 2025-11-25, where a server sends
//! them as requests of its own, and in every 2026-07-28 request's `_meta`, where a server
//! asks through a call's `input_required` result and reads the answers from the call sent
//! again. The application sees the same event and answers the same way in both.

use alloc::string::String;
use core::fmt;

use crate::json::view::Object;
use crate::json::write::object_text;
use crate::json::RawObject;
use crate::rpc_error::{ErrorCode, RpcError};
use crate::version::Era;

/// The requests a server may make of the application, declared as client capabilities.
/// Default: none, and a server's `elicitation/create` and `sampling/createMessage` get
/// -32601.
///
/// ```
/// use mcp_sansio::Asks;
///
/// let asks = Asks::NONE.with_elicitation().with_sampling();
/// assert!(asks.elicitation() && asks.sampling() && !asks.url_elicitation());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Asks {
    form: bool,
    url: bool,
    sampling: bool,
}

impl Asks {
    /// Nothing: the server can ask the application nothing.
    pub const NONE: Asks = Asks {
        form: false,
        url: false,
        sampling: false,
    };

    /// These, with elicitation in form mode: the server sends a message and a flat schema,
    /// and the application answers with the user's values, a decline, or a cancel.
    #[must_use]
    pub const fn with_elicitation(mut self) -> Self {
        self.form = true;
        self
    }

    /// These, with elicitation in URL mode (2025-11-25): the server sends a URL the user
    /// opens outside the client, and the application answers whether the user agreed to.
    #[must_use]
    pub const fn with_url_elicitation(mut self) -> Self {
        self.url = true;
        self
    }

    /// These, with sampling: the server sends messages, and the application answers with a
    /// completion from a model of its choosing, or refuses.
    #[must_use]
    pub const fn with_sampling(mut self) -> Self {
        self.sampling = true;
        self
    }

    /// Whether elicitation in form mode is declared.
    #[must_use]
    pub const fn elicitation(self) -> bool {
        self.form
    }

    /// Whether elicitation in URL mode is declared.
    #[must_use]
    pub const fn url_elicitation(self) -> bool {
        self.url
    }

    /// Whether sampling is declared.
    #[must_use]
    pub const fn sampling(self) -> bool {
        self.sampling
    }

    /// The capability members these declare, in an object's text without its braces:
    /// `"elicitation":{"form":{}},"sampling":{}` and the like, or nothing.
    pub(crate) fn capability_members(self) -> String {
        let mut members = String::new();
        if self.form || self.url {
            members.push_str("\"elicitation\":{");
            if self.form {
                members.push_str("\"form\":{}");
            }
            if self.url {
                members.push_str(if self.form {
                    ",\"url\":{}"
                } else {
                    "\"url\":{}"
                });
            }
            members.push('}');
        }
        if self.sampling {
            if !members.is_empty() {
                members.push(',');
            }
            members.push_str("\"sampling\":{}");
        }
        members
    }

    /// What a server's request `method` with `params` is, if these declare it: `None` for
    /// a method they do not declare (it gets -32601), a refusal for an elicitation of a
    /// mode they do not declare or a request whose params break the revision's shape (it
    /// gets -32602, and the application never sees it).
    ///
    /// A URL elicitation names its `elicitationId` in 2025-11-25; 2026-07-28 (`era`
    /// stateless) has none.
    pub(crate) fn read(
        self,
        method: &str,
        params: Option<&RawObject>,
        era: Era,
    ) -> Option<Result<AskKind, Refusal>> {
        let kind = match method {
            "elicitation/create" if self.form || self.url => {
                let Some(params) = params else {
                    return Some(Err(Refusal::Malformed("an elicitation needs params")));
                };
                let object = Object::of(params);
                let [mode, message, schema, url, id] =
                    object.fields(["mode", "message", "requestedSchema", "url", "elicitationId"]);
                let mode = match mode.map(|m| m.as_str()) {
                    None => ElicitationMode::Form,
                    Some(Some(m)) if m == "form" => ElicitationMode::Form,
                    Some(Some(m)) if m == "url" => ElicitationMode::Url,
                    Some(_) => return Some(Err(Refusal::Mode)),
                };
                let declared = match mode {
                    ElicitationMode::Form => self.form,
                    ElicitationMode::Url => self.url,
                };
                if !declared {
                    return Some(Err(Refusal::Mode));
                }
                let is_string = |v: Option<crate::json::view::JsonRef<'_>>| {
                    v.is_some_and(|v| v.as_str().is_some())
                };
                let shaped = is_string(message)
                    && match mode {
                        ElicitationMode::Form => schema.is_some_and(|s| s.is_object()),
                        ElicitationMode::Url => {
                            is_string(url) && (era == Era::Stateless || is_string(id))
                        }
                    };
                if !shaped {
                    return Some(Err(Refusal::Malformed(
                        "the elicitation's params are malformed",
                    )));
                }
                AskKind::Elicitation(mode)
            }
            "sampling/createMessage" if self.sampling => {
                let shaped = params.is_some_and(|params| {
                    let [messages, max] = Object::of(params).fields(["messages", "maxTokens"]);
                    messages.is_some_and(|m| m.as_array().is_some())
                        && max.and_then(|m| m.as_f64()).is_some()
                });
                if !shaped {
                    return Some(Err(Refusal::Malformed(
                        "the sampling request's params are malformed",
                    )));
                }
                AskKind::Sampling
            }
            _ => return None,
        };
        Some(Ok(kind))
    }
}

/// Why a server's request of a declared kind never reaches the application.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// An elicitation of a mode not declared (or of no mode the revisions know).
    Mode,
    /// Params that break the revision's shape, as said.
    Malformed(&'static str),
}

impl Refusal {
    /// The error (-32602) a stateful server's request so refused is answered with.
    pub(crate) fn rpc_error(self) -> RpcError {
        let message = match self {
            Refusal::Mode => "this client does not support that elicitation mode",
            Refusal::Malformed(why) => why,
        };
        RpcError::new(ErrorCode::INVALID_PARAMS, message)
    }
}

/// What a server asks of the application.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AskKind {
    /// `elicitation/create`: a question for the user.
    Elicitation(ElicitationMode),
    /// `sampling/createMessage`: a completion from the application's model.
    Sampling,
}

/// How an elicitation asks the user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ElicitationMode {
    /// Through a form the client shows, for the flat schema `requestedSchema`.
    Form,
    /// Through a `url` the user opens outside the client (2025-11-25).
    Url,
}

/// Names one server request waiting for the application's answer. Never reused within a
/// client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ticket(pub(crate) u64);

/// A request from the server that only the application can answer: see [`Asks`]. Answer it
/// with [`Client::answer`](crate::Client::answer) and its [`ticket`](Self::ticket).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerRequest {
    pub(crate) ticket: Ticket,
    pub(crate) kind: AskKind,
    pub(crate) params: RawObject,
}

impl ServerRequest {
    /// What names this request in the answer.
    #[must_use]
    pub fn ticket(&self) -> Ticket {
        self.ticket
    }

    /// What the server asks for.
    #[must_use]
    pub fn kind(&self) -> AskKind {
        self.kind
    }

    /// The request's params as the server sent them, whose shape the client checked:
    /// `message` and `requestedSchema` (or `url`, and in 2025-11-25 `elicitationId`) for an
    /// elicitation,
    /// `messages` and `maxTokens` for sampling. Read the rest with `serde_json`.
    #[must_use]
    pub fn params(&self) -> &RawObject {
        &self.params
    }

    /// An elicitation's `message` for the user, decoded; `None` for sampling.
    #[must_use]
    pub fn message(&self) -> Option<String> {
        match self.kind {
            AskKind::Elicitation(_) => Object::of(&self.params)
                .get("message")
                .and_then(|m| m.as_str())
                .map(String::from),
            AskKind::Sampling => None,
        }
    }
}

/// The application's answer to a [`ServerRequest`]: a result the server reads, or an error.
///
/// ```
/// use mcp_sansio::{Limits, RawObject, Reply};
///
/// let values = RawObject::parse(r#"{"name":"Ana"}"#, &Limits::default())?;
/// assert_eq!(
///     Reply::accept(&values),
///     Reply::Result(RawObject::parse(
///         r#"{"action":"accept","content":{"name":"Ana"}}"#,
///         &Limits::default()
///     )?)
/// );
/// # Ok::<(), mcp_sansio::Misuse>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// The result, as the revision shapes it (for sampling: `role`, `content`, `model`).
    Result(RawObject),
    /// An error: the application will not answer.
    Error(RpcError),
}

impl Reply {
    /// An elicitation answered: the user gave `content`, the values for the form's schema.
    #[must_use]
    pub fn accept(content: &RawObject) -> Reply {
        Reply::action("accept", Some(content))
    }

    /// A URL elicitation answered: the user agreed to open the URL. (No values come back
    /// through the client.)
    #[must_use]
    pub fn accepted() -> Reply {
        Reply::action("accept", None)
    }

    /// An elicitation the user declined.
    #[must_use]
    pub fn decline() -> Reply {
        Reply::action("decline", None)
    }

    /// An elicitation the user dismissed without choosing.
    #[must_use]
    pub fn cancel() -> Reply {
        Reply::action("cancel", None)
    }

    /// A refusal (for sampling, the revisions' "user rejected"): error -1 with `message`.
    #[must_use]
    pub fn refuse(message: impl Into<String>) -> Reply {
        Reply::Error(RpcError::new(ErrorCode(-1), message))
    }

    fn action(action: &str, content: Option<&RawObject>) -> Reply {
        Reply::Result(RawObject::from_trusted_text(object_text(|result| {
            result.string("action", action);
            if let Some(content) = content {
                result.raw("content", content.as_str());
            }
        })))
    }
}

impl fmt::Display for AskKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AskKind::Elicitation(ElicitationMode::Form) => "elicitation",
            AskKind::Elicitation(ElicitationMode::Url) => "URL elicitation",
            AskKind::Sampling => "sampling",
        })
    }
}

/// What answers a [`ServerRequest`] at once, inside a blocking driver's wait: a closure
/// `FnMut(&ServerRequest) -> Reply` is one. It runs while the operation that caused the
/// request waits, under that operation's deadline.
pub trait Responder: Send {
    /// The answer to `request`.
    fn respond(&mut self, request: &ServerRequest) -> Reply;
}

impl<F: FnMut(&ServerRequest) -> Reply + Send> Responder for F {
    fn respond(&mut self, request: &ServerRequest) -> Reply {
        self(request)
    }
}
