//! Name rules of k8s.io/apimachinery (apiserver-hpa-rules.md §1.8): DNS-1123 labels
//! and subdomains, qualified names, label values and path segments. Each function
//! returns the server's messages, empty when the value is valid.

use crate::cluster::KubeVersion;
use crate::quote::shown;

const LABEL_MESSAGE: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_MESSAGE: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const QUALIFIED_NAME_MESSAGE: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MESSAGE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`
fn is_label(bytes: &[u8]) -> bool {
    let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            alnum(first) && alnum(last) && bytes.iter().all(|b| alnum(b) || *b == b'-')
        }
        _ => false,
    }
}

/// Labels joined by dots, no length limit per label. In one pass, as label
/// keys (`app.kubernetes.io/name`) are checked often: a label starts after
/// a dot, or at the start, and ends before one, or at the end.
fn is_subdomain(value: &str) -> bool {
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let mut previous = b'.';
    for &b in value.as_bytes() {
        let fits = match b {
            b'-' => previous != b'.',
            b'.' => alnum(previous),
            _ => alnum(b),
        };
        if !fits {
            return false;
        }
        previous = b;
    }
    alnum(previous)
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`
fn is_qualified_name_part(value: &str) -> bool {
    let bytes = value.as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

fn too_long(max: usize, unit: &str) -> String {
    format!("must be no more than {max} {unit}")
}

/// The unit in length messages of qualified names and label values: `bytes` since 1.35.
fn length_unit(version: KubeVersion) -> &'static str {
    if version.at_least(35) {
        "bytes"
    } else {
        "characters"
    }
}

/// `IsDNS1123Label`.
pub fn dns1123_label(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push(too_long(63, "characters"));
    }
    if !is_label(value.as_bytes()) {
        errors.push(if is_subdomain(value) {
            // A valid subdomain that is not a label: the length was checked, so it is the dots.
            "must not contain dots".to_owned()
        } else {
            LABEL_MESSAGE.to_owned()
        });
    }
    errors
}

/// `IsDNS1123Subdomain`.
pub fn dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 253 {
        errors.push(too_long(253, "characters"));
    }
    if !is_subdomain(value) {
        errors.push(SUBDOMAIN_MESSAGE.to_owned());
    }
    errors
}

