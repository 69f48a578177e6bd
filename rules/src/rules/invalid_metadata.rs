//! `invalid-metadata`: `generation`, `ownerReferences` and `finalizers` the API
//! server rejects (M6, M11, M12, M12b).

use crate::cluster::KubeVersion;
use crate::diagnostic::{Reason, Severity};
use crate::context::{Check, Context, Operation, Report};
use crate::model::hpa::OwnerReference;
use crate::model::names::{parse_group_version, qualified_name};
use crate::path::FieldPath;
use crate::quote::{MAX_MESSAGE_BYTES, quoted, shown, truncate};
use crate::registry::{Category, FixAvailability, Rule};

/// Finalizers without a `/` that are allowed (`IsStandardFinalizerName`).
const STANDARD_FINALIZERS: [&str; 3] = ["kubernetes", "orphan", "foregroundDeletion"];

/// The rule.
pub static RULE: Rule = Rule {
    name: "invalid-metadata",
    category: Category::ApiServer,
    severity: Severity::Error,
    summary: "a negative `generation`, an incomplete owner reference, or a bad finalizer",
    docs: r#"## What it does
Checks the rest of the object metadata the API server validates:
- `metadata.generation` must not be negative;
- each owner reference needs an `apiVersion` with a version, a `kind`, a
  `name` and a `uid`; a core `v1` `Event` cannot be an owner; at most one
  reference may have `controller: true`;
- each finalizer must be a qualified name, and one without a `/` must be
  `kubernetes`, `orphan` or `foregroundDeletion`; `orphan` and
  `foregroundDeletion` exclude each other.

These fields are usually written by controllers, not by hand; in a manifest
they are mostly leftovers of `kubectl get -o yaml`. On update only the owner
references and the finalizer names are checked (a `generation` must then not
decrease, which a manifest cannot show).

## Why is this bad?
The API server rejects the HPA with HTTP 422.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  finalizers: [cleanup]
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
```

Use instead:
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  finalizers: [example.com/cleanup]
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 10
```

## API server
- `metadata.generation: Invalid value: -1: must be greater than or equal to 0`
- `metadata.ownerReferences.apiVersion: Invalid value: "apps": version must not be empty`
  (likewise `kind must not be empty`, `name must not be empty`, `uid must not be empty`;
  1.36 paths carry no index)
- `metadata.ownerReferences: Invalid value: {"apiVersion":"v1","kind":"Event",…}: /v1, Kind=Event is disallowed from being an owner`
- `metadata.ownerReferences: Invalid value: [...]: Only one reference can have Controller set to true. Found "true" in references for Deployment/a and Deployment/b`
- `metadata.finalizers: Invalid value: "a/b/c": a valid label key must consist of …`
- `metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set`
- `metadata.finalizers[0]: Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified`
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    let meta = &cx.hpa.metadata;
    // M6 and M12 are create-only: on update the server only stops the generation
    // from decreasing, and checks the finalizers for M12b alone.
    let create = matches!(cx.operation, Operation::Create);
    if create && meta.generation < 0 {
        out.field_error(
            FieldPath::fields("metadata.generation"),
            Reason::Invalid,
            Some(meta.generation.to_string()),
            "must be greater than or equal to 0",
        );
    }
    check_owner_references(out, &meta.owner_references);
    // Made for findings only: most HPAs have none.
    let finalizers = || FieldPath::fields("metadata.finalizers");
    if create {
        check_finalizers(
            out,
            &finalizers,
            &meta.finalizers,
            cx.settings.cluster.kube_version,
        );
    }
    // M12b, after all other metadata errors.
    for (i, finalizer) in meta.finalizers.iter().enumerate() {
        if !finalizer.contains('/') && !STANDARD_FINALIZERS.contains(&finalizer.as_str()) {
            out.field_error(
                finalizers().index(i),
                Reason::Invalid,
                Some(quoted(finalizer)),
                "name is neither a standard finalizer name nor is it fully qualified",
            );
        }
    }
}

