//! Typed results: tool results and their content blocks, resources, prompts.
//!
//! Each reader takes a validated result and says what is missing or mistyped in a few words;
//! the session turns that into [`ProtocolViolation::InvalidResult`](crate::ProtocolViolation).

use alloc::{string::String, vec::Vec};

use crate::json::view::{array, optional_str, required_str, JsonRef, Object, Problem};
use crate::json::write::{into_text, write_array, ObjectWriter};
use crate::json::{RawJson, RawObject};

/// The result of `tools/call`.
///
/// `is_error` marks a tool error: the tool ran and failed, and the text is for the model to
/// read. That is not a JSON-RPC error (which the application sees as
/// [`Error::Rpc`](crate::Error::Rpc)) and not a local failure.
#[derive(Clone, Debug, PartialEq)]
pub struct CallToolResult {
    /// The content blocks, in order.
    pub content: Vec<ContentBlock>,
    /// Structured output, if the tool gave some (an object before 2026-07-28, any JSON after).
    pub structured_content: Option<RawJson>,
    /// Whether the tool reports that it failed.
    pub is_error: bool,
}

impl CallToolResult {
    /// The result as compact JSON, as the server's `tools/call` result would say it
    /// (`content`, `structuredContent` if any, `isError`). Members this client does not read,
    /// such as `_meta`, are not kept.
    pub fn to_json(&self) -> String {
        let mut out = Vec::new();
        let mut object = ObjectWriter::open(&mut out);
        object.key("content");
        write_array(object.out(), &self.content, ContentBlock::write_json);
        if let Some(structured) = &self.structured_content {
            object.raw("structuredContent", structured.as_str());
        }
        object.boolean("isError", self.is_error);
        object.close();
        into_text(out)
    }

    /// The text blocks, joined by newlines: what a model would read.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let ContentBlock::Text { text } = block {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(text);
            }
        }
        out
    }

    pub(crate) fn read(result: &Object<'_>) -> Result<Self, Problem> {
        let [content, is_error, structured] =
            result.fields(["content", "isError", "structuredContent"]);
        let content = content
            .and_then(JsonRef::as_array)
            .ok_or("content is not an array")?
            .map(ContentBlock::read)
            .collect::<Result<Vec<_>, _>>()?;
        let is_error = match is_error {
            None => false,
            Some(flag) => flag.as_bool().ok_or("isError is not a boolean")?,
        };
        Ok(CallToolResult {
            content,
            structured_content: structured.map(JsonRef::to_raw),
            is_error,
        })
    }
}

/// One block of content in a tool result or a prompt message.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ContentBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// The base64 data, as sent.
        data: String,
        /// Its MIME type.
        mime_type: String,
    },
    /// Audio, base64-encoded.
    Audio {
        /// The base64 data, as sent.
        data: String,
        /// Its MIME type.
        mime_type: String,
    },
    /// A link to a resource the client may read.
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// The resource's name.
        name: String,
        /// Its MIME type, if given.
        mime_type: Option<String>,
        /// Its description, if given.
        description: Option<String>,
    },
    /// A resource embedded in the result.
    Resource(ResourceContents),
    /// A block of a type this client does not know, kept whole.
    Other(RawObject),
}

impl ContentBlock {
    /// The block as compact JSON, with its `type`.
    pub fn to_json(&self) -> String {
        let mut out = Vec::new();
        self.write_json(&mut out);
        into_text(out)
    }

    fn write_json(&self, out: &mut Vec<u8>) {
        if let ContentBlock::Other(raw) = self {
            out.extend_from_slice(raw.as_str().as_bytes());
            return;
        }
        let mut object = ObjectWriter::open(out);
        match self {
            ContentBlock::Text { text } => {
                object.string("type", "text");
                object.string("text", text);
            }
            ContentBlock::Image { data, mime_type } | ContentBlock::Audio { data, mime_type } => {
                let kind = if matches!(self, ContentBlock::Image { .. }) {
                    "image"
                } else {
                    "audio"
                };
                object.string("type", kind);
                object.string("data", data);
                object.string("mimeType", mime_type);
            }
            ContentBlock::ResourceLink {
                uri,
                name,
                mime_type,
                description,
            } => {
                object.string("type", "resource_link");
                object.string("uri", uri);
                object.string("name", name);
                object.opt_string("mimeType", mime_type.as_deref());
                object.opt_string("description", description.as_deref());
            }
            ContentBlock::Resource(contents) => {
                object.string("type", "resource");
                object.key("resource");
                contents.write_json(object.out());
            }
            ContentBlock::Other(_) => {}
        }
        object.close();
    }

    fn read(block: JsonRef<'_>) -> Result<Self, Problem> {
        let object = block
            .as_object()
            .ok_or("a content block is not an object")?;
        let [kind, text] = object.fields(["type", "text"]);
        let kind = kind
            .and_then(JsonRef::as_str)
            .ok_or("a content block has no type")?;
        Ok(match kind.as_ref() {
            "text" => ContentBlock::Text {
                text: text
                    .and_then(JsonRef::as_str)
                    .map(String::from)
                    .ok_or("a text block has no text")?,
            },
            "image" | "audio" => {
                let data = required_str(&object, "data", "a media block has no data")?;
                let mime_type = required_str(&object, "mimeType", "a media block has no mimeType")?;
                if kind == "image" {
                    ContentBlock::Image { data, mime_type }
                } else {
                    ContentBlock::Audio { data, mime_type }
                }
            }
            "resource_link" => ContentBlock::ResourceLink {
                uri: required_str(&object, "uri", "a resource link has no uri")?,
                name: required_str(&object, "name", "a resource link has no name")?,
                mime_type: optional_str(
                    &object,
                    "mimeType",
                    "a resource link's mimeType is not a string",
                )?,
                description: optional_str(
                    &object,
                    "description",
                    "a resource link's description is not a string",
                )?,
            },
            "resource" => {
                let resource = object
                    .get("resource")
                    .ok_or("an embedded resource is missing")?;
                ContentBlock::Resource(ResourceContents::read(resource)?)
            }
            _ => ContentBlock::Other(RawObject::from_trusted(block.to_raw())),
        })
    }
}

