//! The HPA being linted, as the rules read it.

use std::cell::OnceCell;

use crate::model::workload::suppressions;
use crate::object::{Object, ObjectKey, Origin};
use crate::path::Json;
use crate::source::Tree;

/// The HPA being linted, as the rules read it: its identity, and its value
/// as a tree borrowing its strings, from the packed bytes the CLI kept or
/// from the [`Object`] a front end was given. A serde_json value costs many
/// times what a tree does to build and to drop, and few rules need one.
pub struct Linted<'a> {
    /// Identity.
    pub key: ObjectKey,
    /// Front-end handle.
    pub origin: Origin,
    /// The HPA as written.
    pub value: Tree<'a>,
    /// [`Linted::whole`] when a front end gave it.
    given: Option<&'a Object>,
    /// [`Linted::whole`] made from the tree.
    made: OnceCell<Object>,
}

impl<'a> Linted<'a> {
    /// The HPA `key` identifies, read from `value`.
    pub fn new(key: ObjectKey, origin: Origin, value: Tree<'a>) -> Self {
        Self {
            key,
            origin,
            value,
            given: None,
            made: OnceCell::new(),
        }
    }

    /// `object`, its strings borrowed.
    pub fn of(object: &'a Object) -> Self {
        Self {
            key: object.key.clone(),
            origin: object.origin,
            value: Tree::borrowing(&object.value),
            given: Some(object),
            made: OnceCell::new(),
        }
    }

    /// The HPA as a serde_json value: for the few readers that need one
    /// (its status, the fixes of decoding errors), made from the tree the
    /// first time one asks.
    pub fn whole(&self) -> &Object {
        self.given.unwrap_or_else(|| {
            self.made.get_or_init(|| Object {
                key: self.key.clone(),
                origin: self.origin,
                value: self.value.to_value(),
            })
        })
    }

    /// The rules the HPA suppresses, as [`Object::suppressions`] finds them.
    pub fn suppressions(&self) -> impl Iterator<Item = (&str, &str)> {
        suppressions(&self.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::{Cluster, KubeVersion};
    use crate::index::MemoryIndex;
    use crate::lint::{Enabled, lint_hpa, lint_hpa_with};
    use crate::model::hpa::Hpa;
    use crate::settings::Settings;
    use crate::{Operation, packed, testing};

    /// Every HPA of the rule fixtures (decoding errors of every kind, the
    /// legacy versions, statuses, suppressions), the real-world corpus and
    /// the examples, read from its packed bytes as the CLI reads it: it
    /// decodes and lints as the object a webhook is given does, on clusters
    /// that serve different versions, and its value is the object's.
    #[test]
    fn hpas_read_from_packed_bytes_lint_as_their_objects_do() {
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut files: Vec<_> = std::fs::read_dir(fixtures)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        files.extend(testing::manifest_files());
        let mut texts: Vec<(String, String)> = files
            .iter()
            .map(|file| {
                (
                    file.display().to_string(),
                    std::fs::read_to_string(file).unwrap(),
                )
            })
            .collect();
        // Suppressions, one of them without a string reason.
        let suppressed = "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\n  annotations: {hpa-lint.io/ignore.min-equals-max: fixed size, hpa-lint.io/ignore.single-replica-floor: 1, other: x}\nspec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}, minReplicas: 1, maxReplicas: 1}\n";
        texts.push(("suppressed".into(), suppressed.into()));
        let (mut hpas, mut decode_errors, mut suppressing, mut with_status) = (0, 0, 0, 0);
        for (file, text) in &texts {
            let objects = testing::objects(text);
            let index = MemoryIndex::new(objects.iter().cloned());
            for object in objects.iter().filter(|o| o.is_hpa()) {
                hpas += 1;
                let packed = packed::pack(&object.value);
                let read = Linted::new(
                    object.key.clone(),
                    object.origin,
                    packed::unpack_tree(&packed),
                );
                let given = Linted::of(object);
                assert_eq!(read.whole().value, object.value);
                assert!(std::ptr::eq(given.whole(), &**object));
                let suppressions: Vec<_> = object.suppressions().collect();
                assert_eq!(read.suppressions().collect::<Vec<_>>(), suppressions);
                suppressing += usize::from(!suppressions.is_empty());
                with_status += usize::from(object.value.get("status").is_some());
                for minor in [22, 25, 33, 36] {
                    let mut settings = Settings::default();
                    settings.cluster = Cluster::new(KubeVersion::new(minor));
                    let decoded = Hpa::decode(object, &settings.cluster, None);
                    let hpa = Hpa::read(&read.key, &read.value, &settings.cluster, None);
                    assert_eq!(hpa, decoded, "{file}");
                    decode_errors += hpa.map_or(0, |hpa| hpa.decode_errors.len());
                    let findings = |linted: &Linted<'_>| -> Vec<String> {
                        let enabled = Enabled::of(&settings);
                        lint_hpa_with(linted, Operation::Create, &index, &settings, &enabled)
                            .iter()
                            .map(|d| format!("{d:?}"))
                            .collect()
                    };
                    let linted = lint_hpa(object, Operation::Create, &index, &settings);
                    let linted: Vec<String> = linted.iter().map(|d| format!("{d:?}")).collect();
                    assert_eq!(findings(&read), linted, "{file}");
                    assert_eq!(findings(&given), linted, "{file}");
                }
            }
        }
        assert!(
            hpas > 200 && decode_errors > 50 && suppressing >= 2 && with_status > 5,
            "{hpas} {decode_errors} {suppressing} {with_status}"
        );
    }
}
