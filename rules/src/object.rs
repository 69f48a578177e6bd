//! Kubernetes objects as the rules see them: a JSON value plus its identity.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::path::Json;
use crate::quote::{code, shown};

/// An opaque handle a front end attaches to each object to find its source again
/// (the CLI: file, document and list item). Rules pass it through untouched.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Origin(pub u32);

/// Identity of an object: `apiVersion`, `kind`, namespace and name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectKey {
    /// `apiVersion` as written, e.g. `apps/v1`.
    pub api_version: String,
    /// `kind` as written.
    pub kind: String,
    /// The effective namespace: `metadata.namespace`, or the default namespace when unset.
    pub namespace: String,
    /// `metadata.name` (or `metadata.generateName` when there is no name).
    pub name: String,
}

/// An object's identity ([`ObjectKey`]) borrowed from its value, for the
/// many objects whose identity is only looked at or held apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyRef<'a> {
    /// `apiVersion` as written.
    pub api_version: &'a str,
    /// `kind` as written.
    pub kind: &'a str,
    /// The effective namespace.
    pub namespace: &'a str,
    /// `metadata.name` (or `metadata.generateName`).
    pub name: &'a str,
}

impl<'a> KeyRef<'a> {
    /// [`ObjectKey::of`], borrowed from `value` (or `default_namespace`).
    pub fn of<V: Json>(value: &'a V, default_namespace: &'a str) -> Option<Self> {
        let api_version = value.member("apiVersion")?.text()?;
        let kind = value.member("kind")?.text()?;
        let metadata = value.member("metadata");
        let text = |field: &str| {
            metadata
                .and_then(|m| m.member(field))
                .and_then(Json::text)
                .filter(|s| !s.is_empty())
        };
        // A cluster-scoped object has no namespace, whatever is written.
        let namespace = if is_cluster_scoped(group_of(api_version), kind) {
            ""
        } else {
            text("namespace").unwrap_or(default_namespace)
        };
        Some(Self {
            api_version,
            kind,
            namespace,
            name: text("name")
                .or_else(|| text("generateName"))
                .unwrap_or_default(),
        })
    }

    /// The identity, owned.
    pub fn to_key(self) -> ObjectKey {
        ObjectKey {
            api_version: self.api_version.to_owned(),
            kind: self.kind.to_owned(),
            namespace: self.namespace.to_owned(),
            name: self.name.to_owned(),
        }
    }
}

/// An object's identity held in one allocation rather than four: for the
/// many objects an index holds by identity until it is built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// `apiVersion`, kind, namespace and name, one after the other.
    text: Box<str>,
    /// Where the first three end in `text`.
    ends: [u32; 3],
}

impl Identity {
    /// Holds `key`.
    pub fn new(key: KeyRef<'_>) -> Self {
        let parts = [key.api_version, key.kind, key.namespace, key.name];
        let mut text = String::with_capacity(parts.iter().map(|part| part.len()).sum());
        let mut ends = [0; 3];
        for (i, part) in parts.into_iter().enumerate() {
            text.push_str(part);
            if let Some(end) = ends.get_mut(i) {
                *end = u32::try_from(text.len()).expect("an identity shorter than 4 GiB");
            }
        }
        Self {
            text: text.into_boxed_str(),
            ends,
        }
    }

    /// The identity held.
    pub fn get(&self) -> KeyRef<'_> {
        let [a, b, c] = self.ends.map(|end| end as usize);
        KeyRef {
            api_version: &self.text[..a],
            kind: &self.text[a..b],
            namespace: &self.text[b..c],
            name: &self.text[c..],
        }
    }
}

/// The cluster-scoped kinds rules look up (by name, without a namespace).
fn is_cluster_scoped(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        ("", "Namespace") | ("apiregistration.k8s.io", "APIService")
    )
}

impl ObjectKey {
    /// The identity of an object (a serde_json [`Value`] or a document's
    /// tree); `None` when `value` has no string `apiVersion` and `kind` (it
    /// is not a Kubernetes object).
    pub fn of<V: Json>(value: &V, default_namespace: &str) -> Option<Self> {
        KeyRef::of(value, default_namespace).map(KeyRef::to_key)
    }

