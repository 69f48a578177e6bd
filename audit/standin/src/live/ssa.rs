//! Field ownership as server-side apply keeps it, simplified: a manager owns
//! leaf fields (a scalar, or a list, which is atomic here; maps are owned
//! through their fields, and go when their last field goes);
//! `apply` without `force` fails on a field another manager owns with another
//! value; an apply drops the fields its manager applied last time and no
//! longer applies, unless someone else owns them; any other write takes
//! ownership of the fields it changes. Ownership is rendered as
//! `metadata.managedFields` in the `FieldsV1` format.
//!
//! Not covered: associative lists (`x-kubernetes-list-type: map`), which are
//! owned per element by the real server, and owners per API version.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

/// A field: the keys from the object's root.
type Path = Vec<String>;

/// One manager's fields.
#[derive(Clone, Debug)]
struct Manager {
    name: String,
    /// Whether these fields came from apply (else from updates).
    applied: bool,
    fields: BTreeSet<Path>,
}

/// Every manager's fields of one object.
#[derive(Clone, Debug, Default)]
pub(crate) struct Owners(Vec<Manager>);

/// Whether `path` is a field that apply manages: not the identity or the
/// bookkeeping in `metadata`, which only labels and annotations are.
fn is_managed(path: &[String]) -> bool {
    match path.first().map(String::as_str) {
        Some("apiVersion" | "kind") => false,
        Some("metadata") => matches!(
            path.get(1).map(String::as_str),
            Some("labels" | "annotations")
        ),
        _ => true,
    }
}

/// The leaf fields of an object.
fn leaves(value: &Value) -> BTreeSet<Path> {
    fn walk(value: &Value, path: &mut Path, out: &mut BTreeSet<Path>) {
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    path.push(key.clone());
                    walk(child, path, out);
                    path.pop();
                }
            }
            _ if !path.is_empty() && is_managed(path) => {
                out.insert(path.clone());
            }
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    walk(value, &mut Vec::new(), &mut out);
    out
}

fn get<'a>(value: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, key| v.get(key))
}

/// Removes a field, and the maps it leaves empty.
fn remove(value: &mut Value, path: &[String]) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    let Some(map) = value.as_object_mut() else {
        return;
    };
    if rest.is_empty() {
        map.remove(first);
        return;
    }
    if let Some(child) = map.get_mut(first) {
        remove(child, rest);
        if child.as_object().is_some_and(Map::is_empty) {
            map.remove(first);
        }
    }
}

