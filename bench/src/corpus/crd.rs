//! CustomResourceDefinitions shaped like the big operator CRDs (controller-gen
//! output): a deep `openAPIV3Schema` with long descriptions, where the same
//! sub-schemas (think of a container) come back in many places.

use std::collections::BTreeSet;
use std::io;

use super::text::{self, Yaml};
use super::{Doc, Form, Writer};
use crate::rng::Rng;

/// An operator's CRDs: their kinds with a relative size, in one file
/// (`bundle`) or one file per CRD.
struct Project {
    dir: &'static str,
    group: &'static str,
    version: &'static str,
    bundle: Option<&'static str>,
    kinds: &'static [(&'static str, u64)],
}

const PROJECTS: &[Project] = &[
    Project {
        dir: "prometheus-operator",
        group: "monitoring.coreos.com",
        version: "v1",
        bundle: None,
        kinds: &[
            ("Prometheus", 10),
            ("Alertmanager", 8),
            ("ThanosRuler", 7),
            ("PrometheusAgent", 9),
            ("ServiceMonitor", 2),
            ("PodMonitor", 2),
            ("Probe", 2),
            ("PrometheusRule", 1),
            ("AlertmanagerConfig", 5),
            ("ScrapeConfig", 4),
        ],
    },
    Project {
        dir: "cert-manager",
        group: "cert-manager.io",
        version: "v1",
        bundle: Some("cert-manager.crds.yaml"),
        kinds: &[
            ("Certificate", 2),
            ("CertificateRequest", 1),
            ("Issuer", 4),
            ("ClusterIssuer", 4),
            ("Order", 1),
            ("Challenge", 3),
        ],
    },
    Project {
        dir: "argo-cd",
        group: "argoproj.io",
        version: "v1alpha1",
        bundle: Some("crds.yaml"),
        kinds: &[("Application", 4), ("ApplicationSet", 8), ("AppProject", 1)],
    },
    Project {
        dir: "keda",
        group: "keda.sh",
        version: "v1alpha1",
        bundle: None,
        kinds: &[
            ("ScaledObject", 1),
            ("ScaledJob", 5),
            ("TriggerAuthentication", 1),
            ("ClusterTriggerAuthentication", 1),
        ],
    },
    Project {
        dir: "external-secrets",
        group: "external-secrets.io",
        version: "v1beta1",
        bundle: Some("bundle.yaml"),
        kinds: &[
            ("ExternalSecret", 1),
            ("SecretStore", 4),
            ("ClusterSecretStore", 4),
            ("ClusterExternalSecret", 1),
        ],
    },
];

fn plural(kind: &str) -> String {
    let lower = kind.to_lowercase();
    if let Some(stem) = lower.strip_suffix('y') {
        format!("{stem}ies")
    } else if lower.ends_with('s') {
        format!("{lower}es")
    } else {
        format!("{lower}s")
    }
}

const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";
const DURATION_PATTERN: &str = "^(0|(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$";

/// A scalar, list or map schema (the rest of a property after its description).
fn leaf(rng: &mut Rng, y: &mut Yaml, indent: usize) {
    match rng.range(0, 9) {
        0..=2 => y.line(indent, "type: string"),
        3 => {
            y.line(indent, "enum:");
            for _ in 0..rng.range(2, 5) {
                let value = text::word(rng);
                y.line(
                    indent,
                    format!("- {}{}", value[..1].to_uppercase(), &value[1..]),
                );
            }
            y.line(indent, "type: string");
        }
        4 => {
            y.line(indent, "format: int32");
            y.line(indent, "minimum: 0");
            y.line(indent, "type: integer");
        }
        5 => y.line(indent, "type: boolean"),
        6 => {
            y.block(indent, "anyOf:\n- type: integer\n- type: string");
            y.line(indent, format!("pattern: {QUANTITY_PATTERN}"));
            y.line(indent, "x-kubernetes-int-or-string: true");
        }
        7 => {
            y.block(indent, "items:\n  type: string\ntype: array");
            y.line(indent, "x-kubernetes-list-type: atomic");
        }
        8 => {
            y.block(
                indent,
                "additionalProperties:\n  type: string\ntype: object",
            );
        }
        _ => {
            y.line(indent, format!("pattern: {DURATION_PATTERN}"));
            y.line(indent, "type: string");
        }
    }
}

/// `properties:` with a few fields, then `required` and `type: object`.
fn object(rng: &mut Rng, y: &mut Yaml, indent: usize, depth: u32) {
    let mut names = BTreeSet::new();
    for _ in 0..rng.range(2, 10) {
        names.insert(text::field_name(rng));
    }
    let required = if rng.chance(0.3) {
        names.first().cloned()
    } else {
        None
    };
    y.line(indent, "properties:");
    for name in names {
        y.line(indent + 2, format!("{name}:"));
        property(rng, y, indent + 4, depth);
    }
    if let Some(name) = required {
        y.line(indent, "required:");
        y.line(indent, format!("- {name}"));
    }
    y.line(indent, "type: object");
}

