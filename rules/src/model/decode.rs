//! Strict decoding of JSON values into typed structs, the way the API server decodes
//! a request body with strict field validation (kubectl's default).
//!
//! The server stops at decoding errors; we collect all of them, and the typed result
//! simply leaves out what could not be decoded, so later rules can still look at the
//! rest of the object.

use std::borrow::Cow;

use crate::model::go::json_number;
use crate::model::go_time::rfc3339_error;
use crate::model::quantity::{Quantity, QuantityError};
use crate::path::{FieldPath, Json, Segment, Shape};

/// What kind of decoding failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeErrorKind {
    /// A field the type does not have (`strict decoding error: unknown field`).
    UnknownField,
    /// A JSON value of the wrong type, or an integer out of range.
    Type,
    /// An unparsable quantity string.
    Quantity,
}

/// What the decoder wanted where it failed, for fixes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wanted {
    /// One of the fields of a struct (for an unknown field).
    Field(&'static [&'static str]),
    /// The `autoscaling/v2` shape of a metric source written in the
    /// `autoscaling/v2beta1` shape (its unknown fields, as one error).
    V2Shape,
    /// A value of a Go type: `int32`, `bool`, …
    Type(&'static str),
    /// A quantity.
    Quantity,
}

/// One decoding failure.
#[derive(Clone, Debug, PartialEq)]
pub struct DecodeError {
    /// Path of the offending field.
    pub path: FieldPath,
    /// Kind of failure.
    pub kind: DecodeErrorKind,
    /// What was wanted there.
    pub wanted: Wanted,
    /// The server's text.
    pub message: String,
}

/// A decoded `map[string]string` (labels, annotations), in document order:
/// its keys and values held in one string, as most are short.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StringMap {
    text: String,
    /// Where each key and its value end in `text`.
    ends: Vec<(usize, usize)>,
}

impl StringMap {
    fn with_capacity(entries: usize, text: usize) -> Self {
        Self {
            text: String::with_capacity(text),
            ends: Vec::with_capacity(entries),
        }
    }

    fn push(&mut self, key: &str, value: &str) {
        self.text.reserve(key.len() + value.len());
        self.text.push_str(key);
        let key_end = self.text.len();
        self.text.push_str(value);
        self.ends.push((key_end, self.text.len()));
    }

    /// The keys and values, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        let mut start = 0;
        self.ends.iter().map(move |&(key_end, end)| {
            let entry = (&self.text[start..key_end], &self.text[key_end..end]);
            start = end;
            entry
        })
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Keeps the entries whose keys `keep` says to.
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        if self.iter().all(|(key, _)| keep(key)) {
            return;
        }
        let mut kept = Self::with_capacity(self.len(), self.text.len());
        for (key, value) in self.iter().filter(|(key, _)| keep(key)) {
            kept.push(key, value);
        }
        *self = kept;
    }
}

/// Go types of the `autoscaling` API are named with this prefix (e.g.
/// `autoscaling.MetricTarget`); error texts name them in the package of the
/// version being decoded (`v2.MetricTarget`, `v2beta2.MetricTarget`).
pub(crate) const AUTOSCALING: &str = "autoscaling.";

/// The Go-side description of a struct, for field lists and error texts.
pub(crate) struct GoStruct {
    /// Struct name as Go prints it in type errors (`HorizontalPodAutoscalerSpec`).
    pub name: &'static str,
    /// Package-qualified type (`autoscaling.HorizontalPodAutoscalerSpec`, see
    /// [`AUTOSCALING`]; `v1.ObjectMeta`).
    pub qualified: &'static str,
    /// JSON field names.
    pub fields: &'static [&'static str],
}

/// Whether any of `errors` fails decoding on the server (unknown fields
/// only fail in strict mode and do not stop validation).
pub(crate) fn any_fatal(errors: &[DecodeError]) -> bool {
    errors
        .iter()
        .any(|e| e.kind != DecodeErrorKind::UnknownField)
}

