//! Which fields of an object to keep. Workloads are big (env, volumes, probes)
//! and the rules read a handful of their fields; the reader builds only the kept
//! ones ([`super::compose`]) and [`Keep::prune`] cuts a built value the same way,
//! so rules cannot tell which one ran.

use serde_json::Value;

use super::tree::Tree;

/// Which fields of a value to keep.
#[derive(Debug)]
pub enum Keep {
    /// The whole value.
    All,
    /// These keys of a mapping, each pruned in turn; a value that is not a
    /// mapping is kept whole.
    Fields(&'static [(&'static str, Keep)]),
    /// Every item of a sequence, pruned in turn; a value that is not a
    /// sequence is kept whole.
    Items(&'static Keep),
    /// The entries of a mapping whose key starts with this prefix.
    Prefixed(&'static str),
}

/// [`Keep::All`] as a static, for code that hands out `&'static Keep`.
pub static ALL: Keep = Keep::All;

impl Keep {
    /// What to keep of the value at `key` of a mapping kept with `self`;
    /// `None` when it is dropped.
    pub fn field(&'static self, key: &str) -> Option<&'static Keep> {
        match self {
            Keep::Fields(fields) => fields.iter().find(|(k, _)| *k == key).map(|(_, keep)| keep),
            Keep::Prefixed(prefix) => key.starts_with(prefix).then_some(&ALL),
            Keep::All | Keep::Items(_) => Some(&ALL),
        }
    }

    /// What to keep of each item of a sequence kept with `self`.
    pub fn item(&'static self) -> &'static Keep {
        match self {
            Keep::Items(item) => item,
            _ => &ALL,
        }
    }

    /// `value` with only the kept fields.
    pub fn prune(&'static self, mut value: Value) -> Value {
        self.prune_in_place(&mut value);
        value
    }

    /// `tree` with only the kept fields: [`Keep::prune`] on a document's
    /// tree.
    pub fn prune_tree<'t>(&'static self, mut tree: Tree<'t>) -> Tree<'t> {
        self.prune_tree_in_place(&mut tree);
        tree
    }

    /// `tree` with only the kept fields among the first `built` entries
    /// of a mapping, the others kept as they are: they were built as kept
    /// (by [`super::compose`], once the keep was chosen).
    pub fn prune_front<'t>(&'static self, mut tree: Tree<'t>, built: usize) -> Tree<'t> {
        let Tree::Object(entries) = &mut tree else {
            return self.prune_tree(tree);
        };
        let mut seen = 0;
        entries.retain_mut(|(key, value)| {
            seen += 1;
            seen > built || self.keep_entry(key, value)
        });
        tree
    }

    /// Whether to keep the entry `key: value` of a mapping kept with
    /// `self`, pruned.
    fn keep_entry(&'static self, key: &str, value: &mut Tree<'_>) -> bool {
        match self.field(key) {
            Some(keep) => {
                keep.prune_tree_in_place(value);
                true
            }
            None => false,
        }
    }

    fn prune_tree_in_place(&'static self, tree: &mut Tree<'_>) {
        match (self, tree) {
            (Keep::All, _) => {}
            (Keep::Fields(_) | Keep::Prefixed(_), Tree::Object(entries)) => {
                entries.retain_mut(|(key, value)| self.keep_entry(key, value));
            }
            (Keep::Items(item), Tree::Array(items)) => {
                items.iter_mut().for_each(|v| item.prune_tree_in_place(v));
            }
            _ => {}
        }
    }

    fn prune_in_place(&'static self, value: &mut Value) {
        match (self, value) {
            (Keep::All, _) => {}
            (Keep::Fields(_) | Keep::Prefixed(_), Value::Object(map)) => {
                map.retain(|key, value| match self.field(key) {
                    Some(keep) => {
                        keep.prune_in_place(value);
                        true
                    }
                    None => false,
                });
            }
            (Keep::Items(item), Value::Array(items)) => {
                items.iter_mut().for_each(|v| item.prune_in_place(v));
            }
            _ => {}
        }
    }
}
