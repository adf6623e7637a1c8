//! Every bound the crate enforces, in one place.

use core::time::Duration;

/// Every bound mcp-sansio enforces on what a peer may make it hold, read or wait for.
///
/// Each field names one bound; hitting it is a typed error, never a panic or an unbounded
/// allocation. [`Limits::default`] suits real servers; [`Limits::teaching`] gives the small
/// values the teaching material uses, so a test can hit every bound with a few bytes.
///
/// The struct is `#[non_exhaustive]` so that later bounds can be added without breaking
/// callers: start from a constructor and change the fields you need.
///
/// ```
/// let mut limits = mcp_sansio::Limits::default();
/// limits.frame_bytes = 1 << 20;
/// assert_eq!(limits.nesting_depth, 64);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The longest frame, in bytes, counting its terminating newline. Default: 8 MiB.
    ///
    /// A frame is one JSON-RPC message on one line. A [`FrameReader`](crate::FrameReader)
    /// never holds more than `frame_bytes - 1` bytes of an unfinished line, and refuses a
    /// longer line as soon as it has seen `frame_bytes` bytes of it, newline or not;
    /// [`encode_frame`](crate::encode_frame) refuses to produce a longer frame. The default
    /// admits the largest real catalogs (a few hundred tools with full schemas are well under
    /// 1 MiB) and tool results that carry a base64 screenshot, while staying at half of the
    /// 16 MiB that other stdio clients allow at most.
    pub frame_bytes: usize,
    /// The deepest nesting of arrays and objects inside one frame; the frame's own object
    /// counts as depth 1. Default: 64.
    ///
    /// The parser keeps its own stack on the heap, so depth costs memory, not the call
    /// stack; the bound keeps that memory small. Real tool schemas nest a few levels deep.
    /// Keep it below 127, `serde_json`'s recursion limit, and every payload this crate
    /// accepts can later be deserialized with `serde_json`.
    pub nesting_depth: usize,
    /// How many notifications may arrive while a request waits for its answer. Default: 4096.
    ///
    /// A server may report progress or log while it works, but a server that only chatters
    /// must not keep a request waiting forever: one more notification than this fails the
    /// request as a protocol violation. Real servers log each step of a long call (the
    /// official Python SDK's `ctx.info` sends one message a line, unasked), so the default
    /// admits thousands; the operation's deadline bounds the wait itself. The seed chapter's
    /// 16 ([`Limits::teaching`]) failed a real server's call that logged 17 lines.
    ///
    /// This is the client session's bound; the framing layer does not count notifications.
    /// What comes tagged with a subscription of the client's
    /// ([`Client::listen`](crate::Client::listen)) is that subscription's, counted against no
    /// request; a subscription, once acknowledged, counts nothing.
    pub notifications_before_answer: usize,
    /// The most tools one catalog may hold, across all of its pages. Default: 1024.
    ///
    /// Every tool offered to a model costs prompt space, so a catalog beyond a thousand tools
    /// is a broken or hostile server, not a useful one. This is the client session's bound on
    /// `tools/list`.
    pub tools_per_catalog: usize,
    /// The most items one `resources/list` or `prompts/list` may hold, across all of its
    /// pages. Default: 4096.
    ///
    /// Resources and prompts are shown to people, not offered wholesale to a model, so the
    /// bound is looser than for tools; it still keeps a hostile listing from growing memory.
    pub items_per_listing: usize,
    /// The most pages one listing may take. Default: 64.
    ///
    /// A server that keeps sending new cursors would otherwise never let a listing end (a
    /// repeated cursor is refused separately). 64 pages is the TypeScript SDK's bound too.
    pub pages_per_listing: usize,
    /// The most requests waiting for answers at once. Default: 64.
    ///
    /// Each costs a table entry and a deadline; an application that queues more is refused
    /// with [`Misuse::TooManyInFlight`](crate::Misuse::TooManyInFlight), before anything is
    /// sent. The one `logging/setLevel` the client sends itself after a handshake
    /// ([`Config::log_level`](crate::Config::log_level)) is not counted. Over Streamable
    /// HTTP, where every message is an exchange of its own (answers to the server's
    /// requests and notifications too), an [`HttpSession`](crate::HttpSession) keeps at most
    /// twice this many exchanges open (at least two); what the client queues past that waits
    /// in it, under [`unsent_bytes`](Self::unsent_bytes).
    pub requests_in_flight: usize,
    /// How many abandoned request ids (timed out or cancelled) are remembered, so that their
    /// late answers are recognised as late. Default: 256.
    ///
    /// A late answer to an id older than that counts as a second answer, a protocol
    /// violation; the memory stays bounded however many requests time out.
    pub remembered_abandoned_ids: usize,
    /// How long one operation may take, all of its frames included. Default: 30 s.
    ///
    /// A request, a paginated listing as a whole, or the handshake with its probe each get one
    /// deadline this long, so a server that trickles bytes cannot stretch an operation. This
    /// is the client session's bound; time is a value the caller passes in.
    pub operation_timeout: Duration,
    /// The longest value of an `event`, `id` or `retry` field in a server-sent event stream,
    /// in bytes. Default: 1024.
    ///
    /// An [`SseReader`](crate::SseReader) holds the value of such a field while its line is
    /// read (event ids are short: a UUID, or a stream id and a counter); an event with a
    /// longer one is refused whole. Its data is bounded by `frame_bytes`, as a frame is;
    /// comments and unknown fields are never held.
    pub sse_field_bytes: usize,
    /// The longest session id a Streamable HTTP server may give, in bytes. Default: 1024.
    ///
    /// The id is echoed on every later request of the session; the SDKs use a UUID (36
    /// bytes). A longer id, or one with bytes outside visible ASCII, fails the connection.
    /// The same bound holds the message endpoint a server of the 2024-11-05 transport names
    /// (a path carrying its session id, such as `/messages/?session_id=…`), which every
    /// later request goes to.
    pub session_id_bytes: usize,
    /// The longest head of an HTTP reply (its status line and header fields) a transport
    /// reads, in bytes; also the longest framing line of a chunked body, and all of its
    /// trailers together. Default: 64 KiB.
    ///
    /// The core never sees these bytes: a transport holds them until the head is whole, and
    /// a server that sends an endless head would otherwise have it hold them all.
    /// `mcp-sansio-http` refuses a longer head (the exchange fails before its reply); real
    /// heads are a few hundred bytes, and 64 KiB is ureq's default bound too.
    pub reply_head_bytes: usize,
    /// How many times one request's reply stream may be resumed (`GET` with
    /// `Last-Event-ID`, 2025-06-18 and 2025-11-25) after it broke or ended before the
    /// answer, or its request sent again under a new id (2026-07-28). Default: 3.
    ///
    /// A server that closes every stream it opens would otherwise have the client reconnect
    /// forever; each attempt also waits the `retry` time the stream asked for, and all of
    /// them stay within the operation's deadline.
    pub stream_resumes: usize,
    /// How many times one call (2026-07-28) may be sent again with the input its server asked
    /// for in an `input_required` result. Default: 8.
    ///
    /// Each round is a new request under the call's one deadline; a server that asks again
    /// after every answer would otherwise keep the call going until that deadline. One more
    /// `input_required` past the bound fails the call with
    /// [`ProtocolViolation::TooManyInputRounds`](crate::ProtocolViolation).
    pub input_rounds: usize,
    /// How many bytes of frames may wait for the transport to take them, beyond the one frame
    /// being queued. Default: 16 MiB (twice the default frame limit).
    ///
    /// Frames wait here while the server does not read its input: the client's requests,
    /// their cancellations, and the answers to the server's own requests (`ping`). A
    /// server that keeps sending requests and never reads the answers would otherwise grow
    /// this queue without end. When it already holds more than this, the next frame fails
    /// the connection with [`ProtocolViolation::NotReading`](crate::ProtocolViolation) instead.
    /// A transport takes frames only while its own write buffer is short, so the bytes a
    /// server has not read wait here, under this bound.
    pub unsent_bytes: usize,
    /// How many notifications, progress reports and late answers a driver keeps for the
    /// application at once, between its reads of them. Default: 256.
    ///
    /// The server decides how many of those it sends; an application that never reads them
    /// must not hold them all. Past the bound, new ones are dropped and counted (see
    /// [`KeptEvents`](crate::KeptEvents)); the ends of operations are always kept.
    pub events_kept: usize,
    /// How many of a server's requests may wait for the application's answer at once (see
    /// [`Config::asks`](crate::Config)). Default: 8.
    ///
    /// The server decides how many elicitations and sampling requests it sends; each waits
    /// for the application, which may be a person. One past the bound is answered at once
    /// with an error (-32603) and never reaches the application.
    pub asks_waiting: usize,
}