/// Collects decoding errors. In lenient mode (deprecated versions, annotations)
/// nothing is reported and bad values are skipped.
pub(crate) struct Decoder {
    strict: bool,
    /// The Go package of the `autoscaling` version decoded (`v2`, `v2beta1`, ...).
    package: &'static str,
    /// Whether the JSON goes to Go's `encoding/json` as written, rather than
    /// through kubectl (see [`Decoder::reading_as_written`]).
    as_written: bool,
    pub errors: Vec<DecodeError>,
}

/// A JSON object (a serde_json value or a tree) being decoded as a Go struct.
pub(crate) struct Record<'v, 'p, V> {
    map: Option<&'v V>,
    at: At<'p>,
    go: &'static GoStruct,
    /// [`Decoder::reading_as_written`]: keys name fields case-insensitively.
    as_written: bool,
}

/// Where a record is: made into a [`FieldPath`] only for an error, as most
/// records have none and a path costs allocations.
#[derive(Clone, Copy)]
enum At<'p> {
    Root,
    /// The field of the record at the first.
    Field(&'p At<'p>, &'static str),
    /// An item of the list field of the record at the first.
    Item(&'p At<'p>, &'static str, usize),
}

impl At<'_> {
    fn path(&self) -> FieldPath {
        match *self {
            At::Root => FieldPath::root(),
            At::Field(record, name) => record.path().field(name),
            At::Item(record, name, i) => record.path().field(name).index(i),
        }
    }
}

/// Whether Go's `json.Marshal` writes `c` escaped in a string.
fn json_escapes(c: char) -> bool {
    c < ' ' || matches!(c, '"' | '\\' | '<' | '>' | '&' | '\u{2028}' | '\u{2029}')
}

/// What Go's decoder calls a JSON value in a type error: a number with its
/// text only when it goes to a number type (that it overflows, or whose
/// syntax it breaks), as `literalStore` words it.
fn json_type<V: Json>(value: &V, go_type: &str) -> String {
    let numeric =
        go_type.starts_with("int") || go_type.starts_with("uint") || go_type.starts_with("float");
    match value.shape() {
        Shape::Null => "null".into(),
        Shape::Bool(_) => "bool".into(),
        Shape::Number(n) if numeric => format!("number {}", json_number(n)),
        Shape::Number(_) => "number".into(),
        Shape::String(_) => "string".into(),
        Shape::Array(_) => "array".into(),
        Shape::Object(..) => "object".into(),
    }
}

/// The dotted path Go's JSON decoder prints: struct fields only, no indices or keys.
fn go_field_path(path: &FieldPath) -> String {
    let fields: Vec<&str> = path
        .segments()
        .iter()
        .filter_map(|s| match s {
            Segment::Field(name) => Some(&**name),
            Segment::Key(_) | Segment::Index(_) => None,
        })
        .collect();
    fields.join(".")
}

/// Where a field comes in a depth-first walk of `value` in document order: the
/// position of each key in its mapping, and each index.
fn document_order<V: Json>(value: &V, path: &FieldPath) -> Vec<usize> {
    let mut value = Some(value);
    path.segments()
        .iter()
        .map(|segment| match segment {
            Segment::Field(name) | Segment::Key(name) => {
                let position = match value.map(Json::shape) {
                    Some(Shape::Object(_, mut entries)) => {
                        entries.position(|(key, _)| key == &**name)
                    }
                    _ => None,
                };
                value = value.and_then(|v| v.member(name));
                position.unwrap_or(usize::MAX)
            }
            Segment::Index(i) => {
                value = value.and_then(|v| v.items()?.get(*i));
                *i
            }
        })
        .collect()
}

/// An integer value. Through kubectl, floats without a fraction count: YAML
/// `5.0` reaches the server as JSON `5` after kubectl's YAML-to-JSON
/// conversion. JSON that Go reads as written (`as_written`) must be written
/// as an integer: `encoding/json` refuses `5.0` and `5e3` for an `int32`.
fn as_integer<V: Json>(value: &V, as_written: bool) -> Option<i64> {
    let Shape::Number(n) = value.shape() else {
        return None;
    };
    n.as_i64().or_else(|| {
        n.as_f64()
            .filter(|f| !as_written && f.fract() == 0.0 && f.abs() < 9.0e18)
            .map(|f| f as i64)
    })
}

