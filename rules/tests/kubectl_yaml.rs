//! What a YAML document says is what kubectl sends: kubectl reads YAML with
//! sigs.k8s.io/yaml, which parses with go-yaml v2 and converts the result to
//! JSON. These are go-yaml v2's test vectors (github.com/go-yaml/yaml, branch
//! v2: `decode_test.go`, cited by table and comment) and vectors read off its
//! scanner (`scannerc.go`, cited by function) where a YAML 1.2 parser reads
//! the text differently. Any reader of hpa-lint must read every one of them
//! as written here: a JSON value, or an error (with go-yaml's text where
//! hpa-lint reports it).

use hpa_lint_rules::source::{ALL, ProblemKind, read_document};
use serde_json::Value;

/// What kubectl makes of a document.
enum Reads {
    /// This JSON (`null` for an empty document).
    Json(&'static str),
    /// An error.
    Error,
    /// An error with go-yaml's text.
    ErrorSaying(&'static str),
}
use Reads::*;

/// Reads one document as hpa-lint does: its value, or its first problem.
fn read(text: &str) -> Result<Value, String> {
    let document = read_document(text, &|_, _| &ALL);
    if let Some(problem) = document
        .problems
        .iter()
        .find(|p| p.kind != ProblemKind::DuplicateKey)
    {
        return Err(problem.message.clone());
    }
    Ok(document
        .values
        .into_iter()
        .next()
        .map_or(Value::Null, |(v, _)| v))
}

/// hpa-lint's words for go-yaml's errors about a tab in the indentation.
const INDENTS: &str = "a tab indents this line: YAML indents with spaces only";

fn check(vectors: &[(&str, Reads)]) {
    let mut wrong = Vec::new();
    for (text, wanted) in vectors {
        let got = read(text);
        let ok = match (wanted, &got) {
            (Json(json), Ok(value)) => {
                *value == serde_json::from_str::<Value>(json).expect("a JSON vector")
            }
            (Error, Err(_)) => true,
            (ErrorSaying(message), Err(got)) => got.starts_with(message),
            _ => false,
        };
        if !ok {
            wrong.push(format!("{text:?}: {got:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "read differently from kubectl:\n{}",
        wrong.join("\n")
    );
}

/// `decode_test.go`, `unmarshalTests`: the vectors that decode into a
/// generic value (`interface{}`, `map[string]interface{}`), as kubectl does.
#[test]
fn go_yaml_unmarshal_tests() {
    check(&[
        ("", Json("null")),
        ("{}", Json("{}")),
        ("v: hi", Json(r#"{"v": "hi"}"#)),
        ("v: true", Json(r#"{"v": true}"#)),
        ("v: 10", Json(r#"{"v": 10}"#)),
        ("v: 0b10", Json(r#"{"v": 2}"#)),
        ("v: 0xA", Json(r#"{"v": 10}"#)),
        ("v: 0.1", Json(r#"{"v": 0.1}"#)),
        ("v: .1", Json(r#"{"v": 0.1}"#)),
        ("v: -10", Json(r#"{"v": -10}"#)),
        ("v: -.1", Json(r#"{"v": -0.1}"#)),
        // JSON has no infinity: sigs.k8s.io/yaml cannot convert it.
        ("v: .Inf", Error),
        ("v: -.Inf", Error),
        // Floats from spec.
        ("canonical: 6.8523e+5", Json(r#"{"canonical": 685230}"#)),
        ("expo: 685.230_15e+03", Json(r#"{"expo": 685230.15}"#)),
        ("fixed: 685_230.15", Json(r#"{"fixed": 685230.15}"#)),
        // Bools from spec.
        ("canonical: y", Json(r#"{"canonical": true}"#)),
        ("answer: NO", Json(r#"{"answer": false}"#)),
        ("logical: True", Json(r#"{"logical": true}"#)),
        ("option: on", Json(r#"{"option": true}"#)),
        // Ints from spec.
        ("canonical: 685230", Json(r#"{"canonical": 685230}"#)),
        ("decimal: +685_230", Json(r#"{"decimal": 685230}"#)),
        ("octal: 02472256", Json(r#"{"octal": 685230}"#)),
        ("hexa: 0x_0A_74_AE", Json(r#"{"hexa": 685230}"#)),
        (
            "bin: 0b1010_0111_0100_1010_1110",
            Json(r#"{"bin": 685230}"#),
        ),
        ("bin: -0b101010", Json(r#"{"bin": -42}"#)),
        (
            "bin: -0b1000000000000000000000000000000000000000000000000000000000000000",
            Json(r#"{"bin": -9223372036854775808}"#),
        ),
        // Nulls from spec; a null key cannot be a JSON key.
        ("empty:", Json(r#"{"empty": null}"#)),
        ("canonical: ~", Json(r#"{"canonical": null}"#)),
        ("english: null", Json(r#"{"english": null}"#)),
        ("~: null key", Error),
        // Flow and block sequences.
        ("seq: [A,B]", Json(r#"{"seq": ["A", "B"]}"#)),
        ("seq: [A,B,C,]", Json(r#"{"seq": ["A", "B", "C"]}"#)),
        ("seq: [A,1,C]", Json(r#"{"seq": ["A", 1, "C"]}"#)),
        ("seq:\n - A\n - B", Json(r#"{"seq": ["A", "B"]}"#)),
        ("seq:\n - A\n - 1\n - C", Json(r#"{"seq": ["A", 1, "C"]}"#)),
        // Literal and folded block scalars.
        (
            "scalar: | # Comment\n\n literal\n\n \ttext\n\n",
            Json(r#"{"scalar": "\nliteral\n\n\ttext\n"}"#),
        ),
        (
            "scalar: > # Comment\n\n folded\n line\n \n next\n line\n  * one\n  * two\n\n last\n line\n\n",
            Json(r#"{"scalar": "\nfolded line\nnext line\n * one\n * two\n\nlast line\n"}"#),
        ),
        // Map inside interface with no type hints.
        ("a: {b: c}", Json(r#"{"a": {"b": "c"}}"#)),
        ("a: 1.0", Json(r#"{"a": 1}"#)),
        ("a: [1, 2]", Json(r#"{"a": [1, 2]}"#)),
        // Quoted values.
        ("'1': '\"2\"'", Json(r#"{"1": "\"2\""}"#)),
        ("v:\n- A\n- 'B\n\n  C'\n", Json(r#"{"v": ["A", "B\nC"]}"#)),
        // Explicit tags.
        ("v: !!float '1.1'", Json(r#"{"v": 1.1}"#)),
        ("v: !!float 0", Json(r#"{"v": 0}"#)),
        ("v: !!float -1", Json(r#"{"v": -1}"#)),
        ("v: !!null ''", Json(r#"{"v": null}"#)),
        (
            "%TAG !y! tag:yaml.org,2002:\n---\nv: !y!int '1'",
            Json(r#"{"v": 1}"#),
        ),
        // Non-specific tag (Issue #75).
        ("v: ! test", Json(r#"{"v": "test"}"#)),
        // Anchors and aliases.
        (
            "a: &x 1\nb: &y 2\nc: *x\nd: *y\n",
            Json(r#"{"a": 1, "b": 2, "c": 1, "d": 2}"#),
        ),
        (
            "a: &a {c: 1}\nb: *a",
            Json(r#"{"a": {"c": 1}, "b": {"c": 1}}"#),
        ),
        ("a: &a [1, 2]\nb: *a", Json(r#"{"a": [1, 2], "b": [1, 2]}"#)),
        // Bug #1133337, support for ~.
        ("foo: ''", Json(r#"{"foo": ""}"#)),
        ("foo: null", Json(r#"{"foo": null}"#)),
        ("foo: ~", Json(r#"{"foo": null}"#)),
        // Bug #1191981: line breaks of a double-quoted scalar.
        (
            "%YAML 1.1\n--- !!str\n\"Generic line break (no glyph)\\n\\\n Generic line break (glyphed)\\n\\\n Line separator\\u2028\\\n Paragraph separator\\u2029\"\n",
            Json(
                r#""Generic line break (no glyph)\nGeneric line break (glyphed)\nLine separator\u2028Paragraph separator\u2029""#,
            ),
        ),
        // Bug 1243827.
        ("a: -b_c", Json(r#"{"a": "-b_c"}"#)),
        ("a: +b_c", Json(r#"{"a": "+b_c"}"#)),
        ("a: 50cent_of_dollar", Json(r#"{"a": "50cent_of_dollar"}"#)),
        // Issue #295: scalars with colons in flow mappings and sequences.
        (
            "a: {b: https://github.com/go-yaml/yaml}",
            Json(r#"{"a": {"b": "https://github.com/go-yaml/yaml"}}"#),
        ),
        (
            "a: [https://github.com/go-yaml/yaml]",
            Json(r#"{"a": ["https://github.com/go-yaml/yaml"]}"#),
        ),
        // Issue #24; base 60 floats are obsolete and unsupported.
        ("a: <foo>", Json(r#"{"a": "<foo>"}"#)),
        ("a: 1:1\n", Json(r#"{"a": "1:1"}"#)),
        // Binary data (decoded bytes; these are text).
        ("a: !!binary aGVsbG8=\n", Json(r#"{"a": "hello"}"#)),
        // Issue #39.
        ("a:\n b:\n  c: d\n", Json(r#"{"a": {"b": {"c": "d"}}}"#)),
        // Timestamps stay text in an interface{}.
        ("a: !!str 2015-01-01", Json(r#"{"a": "2015-01-01"}"#)),
        ("a: \"2015-01-01\"", Json(r#"{"a": "2015-01-01"}"#)),
        (
            "a: !!timestamp \"2015-01-01\"",
            Json(r#"{"a": "2015-01-01"}"#),
        ),
        ("a: 2015-01-01", Json(r#"{"a": "2015-01-01"}"#)),
        // This *is* in fact a float number, per the spec. #171 was a mistake.
        ("a: 123456e1\n", Json(r#"{"a": 1234560}"#)),
        ("a: 123456E1\n", Json(r#"{"a": 1234560}"#)),
        // yaml-test-suite 3GZX: Spec Example 7.1. Alias Nodes.
        (
            "First occurrence: &anchor Foo\nSecond occurrence: *anchor\nOverride anchor: &anchor Bar\nReuse anchor: *anchor\n",
            Json(
                r#"{"First occurrence": "Foo", "Second occurrence": "Foo", "Override anchor": "Bar", "Reuse anchor": "Bar"}"#,
            ),
        ),
        // Single document with garbage following it: only the first is read.
        ("---\nhello\n...\n}not yaml", Json(r#""hello""#)),
        ("a: 5\n", Json(r#"{"a": 5}"#)),
    ]);
}

/// `decode_test.go`, `unmarshalErrorTests`.
#[test]
fn go_yaml_unmarshal_error_tests() {
    check(&[
        ("v: !!float 'error'", Error),
        ("v: [A,", Error),
        ("v:\n- [A,", Error),
        (
            "a:\n- b: *,",
            ErrorSaying("did not find expected alphabetic or numeric character"),
        ),
        ("a: *b\n", Error),
        ("a: &a\n  b: *a\n", Error),
        ("a: &x null\n<<:\n- *x\nb: &x {}\n", Error),
        ("value: -", Error),
        ("a: !!binary ==", Error),
        ("{[.]}", Error),
        ("{{.}}", Error),
        ("b: *a\na: &a {c: 1}", Error),
        (
            "%TAG !%79! tag:yaml.org,2002:\n---\nv: !%79!int '1'",
            ErrorSaying("did not find expected whitespace"),
        ),
        ("a:\n  1:\nb\n  2:", Error),
    ]);
}

/// `decode_test.go`, `mergeTests`: every map equals `plain`.
#[test]
fn go_yaml_merge_tests() {
    let merges = r#"
anchors:
  list:
    - &CENTER { "x": 1, "y": 2 }
    - &LEFT   { "x": 0, "y": 2 }
    - &BIG    { "r": 10 }
    - &SMALL  { "r": 1 }
plain:
  "x": 1
  "y": 2
  "r": 10
  label: center/big
mergeOne:
  << : *CENTER
  "r": 10
  label: center/big
mergeMultiple:
  << : [ *CENTER, *BIG ]
  label: center/big
override:
  << : [ *BIG, *LEFT, *SMALL ]
  "x": 1
  label: center/big
shortTag:
  !!merge "<<" : [ *CENTER, *BIG ]
  label: center/big
longTag:
  !<tag:yaml.org,2002:merge> "<<" : [ *CENTER, *BIG ]
  label: center/big
inlineMap:
  << : {"x": 1, "y": 2, "r": 10}
  label: center/big
inlineSequenceMap:
  << : [ *CENTER, {"r": 10} ]
  label: center/big
"#;
    let value = read(merges).unwrap();
    let plain = &value["plain"];
    for (name, map) in value.as_object().unwrap() {
        if name != "anchors" {
            assert_eq!(map, plain, "{name}");
        }
    }
}

/// `yaml_parser_scan_to_next_token`: between two tokens, a `#` starts a
/// comment, whitespace before it or not; `yaml_parser_scan_block_scalar`
/// and `yaml_parser_scan_directive` eat one after their indicators too.
#[test]
fn a_comment_right_after_a_token_is_a_comment() {
    check(&[
        ("apiVersion: 'a/b/c'#c", Json(r#"{"apiVersion": "a/b/c"}"#)),
        ("a: \"x\"#c", Json(r#"{"a": "x"}"#)),
        ("a: [b]#c", Json(r#"{"a": ["b"]}"#)),
        ("a: {b: c}#c", Json(r#"{"a": {"b": "c"}}"#)),
        ("a: [b,#c\n  d]", Json(r#"{"a": ["b", "d"]}"#)),
        ("a: [#c\n  b]", Json(r#"{"a": ["b"]}"#)),
        ("- 'a'#c\n- b", Json(r#"["a", "b"]"#)),
        ("a: |#c\n  x\n", Json(r#"{"a": "x\n"}"#)),
        ("a: >-#c\n  x\n  y\n", Json(r#"{"a": "x y"}"#)),
        ("%YAML 1.1#c\n---\na: b", Json(r#"{"a": "b"}"#)),
        // Inside a plain scalar, `#` without a blank before it is text.
        ("a: b#c", Json(r#"{"a": "b#c"}"#)),
        ("a: [b#c]", Json(r#"{"a": ["b#c"]}"#)),
        // A quote inside a plain scalar does not end it.
        ("a: it's#1", Json(r#"{"a": "it's#1"}"#)),
        ("a: \"x'#y\"", Json(r#"{"a": "x'#y"}"#)),
    ]);
}

/// `yaml_parser_scan_to_next_token` eats a tab only in the flow context or
/// where no simple key may start; elsewhere in the block context (the start
/// of a line, after `-`, `?` or the `:` of an explicit key) the tab is where
/// a token must start: `found character that cannot start any token`.
/// `yaml_parser_scan_plain_scalar` and `yaml_parser_scan_block_scalar_breaks`
/// refuse a tab in the indentation of their continuation lines. (hpa-lint
/// words a tab in the indentation its own way, and quotes go-yaml otherwise.)
#[test]
fn tabs_where_go_yaml_reads_them() {
    const NOT_A_BLANK: &str = "a tab where kubectl's YAML reader wants a space (found character that cannot start any token)";
    check(&[
        // After the `:` of a simple key, no simple key may start: a blank.
        ("key:\tvalue", Json(r#"{"key": "value"}"#)),
        ("key:\t\tvalue", Json(r#"{"key": "value"}"#)),
        ("key: \tvalue", Json(r#"{"key": "value"}"#)),
        ("key:\t'value'", Json(r#"{"key": "value"}"#)),
        ("key:\t[a]", Json(r#"{"key": ["a"]}"#)),
        ("key:\t# c\n  a: b", Json(r#"{"key": {"a": "b"}}"#)),
        ("- a:\tb", Json(r#"[{"a": "b"}]"#)),
        ("a: b\t#c", Json(r#"{"a": "b"}"#)),
        ("a: 'b'\t#c", Json(r#"{"a": "b"}"#)),
        ("a: b\tc", Json(r#"{"a": "b\tc"}"#)),
        ("a: [\tb,\tc\t]", Json(r#"{"a": ["b", "c"]}"#)),
        ("a: [b,\n\tc]", Json(r#"{"a": ["b", "c"]}"#)),
        ("a: b\n  \tc", Json(r#"{"a": "b c"}"#)),
        ("a: |\n  x\n  \ty\n", Json(r#"{"a": "x\n\ty\n"}"#)),
        // Where a token must start.
        ("- \ta", ErrorSaying(NOT_A_BLANK)),
        ("-\ta", ErrorSaying(NOT_A_BLANK)),
        ("? a\n:\tb", ErrorSaying(NOT_A_BLANK)),
        ("\ta: b", ErrorSaying(INDENTS)),
        ("a:\n\tb: c", ErrorSaying(INDENTS)),
        ("a: 'b'\n\t\nc: d", ErrorSaying(INDENTS)),
        ("a: [b]\n\t# c\nc: d", ErrorSaying(INDENTS)),
        // In the continuation of a scalar.
        ("a: b\n\t\nc: d", ErrorSaying(INDENTS)),
        ("a: |\n\tx", ErrorSaying(INDENTS)),
    ]);
}

/// `yaml_parser_scan_tag`, `yaml_parser_scan_tag_uri`: a tag is made of URI
/// characters (`,`, `[` and `]` among them, `#` not) and ends at a blank.
/// A tag that is not one of YAML's reads as the text it tags (`resolve`),
/// and a mapping or sequence keeps no tag at all (`parser.mapping`,
/// `parser.sequence` in `decode.go`).
#[test]
fn tags_as_go_yaml_reads_them() {
    check(&[
        ("a: !t {b: c}", Json(r#"{"a": {"b": "c"}}"#)),
        ("a: !t\n  b: c", Json(r#"{"a": {"b": "c"}}"#)),
        ("a: !t\n- b", Json(r#"{"a": ["b"]}"#)),
        ("!t\na: b", Json(r#"{"a": "b"}"#)),
        ("!t {a: b}", Json(r#"{"a": "b"}"#)),
        ("--- !t\na: b", Json(r#"{"a": "b"}"#)),
        ("a: !!str {b: c}", Json(r#"{"a": {"b": "c"}}"#)),
        ("a: !!map [b]", Json(r#"{"a": ["b"]}"#)),
        ("a: !!int {b: c}", Json(r#"{"a": {"b": "c"}}"#)),
        (
            "a: !t &x {b: c}\nd: *x",
            Json(r#"{"a": {"b": "c"}, "d": {"b": "c"}}"#),
        ),
        ("a: !t 5", Json(r#"{"a": "5"}"#)),
        ("a: !t", Json(r#"{"a": ""}"#)),
        ("!t a: b", Json(r#"{"a": "b"}"#)),
        ("a: !t <<", Json(r#"{"a": "<<"}"#)),
        ("a: [!t, b]", Json(r#"{"a": ["b"]}"#)),
        ("a: [!t,b]", Error),
        ("a: !t,x y", Json(r#"{"a": "y"}"#)),
        ("a: !t[x] y", Json(r#"{"a": "y"}"#)),
        (
            "a: !t#c\n  b: c",
            ErrorSaying("did not find expected whitespace or line break"),
        ),
        (
            "a: {b: !t}",
            ErrorSaying("did not find expected whitespace or line break"),
        ),
        (
            "a: !t{b: c}",
            ErrorSaying("did not find expected whitespace or line break"),
        ),
        ("a: !<x", ErrorSaying("did not find the expected '>'")),
    ]);
}

/// `yaml_parser_scan_anchor`: anchor and alias names are `[0-9A-Za-z_-]+`,
/// followed by a blank or one of `?:,]}%@``.
#[test]
fn anchors_as_go_yaml_reads_them() {
    check(&[
        ("a: &x-1_b 1\nb: *x-1_b", Json(r#"{"a": 1, "b": 1}"#)),
        ("a: [&x 1, *x]", Json(r#"{"a": [1, 1]}"#)),
        (
            "a: {&x b: c, d: *x}",
            Json(r#"{"a": {"b": "c", "d": "b"}}"#),
        ),
        ("a: [*x]", Error),
        (
            "a: &a.b 1",
            ErrorSaying("did not find expected alphabetic or numeric character"),
        ),
        (
            "a: &x#c\n  b: 1",
            ErrorSaying("did not find expected alphabetic or numeric character"),
        ),
        (
            "a: &é 1",
            ErrorSaying("did not find expected alphabetic or numeric character"),
        ),
        (
            "a: & 1",
            ErrorSaying("did not find expected alphabetic or numeric character"),
        ),
    ]);
}

/// go-yaml's reader (`readerc.go`) refuses characters outside YAML's
/// printable set; a byte order mark is dropped at the start.
#[test]
fn characters_go_yaml_reads() {
    check(&[
        ("\u{feff}a: b", Json(r#"{"a": "b"}"#)),
        (
            "a: b\u{1}",
            ErrorSaying("control characters are not allowed"),
        ),
        (
            "a: \"b\u{7f}\"",
            ErrorSaying("control characters are not allowed"),
        ),
        (
            "a: b # \u{ffff}",
            ErrorSaying("control characters are not allowed"),
        ),
        ("a: \"\\x01\"", Json(r#"{"a": "\u0001"}"#)),
        ("a: é🦀", Json(r#"{"a": "é🦀"}"#)),
    ]);
}

/// Lines of a block mapping whose values end in a token after which go-yaml
/// reads a `#` as a comment: a quoted scalar or a flow collection.
fn lines() -> impl proptest::strategy::Strategy<Value = Vec<(String, String)>> {
    use proptest::prelude::*;
    let value = prop_oneof![
        "[a-z0-9 ]{0,8}".prop_map(|s| format!("'{s}'")),
        "[a-z0-9 ]{0,8}".prop_map(|s| format!("\"{s}\"")),
        "[a-z0-9]{1,5}".prop_map(|s| format!("[{s}, 1]")),
        "[a-z0-9]{1,5}".prop_map(|s| format!("{{k: {s}}}")),
    ];
    proptest::collection::vec(("[a-z]{1,6}", value), 1..8)
}

fn mapping(lines: &[(String, String)], separator: &str, comment: &str) -> String {
    lines
        .iter()
        .enumerate()
        .map(|(i, (key, value))| format!("{key}{i}:{separator}{value}{comment}\n"))
        .collect()
}

proptest::proptest! {
    /// go-yaml's rules as relations any reader must keep: a comment right
    /// after a quoted scalar or a flow collection reads as one after a
    /// space; after a simple key's `:`, a tab reads as a space; at the start
    /// of a line in the block context, a tab is an error.
    #[test]
    fn reads_by_go_yaml_rules(lines in lines(), line in 0usize..8) {
        let spaced = read(&mapping(&lines, " ", " #c"));
        proptest::prop_assert!(spaced.is_ok(), "{spaced:?}");
        proptest::prop_assert_eq!(&read(&mapping(&lines, " ", "#c")), &spaced);
        proptest::prop_assert_eq!(&read(&mapping(&lines, "\t", "")), &read(&mapping(&lines, " ", "")));
        let mut tabbed: Vec<String> = mapping(&lines, " ", "").lines().map(str::to_owned).collect();
        let line = line % tabbed.len();
        tabbed[line].insert(0, '\t');
        let tabbed = read(&(tabbed.join("\n") + "\n"));
        proptest::prop_assert!(
            tabbed.as_ref().is_err_and(|e| e.starts_with(INDENTS)),
            "{tabbed:?}"
        );
    }
}