/// A property's schema: a description, then a leaf, an object or a list of objects.
fn property(rng: &mut Rng, y: &mut Yaml, indent: usize, depth: u32) {
    let count = rng.range(1, 3);
    y.text(indent, "description", &text::sentences(rng, count));
    match (depth, rng.range(0, 9)) {
        (0, _) | (_, 0..=5) => leaf(rng, y, indent),
        (_, 6) => {
            y.line(indent, "items:");
            object(rng, y, indent + 2, depth - 1);
            y.line(indent, "type: array");
        }
        _ => object(rng, y, indent, depth - 1),
    }
}

/// One CRD of about `size` bytes.
fn crd(rng: &mut Rng, project: &Project, kind: &str, size: usize) -> Doc {
    let plural = plural(kind);
    let mut y = Yaml::default();
    y.line(0, "apiVersion: apiextensions.k8s.io/v1");
    y.line(0, "kind: CustomResourceDefinition");
    y.line(0, "metadata:");
    y.line(2, "annotations:");
    y.line(4, "controller-gen.kubebuilder.io/version: v0.16.4");
    y.line(2, format!("name: {plural}.{}", project.group));
    y.line(0, "spec:");
    y.line(2, format!("group: {}", project.group));
    y.line(2, "names:");
    y.line(4, "categories:");
    y.line(4, format!("- {}", project.dir));
    y.line(4, format!("kind: {kind}"));
    y.line(4, format!("listKind: {kind}List"));
    y.line(4, format!("plural: {plural}"));
    y.line(4, format!("singular: {}", kind.to_lowercase()));
    let scope = if kind.starts_with("Cluster") {
        "Cluster"
    } else {
        "Namespaced"
    };
    y.line(2, format!("scope: {scope}"));
    y.line(2, "versions:");
    y.block(
        2,
        "- additionalPrinterColumns:\n  - jsonPath: .metadata.creationTimestamp\n    name: Age\n    type: date",
    );
    y.line(4, format!("name: {}", project.version));
    y.line(4, "schema:");
    y.line(6, "openAPIV3Schema:");
    let description = format!(
        "{kind} is the Schema for the {plural} API. {}",
        text::sentence(rng)
    );
    y.text(8, "description", &description);
    y.line(8, "properties:");
    for (field, what) in [
        (
            "apiVersion",
            "APIVersion defines the versioned schema of this representation of an object.",
        ),
        (
            "kind",
            "Kind is a string value representing the REST resource this object represents.",
        ),
    ] {
        y.line(10, format!("{field}:"));
        y.text(
            12,
            "description",
            &format!("{what} {}", text::sentence(rng)),
        );
        y.line(12, "type: string");
    }
    y.block(10, "metadata:\n  type: object\nspec:");
    y.text(12, "description", &text::sentences(rng, 3));
    y.line(12, "properties:");
    // The sub-schemas that are repeated, like a container or a TLS config.
    let shapes: Vec<String> = (0..4)
        .map(|_| {
            let mut shape = Yaml::default();
            property(rng, &mut shape, 0, 4);
            shape.0
        })
        .collect();
    let mut names = BTreeSet::new();
    while y.len() < size {
        let name = text::field_name(rng);
        if !names.insert(name.clone()) {
            continue;
        }
        y.line(14, format!("{name}:"));
        let shape = &shapes[rng.below(shapes.len())];
        if rng.chance(0.4) && y.len() + shape.len() < size {
            y.block(16, shape);
        } else {
            property(rng, &mut y, 16, 3);
        }
    }
    y.line(12, "type: object");
    y.line(10, "status:");
    y.text(12, "description", &text::sentence(rng));
    object(rng, &mut y, 12, 2);
    y.block(8, "required:\n- spec\ntype: object");
    y.block(
        4,
        "served: true\nstorage: true\nsubresources:\n  status: {}",
    );
    Doc {
        kind: "CustomResourceDefinition",
        text: y.0,
    }
}

/// Writes every project's CRDs under `dir`, about `budget` bytes in all.
pub(crate) fn write_all(w: &mut Writer, dir: &str, budget: u64) -> io::Result<()> {
    let weights: u64 = PROJECTS
        .iter()
        .flat_map(|p| p.kinds.iter().map(|(_, weight)| weight))
        .sum();
    for project in PROJECTS {
        let docs = project.kinds.iter().map(|(kind, weight)| {
            let size = (budget * weight / weights) as usize;
            let file = format!("{}_{}.yaml", project.group, plural(kind));
            (file, crd(&mut w.rng, project, kind, size))
        });
        let docs: Vec<(String, Doc)> = docs.collect();
        match project.bundle {
            Some(bundle) => {
                let docs = docs.into_iter().map(|(_, doc)| doc).collect();
                w.write(&format!("{dir}/{}/{bundle}", project.dir), Form::Yaml, docs)?;
            }
            None => {
                for (file, doc) in docs {
                    w.write(
                        &format!("{dir}/{}/{file}", project.dir),
                        Form::Yaml,
                        vec![doc],
                    )?;
                }
            }
        }
    }
    Ok(())
}
