//! A JSON value packed into bytes, for objects held long and read seldom
//! (the workloads of a repository, looked up once by the HPA that targets
//! them): about the size of its JSON text, but written and read back without
//! quoting, escaping or parsing numbers. The bytes are only ever read by
//! [`unpack`], in the same run: there is no format to keep stable.
//!
//! Each value is a tag byte and what it holds: a number as its 8 bytes, a
//! string as its length (LEB128), an array or a mapping as its length and
//! then its items (a mapping's each as a string's length and a value). The
//! strings' bytes follow all that, one after the other, so that reading
//! checks them as UTF-8 at once rather than one by one; the length of what
//! comes before them comes first.

use std::borrow::Cow;

use serde_json::{Map, Number, Value};

use crate::path::{Json, Shape};
use crate::source::Tree;

const NULL: u8 = 0;
const FALSE: u8 = 1;
const TRUE: u8 = 2;
const UNSIGNED: u8 = 3;
const NEGATIVE: u8 = 4;
const FLOAT: u8 = 5;
const STRING: u8 = 6;
const ARRAY: u8 = 7;
const OBJECT: u8 = 8;

/// `value`, packed: a serde_json [`Value`] or a document's tree
/// ([`crate::source::Tree`]), the same bytes for the same value.
pub fn pack<V: Json>(value: &V) -> Box<[u8]> {
    // Written in one walk into this thread's scratch, then copied once
    // into bytes of the exact size: grown by pushing, or made roomy and
    // given back, the bytes themselves would cost copies or leave the
    // allocator holes.
    let mut scratch = SCRATCH.take();
    let Scratch { structure, strings } = &mut scratch;
    write(value, structure, strings);
    let len = len_len(structure.len()) + structure.len() + strings.len();
    let mut bytes = Vec::with_capacity(len);
    write_len(structure.len(), &mut bytes);
    bytes.extend_from_slice(structure);
    bytes.extend_from_slice(strings);
    debug_assert_eq!(bytes.len(), len);
    if structure.capacity() <= SCRATCH_KEPT && strings.capacity() <= SCRATCH_KEPT {
        structure.clear();
        strings.clear();
        SCRATCH.set(scratch);
    }
    bytes.into_boxed_slice()
}

/// What [`pack`] writes before the strings, and the strings, as it walks a
/// value.
#[derive(Default)]
struct Scratch {
    structure: Vec<u8>,
    strings: Vec<u8>,
}

thread_local! {
    /// The room of this thread's last [`pack`], for the next: most values
    /// packed are a few hundred bytes, and growing buffers anew for each
    /// costs more than writing them.
    static SCRATCH: std::cell::Cell<Scratch> = const {
        std::cell::Cell::new(Scratch {
            structure: Vec::new(),
            strings: Vec::new(),
        })
    };
}

/// The most room [`SCRATCH`] keeps of either buffer: a large value's is
/// given back.
const SCRATCH_KEPT: usize = 64 * 1024;

/// The value [`pack`] packed into `bytes`.
pub fn unpack(bytes: &[u8]) -> Value {
    reader(bytes).value()
}

/// The value [`pack`] packed into `bytes`, as a tree that borrows its keys
/// and strings from them: for reading once, without the allocations and
/// hashing of a [`Value`]'s maps and strings.
pub fn unpack_tree(bytes: &[u8]) -> Tree<'_> {
    reader(bytes).tree()
}

/// A reader of what [`pack`] wrote.
fn reader(bytes: &[u8]) -> Reader<'_> {
    let mut head = Reader {
        bytes,
        at: 0,
        strings: "",
        next: 0,
    };
    let structure = head.len();
    let (structure, strings) = bytes[head.at..].split_at(structure);
    Reader {
        bytes: structure,
        at: 0,
        // Written from `str`s by `pack`: valid UTF-8.
        strings: std::str::from_utf8(strings).unwrap_or_default(),
        next: 0,
    }
}