/// M11 (`ValidateOwnerReferences`); up to 1.36 the paths carry no index.
fn check_owner_references(out: &mut Report<'_>, owners: &[OwnerReference]) {
    let path = || FieldPath::fields("metadata.ownerReferences");
    let mut first_controller: Option<String> = None;
    // Every extra controller's error lists all references: rendered once, and
    // cut as a message would be, so many controllers cost no quadratic copy.
    let mut all_owners: Option<String> = None;
    for owner in owners {
        // `FromAPIVersionAndKind`: an unparsable apiVersion has no group or version.
        let (group, version) = parse_group_version(&owner.api_version).unwrap_or(("", ""));
        if version.is_empty() {
            out.field_error(
                path().field("apiVersion"),
                Reason::Invalid,
                Some(quoted(&owner.api_version)),
                "version must not be empty",
            );
        }
        for (field, value) in [
            ("kind", &owner.kind),
            ("name", &owner.name),
            ("uid", &owner.uid),
        ] {
            if value.is_empty() {
                out.field_error(
                    path().field(field),
                    Reason::Invalid,
                    Some(quoted(value)),
                    &format!("{field} must not be empty"),
                );
            }
        }
        if (group, version, owner.kind.as_str()) == ("", "v1", "Event") {
            out.field_error(
                path(),
                Reason::Invalid,
                Some(owner_json(owner)),
                "/v1, Kind=Event is disallowed from being an owner",
            );
        }
        if owner.controller == Some(true) {
            let current = format!("{}/{}", shown(&owner.kind), shown(&owner.name));
            match &first_controller {
                Some(first) => {
                    let all = all_owners.get_or_insert_with(|| {
                        let all: Vec<String> = owners.iter().map(owner_json).collect();
                        let mut all = format!("[{}]", all.join(","));
                        truncate(&mut all, MAX_MESSAGE_BYTES);
                        all
                    });
                    out.field_error(
                        path(),
                        Reason::Invalid,
                        Some(all.clone()),
                        &format!(
                            "Only one reference can have Controller set to true. Found \"true\" in references for {first} and {current}"
                        ),
                    );
                }
                None => first_controller = Some(current),
            }
        }
    }
}

/// An owner reference as the server renders it since 1.34: JSON in field order,
/// the optional flags only when set.
fn owner_json(owner: &OwnerReference) -> String {
    let mut json = format!(
        r#"{{"apiVersion":{},"kind":{},"name":{},"uid":{}"#,
        quoted(&owner.api_version),
        quoted(&owner.kind),
        quoted(&owner.name),
        quoted(&owner.uid)
    );
    for (name, flag) in [
        ("controller", owner.controller),
        ("blockOwnerDeletion", owner.block_owner_deletion),
    ] {
        if let Some(flag) = flag {
            json.push_str(&format!(r#","{name}":{flag}"#));
        }
    }
    json.push('}');
    json
}

/// M12 (`ValidateFinalizers`): qualified names, and not both deletion modes.
fn check_finalizers(
    out: &mut Report<'_>,
    path: &dyn Fn() -> FieldPath,
    finalizers: &[String],
    version: KubeVersion,
) {
    for finalizer in finalizers {
        for message in qualified_name(finalizer, version) {
            out.field_error(
                path(),
                Reason::Invalid,
                Some(quoted(finalizer)),
                &message,
            );
        }
    }
    let has = |name: &str| finalizers.iter().any(|f| f == name);
    if has("orphan") && has("foregroundDeletion") {
        let all: Vec<String> = finalizers.iter().map(|f| quoted(f)).collect();
        out.field_error(
            path(),
            Reason::Invalid,
            Some(format!("[{}]", all.join(","))),
            "finalizer orphan and foregroundDeletion cannot be both set",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::RULE;
    use crate::index::MemoryIndex;
    use crate::context::Operation;
    use crate::lint::lint;
    use crate::object::{Object, Origin};
    use crate::settings::Settings;
    use crate::testing::{check_fixture, only_with};

    #[test]
    fn fixture() {
        insta::assert_snapshot!(check_fixture(&RULE));
    }

    #[test]
    fn m6_m12_only_on_create_m11_m12b_always() {
        let value = serde_json::json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "generation": -1,
                         "finalizers": ["a/b/c", "cleanup"],
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}]},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "maxReplicas": 3}
        });
        let hpa = Object::new(value, Origin(0), "default").unwrap();
        let settings = only_with(&RULE, Settings::default());
        let index = MemoryIndex::default();
        let paths = |operation| -> Vec<String> {
            lint(&hpa, operation, &index, &settings)
                .into_iter()
                .map(|d| d.path.to_string())
                .collect()
        };
        assert_eq!(
            paths(Operation::Create),
            [
                "metadata.generation",
                "metadata.ownerReferences.uid",
                "metadata.finalizers",
                "metadata.finalizers[1]"
            ]
        );
        assert_eq!(
            paths(Operation::Update { old: &hpa }),
            ["metadata.ownerReferences.uid", "metadata.finalizers[1]"]
        );
    }
}
