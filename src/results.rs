//! Typed results: tool results and their content blocks, resources, prompts.
//!
//! Each reader takes a validated result and says what is missing or mistyped in a few words;
//! the session turns that into [`ProtocolViolation::InvalidResult`](crate::ProtocolViolation).
//! Every type keeps the members it does not model in `extra`, so that writing it back
//! ([`CallToolResult::to_json`], or `Serialize` with the `serde` feature) gives back every
//! member the server sent.

use alloc::borrow::Cow;
use alloc::{string::String, vec::Vec};

use crate::json::view::{
    opt_string, string, Elements, JsonRef, Kept, Object, Problem, Rest, Split,
};
use crate::json::write::{object_text, text_of, write_array, ObjectWriter};
use crate::json::{RawJson, RawObject};

/// The result of `tools/call`.
///
/// `is_error` marks a tool error: the tool ran and failed, and the text is for the model to
/// read. That is not a JSON-RPC error (which the application sees as
/// [`Error::Rpc`](crate::Error::Rpc)) and not a local failure.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CallToolResult {
    /// The content blocks, in order.
    pub content: Vec<ContentBlock>,
    /// Structured output, if the tool gave some (an object before 2026-07-28, any JSON after).
    pub structured_content: Option<RawJson>,
    /// Whether the tool reports that it failed.
    pub is_error: bool,
    /// Every member this crate does not model (`_meta`, ...), kept as sent.
    pub extra: RawObject,
}

impl CallToolResult {
    /// A result of `content`, not an error, with nothing else.
    pub fn new(content: Vec<ContentBlock>) -> Self {
        CallToolResult {
            content,
            structured_content: None,
            is_error: false,
            extra: RawObject::empty(),
        }
    }

    /// The result as compact JSON, as the server's `tools/call` result says it: `content`,
    /// `structuredContent` if any, `isError`, then every member kept in `extra`.
    pub fn to_json(&self) -> String {
        object_text(|object| {
            object.key("content");
            write_array(object.out(), &self.content, ContentBlock::write_json);
            if let Some(structured) = &self.structured_content {
                object.raw("structuredContent", structured.as_str());
            }
            object.boolean("isError", self.is_error);
            object.members_of(&self.extra);
        })
    }

    /// The text blocks, joined by newlines: what a model would read. Borrowed when the
    /// result holds at most one text block, the usual case; joined into a new string only
    /// when it holds several.
    pub fn text(&self) -> Cow<'_, str> {
        let mut texts = self.content.iter().filter_map(|block| match block {
            ContentBlock::Text { text, .. } => Some(text.as_str()),
            _ => None,
        });
        let Some(first) = texts.next() else {
            return Cow::Borrowed("");
        };
        let Some(second) = texts.next() else {
            return Cow::Borrowed(first);
        };
        let mut out = String::from(first);
        for text in core::iter::once(second).chain(texts) {
            out.push('\n');
            out.push_str(text);
        }
        Cow::Owned(out)
    }

    /// The members a result models; every other is kept in `extra`.
    const MODELLED: [&'static str; 3] = ["content", "isError", "structuredContent"];

    pub(crate) fn read(result: &Object<'_>) -> Result<Self, Problem> {
        // One walk: the content array is read where it lies instead of being skipped first
        // and walked again. Validated text holds each key once.
        let (mut content, mut is_error, mut structured, mut kept) = (None, None, None, Kept::new());
        let mut members = result.cursor();
        while let Some(key) = members.key() {
            match key.as_ref() {
                "content" => content = members.array(ContentBlock::read_all),
                "isError" => is_error = Some(members.value()),
                "structuredContent" => structured = Some(members.value()),
                _ => members.keep(&mut kept),
            }
        }
        let content = content.ok_or("content is not an array")??;
        let is_error = match is_error {
            None => false,
            Some(flag) => flag.as_bool().ok_or("isError is not a boolean")?,
        };
        Ok(CallToolResult {
            content,
            structured_content: structured.map(JsonRef::to_raw),
            is_error,
            extra: Rest::new(*result, Self::MODELLED, kept).into_raw(),
        })
    }
}