impl Limits {
    /// The values of the teaching material: 64 KiB frames, 16 notifications, 32 tools, 5 s,
    /// and 256 KiB of unsent frames (four frames); the other bounds as in
    /// [`Limits::default`].
    ///
    /// Small enough that a test reaches every bound quickly, and the figures the seed
    /// chapter's client uses, so its failure modes reproduce exactly.
    pub const fn teaching() -> Self {
        Limits {
            frame_bytes: 64 * 1024,
            nesting_depth: 64,
            notifications_before_answer: 16,
            tools_per_catalog: 32,
            items_per_listing: 4096,
            pages_per_listing: 64,
            requests_in_flight: 64,
            remembered_abandoned_ids: 256,
            operation_timeout: Duration::from_secs(5),
            sse_field_bytes: 1024,
            session_id_bytes: 1024,
            reply_head_bytes: 64 * 1024,
            stream_resumes: 3,
            input_rounds: 8,
            unsent_bytes: 256 * 1024,
            events_kept: 256,
            asks_waiting: 8,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            frame_bytes: 8 * 1024 * 1024,
            nesting_depth: 64,
            notifications_before_answer: 4096,
            tools_per_catalog: 1024,
            items_per_listing: 4096,
            pages_per_listing: 64,
            requests_in_flight: 64,
            remembered_abandoned_ids: 256,
            operation_timeout: Duration::from_secs(30),
            sse_field_bytes: 1024,
            session_id_bytes: 1024,
            reply_head_bytes: 64 * 1024,
            stream_resumes: 3,
            input_rounds: 8,
            unsent_bytes: 16 * 1024 * 1024,
            events_kept: 256,
            asks_waiting: 8,
        }
    }
}
