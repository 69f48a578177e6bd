//! PodDisruptionBudgets as the eviction API applies them: which pods a budget
//! selects, and at which replica counts it lets no pod be evicted.
//!
//! Only the spec is read; the disruption controller's view of healthy pods is
//! assumed to be "all pods healthy", the situation of a routine node drain.

use serde_json::Value;

use crate::model::selector;
use crate::object::{Kind, Object};
use crate::path::{FieldPath, Json, get, member};

/// `PodDisruptionBudget`.
pub const PDB: Kind = Kind::new("policy", "PodDisruptionBudget");

/// When a budget allows no eviction at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Block {
    /// At any replica count (`maxUnavailable: 0`, `minAvailable: 100%`).
    Always,
    /// Whenever the workload runs this many pods or fewer.
    AtOrBelow(i64),
}

impl Block {
    /// Whether no pod may be evicted while the workload runs `replicas` pods.
    pub fn blocks_at(self, replicas: i64) -> bool {
        match self {
            Block::Always => true,
            Block::AtOrBelow(limit) => replicas <= limit,
        }
    }

    /// Blocks at the replica counts at which either blocks.
    #[must_use]
    pub fn or(self, other: Block) -> Block {
        match (self, other) {
            (Block::AtOrBelow(a), Block::AtOrBelow(b)) => Block::AtOrBelow(a.max(b)),
            _ => Block::Always,
        }
    }
}

/// A budget field that can block evictions.
#[derive(Clone, Debug, PartialEq)]
pub struct Blocking {
    /// `spec.maxUnavailable` or `spec.minAvailable`.
    pub path: FieldPath,
    /// The field name, for messages.
    pub field: &'static str,
    /// The value as written, for messages.
    pub value: String,
    /// When it blocks.
    pub block: Block,
}

/// Whether the budget selects pods with `labels`. `policy/v1beta1` budgets
/// with an empty selector select nothing; `policy/v1` ones select everything.
pub fn selects<V: Json>(pdb: &Object, labels: &V) -> bool {
    let selector = get(&pdb.value, &["spec", "selector"]).unwrap_or(&Value::Null);
    if is_empty_selector(selector) && pdb.key.api_version != "policy/v1" {
        return false;
    }
    selector::matches_with(selector, |key| labels.member(key).and_then(V::text)) == Some(true)
}

/// Whether a selector is empty as the v1beta1 conversion tells (Go's
/// semantic equality with `LabelSelector{}`, where an empty map or list is a
/// missing one): `{}`, and as well `{matchLabels: {}}` or
/// `{matchExpressions: []}`.
fn is_empty_selector(selector: &Value) -> bool {
    let Value::Object(selector) = selector else {
        return false;
    };
    ["matchLabels", "matchExpressions"]
        .iter()
        .all(|field| match selector.get(*field) {
            None | Some(Value::Null) => true,
            Some(Value::Object(map)) => map.is_empty(),
            Some(Value::Array(items)) => items.is_empty(),
            Some(_) => false,
        })
}

/// A percentage `"N%"` with N in 0..=100.
fn percent(value: &str) -> Option<i64> {
    value
        .strip_suffix('%')?
        .parse()
        .ok()
        .filter(|p| (0..=100).contains(p))
}

/// The fields of the budget that block evictions at some replica count.
///
/// The disruption controller scales percentages by the expected pod count and
/// rounds up: `minAvailable: p%` at `r` replicas needs `ceil(p * r / 100)`
/// healthy pods, which leaves nothing to evict while `r < 100 / (100 - p)`;
/// `maxUnavailable: p%` allows `ceil(p * r / 100)`, at least 1 unless `p` is 0.
pub fn blocking_fields(pdb: &Object) -> Vec<Blocking> {
    blocks(pdb)
        .map(|(field, value, block)| Blocking {
            path: FieldPath::fields("spec").field(field),
            field,
            value: render(value),
            block,
        })
        .collect()
}