/// Writes `value`: its strings' bytes (keys included) to `strings`, the
/// rest to `structure`, the strings' lengths where they come.
// Inlined where items and entries are written, most of them scalars: only
// arrays and mappings cost a call (kept out of line, or the inliner folds
// them back into one recursive function, a call for every value).
#[inline(always)]
fn write<V: Json>(value: &V, structure: &mut Vec<u8>, strings: &mut Vec<u8>) {
    match value.shape() {
        Shape::Null => structure.push(NULL),
        Shape::Bool(false) => structure.push(FALSE),
        Shape::Bool(true) => structure.push(TRUE),
        Shape::Number(n) => {
            // serde_json's own order: unsigned, then negative, then float.
            let (tag, bytes) = if let Some(n) = n.as_u64() {
                (UNSIGNED, n.to_le_bytes())
            } else if let Some(n) = n.as_i64() {
                (NEGATIVE, n.to_le_bytes())
            } else {
                (FLOAT, n.as_f64().unwrap_or_default().to_le_bytes())
            };
            structure.push(tag);
            structure.extend_from_slice(&bytes);
        }
        Shape::String(s) => {
            structure.push(STRING);
            write_str(s, structure, strings);
        }
        Shape::Array(items) => write_array(items, structure, strings),
        Shape::Object(len, entries) => write_object::<V>(len, entries, structure, strings),
    }
}

#[inline(never)]
fn write_array<V: Json>(items: &[V], structure: &mut Vec<u8>, strings: &mut Vec<u8>) {
    structure.push(ARRAY);
    write_len(items.len(), structure);
    for item in items {
        write(item, structure, strings);
    }
}

#[inline(never)]
fn write_object<'v, V: Json + 'v>(
    len: usize,
    entries: V::Entries<'v>,
    structure: &mut Vec<u8>,
    strings: &mut Vec<u8>,
) {
    structure.push(OBJECT);
    write_len(len, structure);
    for (key, value) in entries {
        write_str(key, structure, strings);
        write(value, structure, strings);
    }
}

fn write_str(s: &str, structure: &mut Vec<u8>, strings: &mut Vec<u8>) {
    write_len(s.len(), structure);
    strings.extend_from_slice(s.as_bytes());
}

/// How many bytes [`write_len`] writes for `len`.
fn len_len(len: usize) -> usize {
    let bits = (usize::BITS - len.leading_zeros()).max(1);
    bits.div_ceil(7) as usize
}

/// LEB128: seven bits a byte, the high bit set on all but the last.
fn write_len(len: usize, out: &mut Vec<u8>) {
    let mut rest = len;
    while rest >= 0x80 {
        out.push((rest & 0x7f) as u8 | 0x80);
        rest >>= 7;
    }
    out.push(rest as u8);
}

struct Reader<'b> {
    /// What comes before the strings.
    bytes: &'b [u8],
    at: usize,
    /// The strings, one after the other.
    strings: &'b str,
    /// Where the next string starts.
    next: usize,
}

impl<'b> Reader<'b> {
    fn take(&mut self, n: usize) -> &[u8] {
        let taken = &self.bytes[self.at..self.at + n];
        self.at += n;
        taken
    }

    fn byte(&mut self) -> u8 {
        // One bounds check.
        let byte = self.bytes[self.at];
        self.at += 1;
        byte
    }

    fn eight(&mut self) -> [u8; 8] {
        let mut eight = [0; 8];
        eight.copy_from_slice(self.take(8));
        eight
    }