    /// The same identity, borrowed.
    pub fn as_ref(&self) -> KeyRef<'_> {
        KeyRef {
            api_version: &self.api_version,
            kind: &self.kind,
            namespace: &self.namespace,
            name: &self.name,
        }
    }

    /// The API group of `apiVersion` (`""` for the core group).
    pub fn group(&self) -> &str {
        group_of(&self.api_version)
    }

    /// `Kind `name``, for messages.
    pub fn describe(&self) -> String {
        format!("{} {}", shown(&self.kind), code(&self.name))
    }

    /// A reference to this object, for lookups.
    pub fn to_ref(&self) -> ObjectRef {
        ObjectRef {
            group: self.group().to_owned(),
            kind: self.kind.clone(),
            namespace: self.namespace.clone(),
            name: self.name.clone(),
        }
    }
}

/// The group part of an `apiVersion` string: `apps/v1` → `apps`, `v1` → `""`.
pub fn group_of(api_version: &str) -> &str {
    // A byte loop: on strings this short, several times cheaper than a
    // `char` pattern's searcher (this is asked for every object read and
    // every comparison of identities in the index).
    match api_version.bytes().position(|b| b == b'/') {
        Some(slash) => &api_version[..slash],
        None => "",
    }
}

/// A kind of object by API group and kind, any version: how rules name the
/// kinds they look up (see [`crate::reads::Reads`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Kind {
    /// API group, `""` for core.
    pub group: &'static str,
    /// Kind.
    pub kind: &'static str,
}

impl Kind {
    /// The kind `kind` of `group`.
    pub const fn new(group: &'static str, kind: &'static str) -> Self {
        Self { group, kind }
    }

    /// Whether an object of `group` and `kind` is of this kind.
    pub fn is(self, group: &str, kind: &str) -> bool {
        self.group == group && self.kind == kind
    }
}

/// `HorizontalPodAutoscaler` of the `autoscaling` group.
pub const HPA: Kind = Kind::new("autoscaling", "HorizontalPodAutoscaler");

/// `Namespace`.
pub const NAMESPACE: Kind = Kind::new("", "Namespace");

/// A version-independent reference to an object: group, kind, namespace and name.
/// Targets are matched on these, so `apps/v1` and `apps/v1beta2` are the same.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectRef {
    /// API group, `""` for core.
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl ObjectRef {
    /// `Kind `name``, for messages.
    pub fn describe(&self) -> String {
        format!("{} {}", shown(&self.kind), code(&self.name))
    }
}

/// `Kind namespace/name`, for messages.
impl std::fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (kind, namespace, name) = (&self.kind, &self.namespace, &self.name);
        write!(f, "{} {}/{}", shown(kind), shown(namespace), shown(name))
    }
}

/// The prefix of every annotation hpa-lint reads or writes.
pub const ANNOTATION_PREFIX: &str = "hpa-lint.io/";

/// Annotation prefix that suppresses a rule on an object:
/// `hpa-lint.io/ignore.<rule-name>: "<reason>"`.
pub const SUPPRESSION_PREFIX: &str = "hpa-lint.io/ignore.";

/// One Kubernetes object from the input.
#[derive(Clone, Debug)]
pub struct Object {
    /// Identity.
    pub key: ObjectKey,
    /// The object as written (after YAML → JSON conversion).
    pub value: Value,
    /// Front-end handle.
    pub origin: Origin,
}

impl Object {
    /// Wraps a value that has string `apiVersion` and `kind` fields; `None` for
    /// documents that are not Kubernetes objects. Objects without a namespace get
    /// `default_namespace`.
    pub fn new(value: Value, origin: Origin, default_namespace: &str) -> Option<Self> {
        let key = ObjectKey::of(&value, default_namespace)?;
        Some(Self { key, value, origin })
    }

