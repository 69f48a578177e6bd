//! Which fields of an object to keep. Workloads are big (env, volumes, probes)
//! and the rules read a handful of their fields; the reader builds only the kept
//! ones ([`super::compose`]) and [`Keep::prune`] cuts a built value the same way,
//! so rules cannot tell which one ran.

use serde_json::Value;

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

    /// `value` with only the kept fields among the first `built` entries
    /// of a mapping, the others kept as they are: they were built as kept
    /// (by [`super::compose`], once the keep was chosen).
    pub fn prune_front(&'static self, mut value: Value, built: usize) -> Value {
        let Value::Object(map) = &mut value else {
            return self.prune(value);
        };
        let mut entries = 0;
        map.retain(|key, value| {
            entries += 1;
            if entries > built {
                return true;
            }
            match self.field(key) {
                Some(keep) => {
                    keep.prune_in_place(value);
                    true
                }
                None => false,
            }
        });
        value
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
