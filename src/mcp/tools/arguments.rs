//! A tool's arguments, declared once.
//!
//! [`tool_arguments!`] takes one struct declaration, each field with an
//! [`Argument`] beside it, and makes both the struct serde parses a call into and the table
//! ([`ToolArguments::ARGUMENTS`]) that everything else is derived from:
//!
//! - the input schema `tools/list` publishes ([`input_schema`]): the field's JSON type from its Rust
//!   type ([`ArgumentType`]), required unless it is an `Option`, and the bounds and description
//!   its [`Argument`] states;
//! - the signature line an argument error quotes ([`signature`]);
//! - the size cap of every string argument ([`string_cap`]).
//!
//! So a field's name, type, requiredness and limits cannot disagree between what an agent is
//! told and what the server parses and enforces. The schemas are built here rather than derived
//! by schemars because the bounds an agent sees (`minimum`, `maximum`, `default`) come from the
//! same constants the tools enforce, and the published bytes stay what clients already cache.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::caps::MAX_NAME_BYTES;

/// What a field declares beside its Rust type.
#[derive(Debug, Clone, Copy)]
pub struct Argument {
    /// The schema's `description`.
    pub description: &'static str,
    /// An integer's range and default, if it is one.
    pub bounds: Option<Bounds>,
    /// A string's cap in bytes when it may be longer than a name ([`MAX_NAME_BYTES`]).
    pub long_text_cap: Option<fn() -> usize>,
}

/// The range and default of an integer argument.
#[derive(Debug, Clone, Copy)]
pub enum Bounds {
    /// A count of rows or matches, 1 to `max`: the tool checks it before any work
    /// (`check_limit`, which answers with a clamped retry), and the signature states the range.
    Limit {
        /// The most.
        max: i64,
        /// When the call gives none.
        default: i64,
    },
    /// A size the renderer checks and names in its own error; the signature says `integer`.
    Range {
        /// The least.
        min: i64,
        /// The most.
        max: i64,
        /// When the call gives none.
        default: i64,
    },
}

impl Argument {
    /// An argument with this description and no bounds.
    pub const fn described(description: &'static str) -> Argument {
        Argument {
            description,
            bounds: None,
            long_text_cap: None,
        }
    }

    /// A count from 1 to `max`, `default` when not given.
    pub const fn limit(self, max: i64, default: i64) -> Argument {
        Argument {
            bounds: Some(Bounds::Limit { max, default }),
            ..self
        }
    }

    /// An integer from `min` to `max`, `default` when not given.
    pub const fn range(self, min: i64, max: i64, default: i64) -> Argument {
        Argument {
            bounds: Some(Bounds::Range { min, max, default }),
            ..self
        }
    }

    /// A string allowed up to `cap()` bytes rather than a name's.
    pub const fn long_text(self, cap: fn() -> usize) -> Argument {
        Argument {
            long_text_cap: Some(cap),
            ..self
        }
    }
}

/// The JSON type of an argument, as its schema and a signature line state it.
#[derive(Debug, Clone, Copy)]
pub enum JsonType {
    /// Text, never empty (a blank one is refused by the tool, naming it).
    Text,
    /// A list of names, at least one.
    TextList,
    /// An integer; out of its range is the tool's own error, not a parse error.
    Integer,
    /// A number (a value on a chart's y axis).
    Number,
    /// One of these words.
    Choice(&'static [&'static str]),
}

impl JsonType {
    /// Its JSON Schema before the field's description and bounds.
    fn schema(self) -> Map<String, Value> {
        let schema = match self {
            JsonType::Text => json!({ "type": "string", "minLength": 1 }),
            JsonType::TextList => json!({
                "type": "array",
                "items": JsonType::Text.schema(),
                "minItems": 1
            }),
            JsonType::Integer => json!({ "type": "integer" }),
            JsonType::Number => json!({ "type": "number" }),
            JsonType::Choice(words) => json!({ "type": "string", "enum": words }),
        };
        match schema {
            Value::Object(map) => map,
            Value::Null
            | Value::Bool(_)
            | Value::Number(_)
            | Value::String(_)
            | Value::Array(_) => unreachable!("a JSON object literal"),
        }
    }

    /// How a signature line writes it.
    fn signature(self) -> String {
        match self {
            JsonType::Text => "string".to_owned(),
            JsonType::TextList => "[string]".to_owned(),
            JsonType::Integer => "integer".to_owned(),
            JsonType::Number => "number".to_owned(),
            JsonType::Choice(words) => words.join("|"),
        }
    }
}

/// How a field's Rust type appears to a client.
pub trait ArgumentType {
    /// Whether a call must give it: every type but `Option`.
    const REQUIRED: bool = true;
    /// Its JSON type.
    const JSON_TYPE: JsonType;
}