/// `applied` merged into `into`: maps key by key, anything else replaced.
fn merge(into: &mut Value, applied: &Value) {
    match (into, applied) {
        (Value::Object(into), Value::Object(applied)) => {
            for (key, value) in applied {
                match into.get_mut(key) {
                    Some(existing) if existing.is_object() && value.is_object() => {
                        merge(existing, value);
                    }
                    _ => {
                        into.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (into, applied) => *into = applied.clone(),
    }
}

/// Whether two fields overlap: one is the other or contains it.
fn overlaps(a: &[String], b: &[String]) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

impl Owners {
    /// Reads `metadata.managedFields`.
    pub(crate) fn of(object: &Value) -> Self {
        fn fields(tree: &Value, path: &mut Path, out: &mut BTreeSet<Path>) {
            let Some(map) = tree.as_object() else {
                return;
            };
            if map.is_empty() {
                out.insert(path.clone());
            }
            for (key, child) in map {
                if let Some(field) = key.strip_prefix("f:") {
                    path.push(field.to_owned());
                    fields(child, path, out);
                    path.pop();
                }
            }
        }
        let entries = object
            .pointer("/metadata/managedFields")
            .and_then(Value::as_array);
        Self(
            entries
                .into_iter()
                .flatten()
                .map(|entry| {
                    let mut set = BTreeSet::new();
                    fields(&entry["fieldsV1"], &mut Vec::new(), &mut set);
                    set.remove(&Vec::new());
                    Manager {
                        name: entry["manager"].as_str().unwrap_or_default().to_owned(),
                        applied: entry["operation"] == "Apply",
                        fields: set,
                    }
                })
                .collect(),
        )
    }

    /// Writes them into `metadata.managedFields`.
    pub(crate) fn write(&self, object: &mut Value, api_version: &str, time: &str) {
        let entries: Vec<Value> = self
            .0
            .iter()
            .filter(|m| !m.fields.is_empty())
            .map(|m| {
                let mut tree = Value::Object(Map::new());
                for path in &m.fields {
                    let mut node = &mut tree;
                    for key in path {
                        node = node
                            .as_object_mut()
                            .map(|map| map.entry(format!("f:{key}")).or_insert_with(|| json!({})))
                            .unwrap_or_else(|| unreachable!("every node is a map"));
                    }
                }
                json!({
                    "manager": m.name,
                    "operation": if m.applied { "Apply" } else { "Update" },
                    "apiVersion": api_version, "time": time,
                    "fieldsType": "FieldsV1", "fieldsV1": tree,
                })
            })
            .collect();
        if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.insert("managedFields".into(), Value::Array(entries));
        }
    }

    fn entry(&mut self, name: &str, applied: bool) -> &mut Manager {
        let index = match self
            .0
            .iter()
            .position(|m| m.name == name && m.applied == applied)
        {
            Some(index) => index,
            None => {
                self.0.push(Manager {
                    name: name.to_owned(),
                    applied,
                    fields: BTreeSet::new(),
                });
                self.0.len() - 1
            }
        };
        &mut self.0[index]
    }

    /// Server-side apply of `applied` by `manager` to `current` (an empty
    /// object when there is none): the new object, or the fields that
    /// conflict, as `.spec.x` paths with their owners.
    pub(crate) fn apply(
        &mut self,
        current: &Value,
        applied: &Value,
        manager: &str,
        force: bool,
    ) -> Result<Value, Vec<String>> {
        let wanted = leaves(applied);
        let mut conflicts = Vec::new();
        for path in &wanted {
            if get(current, path) == get(applied, path) {
                continue;
            }
            for other in self.0.iter().filter(|m| m.name != manager) {
                if other.fields.iter().any(|f| overlaps(f, path)) {
                    conflicts.push(format!(
                        "conflict with \"{}\": .{}",
                        other.name,
                        path.join(".")
                    ));
                }
            }
        }
        if !conflicts.is_empty() && !force {
            return Err(conflicts);
        }
        let mut object = current.clone();
        let before = std::mem::take(&mut self.entry(manager, true).fields);
        for path in before.difference(&wanted) {
            let shared = self
                .0
                .iter()
                .any(|m| m.name != manager && m.fields.contains(path));
            if !shared {
                remove(&mut object, path);
            }
        }
        merge(&mut object, applied);
        for other in self.0.iter_mut().filter(|m| m.name != manager) {
            other.fields.retain(|f| {
                wanted
                    .iter()
                    .all(|p| !overlaps(f, p) || get(current, p) == get(applied, p))
            });
        }
        self.entry(manager, true).fields = wanted;
        Ok(object)
    }

    /// A write other than apply (create, update, patch) by `manager`: it
    /// owns what it changed, and nobody owns what it removed.
    pub(crate) fn update(&mut self, old: &Value, new: &Value, manager: &str) {
        let before = leaves(old);
        let after = leaves(new);
        let changed: BTreeSet<Path> = before
            .symmetric_difference(&after)
            .chain(after.iter().filter(|p| get(old, p) != get(new, p)))
            .cloned()
            .collect();
        for m in &mut self.0 {
            m.fields.retain(|f| !changed.iter().any(|c| overlaps(f, c)));
        }
        let mine = self.entry(manager, false);
        mine.fields
            .extend(changed.into_iter().filter(|p| after.contains(p)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_conflicts_with_another_owner_unless_forced() {
        let mut owners = Owners::default();
        let empty = json!({});
        let first = json!({"spec": {"holderIdentity": "a", "leaseDurationSeconds": 15}});
        let lease = owners.apply(&empty, &first, "a", false).unwrap();
        let second = json!({"spec": {"holderIdentity": "b"}});
        let error = owners.apply(&lease, &second, "b", false).unwrap_err();
        assert_eq!(error, ["conflict with \"a\": .spec.holderIdentity"]);
        // The same value is shared, not a conflict.
        let same = json!({"spec": {"leaseDurationSeconds": 15}});
        assert!(owners.apply(&lease, &same, "b", false).is_ok());
        let forced = owners.apply(&lease, &second, "b", true).unwrap();
        assert_eq!(forced["spec"]["holderIdentity"], "b");
    }

    #[test]
    fn apply_drops_what_its_manager_no_longer_applies() {
        let mut owners = Owners::default();
        let report =
            json!({"results": [1, 2], "summary": {"fail": 2}, "metadata": {"labels": {"x": "1"}}});
        let object = owners.apply(&json!({}), &report, "hpa-lint", true).unwrap();
        let smaller = json!({"results": [], "metadata": {"labels": {"x": "1"}}});
        let object = owners.apply(&object, &smaller, "hpa-lint", true).unwrap();
        assert_eq!(
            object,
            json!({"results": [], "metadata": {"labels": {"x": "1"}}})
        );
        let mut written = object.clone();
        owners.write(&mut written, "v1", "t");
        assert_eq!(
            Owners::of(&written).0[0].fields,
            leaves(&smaller).into_iter().collect()
        );
    }

    #[test]
    fn an_update_takes_the_fields_it_changes() {
        let mut owners = Owners::default();
        let lease = owners
            .apply(
                &json!({}),
                &json!({"spec": {"holderIdentity": "a"}}),
                "a",
                false,
            )
            .unwrap();
        let mut released = lease.clone();
        released["spec"]
            .as_object_mut()
            .unwrap()
            .remove("holderIdentity");
        owners.update(&lease, &released, "b");
        // Nobody owns the field now: another apply takes it.
        assert!(
            owners
                .apply(
                    &released,
                    &json!({"spec": {"holderIdentity": "c"}}),
                    "c",
                    false
                )
                .is_ok()
        );
    }
}