/// One block of content in a tool result or a prompt message. Each kind keeps the members
/// it does not model (`annotations`, `_meta`, ...) in its `extra`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ContentBlock {
    /// Text.
    #[non_exhaustive]
    Text {
        /// The text.
        text: String,
        /// Every other member, as sent.
        extra: RawObject,
    },
    /// An image, base64-encoded.
    #[non_exhaustive]
    Image {
        /// The base64 data, as sent.
        data: String,
        /// Its MIME type.
        mime_type: String,
        /// Every other member, as sent.
        extra: RawObject,
    },
    /// Audio, base64-encoded.
    #[non_exhaustive]
    Audio {
        /// The base64 data, as sent.
        data: String,
        /// Its MIME type.
        mime_type: String,
        /// Every other member, as sent.
        extra: RawObject,
    },
    /// A link to a resource the client may read.
    #[non_exhaustive]
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// The resource's name.
        name: String,
        /// Its MIME type, if given.
        mime_type: Option<String>,
        /// Its description, if given.
        description: Option<String>,
        /// Every other member, as sent.
        extra: RawObject,
    },
    /// A resource embedded in the result.
    #[non_exhaustive]
    Resource {
        /// The resource.
        resource: ResourceContents,
        /// Every other member of the block, as sent.
        extra: RawObject,
    },
    /// A block of a type this client does not know, kept whole.
    Other(RawObject),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text {
            text: text.into(),
            extra: RawObject::empty(),
        }
    }

    /// The block as compact JSON, with its `type` and every member it keeps.
    pub fn to_json(&self) -> String {
        text_of(|out| self.write_json(out))
    }

    fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = ObjectWriter::open(out);
        let extra = match self {
            ContentBlock::Text { text, extra } => {
                object.string("type", "text");
                object.string("text", text);
                extra
            }
            ContentBlock::Image {
                data,
                mime_type,
                extra,
            }
            | ContentBlock::Audio {
                data,
                mime_type,
                extra,
            } => {
                let kind = if matches!(self, ContentBlock::Image { .. }) {
                    "image"
                } else {
                    "audio"
                };
                object.string("type", kind);
                object.string("data", data);
                object.string("mimeType", mime_type);
                extra
            }
            ContentBlock::ResourceLink {
                uri,
                name,
                mime_type,
                description,
                extra,
            } => {
                object.string("type", "resource_link");
                object.string("uri", uri);
                object.string("name", name);
                object.opt_string("mimeType", mime_type.as_deref());
                object.opt_string("description", description.as_deref());
                extra
            }
            ContentBlock::Resource { resource, extra } => {
                object.string("type", "resource");
                object.key("resource");
                resource.write_json(object.out());
                extra
            }
            ContentBlock::Other(whole) => whole,
        };
        object.members_of(extra);
        object.close();
    }

    /// The members a block is first split by: every kind has a type, and text blocks, most
    /// blocks, are then read whole.
    const FIRST_SPLIT: [&'static str; 2] = ["type", "text"];

    /// A text block with no other member, as the text before and after its text: the
    /// TypeScript SDK and Python's 1.x write the first, Python's 2.x the second.
    const PLAIN_TEXT: [(&'static str, &'static str); 2] = [
        (r#"{"type":"text","text":"#, "}"),
        (r#"{"text":"#, r#","type":"text"}"#),
    ];

    fn read(block: JsonRef<'_>) -> Result<Self, Problem> {
        let object = block
            .as_object()
            .ok_or("a content block is not an object")?;
        Self::read_split(object.split_lazily(Self::FIRST_SPLIT))
    }

    /// Every block of a `content` array, each read in the walk that finds where it ends.
    fn read_all(blocks: &mut Elements<'_>) -> Result<Vec<Self>, Problem> {
        let mut content = Vec::with_capacity(1);
        loop {
            // A text block and nothing more, as most servers write one: no split.
            let [(a, a_end), (b, b_end)] = Self::PLAIN_TEXT;
            let plain = blocks
                .next_exact_string(a, a_end)
                .or_else(|| blocks.next_exact_string(b, b_end));
            if let Some(text) = plain {
                content.push(ContentBlock::Text {
                    text: string(Some(text), "a text block has no text")?,
                    extra: RawObject::empty(),
                });
                continue;
            }
            let Some(block) = blocks.next_split(Self::FIRST_SPLIT) else {
                break;
            };
            let split = block.map_err(|_| "a content block is not an object")?;
            content.push(Self::read_split(split)?);
        }
        Ok(content)
    }

    /// A block from its first split. Other kinds than text walk again with their own
    /// members; nothing is copied for the first walk's leftovers (an image's data among
    /// them) unless the block is text.
    fn read_split(([kind, text], rest): Split<'_, '_, 2>) -> Result<Self, Problem> {
        let object = rest.object();
        let kind = kind
            .and_then(JsonRef::as_str)
            .ok_or("a content block has no type")?;
        Ok(match kind.as_ref() {
            "text" => ContentBlock::Text {
                text: string(text, "a text block has no text")?,
                extra: rest.into_raw(),
            },
            "image" | "audio" => {
                let ([_, data, mime_type], extra) = object.split(["type", "data", "mimeType"]);
                let data = string(data, "a media block has no data")?;
                let mime_type = string(mime_type, "a media block has no mimeType")?;
                if kind == "image" {
                    ContentBlock::Image {
                        data,
                        mime_type,
                        extra,
                    }
                } else {
                    ContentBlock::Audio {
                        data,
                        mime_type,
                        extra,
                    }
                }
            }
            "resource_link" => {
                let ([_, uri, name, mime_type, description], extra) =
                    object.split(["type", "uri", "name", "mimeType", "description"]);
                ContentBlock::ResourceLink {
                    uri: string(uri, "a resource link has no uri")?,
                    name: string(name, "a resource link has no name")?,
                    mime_type: opt_string(mime_type, "a resource link's mimeType is not a string")?,
                    description: opt_string(
                        description,
                        "a resource link's description is not a string",
                    )?,
                    extra,
                }
            }
            "resource" => {
                let ([_, resource], extra) = object.split(["type", "resource"]);
                let resource = resource.ok_or("an embedded resource is missing")?;
                ContentBlock::Resource {
                    resource: ResourceContents::read(resource)?,
                    extra,
                }
            }
            _ => ContentBlock::Other(object.to_raw()),
        })
    }
}

/// The contents of a resource: text or base64 binary.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// Its MIME type, if given.
    pub mime_type: Option<String>,
    /// The text or the blob.
    pub body: ResourceBody,
    /// Every member this crate does not model (`_meta`, ...), kept as sent.
    pub extra: RawObject,
}

/// What a resource holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResourceBody {
    /// Text.
    Text(String),
    /// Binary data, base64-encoded as sent.
    Blob(String),
}