/// The JSON type of each Rust type an argument may have.
macro_rules! json_types {
    ($($rust:ty => $json:ident),* $(,)?) => {
        $(impl ArgumentType for $rust { const JSON_TYPE: JsonType = JsonType::$json; })*
    };
}

json_types! {
    String => Text,
    Vec<String> => TextList,
    i64 => Integer,
    u32 => Integer,
    f64 => Number,
}

/// An argument a call may leave out (or send as `null`).
impl<T: ArgumentType> ArgumentType for Option<T> {
    const REQUIRED: bool = false;
    const JSON_TYPE: JsonType = T::JSON_TYPE;
}

/// One field of a tool's arguments, as [`tool_arguments!`] records it.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The field's name on the wire.
    pub name: &'static str,
    /// See [`ArgumentType::REQUIRED`].
    pub required: bool,
    /// See [`ArgumentType::JSON_TYPE`].
    pub json_type: JsonType,
    /// What the declaration states beside the type.
    pub argument: Argument,
}

/// A tool's arguments: a struct made by [`tool_arguments!`].
pub trait ToolArguments: DeserializeOwned {
    /// Its fields in declaration order, which is the order signatures and `required` list them.
    const ARGUMENTS: &'static [Field];
}

/// The input schema of a tool with these fields: them and no others.
pub fn input_schema(fields: &[Field]) -> Value {
    let mut properties = Map::new();
    for field in fields {
        let mut schema = field.json_type.schema();
        if let Some(bounds) = field.argument.bounds {
            let (min, max, default) = match bounds {
                Bounds::Limit { max, default } => (1, max, default),
                Bounds::Range { min, max, default } => (min, max, default),
            };
            schema.insert("minimum".into(), min.into());
            schema.insert("maximum".into(), max.into());
            schema.insert("default".into(), default.into());
        }
        schema.insert("description".into(), field.argument.description.into());
        properties.insert(field.name.to_owned(), Value::Object(schema));
    }
    let required: Vec<&str> = fields
        .iter()
        .filter(|field| field.required)
        .map(|field| field.name)
        .collect();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false
    })
}

/// The line naming a tool's arguments that argument errors quote:
/// `query(sql: string, limit?: integer 1–10000, default 1000)`.
pub fn signature(tool: &str, fields: &[Field]) -> String {
    if fields.is_empty() {
        return format!("{tool}() — no arguments");
    }
    let arguments: Vec<String> = fields
        .iter()
        .map(|field| {
            let optional = if field.required { "" } else { "?" };
            let range = match field.argument.bounds {
                Some(Bounds::Limit { max, default }) => format!(" 1–{max}, default {default}"),
                Some(Bounds::Range { .. }) | None => String::new(),
            };
            format!(
                "{}{optional}: {}{range}",
                field.name,
                field.json_type.signature()
            )
        })
        .collect();
    format!("{tool}({})", arguments.join(", "))
}

/// The cap in bytes of string argument `name` among `fields`. A string anywhere else (an
/// argument of the wrong type, one the parser will refuse as unknown) gets the name cap, so no
/// error message can quote a huge value.
pub fn string_cap(fields: &[Field], name: &str) -> usize {
    fields
        .iter()
        .find(|field| field.name == name)
        .and_then(|field| field.argument.long_text_cap)
        .map_or(MAX_NAME_BYTES, |cap| cap())
}

/// Declare a tool's arguments once: a struct whose every field carries an [`Argument`]
/// (`pub name: Type = Argument::described("…")`). Makes the struct (serde, unknown fields
/// refused) and its [`ToolArguments`] table.
macro_rules! tool_arguments {
    (
        $(#[$struct_meta:meta])*
        pub struct $name:ident {
            $(
                $(#[$field_meta:meta])*
                pub $field:ident : $type:ty = $argument:expr
            ),* $(,)?
        }
    ) => {
        $(#[$struct_meta])*
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            $(
                $(#[$field_meta])*
                pub $field: $type,
            )*
        }

        impl $crate::mcp::tools::arguments::ToolArguments for $name {
            const ARGUMENTS: &'static [$crate::mcp::tools::arguments::Field] = &[
                $(
                    $crate::mcp::tools::arguments::Field {
                        name: stringify!($field),
                        required:
                            <$type as $crate::mcp::tools::arguments::ArgumentType>::REQUIRED,
                        json_type:
                            <$type as $crate::mcp::tools::arguments::ArgumentType>::JSON_TYPE,
                        argument: $argument,
                    },
                )*
            ];
        }
    };
}

pub(crate) use tool_arguments;