/// When the budget blocks evictions, `None` if never: [`blocking_fields`]
/// without making them, their blocks put together (the replica counts at
/// which any of them blocks), worked out once for a budget listed for
/// every HPA of its namespace.
pub fn widest_block(pdb: &Object) -> Option<Block> {
    let Some(Value::Object(spec)) = member(&pdb.value, "spec") else {
        return None;
    };
    spec.iter()
        .filter_map(|(name, value)| match name.as_str() {
            "maxUnavailable" => max_unavailable_block(value),
            "minAvailable" => min_available_block(value),
            _ => None,
        })
        .reduce(Block::or)
}

/// The blocking fields' names, values and blocks, `maxUnavailable` first.
fn blocks(pdb: &Object) -> impl Iterator<Item = (&'static str, &Value, Block)> {
    let spec = member(&pdb.value, "spec");
    let field = |name: &'static str, block: fn(&Value) -> Option<Block>| {
        let value = spec.and_then(|spec| member(spec, name))?;
        Some((name, value, block(value)?))
    };
    field("maxUnavailable", max_unavailable_block)
        .into_iter()
        .chain(field("minAvailable", min_available_block))
}

/// `maxUnavailable` blocks when it is zero.
fn max_unavailable_block(value: &Value) -> Option<Block> {
    let zero = match value {
        Value::Number(n) => n.as_i64() == Some(0),
        Value::String(s) => percent(s) == Some(0),
        _ => false,
    };
    zero.then_some(Block::Always)
}

/// `minAvailable` blocks when it is positive.
fn min_available_block(value: &Value) -> Option<Block> {
    match value {
        Value::Number(n) => n.as_i64().filter(|n| *n > 0).map(Block::AtOrBelow),
        Value::String(s) => match percent(s) {
            Some(100) => Some(Block::Always),
            // r < 100 / (100 - p), i.e. r <= ceil(100 / (100 - p)) - 1.
            Some(p) if p > 0 => Some(Block::AtOrBelow((100 + (100 - p) - 1) / (100 - p) - 1)),
            _ => None,
        },
        _ => None,
    }
}