/// The field of `go` that Go's `encoding/json` sets from `key`: the one of
/// that name, or else the first whose name folds as it does.
pub(crate) fn go_field(go: &GoStruct, key: &str) -> Option<&'static str> {
    let fields = go.fields.iter();
    (fields.clone().find(|field| **field == key))
        .or_else(|| fields.clone().find(|field| folds_alike(field, key)))
        .copied()
}

/// Whether a field's name (ASCII) and `key` fold alike as Go's
/// `encoding/json` folds names (`foldName`: each rune to the least of its
/// Unicode fold set): ASCII letters ignore case, and the only other runes
/// whose fold sets hold one are `ſ` (with `s`) and the Kelvin sign (with `k`).
fn folds_alike(field: &str, key: &str) -> bool {
    let fold = |c: char| match c {
        'ſ' => 'S',
        '\u{212A}' => 'K',
        c => c.to_ascii_uppercase(),
    };
    field.chars().map(fold).eq(key.chars().map(fold))
}

impl Decoder {
    /// A decoder of one `autoscaling` version, whose Go package is `package`.
    pub(crate) fn new(strict: bool, package: &'static str) -> Self {
        Self {
            strict,
            package,
            as_written: false,
            errors: Vec::new(),
        }
    }

    /// This decoder, reading JSON as Go's `encoding/json` reads it when it
    /// gets it as written (the round-trip annotations of `autoscaling/v1`
    /// and `v2beta1`), not through kubectl: a key names the field it equals
    /// ignoring case, and an integer must be written as one.
    pub(crate) fn reading_as_written(mut self) -> Self {
        self.as_written = true;
        self
    }

    /// Whether it reads JSON as Go's `encoding/json` reads it as written.
    pub(crate) fn reads_as_written(&self) -> bool {
        self.as_written
    }

    /// A decoder like this one, with no errors yet: to look at what decoding a
    /// part would report before reporting it.
    pub(crate) fn probe(&self) -> Self {
        Self {
            as_written: self.as_written,
            ..Self::new(self.strict, self.package)
        }
    }

    /// Reports a metric source written in the `autoscaling/v2beta1` shape
    /// (`written`, at `path`) as one error: the texts of its unknown fields in
    /// the order Go's decoder meets them, joined as the server's strict
    /// decoding joins them.
    pub(crate) fn v2beta1_shape<V: Json>(
        &mut self,
        path: FieldPath,
        written: &V,
        mut unknown: Vec<DecodeError>,
    ) {
        if unknown.is_empty() {
            return;
        }
        unknown.sort_by_cached_key(|e| {
            e.path
                .strip_prefix(&path)
                .map(|rest| document_order(written, &rest))
        });
        let message = unknown
            .iter()
            .map(|e| e.message.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        self.push(
            path,
            DecodeErrorKind::UnknownField,
            Wanted::V2Shape,
            message,
        );
    }

    /// Whether decoding would have failed on the server (unknown fields only fail
    /// in strict mode and do not stop validation).
    pub(crate) fn has_fatal_errors(&self) -> bool {
        any_fatal(&self.errors)
    }

    fn push(&mut self, path: FieldPath, kind: DecodeErrorKind, wanted: Wanted, message: String) {
        if self.strict {
            self.errors.push(DecodeError {
                path,
                kind,
                wanted,
                message,
            });
        }
    }

    fn type_error<V: Json>(
        &mut self,
        value: &V,
        path: &FieldPath,
        parent: &str,
        go_type: &'static str,
    ) {
        let shown = go_type.replacen(AUTOSCALING, &format!("{}.", self.package), 1);
        let message = format!(
            "json: cannot unmarshal {} into Go struct field {parent}.{} of type {shown}",
            json_type(value, go_type),
            go_field_path(path)
        );
        self.push(
            path.clone(),
            DecodeErrorKind::Type,
            Wanted::Type(go_type),
            message,
        );
    }

    /// Opens the top-level object (already known to be a JSON object).
    pub(crate) fn root<'v, V: Json>(
        &mut self,
        value: &'v V,
        go: &'static GoStruct,
    ) -> Record<'v, 'static, V> {
        self.open(Some(value), At::Root, go, "")
    }