/// The contents of a resource: text or base64 binary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// Its MIME type, if given.
    pub mime_type: Option<String>,
    /// The text or the blob.
    pub body: ResourceBody,
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
    fn write_json(&self, out: &mut Vec<u8>) {
        let mut object = ObjectWriter::open(out);
        object.string("uri", &self.uri);
        object.opt_string("mimeType", self.mime_type.as_deref());
        match &self.body {
            ResourceBody::Text(text) => object.string("text", text),
            ResourceBody::Blob(blob) => object.string("blob", blob),
        }
        object.close();
    }

    pub(crate) fn read(value: JsonRef<'_>) -> Result<Self, Problem> {
        let object = value
            .as_object()
            .ok_or("resource contents are not an object")?;
        let text = optional_str(&object, "text", "a resource's text is not a string")?;
        let blob = optional_str(&object, "blob", "a resource's blob is not a string")?;
        let body = match (text, blob) {
            (Some(text), None) => ResourceBody::Text(text),
            (None, Some(blob)) => ResourceBody::Blob(blob),
            _ => return Err("a resource has not exactly one of text and blob"),
        };
        Ok(ResourceContents {
            uri: required_str(&object, "uri", "a resource has no uri")?,
            mime_type: optional_str(&object, "mimeType", "a resource's mimeType is not a string")?,
            body,
        })
    }

    /// The contents of a `resources/read` result.
    pub(crate) fn read_all(result: &Object<'_>) -> Result<Vec<Self>, Problem> {
        array(result, "contents", "contents is not an array")?
            .map(ResourceContents::read)
            .collect()
    }
}

/// A resource the server lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resource {
    /// Its URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// Its description, if given.
    pub description: Option<String>,
    /// Its MIME type, if given.
    pub mime_type: Option<String>,
}

impl Resource {
    pub(crate) fn read(value: JsonRef<'_>) -> Result<Self, Problem> {
        let object = value.as_object().ok_or("a resource is not an object")?;
        Ok(Resource {
            uri: required_str(&object, "uri", "a resource has no uri")?,
            name: required_str(&object, "name", "a resource has no name")?,
            description: optional_str(
                &object,
                "description",
                "a resource's description is not a string",
            )?,
            mime_type: optional_str(&object, "mimeType", "a resource's mimeType is not a string")?,
        })
    }
}

/// A prompt template the server lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prompt {
    /// Its name.
    pub name: String,
    /// Its description, if given.
    pub description: Option<String>,
    /// Its arguments.
    pub arguments: Vec<PromptArgument>,
}

/// One argument of a prompt template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// Its description, if given.
    pub description: Option<String>,
    /// Whether it must be given.
    pub required: bool,
}

impl Prompt {
    pub(crate) fn read(value: JsonRef<'_>) -> Result<Self, Problem> {
        let object = value.as_object().ok_or("a prompt is not an object")?;
        let arguments = match object.get("arguments") {
            None => Vec::new(),
            Some(list) => list
                .as_array()
                .ok_or("a prompt's arguments are not an array")?
                .map(|arg| {
                    let arg = arg
                        .as_object()
                        .ok_or("a prompt argument is not an object")?;
                    Ok(PromptArgument {
                        name: required_str(&arg, "name", "a prompt argument has no name")?,
                        description: optional_str(
                            &arg,
                            "description",
                            "a prompt argument's description is not a string",
                        )?,
                        required: arg
                            .get("required")
                            .and_then(JsonRef::as_bool)
                            .unwrap_or(false),
                    })
                })
                .collect::<Result<Vec<_>, Problem>>()?,
        };
        Ok(Prompt {
            name: required_str(&object, "name", "a prompt has no name")?,
            description: optional_str(
                &object,
                "description",
                "a prompt's description is not a string",
            )?,
            arguments,
        })
    }
}

/// The result of `prompts/get`.
#[derive(Clone, Debug, PartialEq)]
pub struct GetPromptResult {
    /// The prompt's description, if given.
    pub description: Option<String>,
    /// The messages the prompt expands to.
    pub messages: Vec<PromptMessage>,
}

/// One message of an expanded prompt.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// Its content.
    pub content: ContentBlock,
}

impl GetPromptResult {
    pub(crate) fn read(result: &Object<'_>) -> Result<Self, Problem> {
        let messages = array(result, "messages", "messages is not an array")?
            .map(|m| {
                let m = m.as_object().ok_or("a prompt message is not an object")?;
                let role = required_str(&m, "role", "a prompt message has no role")?;
                if role != "user" && role != "assistant" {
                    return Err("a prompt message's role is neither user nor assistant");
                }
                let content = m.get("content").ok_or("a prompt message has no content")?;
                Ok(PromptMessage {
                    role,
                    content: ContentBlock::read(content)?,
                })
            })
            .collect::<Result<Vec<_>, Problem>>()?;
        Ok(GetPromptResult {
            description: optional_str(result, "description", "the description is not a string")?,
            messages,
        })
    }
}