fn render(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::Origin;
    use serde_json::json;

    fn pdb(spec: Value) -> Object {
        Object::new(
            json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "p"}, "spec": spec}),
            Origin(0),
            "default",
        )
        .unwrap()
    }

    fn blocks_of(spec: Value) -> Vec<Block> {
        blocking_fields(&pdb(spec))
            .into_iter()
            .map(|b| b.block)
            .collect()
    }

    #[test]
    fn max_unavailable_zero_always_blocks() {
        assert_eq!(blocks_of(json!({"maxUnavailable": 0})), [Block::Always]);
        assert_eq!(blocks_of(json!({"maxUnavailable": "0%"})), [Block::Always]);
        assert!(blocks_of(json!({"maxUnavailable": 1})).is_empty());
        assert!(blocks_of(json!({"maxUnavailable": "10%"})).is_empty());
    }

    #[test]
    fn min_available_blocks_up_to_a_replica_count() {
        assert_eq!(blocks_of(json!({"minAvailable": 2})), [Block::AtOrBelow(2)]);
        assert_eq!(blocks_of(json!({"minAvailable": "100%"})), [Block::Always]);
        // 50 %: 1 pod needs 1, 2 pods need 1.
        assert_eq!(
            blocks_of(json!({"minAvailable": "50%"})),
            [Block::AtOrBelow(1)]
        );
        // 60 %: 2 pods need ceil(1.2) = 2, 3 pods need 2.
        assert_eq!(
            blocks_of(json!({"minAvailable": "60%"})),
            [Block::AtOrBelow(2)]
        );
        // 90 %: up to 9 pods every pod is needed.
        assert_eq!(
            blocks_of(json!({"minAvailable": "90%"})),
            [Block::AtOrBelow(9)]
        );
        assert!(blocks_of(json!({"minAvailable": 0})).is_empty());
        assert!(blocks_of(json!({"minAvailable": "0%"})).is_empty());
        assert!(Block::AtOrBelow(2).blocks_at(2) && !Block::AtOrBelow(2).blocks_at(3));
    }

    /// The answer worked out once for the many budgets listed is the one
    /// the fields give at every count, and the fields say where they are
    /// and what they hold.
    #[test]
    fn blocks_at_agrees_with_the_blocking_fields() {
        let specs = [
            json!({"maxUnavailable": 1}),
            json!({"maxUnavailable": "0%", "minAvailable": 3}),
            json!({"minAvailable": 3, "maxUnavailable": 0}),
            json!({"minAvailable": "60%"}),
            json!({"minAvailable": "100%"}),
            json!({"minAvailable": 0, "maxUnavailable": "10%"}),
            json!({"minAvailable": null, "maxUnavailable": true}),
            json!({"minAvailable": "90%", "maxUnavailable": "0%"}),
            json!({"minAvailable": "50%"}),
            json!({"minAvailable": 2, "maxUnavailable": "50%"}),
            json!({"minAvailable": 101}),
            json!({"minAvailable": "x%"}),
            json!({}),
        ];
        for spec in specs {
            let budget = pdb(spec.clone());
            let fields = blocking_fields(&budget);
            for replicas in 0..12 {
                assert_eq!(
                    widest_block(&budget).is_some_and(|b| b.blocks_at(replicas)),
                    fields.iter().any(|b| b.block.blocks_at(replicas)),
                    "{spec} at {replicas}"
                );
            }
        }
        let fields = blocking_fields(&pdb(json!({"minAvailable": 3, "maxUnavailable": "0%"})));
        let shown: Vec<String> = fields
            .iter()
            .map(|b| format!("{} {}: {}", b.path, b.field, b.value))
            .collect();
        assert_eq!(
            shown,
            [
                "spec.maxUnavailable maxUnavailable: 0%",
                "spec.minAvailable minAvailable: 3"
            ]
        );
        assert_eq!(widest_block(&pdb(json!({"maxUnavailable": 1}))), None);
        assert_eq!(
            widest_block(&pdb(json!({"minAvailable": "50%", "maxUnavailable": 0}))),
            Some(Block::Always)
        );
    }

    #[test]
    fn empty_selectors_depend_on_the_version() {
        let labels = &json!({"app": "web"});
        assert!(selects(&pdb(json!({"selector": {}})), labels));
        assert!(!selects(&pdb(json!({})), labels));
        // Empty as Go's semantic equality tells: an empty map or list is a
        // missing one.
        for selector in [
            json!({}),
            json!({"matchLabels": {}}),
            json!({"matchExpressions": []}),
            json!({"matchLabels": null, "matchExpressions": []}),
        ] {
            assert!(selects(&pdb(json!({"selector": selector})), labels));
            let mut old = pdb(json!({"selector": selector}));
            old.key.api_version = "policy/v1beta1".into();
            assert!(!selects(&old, labels), "{selector}");
        }
        let mut old = pdb(json!({"selector": {"matchLabels": {"app": "web"}}}));
        old.key.api_version = "policy/v1beta1".into();
        assert!(selects(&old, labels));
        assert!(selects(
            &pdb(json!({"selector": {"matchLabels": {"app": "web"}}})),
            labels
        ));
        // Labels read from a packed target, as the rules read them.
        let packed = crate::packed::pack(labels);
        let tree = crate::packed::unpack_tree(&packed);
        let selector = json!({"selector": {"matchLabels": {"app": "web"}}});
        assert!(selects(&pdb(selector), &tree));
        assert!(!selects(
            &pdb(json!({"selector": {"matchLabels": {"app": "db"}}})),
            &tree
        ));
    }
}