    fn open<'v, 'p, V: Json>(
        &mut self,
        value: Option<&'v V>,
        at: At<'p>,
        go: &'static GoStruct,
        parent: &str,
    ) -> Record<'v, 'p, V> {
        let map = match value.map(|v| (v, v.shape())) {
            None | Some((_, Shape::Null)) => None,
            Some((map, Shape::Object(_, entries))) => {
                for (key, _) in entries {
                    let known = if self.as_written {
                        go_field(go, key).is_some()
                    } else {
                        go.fields.contains(&key)
                    };
                    if !known {
                        let field = at.path().field(key);
                        let message = format!("unknown field \"{field}\"");
                        let wanted = Wanted::Field(go.fields);
                        self.push(field, DecodeErrorKind::UnknownField, wanted, message);
                    }
                }
                Some(map)
            }
            Some((other, _)) => {
                self.type_error(other, &at.path(), parent, go.qualified);
                None
            }
        };
        Record {
            map,
            at,
            go,
            as_written: self.as_written,
        }
    }
}

impl<'v, V: Json> Record<'v, '_, V> {
    /// Whether the JSON value was an object (as opposed to absent, null or wrong).
    pub(crate) fn is_present(&self) -> bool {
        self.map.is_some()
    }

    /// The raw value of a field, `None` when absent or null.
    pub(crate) fn raw(&self, name: &str) -> Option<&'v V> {
        let map = self.map?;
        let value = if self.as_written {
            // Each key sets the field it names, the last one last.
            match map.shape() {
                Shape::Object(_, entries) => entries
                    .filter(|(key, _)| go_field(self.go, key) == Some(name))
                    .last()
                    .map(|(_, value)| value),
                _ => None,
            }
        } else {
            map.member(name)
        };
        value.filter(|v| !v.is_null())
    }

    /// The path of a field of this struct.
    pub(crate) fn path(&self, name: &str) -> FieldPath {
        self.at.path().field(name)
    }

    /// A nested struct; absent, null and wrong-typed values give an empty record.
    pub(crate) fn record(
        &self,
        d: &mut Decoder,
        name: &'static str,
        go: &'static GoStruct,
    ) -> Record<'v, '_, V> {
        d.open(self.raw(name), At::Field(&self.at, name), go, self.go.name)
    }

    /// A string field of a named Go type (`string`, `v2.MetricSourceType`, ...).
    pub(crate) fn string_as(
        &self,
        d: &mut Decoder,
        name: &str,
        go_type: &'static str,
    ) -> Option<String> {
        let value = self.raw(name)?;
        match value.text() {
            Some(s) => Some(s.to_owned()),
            None => {
                d.type_error(value, &self.path(name), self.go.name, go_type);
                None
            }
        }
    }

    /// A plain `string` field.
    pub(crate) fn string(&self, d: &mut Decoder, name: &str) -> Option<String> {
        self.string_as(d, name, "string")
    }

    /// A `metav1.Time` field: text that Go's `time.Parse` reads as RFC 3339.
    /// Its own decoder reads the JSON into a string first, so a value of
    /// another type fails with no field named.
    pub(crate) fn time(&self, d: &mut Decoder, name: &str) {
        let Some(value) = self.raw(name) else {
            return;
        };
        let message = match value.shape() {
            Shape::String(text) => match rfc3339_error(text) {
                Some(message) => message,
                None => return,
            },
            _ => format!(
                "json: cannot unmarshal {} into Go value of type string",
                json_type(value, "string")
            ),
        };
        d.push(
            self.path(name),
            DecodeErrorKind::Type,
            Wanted::Type("v1.Time"),
            message,
        );
    }

    /// A `bool` field.
    pub(crate) fn bool(&self, d: &mut Decoder, name: &str) -> Option<bool> {
        let value = self.raw(name)?;
        let b = match value.shape() {
            Shape::Bool(b) => Some(b),
            _ => None,
        };
        if b.is_none() {
            d.type_error(value, &self.path(name), self.go.name, "bool");
        }
        b
    }

    /// An `int32` field (range-checked like Go's decoder).
    pub(crate) fn int32(&self, d: &mut Decoder, name: &str) -> Option<i32> {
        let value = self.raw(name)?;
        let n = as_integer(value, d.as_written).and_then(|n| i32::try_from(n).ok());
        if n.is_none() {
            d.type_error(value, &self.path(name), self.go.name, "int32");
        }
        n
    }

    /// An `int64` field.
    pub(crate) fn int64(&self, d: &mut Decoder, name: &str) -> Option<i64> {
        let value = self.raw(name)?;
        let n = as_integer(value, d.as_written);
        if n.is_none() {
            d.type_error(value, &self.path(name), self.go.name, "int64");
        }
        n
    }

    /// A `resource.Quantity` field: a string or a number, parsed with the server's grammar.
    pub(crate) fn quantity(&self, d: &mut Decoder, name: &str) -> Option<Quantity> {
        let value = self.raw(name)?;
        let text = match value.shape() {
            // Its decoder parses the JSON text between the quotes without
            // unescaping it: what kubectl escapes there (control characters,
            // `"`, `\`, `<`, `>`, `&`, U+2028 and U+2029) leaves a backslash.
            Shape::String(s) if !d.as_written && s.chars().any(json_escapes) => {
                d.push(
                    self.path(name),
                    DecodeErrorKind::Quantity,
                    Wanted::Quantity,
                    QuantityError::Format.to_string(),
                );
                return None;
            }
            Shape::String(s) => Cow::Borrowed(s),
            Shape::Number(n) => Cow::Owned(n.to_string()),
            // Quantity's own JSON decoder treats any other token as quantity text.
            _ => Cow::Owned(value.to_value().to_string()),
        };
        match Quantity::parse(&text) {
            Ok(q) => Some(q),
            Err(e) => {
                d.push(
                    self.path(name),
                    DecodeErrorKind::Quantity,
                    Wanted::Quantity,
                    e.to_string(),
                );
                None
            }
        }
    }

    /// A list field's items. Wrong-typed lists are reported.
    fn list(&self, d: &mut Decoder, name: &str, go_type: &'static str) -> Option<&'v [V]> {
        let value = self.raw(name)?;
        match value.items() {
            Some(items) => Some(items),
            None => {
                let other = value;
                d.type_error(other, &self.path(name), self.go.name, go_type);
                None
            }
        }
    }

    /// A list of structs.
    pub(crate) fn records(
        &self,
        d: &mut Decoder,
        name: &'static str,
        go: &'static GoStruct,
        list_type: &'static str,
    ) -> Option<Vec<Record<'v, '_, V>>> {
        let items = self.list(d, name, list_type)?;
        Some(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| d.open(Some(item), At::Item(&self.at, name, i), go, self.go.name))
                .collect(),
        )
    }

    /// A `[]string` field.
    pub(crate) fn strings(&self, d: &mut Decoder, name: &str) -> Vec<String> {
        let Some(items) = self.list(d, name, "[]string") else {
            return Vec::new();
        };
        items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| match item.text() {
                Some(s) => Some(s.to_owned()),
                None => {
                    let path = self.path(name).index(i);
                    d.type_error(item, &path, self.go.name, "string");
                    None
                }
            })
            .collect()
    }

    /// A `map[string]string` field, in document order.
    pub(crate) fn string_map(&self, d: &mut Decoder, name: &str) -> StringMap {
        let Some(value) = self.raw(name) else {
            return StringMap::default();
        };
        let Shape::Object(len, entries) = value.shape() else {
            d.type_error(value, &self.path(name), self.go.name, "map[string]string");
            return StringMap::default();
        };
        // The text in one allocation: the entries' lengths added up first.
        let text_len = entries
            .clone()
            .map(|(key, value)| key.len() + value.text().map_or(0, str::len))
            .sum();
        let mut map = StringMap::with_capacity(len, text_len);
        for (key, value) in entries {
            match value.shape() {
                Shape::String(s) => map.push(key, s),
                // A null map value decodes to "".
                Shape::Null => map.push(key, ""),
                _ => {
                    let other = value;
                    let path = self.path(name).key(key);
                    d.type_error(other, &path, self.go.name, "string");
                }
            }
        }
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    static SPEC: GoStruct = GoStruct {
        name: "HorizontalPodAutoscalerSpec",
        qualified: "autoscaling.HorizontalPodAutoscalerSpec",
        fields: &["maxReplicas", "metrics", "target"],
    };
    static TARGET: GoStruct = GoStruct {
        name: "MetricTarget",
        qualified: "v2.MetricTarget",
        fields: &["averageValue"],
    };
    static ROOT: GoStruct = GoStruct {
        name: "HorizontalPodAutoscaler",
        qualified: "v2.HorizontalPodAutoscaler",
        fields: &["spec"],
    };

    fn decode(value: &Value) -> (Option<i32>, Option<Quantity>, Vec<String>) {
        let mut d = Decoder::new(true, "v2");
        let root = d.root(value, &ROOT);
        let spec = root.record(&mut d, "spec", &SPEC);
        let max = spec.int32(&mut d, "maxReplicas");
        let target = spec.record(&mut d, "target", &TARGET);
        let average = target.quantity(&mut d, "averageValue");
        let messages = d
            .errors
            .iter()
            .map(|e| format!("{}: {}", e.path, e.message))
            .collect();
        (max, average, messages)
    }

    #[test]
    fn reports_go_style_type_errors() {
        let (max, _, errors) = decode(&json!({"spec": {"maxReplicas": "5"}}));
        assert_eq!(max, None);
        assert_eq!(
            errors,
            [
                "spec.maxReplicas: json: cannot unmarshal string into Go struct field HorizontalPodAutoscalerSpec.spec.maxReplicas of type int32"
            ]
        );
        let (_, _, errors) = decode(&json!({"spec": {"maxReplicas": 3_000_000_000_i64}}));
        assert!(
            errors[0].contains("cannot unmarshal number 3000000000 into"),
            "{errors:?}"
        );
        let (_, _, errors) = decode(&json!({"spec": []}));
        assert_eq!(
            errors,
            [
                "spec: json: cannot unmarshal array into Go struct field HorizontalPodAutoscaler.spec of type v2.HorizontalPodAutoscalerSpec"
            ]
        );
    }

    /// A map of strings held in one string reads as the list of its
    /// entries would: in order, with empty keys and values, and what is
    /// kept after some are dropped.
    #[test]
    fn string_maps_read_as_their_entries() {
        let entries = [("app", "web"), ("", "empty key"), ("tier", ""), ("é", "ü")];
        let mut map = StringMap::with_capacity(1, 0);
        for (key, value) in entries {
            map.push(key, value);
        }
        assert_eq!(map.iter().collect::<Vec<_>>(), entries);
        assert_eq!((map.len(), map.is_empty()), (4, false));
        assert_eq!(
            (map.get("tier"), map.get(""), map.get("x")),
            (Some(""), Some("empty key"), None)
        );
        let all = map.clone();
        map.retain(|_| true);
        assert_eq!(map, all);
        map.retain(|key| key != "app" && key != "tier");
        assert_eq!(
            map.iter().collect::<Vec<_>>(),
            [("", "empty key"), ("é", "ü")]
        );
        map.retain(|_| false);
        assert!(map.is_empty() && map.iter().next().is_none());
    }

    #[test]
    fn accepts_integral_floats_and_reports_unknown_fields() {
        let (max, _, errors) = decode(&json!({"spec": {"maxReplicas": 5.0, "maxReplica": 1}}));
        assert_eq!(max, Some(5));
        assert_eq!(
            errors,
            ["spec.maxReplica: unknown field \"spec.maxReplica\""]
        );
    }

    #[test]
    fn parses_quantities_from_strings_and_numbers() {
        let (_, average, errors) = decode(&json!({"spec": {"target": {"averageValue": 500}}}));
        assert!(errors.is_empty());
        assert!(average.unwrap().is_positive());
        let (_, _, errors) = decode(&json!({"spec": {"target": {"averageValue": "1K"}}}));
        assert_eq!(
            errors,
            ["spec.target.averageValue: unable to parse quantity's suffix"]
        );
    }
}