/// `IsQualifiedName`: label keys, annotation keys (lower-cased), resource names.
pub fn qualified_name(value: &str, version: KubeVersion) -> Vec<String> {
    let mut errors = Vec::new();
    let name = match value.split_once('/') {
        None => value,
        Some((prefix, name)) if !name.contains('/') => {
            if prefix.is_empty() {
                errors.push("prefix part must be non-empty".to_owned());
            } else {
                errors.extend(
                    dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            name
        }
        _ => {
            let subject = if version.at_least(35) {
                "a valid label key"
            } else {
                "a qualified name"
            };
            return vec![format!(
                "{subject} {QUALIFIED_NAME_MESSAGE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )];
        }
    };
    if name.is_empty() {
        errors.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        errors.push(format!("name part {}", too_long(63, length_unit(version))));
    }
    if !is_qualified_name_part(name) {
        errors.push(format!("name part {QUALIFIED_NAME_MESSAGE}"));
    }
    errors
}

/// `IsValidLabelValue`.
pub fn label_value(value: &str, version: KubeVersion) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push(too_long(63, length_unit(version)));
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        errors.push(LABEL_VALUE_MESSAGE.to_owned());
    }
    errors
}

/// `IsValidPathSegmentName`: kinds, names and metric names that end up in URLs.
pub fn path_segment(value: &str) -> Vec<String> {
    match value {
        "." => return vec!["may not be '.'".to_owned()],
        ".." => return vec!["may not be '..'".to_owned()],
        _ => {}
    }
    ["/", "%"]
        .into_iter()
        .filter(|illegal| value.contains(illegal))
        .map(|illegal| format!("may not contain '{illegal}'"))
        .collect()
}

/// `ParseGroupVersion`: the `(group, version)` of an `apiVersion`. No slash is a
/// bare version of the core group (`""` and `"/"` are both empty); more than one
/// slash is an error. The version is never checked (`apps/` is fine).
pub fn parse_group_version(value: &str) -> Result<(&str, &str), String> {
    match value.split_once('/') {
        None => Ok(("", value)),
        Some((group, version)) if !version.contains('/') => Ok((group, version)),
        Some(_) => Err(format!("unexpected GroupVersion string: {}", shown(value))),
    }
}

/// `IsStandardResourceName`, besides the huge-page prefixes.
const STANDARD_RESOURCES: [&str; 20] = [
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
];

/// `ValidateContainerResourceName` for a non-empty name (apiserver-hpa-rules.md
/// CR2): (1) a qualified name; (2) unless (1) failed, a name without a prefix must
/// be a standard resource; (3) a name without a prefix must be a container
/// resource, a prefixed one outside `kubernetes.io/` an extended resource name.
pub fn container_resource_name(value: &str, version: KubeVersion) -> Vec<String> {
    let mut errors = qualified_name(value, version);
    let prefixed = value.contains('/');
    if errors.is_empty()
        && !prefixed
        && !STANDARD_RESOURCES.contains(&value)
        && !value.starts_with("hugepages-")
        && !value.starts_with("requests.hugepages-")
    {
        errors.push("must be a standard resource type or fully qualified".to_owned());
    }
    if !prefixed {
        if !matches!(value, "cpu" | "memory" | "ephemeral-storage")
            && !value.starts_with("hugepages-")
        {
            errors.push("must be a standard resource for containers".to_owned());
        }
    } else if !value.contains("kubernetes.io/") && !is_extended_resource_name(value, version) {
        errors.push("doesn't follow extended resource name standard".to_owned());
    }
    errors
}

/// `IsExtendedResourceName` for a prefixed name outside `kubernetes.io/`: its
/// quota name `requests.<name>` must be a qualified name.
fn is_extended_resource_name(value: &str, version: KubeVersion) -> bool {
    !value.starts_with("requests.")
        && qualified_name(&format!("requests.{value}"), version).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1_36: KubeVersion = KubeVersion::new(36);
    const V1_34: KubeVersion = KubeVersion::new(34);

    #[test]
    fn labels_and_subdomains() {
        assert!(dns1123_label("web-1").is_empty());
        assert_eq!(dns1123_label("a.b"), ["must not contain dots"]);
        assert_eq!(dns1123_label("Web"), [LABEL_MESSAGE]);
        assert_eq!(dns1123_label(&"a".repeat(64)).len(), 1);
        assert!(dns1123_subdomain("web.example.com").is_empty());
        assert_eq!(dns1123_subdomain("Web_1"), [SUBDOMAIN_MESSAGE]);
        assert_eq!(
            dns1123_subdomain(&format!("{}-", "a".repeat(254))),
            [too_long(253, "characters"), SUBDOMAIN_MESSAGE.to_owned()]
        );
    }

    /// Every string of up to five characters of `a0-.A`: a subdomain is
    /// labels joined by dots.
    #[test]
    fn subdomains_are_labels_joined_by_dots() {
        let mut values = vec![String::new()];
        let mut longest = values.clone();
        for _ in 0..5 {
            longest = longest
                .iter()
                .flat_map(|v| "a0-.A".chars().map(move |c| format!("{v}{c}")))
                .collect();
            values.extend(longest.iter().cloned());
        }
        assert_eq!(values.len(), 1 + 5 + 25 + 125 + 625 + 3125);
        for value in &values {
            let labels = value.split('.').all(|label| is_label(label.as_bytes()));
            assert_eq!(is_subdomain(value), labels, "{value:?}");
        }
    }

    #[test]
    fn qualified_names_follow_the_version_wording() {
        assert!(qualified_name("app.kubernetes.io/name", V1_36).is_empty());
        assert_eq!(
            qualified_name("", V1_36),
            [
                "name part must be non-empty".to_owned(),
                format!("name part {QUALIFIED_NAME_MESSAGE}")
            ]
        );
        assert_eq!(
            qualified_name("/x", V1_36),
            ["prefix part must be non-empty"]
        );
        assert!(qualified_name("a/b/c", V1_36)[0].starts_with("a valid label key must"));
        assert!(qualified_name("a/b/c", V1_34)[0].starts_with("a qualified name must"));
        assert_eq!(
            qualified_name(&"a".repeat(64), V1_36),
            ["name part must be no more than 63 bytes"]
        );
        assert_eq!(
            qualified_name(&"a".repeat(64), V1_34),
            ["name part must be no more than 63 characters"]
        );
    }

    #[test]
    fn label_values() {
        assert!(label_value("", V1_36).is_empty());
        assert!(label_value("v1.2_x", V1_36).is_empty());
        assert_eq!(label_value("-x", V1_36), [LABEL_VALUE_MESSAGE]);
    }

    #[test]
    fn path_segments() {
        assert_eq!(path_segment(".."), ["may not be '..'"]);
        assert_eq!(
            path_segment("a/b%"),
            ["may not contain '/'", "may not contain '%'"]
        );
        assert!(path_segment("Deployment").is_empty());
    }

    #[test]
    fn group_versions() {
        assert_eq!(parse_group_version(""), Ok(("", "")));
        assert_eq!(parse_group_version("/"), Ok(("", "")));
        assert_eq!(parse_group_version("v1"), Ok(("", "v1")));
        assert_eq!(parse_group_version("apps/"), Ok(("apps", "")));
        assert_eq!(
            parse_group_version("apps/v1/x"),
            Err("unexpected GroupVersion string: apps/v1/x".to_owned())
        );
    }

    #[test]
    fn container_resource_names() {
        for valid in [
            "cpu",
            "hugepages-2Mi",
            "example.com/gpu",
            "nvidia.com/gpu",
            "x.kubernetes.io/y",
        ] {
            assert!(container_resource_name(valid, V1_36).is_empty(), "{valid}");
        }
        assert_eq!(
            container_resource_name("InvalidResource", V1_36),
            [
                "must be a standard resource type or fully qualified",
                "must be a standard resource for containers"
            ]
        );
        assert_eq!(
            container_resource_name("pods", V1_36),
            ["must be a standard resource for containers"]
        );
        // Step 1 failing skips step 2, not step 3.
        assert_eq!(
            container_resource_name("-cpu", V1_36),
            [
                format!("name part {QUALIFIED_NAME_MESSAGE}"),
                "must be a standard resource for containers".to_owned()
            ]
        );
        assert_eq!(
            container_resource_name("example.com/requests.gpu", V1_36),
            Vec::<String>::new()
        );
        assert_eq!(
            container_resource_name("requests.example.com/gpu", V1_36),
            ["doesn't follow extended resource name standard"]
        );
    }
}