    fn len(&mut self) -> usize {
        // Most lengths are under 128: one byte.
        let first = self.byte();
        if first < 0x80 {
            return usize::from(first);
        }
        let mut len = usize::from(first & 0x7f);
        let mut shift = 7;
        loop {
            let byte = self.byte();
            len |= usize::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return len;
            }
            shift += 7;
        }
    }

    fn str(&mut self) -> &'b str {
        let start = self.next;
        self.next += self.len();
        // Whole strings: cut between characters.
        self.strings.get(start..self.next).unwrap_or_default()
    }

    fn string(&mut self) -> String {
        self.str().to_owned()
    }

    /// A number: what [`Reader::value`] makes of the tag's bytes.
    fn number(&mut self, tag: u8) -> Option<Number> {
        match tag {
            UNSIGNED => Some(u64::from_le_bytes(self.eight()).into()),
            NEGATIVE => Some(i64::from_le_bytes(self.eight()).into()),
            // Finite: it was a JSON number.
            _ => Number::from_f64(f64::from_le_bytes(self.eight())),
        }
    }

    fn tree(&mut self) -> Tree<'b> {
        match self.byte() {
            NULL => Tree::Null,
            FALSE => Tree::Bool(false),
            TRUE => Tree::Bool(true),
            tag @ (UNSIGNED | NEGATIVE | FLOAT) => {
                self.number(tag).map_or(Tree::Null, Tree::Number)
            }
            STRING => Tree::String(Cow::Borrowed(self.str())),
            ARRAY => {
                let len = self.len();
                Tree::Array((0..len).map(|_| self.tree()).collect())
            }
            tag => {
                debug_assert_eq!(tag, OBJECT);
                let len = self.len();
                Tree::Object(
                    (0..len)
                        .map(|_| (Cow::Borrowed(self.str()), self.tree()))
                        .collect(),
                )
            }
        }
    }

    fn value(&mut self) -> Value {
        match self.byte() {
            NULL => Value::Null,
            FALSE => Value::Bool(false),
            TRUE => Value::Bool(true),
            tag @ (UNSIGNED | NEGATIVE | FLOAT) => {
                self.number(tag).map_or(Value::Null, Value::Number)
            }
            STRING => Value::String(self.string()),
            ARRAY => {
                let len = self.len();
                Value::Array((0..len).map(|_| self.value()).collect())
            }
            tag => {
                debug_assert_eq!(tag, OBJECT);
                let len = self.len();
                let mut map = Map::with_capacity(len);
                for _ in 0..len {
                    let key = self.string();
                    map.insert(key, self.value());
                }
                Value::Object(map)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::{pack, unpack, unpack_tree};
    use crate::path::Json;
    use crate::source::Tree;
    use serde_json::{Value, json};

    #[test]
    fn values_come_back_as_they_were_packed() {
        let long = "é".repeat(100);
        let value = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"z": "1", "a": "2", "m": ""}},
            "spec": {
                "replicas": 3, "paused": false, "progress": true, "none": null,
                "numbers": [0, 1, u64::MAX, -1, i64::MIN, 0.5, -2.5e-300, 1e300, 3.0],
                "nested": [[], {}, [{"k": [long]}]],
                "quoted": "a \"b\"\n\t\\ \u{0} ✓",
            },
        });
        let back = unpack(&pack(&value));
        assert_eq!(back, value);
        // The same text: key order, and integers told from floats.
        assert_eq!(back.to_string(), value.to_string());
        for plain in [json!(null), json!(7), json!("x"), json!([]), json!({})] {
            assert_eq!(unpack(&pack(&plain)), plain);
            assert_eq!(unpack_tree(&pack(&plain)).into_value(), plain);
        }
        // Unpacked as a tree, the same value, strings borrowed.
        let packed = pack(&value);
        let tree = unpack_tree(&packed);
        assert!(matches!(
            tree.member("kind"),
            Some(Tree::String(Cow::Borrowed("Deployment")))
        ));
        assert_eq!(tree.into_value().to_string(), value.to_string());
    }

    #[test]
    fn values_larger_than_the_scratch_kept_pack_as_others() {
        let large = json!({"a": "x".repeat(super::SCRATCH_KEPT + 1), "b": [1, 2]});
        let small = json!({"c": ["y", null], "d": 1.5});
        for value in [&small, &large, &small, &large] {
            assert_eq!(&unpack(&pack(value)), value);
        }
    }

    #[test]
    fn lengths_take_as_many_bytes_as_they_are_given() {
        for len in [0, 1, 127, 128, 300, 16_383, 16_384, 1 << 21, usize::MAX] {
            let mut bytes = Vec::new();
            super::write_len(len, &mut bytes);
            assert_eq!(bytes.len(), super::len_len(len), "{len}");
        }
    }

    #[test]
    fn packed_values_are_no_larger_than_their_text() {
        let value: Value = serde_json::from_str(
            r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop","labels":{"app":"web"}},
            "spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{"spec":{"containers":[
            {"name":"web","resources":{"requests":{"cpu":"250m","memory":"256Mi"},"limits":{"memory":"512Mi"}}}]}}}}"#,
        )
        .unwrap();
        assert!(pack(&value).len() < value.to_string().len());
    }
}