    /// The value of `metadata.annotations[key]`, if it is a string.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations()?.get(key)?.as_str()
    }

    fn annotations(&self) -> Option<&Map<String, Value>> {
        self.value
            .member("metadata")?
            .member("annotations")?
            .as_object()
    }

    /// The reason given in `hpa-lint.io/ignore.<rule>` for suppressing a rule.
    pub fn suppression(&self, rule: &str) -> Option<&str> {
        self.suppressions()
            .find_map(|(name, reason)| (name == rule).then_some(reason))
    }

    /// The rules this object suppresses (`hpa-lint.io/ignore.<rule>` with a
    /// string reason), with their reasons: one pass over the annotations,
    /// which most objects do not have, instead of a look-up per rule.
    pub fn suppressions(&self) -> impl Iterator<Item = (&str, &str)> {
        self.annotations()
            .into_iter()
            .flatten()
            .filter_map(|(key, value)| {
                Some((key.strip_prefix(SUPPRESSION_PREFIX)?, value.as_str()?))
            })
    }

    /// Whether this object is a HorizontalPodAutoscaler of the `autoscaling` group.
    /// Look-alike kinds of other groups are not.
    pub fn is_hpa(&self) -> bool {
        HPA.is(self.key.group(), &self.key.kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn identities_held_in_one_allocation_are_read_back_as_given() {
        for parts in [
            ["apps/v1", "Deployment", "shop", "web"],
            ["v1", "Namespace", "", "shop"],
            ["", "", "", ""],
            ["é/v1", "Kïnd", "nåmespace", "ñame"],
        ] {
            let [api_version, kind, namespace, name] = parts;
            let key = KeyRef {
                api_version,
                kind,
                namespace,
                name,
            };
            let held = Identity::new(key);
            assert_eq!(held.get(), key);
            assert_eq!(held.get().to_key().as_ref(), key);
        }
        // Borrowed from the value, as `ObjectKey::of` reads it.
        let value = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "", "generateName": "web-"}});
        let key = KeyRef::of(&value, "default").unwrap();
        assert_eq!((key.namespace, key.name), ("default", "web-"));
        assert_eq!(Some(key.to_key()), ObjectKey::of(&value, "default"));
    }

    #[test]
    fn identity_uses_default_namespace_and_group() {
        let object = Object::new(
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}),
            Origin(3),
            "team-a",
        )
        .unwrap();
        assert_eq!(object.key.namespace, "team-a");
        assert_eq!(object.key.group(), "apps");
        assert_eq!(object.key.to_ref().to_string(), "Deployment team-a/web");
    }

    #[test]
    fn the_group_is_what_comes_before_the_first_slash() {
        for (api_version, group) in [
            ("apps/v1", "apps"),
            ("v1", ""),
            ("", ""),
            ("/v1", ""),
            ("a/b/c", "a"),
            ("grüße.example/v1", "grüße.example"),
        ] {
            assert_eq!(group_of(api_version), group, "{api_version}");
        }
    }

    #[test]
    fn documents_without_kind_are_not_objects() {
        assert!(Object::new(json!({"apiVersion": "v1"}), Origin(0), "default").is_none());
        assert!(
            Object::new(json!({"kind": 3, "apiVersion": "v1"}), Origin(0), "default").is_none()
        );
    }

    #[test]
    fn suppressions_are_the_ignore_annotations_with_a_string_reason() {
        let object = Object::new(
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"annotations": {
                "hpa-lint.io/ignore.min-equals-max": "frozen",
                "hpa-lint.io/ignore.duplicate-target": 3,
                "hpa-lint.io/other": "x",
                "example.com/ignore.vpa-conflict": "y",
                "hpa-lint.io/ignore.": "",
            }}}),
            Origin(0),
            "default",
        )
        .unwrap();
        assert_eq!(
            object.suppressions().collect::<Vec<_>>(),
            [("min-equals-max", "frozen"), ("", "")]
        );
        assert_eq!(object.suppression("min-equals-max"), Some("frozen"));
        assert_eq!(object.suppression("duplicate-target"), None);
        assert_eq!(object.suppression("vpa-conflict"), None);
        let bare = Object::new(
            json!({"apiVersion": "v1", "kind": "Service"}),
            Origin(0),
            "default",
        );
        assert_eq!(bare.unwrap().suppressions().count(), 0);
    }

    #[test]
    fn look_alike_kinds_are_not_hpas() {
        let hpa = |api_version: &str| {
            Object::new(
                json!({"apiVersion": api_version, "kind": "HorizontalPodAutoscaler"}),
                Origin(0),
                "default",
            )
            .unwrap()
            .is_hpa()
        };
        assert!(hpa("autoscaling/v2"));
        assert!(hpa("autoscaling/v1"));
        assert!(!hpa("autoscaling.internal.knative.dev/v1alpha1"));
    }
}
