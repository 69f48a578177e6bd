//! `metric-target-type-mismatch`: `target.type` says one thing, the value fields another.

use crate::diagnostic::Severity;
use crate::context::{Check, Context, Report};
use crate::model::hpa::{MetricSource, MetricTarget};
use crate::path::FieldPath;
use crate::registry::{Category, FixAvailability, Rule};

/// The rule.
pub static RULE: Rule = Rule {
    name: "metric-target-type-mismatch",
    category: Category::Suspicious,
    severity: Severity::Warning,
    summary: "a metric's `target.type` disagrees with the value field the HPA controller uses",
    docs: r#"## What it does
Compares each metric's `target.type` with the value field that is set. The API
server checks that the right fields are present for the source, not that they
match the type, and the HPA controller then decides by the fields:
- `Resource` and `ContainerResource` use `averageValue` when it is set, else
  `averageUtilization`, whatever the type says;
- `Pods` always use `averageValue` (a per-pod average);
- `External` use `averageValue` when it is set, else `value`;
- `Object` use `value` for type `Value` and `averageValue` for type
  `AverageValue`; when that field is missing the controller fails the metric.

It stays silent when neither value field is set: the API server rejects that.

## Why is this bad?
The HPA scales on a different quantity than its author meant: a memory target
written as `type: Utilization, averageValue: 500Mi` scales on 500 MiB per pod,
not on a percentage; an External metric with `type: Value, averageValue: 30`
divides the metric by the replica count. An Object metric with `type: Value`
and only `averageValue` is not evaluated at all (`invalid object metric
source`), so the HPA ignores it.

## Example
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: worker
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: worker}
  maxReplicas: 10
  metrics:
    - type: Object
      object:
        describedObject: {apiVersion: v1, kind: Service, name: queue}
        metric: {name: messages_ready}
        target: {type: Value, averageValue: "30"}
```

Use instead:
```yaml
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: worker
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: worker}
  maxReplicas: 10
  metrics:
    - type: Object
      object:
        describedObject: {apiVersion: v1, kind: Service, name: queue}
        metric: {name: messages_ready}
        target: {type: AverageValue, averageValue: "30"}
```
"#,
    fix: FixAvailability::None,
    manifests_only: false,
    reads: &[],
};

pub(crate) const CHECK: Check = Check::Hpa(check);

/// A value field of a `MetricTarget`, with the type that names it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    Value,
    AverageValue,
    AverageUtilization,
}

impl Field {
    fn name(self) -> &'static str {
        match self {
            Field::Value => "value",
            Field::AverageValue => "averageValue",
            Field::AverageUtilization => "averageUtilization",
        }
    }

    fn type_(self) -> &'static str {
        match self {
            Field::Value => "Value",
            Field::AverageValue => "AverageValue",
            Field::AverageUtilization => "Utilization",
        }
    }

    /// What the field sets, e.g. `a target of 30 per pod`.
    fn meaning(self, target: &MetricTarget) -> String {
        let quantity = |q: Option<&crate::model::quantity::Quantity>| {
            q.map_or_else(String::new, ToString::to_string)
        };
        match self {
            Field::Value => format!(
                "a target of {} for the metric as a whole",
                quantity(target.value.as_ref())
            ),
            Field::AverageValue => format!(
                "a target of {} per pod",
                quantity(target.average_value.as_ref())
            ),
            Field::AverageUtilization => format!(
                "a target of {} % of the requests",
                target.average_utilization.unwrap_or_default()
            ),
        }
    }
}

/// What the controller does with a source: uses a field, or fails the metric.
enum Outcome {
    Uses(Field),
    Fails,
}

/// The controller's choice for one source; `None` when no value field is set
/// (the API server rejects that) or the type is not a valid one.
fn outcome(source: MetricSource<'_>) -> Option<Outcome> {
    let target = source.target();
    let value = target.value.is_some();
    let average = target.average_value.is_some();
    let utilization = target.average_utilization.is_some();
    if !matches!(
        target.type_.as_str(),
        "Utilization" | "Value" | "AverageValue"
    ) {
        return None;
    }
    let first = |options: &[(bool, Field)]| {
        options
            .iter()
            .find(|(set, _)| *set)
            .map(|&(_, field)| Outcome::Uses(field))
    };
    match source {
        MetricSource::Object(_) => {
            if !value && !average {
                return None;
            }
            Some(match target.type_.as_str() {
                "Value" if value => Outcome::Uses(Field::Value),
                "AverageValue" if average => Outcome::Uses(Field::AverageValue),
                _ => Outcome::Fails,
            })
        }
        MetricSource::Resource(_) | MetricSource::ContainerResource(_) => first(&[
            (average, Field::AverageValue),
            (utilization, Field::AverageUtilization),
        ]),
        MetricSource::Pods(_) => first(&[(average, Field::AverageValue)]),
        MetricSource::External(_) => {
            first(&[(average, Field::AverageValue), (value, Field::Value)])
        }
    }
}

fn kind_name(source: MetricSource<'_>) -> &'static str {
    match source {
        MetricSource::Object(_) => "Object",
        MetricSource::External(_) => "External",
        MetricSource::Pods(_) => "Pods",
        MetricSource::Resource(_) => "Resource",
        MetricSource::ContainerResource(_) => "ContainerResource",
    }
}

fn check(cx: &Context<'_>, out: &mut Report<'_>) {
    for (i, spec) in cx.hpa.metrics.iter().enumerate() {
        let Some(source) = spec.source() else {
            continue;
        };
        let Some(outcome) = outcome(source) else {
            continue;
        };
        let target = source.target();
        let type_ = target.type_.as_str();
        // Built for a finding only: most metrics have none.
        let path = || {
            FieldPath::fields("spec.metrics")
                .index(i)
                .field(source.member())
                .field("target")
                .field("type")
        };
        match outcome {
            Outcome::Uses(field) if field.type_() == type_ => {}
            Outcome::Uses(field) => {
                out.report(
                    path(),
                    format!(
                        "`target.type` is `{type_}`, but the HPA controller uses `{}` for this \
                         {} metric: {}",
                        field.name(),
                        kind_name(source),
                        field.meaning(target)
                    ),
                )
                .help(format!(
                    "set `type: {}` to match what the controller does, or set the field `type: \
                     {type_}` stands for",
                    field.type_()
                ));
            }
            Outcome::Fails => {
                let (field, help) = match type_ {
                    "Value" => ("`value` is not set", "set `type: AverageValue`"),
                    "AverageValue" => ("`averageValue` is not set", "set `type: Value`"),
                    _ => (
                        "Object metrics have no utilization",
                        "set `type: Value` for `value` or `type: AverageValue` for `averageValue`",
                    ),
                };
                let help = if target.value.is_some() && target.average_value.is_some() {
                    "set `type: Value` or `type: AverageValue`"
                } else {
                    help
                };
                out.report(
                    path(),
                    format!(
                        "`target.type` is `{type_}`, but {field}: the HPA controller fails this \
                         Object metric (`invalid object metric source`) and ignores it"
                    ),
                )
                .help(help);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RULE;
    use crate::testing::check_fixture;

    #[test]
    fn fixture() {
        insta::assert_snapshot!(check_fixture(&RULE));
    }
}