impl ResourceContents {
    /// The contents `body` of the resource at `uri`, with no MIME type.
    pub fn new(uri: impl Into<String>, body: ResourceBody) -> Self {
        ResourceContents {
            uri: uri.into(),
            mime_type: None,
            body,
            extra: RawObject::empty(),
        }
    }

    /// The contents as compact JSON, as a `resources/read` result lists them.
    pub fn to_json(&self) -> String {
        text_of(|out| self.write_json(out))
    }

    fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = ObjectWriter::open(out);
        object.string("uri", &self.uri);
        object.opt_string("mimeType", self.mime_type.as_deref());
        match &self.body {
            ResourceBody::Text(text) => object.string("text", text),
            ResourceBody::Blob(blob) => object.string("blob", blob),
        }
        object.members_of(&self.extra);
        object.close();
    }

    pub(crate) fn read(value: JsonRef<'_>) -> Result<Self, Problem> {
        let object = value
            .as_object()
            .ok_or("resource contents are not an object")?;
        let ([uri, mime_type, text, blob], extra) =
            object.split(["uri", "mimeType", "text", "blob"]);
        let text = opt_string(text, "a resource's text is not a string")?;
        let blob = opt_string(blob, "a resource's blob is not a string")?;
        let body = match (text, blob) {
            (Some(text), None) => ResourceBody::Text(text),
            (None, Some(blob)) => ResourceBody::Blob(blob),
            _ => return Err("a resource has not exactly one of text and blob"),
        };
        Ok(ResourceContents {
            uri: string(uri, "a resource has no uri")?,
            mime_type: opt_string(mime_type, "a resource's mimeType is not a string")?,
            body,
            extra,
        })
    }

    /// The contents of a `resources/read` result.
    pub(crate) fn read_all(result: &Object<'_>) -> Result<Vec<Self>, Problem> {
        result
            .get("contents")
            .and_then(JsonRef::as_array)
            .ok_or("contents is not an array")?
            .map(ResourceContents::read)
            .collect()
    }
}

/// A resource the server lists.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Resource {
    /// Its URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// Its description, if given.
    pub description: Option<String>,
    /// Its MIME type, if given.
    pub mime_type: Option<String>,
    /// Every member this crate does not model (`title`, `size`, `annotations`, `icons`,
    /// `_meta`, ...), kept as sent.
    pub extra: RawObject,
}

