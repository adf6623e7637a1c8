//! The requests this client sends, as one closed set: what each is called on the wire and
//! how it behaves. Behaviour is asked of these enums, never of a method's string.

use crate::server::ServerCapabilities;

/// What a listing lists; also the server capability that the listing (and the calls and
/// reads of what it lists) needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ListKind {
    /// Tools.
    Tools,
    /// Resources.
    Resources,
    /// Prompts.
    Prompts,
}

impl ListKind {
    /// The listing's method, such as `tools/list`.
    pub const fn method(self) -> &'static str {
        match self {
            ListKind::Tools => "tools/list",
            ListKind::Resources => "resources/list",
            ListKind::Prompts => "prompts/list",
        }
    }

    /// The server capability the listing needs, as the server declares it (`tools`, ...);
    /// also the member of a listing's result that holds the items.
    pub const fn capability(self) -> &'static str {
        match self {
            ListKind::Tools => "tools",
            ListKind::Resources => "resources",
            ListKind::Prompts => "prompts",
        }
    }

    /// Whether `capabilities` declare what this kind needs.
    pub(crate) fn offered(self, capabilities: &ServerCapabilities) -> bool {
        match self {
            ListKind::Tools => capabilities.tools,
            ListKind::Resources => capabilities.resources,
            ListKind::Prompts => capabilities.prompts,
        }
    }
}

/// A request that returns one result and no list: calling a tool, reading a resource,
/// expanding a prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CallKind {
    /// `tools/call`.
    Tool,
    /// `resources/read`.
    Resource,
    /// `prompts/get`.
    Prompt,
}

impl CallKind {
    /// The capability the call needs.
    pub(crate) const fn needs(self) -> ListKind {
        match self {
            CallKind::Tool => ListKind::Tools,
            CallKind::Resource => ListKind::Resources,
            CallKind::Prompt => ListKind::Prompts,
        }
    }
}

/// Every request method this client sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    /// `server/discover` (2026-07-28).
    Discover,
    /// `initialize` (2025-06-18, 2025-11-25).
    Initialize,
    /// `tools/list`, `resources/list` or `prompts/list`.
    List(ListKind),
    /// `tools/call`, `resources/read` or `prompts/get`.
    Call(CallKind),
    /// `subscriptions/listen` (2026-07-28).
    Listen,
    /// `resources/subscribe` (2025-06-18, 2025-11-25).
    Subscribe,
    /// `resources/unsubscribe` (2025-06-18, 2025-11-25).
    Unsubscribe,
    /// `logging/setLevel` (2025-06-18, 2025-11-25).
    SetLevel,
}

impl Method {
    /// The method as it is written on the wire.
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Method::Discover => "server/discover",
            Method::Initialize => "initialize",
            Method::List(kind) => kind.method(),
            Method::Call(CallKind::Tool) => "tools/call",
            Method::Call(CallKind::Resource) => "resources/read",
            Method::Call(CallKind::Prompt) => "prompts/get",
            Method::Listen => "subscriptions/listen",
            Method::Subscribe => "resources/subscribe",
            Method::Unsubscribe => "resources/unsubscribe",
            Method::SetLevel => "logging/setLevel",
        }
    }

    /// Whether an abandoned request of this method is cancelled with the server
    /// (`notifications/cancelled`): every one but `initialize`, which the spec says must
    /// never be cancelled.
    pub(crate) const fn cancellable(self) -> bool {
        !matches!(self, Method::Initialize)
    }

    /// Whether the request carries the session's `_meta` in the stateless revision. The
    /// handshake's own requests carry their own, or none.
    pub(crate) const fn carries_session_meta(self) -> bool {
        !matches!(self, Method::Discover | Method::Initialize)
    }

    /// What [`Error::Timeout`](crate::Error::Timeout) names when an operation with this
    /// request in flight runs out of time: the handshake as a whole, or the method.
    pub(crate) const fn operation(self) -> &'static str {
        match self {
            Method::Discover | Method::Initialize => "handshake",
            other => other.as_str(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_initialize_is_never_cancelled_and_only_the_handshake_skips_the_session_meta() {
        let all = [
            Method::Discover,
            Method::Initialize,
            Method::List(ListKind::Tools),
            Method::List(ListKind::Resources),
            Method::List(ListKind::Prompts),
            Method::Call(CallKind::Tool),
            Method::Call(CallKind::Resource),
            Method::Call(CallKind::Prompt),
            Method::Listen,
            Method::Subscribe,
            Method::Unsubscribe,
            Method::SetLevel,
        ];
        let uncancellable: alloc::vec::Vec<&str> = all
            .iter()
            .filter(|m| !m.cancellable())
            .map(|m| m.as_str())
            .collect();
        assert_eq!(uncancellable, ["initialize"]);
        let bare: alloc::vec::Vec<&str> = all
            .iter()
            .filter(|m| !m.carries_session_meta())
            .map(|m| m.operation())
            .collect();
        assert_eq!(bare, ["handshake", "handshake"]);
    }
}