impl Resource {
    /// The resource `name` at `uri`, with nothing else.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Resource {
            uri: uri.into(),
            name: name.into(),
            description: None,
            mime_type: None,
            extra: RawObject::empty(),
        }
    }

    /// The resource as compact JSON, as a `resources/list` result lists it.
    pub fn to_json(&self) -> String {
        object_text(|object| {
            object.string("uri", &self.uri);
            object.string("name", &self.name);
            object.opt_string("description", self.description.as_deref());
            object.opt_string("mimeType", self.mime_type.as_deref());
            object.members_of(&self.extra);
        })
    }

    pub(crate) fn read(value: JsonRef<'_>) -> Result<Self, Problem> {
        let object = value.as_object().ok_or("a resource is not an object")?;
        let ([uri, name, description, mime_type], extra) =
            object.split(["uri", "name", "description", "mimeType"]);
        Ok(Resource {
            uri: string(uri, "a resource has no uri")?,
            name: string(name, "a resource has no name")?,
            description: opt_string(description, "a resource's description is not a string")?,
            mime_type: opt_string(mime_type, "a resource's mimeType is not a string")?,
            extra,
        })
    }
}

/// A prompt template the server lists.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Prompt {
    /// Its name.
    pub name: String,
    /// Its description, if given.
    pub description: Option<String>,
    /// Its arguments.
    pub arguments: Vec<PromptArgument>,
    /// Every member this crate does not model (`title`, `icons`, `_meta`, ...), kept as sent.
    pub extra: RawObject,
}

/// One argument of a prompt template.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// Its description, if given.
    pub description: Option<String>,
    /// Whether it must be given.
    pub required: bool,
    /// Every member this crate does not model (`title`, ...), kept as sent.
    pub extra: RawObject,
}

impl PromptArgument {
    /// An optional argument called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        PromptArgument {
            name: name.into(),
            description: None,
            required: false,
            extra: RawObject::empty(),
        }
    }

    fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = ObjectWriter::open(out);
        object.string("name", &self.name);
        object.opt_string("description", self.description.as_deref());
        object.boolean("required", self.required);
        object.members_of(&self.extra);
        object.close();
    }

    fn read(value: JsonRef<'_>) -> Result<Self, Problem> {
        let object = value
            .as_object()
            .ok_or("a prompt argument is not an object")?;
        let ([name, description, required], extra) =
            object.split(["name", "description", "required"]);
        Ok(PromptArgument {
            name: string(name, "a prompt argument has no name")?,
            description: opt_string(
                description,
                "a prompt argument's description is not a string",
            )?,
            // Anything but `true` leaves the argument optional, as before.
            required: required.and_then(JsonRef::as_bool).unwrap_or(false),
            extra,
        })
    }
}

impl Prompt {
    /// The prompt `name`, with no arguments.
    pub fn new(name: impl Into<String>) -> Self {
        Prompt {
            name: name.into(),
            description: None,
            arguments: Vec::new(),
            extra: RawObject::empty(),
        }
    }

    /// The prompt as compact JSON, as a `prompts/list` result lists it.
    pub fn to_json(&self) -> String {
        object_text(|object| {
            object.string("name", &self.name);
            object.opt_string("description", self.description.as_deref());
            object.key("arguments");
            write_array(object.out(), &self.arguments, PromptArgument::write_json);
            object.members_of(&self.extra);
        })
    }

    pub(crate) fn read(value: JsonRef<'_>) -> Result<Self, Problem> {
        let object = value.as_object().ok_or("a prompt is not an object")?;
        let ([name, description, arguments], extra) =
            object.split(["name", "description", "arguments"]);
        let arguments = match arguments {
            None => Vec::new(),
            Some(list) => list
                .as_array()
                .ok_or("a prompt's arguments are not an array")?
                .map(PromptArgument::read)
                .collect::<Result<Vec<_>, Problem>>()?,
        };
        Ok(Prompt {
            name: string(name, "a prompt has no name")?,
            description: opt_string(description, "a prompt's description is not a string")?,
            arguments,
            extra,
        })
    }
}

/// The result of `prompts/get`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct GetPromptResult {
    /// The prompt's description, if given.
    pub description: Option<String>,
    /// The messages the prompt expands to.
    pub messages: Vec<PromptMessage>,
    /// Every member this crate does not model (`_meta`, ...), kept as sent.
    pub extra: RawObject,
}

/// One message of an expanded prompt.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct PromptMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// Its content.
    pub content: ContentBlock,
    /// Every member this crate does not model, kept as sent.
    pub extra: RawObject,
}

impl PromptMessage {
    /// A message of `role` (`user` or `assistant`) holding `content`.
    pub fn new(role: impl Into<String>, content: ContentBlock) -> Self {
        PromptMessage {
            role: role.into(),
            content,
            extra: RawObject::empty(),
        }
    }

    fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = ObjectWriter::open(out);
        object.string("role", &self.role);
        object.key("content");
        self.content.write_json(object.out());
        object.members_of(&self.extra);
        object.close();
    }

    fn read(value: JsonRef<'_>) -> Result<Self, Problem> {
        let object = value
            .as_object()
            .ok_or("a prompt message is not an object")?;
        let ([role, content], extra) = object.split(["role", "content"]);
        let role = string(role, "a prompt message has no role")?;
        if role != "user" && role != "assistant" {
            return Err("a prompt message's role is neither user nor assistant");
        }
        let content = content.ok_or("a prompt message has no content")?;
        Ok(PromptMessage {
            role,
            content: ContentBlock::read(content)?,
            extra,
        })
    }
}

impl GetPromptResult {
    /// A result of `messages`, with no description.
    pub fn new(messages: Vec<PromptMessage>) -> Self {
        GetPromptResult {
            description: None,
            messages,
            extra: RawObject::empty(),
        }
    }

    /// The result as compact JSON, as the server's `prompts/get` result says it.
    pub fn to_json(&self) -> String {
        object_text(|object| {
            object.opt_string("description", self.description.as_deref());
            object.key("messages");
            write_array(object.out(), &self.messages, PromptMessage::write_json);
            object.members_of(&self.extra);
        })
    }

    pub(crate) fn read(result: &Object<'_>) -> Result<Self, Problem> {
        let ([description, messages], extra) = result.split(["description", "messages"]);
        let messages = messages
            .and_then(JsonRef::as_array)
            .ok_or("messages is not an array")?
            .map(PromptMessage::read)
            .collect::<Result<Vec<_>, Problem>>()?;
        Ok(GetPromptResult {
            description: opt_string(description, "the description is not a string")?,
            messages,
            extra,
        })
    }
}

#[cfg(feature = "serde")]
crate::json::serde::serialize_as_json!(
    CallToolResult,
    ContentBlock,
    ResourceContents,
    Resource,
    Prompt,
    GetPromptResult,
);

#[cfg(feature = "serde")]
impl CallToolResult {
    /// Reads `structuredContent` into a type of the application's; `None` when the tool gave
    /// none.
    ///
    /// # Errors
    /// `serde_json`'s error when the structured content does not have the type's shape.
    pub fn structured<T: serde::de::DeserializeOwned>(
        &self,
    ) -> Option<Result<T, serde_json::Error>> {
        self.structured_content.as_ref().map(RawJson::deserialize)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for CallToolResult {
    /// Reads a `tools/call` result, as [`CallToolResult::to_json`] writes it and a server
    /// sends it, by the same rules as the session: for recorded results and replays.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let raw = <RawObject as serde::Deserialize>::deserialize(deserializer)?;
        CallToolResult::read(&Object::of(&raw)).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    #[test]
    fn a_plain_text_block_read_without_a_split_is_the_block_read_with_one() {
        let blocks = [
            r#"{"type":"text","text":"3"}"#,
            r#"{"type":"text","text":""}"#,
            r#"{"type":"text","text":"}],{\"type\":\"text\""}"#,
            r#"{"type":"text","text":"a\"b\\\u00e9\ud83d\ude00"}"#,
            // Not the plain shape: read by the split.
            r#"{"type":"text","text":"x","annotations":{"audience":["user"]}}"#,
            r#"{"type":"text","text":"x","_meta":{}}"#,
            r#"{"text":"y","type":"text"}"#,
            r#"{"text":"y\"","type":"text"}"#,
            r#"{"text":"y","type":"text","_meta":{}}"#,
            r#"{"text":"y","type":"image","data":"AA==","mimeType":"image/png"}"#,
            r#"{"text":"y","type":"texts"}"#,
            r#"{"type":"image","data":"AA==","mimeType":"image/png"}"#,
            r#"{"type":"text","texts":"z"}"#,
        ];
        // Each alone, then all in one array, in one order and the reverse.
        let mut lists: Vec<Vec<&str>> = blocks.iter().map(|b| alloc::vec![*b]).collect();
        lists.push(blocks.to_vec());
        lists.push(blocks.iter().rev().copied().collect());
        for list in lists {
            let array = format!("[{}]", list.join(","));
            let by_split: Result<Vec<ContentBlock>, Problem> = list
                .iter()
                .map(|b| ContentBlock::read(JsonRef::new(b)))
                .collect();
            let mut elements = JsonRef::new(&array).as_array().unwrap();
            assert_eq!(ContentBlock::read_all(&mut elements), by_split, "{array}");
        }
        // The wrong type of text is still refused, whichever way the block is read.
        for bad in [
            r#"[{"type":"text","text":5}]"#,
            r#"[{"type":"text","text":null}]"#,
            r#"[{"text":5,"type":"text"}]"#,
        ] {
            let mut elements = JsonRef::new(bad).as_array().unwrap();
            assert!(ContentBlock::read_all(&mut elements).is_err(), "{bad}");
        }
    }
}
