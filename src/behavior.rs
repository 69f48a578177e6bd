//! `hpa-lint behavior`: the behavior the HPA controller will use, with every
//! default written out and marked, and what it means in time: the fastest
//! scale-up and scale-down, and which policy sets the step at which count.

use std::io::{self, Write};

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use hpa_lint::report::TROUBLE;
use hpa_lint_rules::config::validated_defaults;
use hpa_lint_rules::controller::flags::{format_duration, thousandths as seconds};
use hpa_lint_rules::controller::normalize::{Rules, Select};
use hpa_lint_rules::controller::velocity::{self, End, Limiter, Path};
use hpa_lint_rules::controller::{Autoscaler, ControllerFlags, Millis};
use hpa_lint_rules::defaults::NamespacedDefaults;
use hpa_lint_rules::mutate::settings_for;
use hpa_lint_rules::rules::implicit_behavior;
use hpa_lint_rules::{MemoryIndex, Object, PatchOp};
use serde_json::{Value, json};

use hpa_lint::hpas::{self, ControllerArgs, Found, InputArgs};

#[derive(Debug, Args)]
pub struct BehaviorArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub controller: ControllerArgs,
    /// `text` for people, `json` for tools.
    #[arg(long, value_enum, default_value_t = BehaviorFormat::Text)]
    pub format: BehaviorFormat,
    /// Instead, print each HPA alone as YAML with its effective behavior
    /// written out, as the admission webhook's mutation leaves it (with its
    /// `hpa-lint.io/injected-behavior` annotation). Comments, flow style and
    /// the files' other documents are not kept: not for writing over the
    /// files; `hpa-lint --fix --unsafe-fixes --select implicit-behavior`
    /// writes the behavior into them (unsafe where an HPA has no `behavior`:
    /// it then leaves the controller's legacy path).
    #[arg(long, value_enum)]
    pub output: Option<Output>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BehaviorFormat {
    Text,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    Yaml,
}

const DIRECTIONS: [(&str, bool); 2] = [("scaleUp", true), ("scaleDown", false)];
const FIELDS: [&str; 4] = [
    "stabilizationWindowSeconds",
    "selectPolicy",
    "policies",
    "tolerance",
];

/// Reports on the HPAs the API server accepts; each one it would reject is
/// refused with its errors on standard error, and the exit code is then 2.
pub fn run(args: &BehaviorArgs) -> Result<u8> {
    let flags = args.controller.flags()?;
    let (selection, settings) = hpas::read(&args.input)?;
    let found = selection.found;
    let mut out = io::BufWriter::new(hpa_lint::report::stdout());
    if args.output == Some(Output::Yaml) {
        write_yaml(&found, &flags, &settings, &mut out)?;
    } else {
        let reports: Vec<Report> = found
            .iter()
            .map(|f| Report::new(f, Autoscaler::new(&f.hpa, flags.clone(), &settings.cluster)))
            .collect();
        match args.format {
            BehaviorFormat::Text => {
                if !reports.is_empty() {
                    writeln!(out, "{}", sync_period_note(flags.sync_period))?;
                }
                for report in &reports {
                    writeln!(out)?;
                    report.text(&mut out)?;
                }
            }
            BehaviorFormat::Json => {
                let hpas: Vec<Value> = reports.iter().map(Report::json).collect();
                let document = json!({ "syncPeriod": seconds(flags.sync_period), "hpas": hpas });
                serde_json::to_writer_pretty(&mut out, &document)?;
                writeln!(out)?;
            }
        }
    }
    out.flush()?;
    for refused in &selection.refused {
        hpa_lint::tell!("hpa-lint: {refused}");
    }
    Ok(if selection.refused.is_empty() {
        0
    } else {
        TROUBLE
    })
}

/// The sync period every path is timed with, and where it comes from.
fn sync_period_note(period: Millis) -> String {
    let source = if period == ControllerFlags::default().sync_period {
        "the controller's default; set the cluster's with --sync-period"
    } else {
        "--sync-period"
    };
    format!("a sync every {} ({source})", format_duration(period))
}

/// An HPA's fastest scale-up and scale-down as `behavior` describes them
/// (`3 → 7 → 9 in 30s; limited by Pods 4 per 15s`), and its report as JSON.
pub fn describe(found: &Found, autoscaler: Autoscaler) -> ([String; 2], Value) {
    let report = Report::new(found, autoscaler);
    let paths = [
        report.describe(&report.up, true),
        report.describe(&report.down, false),
    ];
    (paths, report.json())
}

/// What the command says about one HPA.
struct Report<'f> {
    found: &'f Found,
    autoscaler: Autoscaler,
    up: Path,
    down: Path,
}

impl<'f> Report<'f> {
    fn new(found: &'f Found, autoscaler: Autoscaler) -> Self {
        let up = velocity::fastest(&autoscaler, true);
        let down = velocity::fastest(&autoscaler, false);
        Self {
            found,
            autoscaler,
            up,
            down,
        }
    }

    fn flags(&self) -> &ControllerFlags {
        &self.autoscaler.flags
    }

    /// Where a field's value comes from when the manifest does not set it,
    /// or sets a tolerance the API server drops (its gate off).
    fn default_note(&self, direction: &str, field: &str) -> Option<&'static str> {
        if self.found.hpa.written.sets(direction, field) {
            let up = direction == "scaleUp";
            let kept = self.found.hpa.behavior.as_ref().is_some_and(|b| {
                let rules = if up { &b.scale_up } else { &b.scale_down };
                rules.as_ref().is_some_and(|r| r.tolerance.is_some())
            });
            return (field == "tolerance" && !kept).then_some(
                "dropped by the API server (HPAConfigurableTolerance is off, or absent before 1.33): default: --tolerance",
            );
        }
        Some(match (direction, field) {
            (_, "tolerance") => "default: --tolerance",
            ("scaleDown", "stabilizationWindowSeconds") => "default: --downscale-stabilization",
            _ => "default",
        })
    }

    fn rules(&self, up: bool) -> Option<&Rules> {
        self.autoscaler
            .behavior
            .as_ref()
            .map(|b| if up { &b.scale_up } else { &b.scale_down })
    }

    fn field_value(&self, up: bool, field: &str) -> Value {
        let Some(rules) = self.rules(up) else {
            return Value::Null;
        };
        match field {
            "stabilizationWindowSeconds" => json!(rules.window_seconds),
            "selectPolicy" => json!(select_name(rules.select)),
            "policies" => rules
                .policies
                .iter()
                .map(|p| json!({"type": format!("{:?}", p.kind), "value": p.value, "periodSeconds": p.period_seconds}))
                .collect(),
            _ => {
                let tolerances = self.autoscaler.tolerances;
                json!(if up { tolerances.up } else { tolerances.down })
            }
        }
    }

    fn text(&self, out: &mut impl Write) -> io::Result<()> {
        let a = &self.autoscaler;
        let period = format_duration(self.flags().sync_period);
        writeln!(
            out,
            "HorizontalPodAutoscaler {} ({})",
            self.found.key(),
            self.found.file
        )?;
        writeln!(out, "  replicas: {} to {}", a.min_replicas, a.max_replicas)?;
        if a.behavior.is_none() {
            writeln!(
                out,
                "  no `behavior`: the controller's legacy path applies, not the documented defaults:"
            )?;
            writeln!(
                out,
                "    scale-up:   at most max(2 × current, 4) replicas per sync (every {period})"
            )?;
            writeln!(
                out,
                "    scale-down: the highest recommendation of the last {} (--downscale-stabilization), no rate limit",
                format_duration(self.flags().downscale_stabilization)
            )?;
            writeln!(
                out,
                "    tolerance:  {} (--tolerance)",
                self.flags().tolerance
            )?;
            writeln!(
                out,
                "    `hpa-lint --fix --unsafe-fixes --select implicit-behavior` writes the defaults into the file; that switches the HPA to them"
            )?;
        }
        for (direction, up) in DIRECTIONS {
            let Some(rules) = self.rules(up) else {
                continue;
            };
            writeln!(out, "  {direction}:")?;
            for field in FIELDS {
                let note = self
                    .default_note(direction, field)
                    .map(|n| format!("  # {n}"))
                    .unwrap_or_default();
                let value = match field {
                    "stabilizationWindowSeconds" => rules.window_seconds.to_string(),
                    "selectPolicy" => select_name(rules.select).to_owned(),
                    "policies" => String::new(),
                    _ => self.field_value(up, field).to_string(),
                };
                let separator = if value.is_empty() { "" } else { " " };
                writeln!(out, "    {field}:{separator}{value}{note}")?;
                if field == "policies" {
                    for policy in &rules.policies {
                        writeln!(out, "      - {policy}")?;
                    }
                }
            }
        }
        for (label, path, up) in [
            ("fastest scale-up", &self.up, true),
            ("fastest scale-down", &self.down, false),
        ] {
            writeln!(
                out,
                "  {label} ({} → {}): {}",
                path.from,
                path.to,
                self.describe(path, up)
            )?;
            if up && path.from == 0 && path.to != 0 {
                writeln!(
                    out,
                    "    from 0 replicas as the HPA leaves a workload it scaled to zero (ScaledToZero: True); one scaled to zero by hand stays there"
                )?;
            }
        }
        self.step_table(out)
    }

    /// `2 → 6 → 12 → 24 → 48 → 50 in 1m15s`, with the delay before the first
    /// step; or where the path stops for good, or how far it got within the
    /// time it is followed for.
    fn describe(&self, path: &Path, up: bool) -> String {
        if path.from == path.to {
            return "nothing to do: minReplicas equals maxReplicas".to_owned();
        }
        let mut counts: Vec<String> = std::iter::once(path.from)
            .chain(path.steps.iter().map(|s| s.1))
            .map(|c| c.to_string())
            .collect();
        if counts.len() > MAX_COUNTS_SHOWN {
            counts.splice(6..counts.len() - 3, ["…".to_owned()]);
        }
        let counts = counts.join(" → ");
        let arrival = match path.end {
            End::Arrived(time) => time,
            End::Stuck(_) if path.steps.is_empty() => {
                let disabled = self.rules(up).is_some_and(|r| r.select == Select::Disabled);
                return if disabled {
                    "never scales (selectPolicy: Disabled)".to_owned()
                } else {
                    "never scales".to_owned()
                } + &refusal(path);
            }
            End::Stuck(_) => {
                return format!("{counts}, then stops: never reaches {}", path.to) + &refusal(path);
            }
            End::Unfinished(time) => {
                let period = self.flags().sync_period;
                let bound = if time + period > velocity::HORIZON {
                    String::new()
                } else {
                    format!(
                        " at a sync every {}, {} syncs",
                        format_duration(period),
                        velocity::max_path_syncs(&self.autoscaler)
                    )
                };
                let within = format!(
                    "within {}, the longest `behavior` follows a path{bound}",
                    format_duration(time)
                );
                return match path.steps.last() {
                    Some((last, _)) => format!(
                        "{counts} by {}; not {} {within}",
                        format_duration(*last),
                        path.to
                    ),
                    None => format!("no change {within}"),
                };
            }
        };
        let first = path.first_change().unwrap_or(0);
        let held = first - self.flags().sync_period;
        let delay = if held > 0 {
            let why = if up { "scale-up" } else { "scale-down" };
            format!(
                " (the {why} stabilization window holds the first step until {})",
                format_duration(first)
            )
        } else {
            String::new()
        };
        format!(
            "{counts} in {}{delay}{}",
            format_duration(arrival),
            self.limits(path, up)
        )
    }

    /// What held the steps back: `; limited by Pods 4 per 15s`, or per
    /// stretch of steps with the same limiter when it changes on the way:
    /// `; limited by Percent 10 per 60s (10 → 40), then Pods 4 per 60s (40 → 96)`.
    /// A step nothing held back (the last, onto the bound) is not named.
    fn limits(&self, path: &Path, up: bool) -> String {
        // (limiter, count before the stretch, count after it)
        let mut stretches: Vec<(&Limiter, i32, i32)> = Vec::new();
        let mut before = path.from;
        for (&(_, count), limiter) in path.steps.iter().zip(&path.limiters) {
            if let Some(limiter) = limiter {
                match stretches.last_mut() {
                    Some((last, _, end)) if *last == limiter && *end == before => *end = count,
                    _ => stretches.push((limiter, before, count)),
                }
            }
            before = count;
        }
        let named: Vec<String> = match stretches.as_slice() {
            [] => return String::new(),
            [(limiter, ..)] => vec![self.limiter_name(limiter, up)],
            _ => stretches
                .iter()
                .map(|(limiter, from, to)| {
                    format!("{} ({from} → {to})", self.limiter_name(limiter, up))
                })
                .collect(),
        };
        format!("; limited by {}", named.join(", then "))
    }

    /// `Pods 4 per 15s`, `Pods 4 per 60s and Percent 10 per 60s` (a tie).
    fn limiter_name(&self, limiter: &Limiter, up: bool) -> String {
        match limiter {
            Limiter::Policies(policies) => {
                let rules = self.rules(up).expect("policies limit only with behavior");
                let names: Vec<String> = policies
                    .iter()
                    .map(|&i| rules.policies[i].to_string())
                    .collect();
                names.join(" and ")
            }
            Limiter::LegacyLimit => "the legacy max(2 × current, 4) per sync".to_owned(),
        }
    }

    fn step_table(&self, out: &mut impl Write) -> io::Result<()> {
        let a = &self.autoscaler;
        let Some(behavior) = &a.behavior else {
            return Ok(());
        };
        let mut counts =
            velocity::turning_points(&behavior.scale_up, true, a.min_replicas, a.max_replicas);
        counts.extend(velocity::turning_points(
            &behavior.scale_down,
            false,
            a.min_replicas,
            a.max_replicas,
        ));
        counts.sort_unstable();
        counts.dedup();
        writeln!(
            out,
            "  largest step per period (no scale event in the period):"
        )?;
        let cell = |rules: &Rules, up: bool, count: i32| {
            let row = &velocity::step(rules, up, count);
            if rules.select == Select::Disabled {
                return "disabled".to_owned();
            }
            let names: Vec<String> = row
                .winners
                .iter()
                .map(|&i| rules.policies[i].to_string())
                .collect();
            // A limit on the wrong side of the count is Go's int32 arithmetic
            // overflowing; the controller then keeps the count (C7.3).
            if (up && row.limit < count) || (!up && row.limit > count) {
                return format!("to {count} (no step: {} overflows int32)", names.join(", "));
            }
            // The bounds cap what a policy allows.
            let (bound, name) = if up {
                (a.max_replicas, "maxReplicas")
            } else {
                (a.min_replicas, "minReplicas")
            };
            if (up && row.limit > bound) || (!up && row.limit < bound) {
                format!("to {bound} ({name}; {})", names.join(", "))
            } else {
                format!("to {} ({})", row.limit, names.join(", "))
            }
        };
        let rows: Vec<(i32, String, String)> = counts
            .into_iter()
            .map(|count| {
                let up = cell(&behavior.scale_up, true, count);
                (count, up, cell(&behavior.scale_down, false, count))
            })
            .collect();
        // The scale-up column as wide as its longest cell, so that the
        // scale-down column starts at one place.
        let width = rows
            .iter()
            .map(|(_, up, _)| up.chars().count())
            .max()
            .unwrap_or(0)
            .max(40);
        writeln!(
            out,
            "    {:>8}  {:<width$}  scale-down",
            "replicas", "scale-up"
        )?;
        for (count, up, down) in rows {
            writeln!(out, "    {count:>8}  {up:<width$}  {down}")?;
        }
        Ok(())
    }

    fn json(&self) -> Value {
        let key = &self.found.object.key;
        let behavior = self.autoscaler.behavior.as_ref().map(|_| {
            let direction = |name: &str, up: bool| -> Value {
                FIELDS
                    .iter()
                    .map(|&field| {
                        let value = json!({
                            "value": self.field_value(up, field),
                            "default": self.default_note(name, field).is_some(),
                        });
                        (field.to_owned(), value)
                    })
                    .collect::<serde_json::Map<_, _>>()
                    .into()
            };
            json!({"scaleUp": direction("scaleUp", true), "scaleDown": direction("scaleDown", false)})
        });
        let path = |path: &Path, up: bool| {
            let (end, followed) = match path.end {
                End::Arrived(time) => ("reached", time),
                End::Stuck(time) => ("stuck", time),
                End::Unfinished(time) => ("horizon", time),
            };
            json!({
                "from": path.from,
                "to": path.to,
                "steps": path.steps.iter().zip(&path.limiters).map(|((t, r), limiter)| json!({
                    "time": seconds(*t),
                    "replicas": r,
                    "limitedBy": limiter.as_ref().map(|l| self.limiter_json(l, up)),
                })).collect::<Vec<_>>(),
                "seconds": path.arrival().map(seconds),
                "end": end,
                "followedFor": seconds(followed),
                "refused": path.refused.map(|r| json!({"time": seconds(r.time), "replicas": r.replicas})),
            })
        };
        json!({
            "namespace": key.namespace,
            "name": key.name,
            "file": self.found.file,
            "minReplicas": self.autoscaler.min_replicas,
            "maxReplicas": self.autoscaler.max_replicas,
            "legacy": self.autoscaler.behavior.is_none(),
            "behavior": behavior,
            "scaleUp": path(&self.up, true),
            "scaleDown": path(&self.down, false),
        })
    }

    /// A step's limiter in JSON: the policies as `behavior` shows them, or
    /// `legacy` (the legacy path's `max(2 × current, 4)` per sync).
    fn limiter_json(&self, limiter: &Limiter, up: bool) -> Value {
        match limiter {
            Limiter::Policies(policies) => {
                let rules = self.rules(up).expect("policies limit only with behavior");
                policies
                    .iter()
                    .map(|&i| json!(rules.policies[i].to_string()))
                    .collect()
            }
            Limiter::LegacyLimit => json!("legacy"),
        }
    }
}

/// Paths with more counts than this show the first six and the last three.
const MAX_COUNTS_SHOWN: usize = 12;

/// What a refused scale update means, when the path met one.
fn refusal(path: &Path) -> String {
    let Some(refused) = path.refused else {
        return String::new();
    };
    let at = path.steps.last().map_or(path.from, |s| s.1);
    format!(
        ": from {} on, each sync asks the API server to scale {at} replicas to {} (Go's int32 arithmetic overflowed), and it refuses that update (`spec.replicas` must be at least 0)",
        format_duration(refused.time),
        refused.replicas
    )
}

fn select_name(select: Select) -> &'static str {
    match select {
        Select::Max => "Max",
        Select::Min => "Min",
        Select::Disabled => "Disabled",
    }
}

/// Each HPA with the behavior the webhook's mutation writes into it (the
/// built-in defaults, with `--downscale-stabilization` as the scale-down window).
fn write_yaml(
    found: &[Found],
    flags: &ControllerFlags,
    settings: &hpa_lint_rules::Settings,
    out: &mut impl Write,
) -> Result<()> {
    let window =
        json!({"scaleDown": {"stabilizationWindowSeconds": flags.downscale_stabilization / 1000}});
    let mut mutation = settings_for(settings, &[&implicit_behavior::RULE]);
    let defaults = validated_defaults(&window, settings)?;
    mutation.behavior_defaults = NamespacedDefaults::new(vec![(None, defaults)]);
    writeln!(
        out,
        "# Each HPA as the admission webhook's mutation leaves it: its effective behavior\n\
         # written out. Comments, flow style and the files' other documents are not kept;\n\
         # to write the behavior into the files: hpa-lint --fix --unsafe-fixes --select implicit-behavior\n\
         # (an HPA without `behavior` runs the controller's legacy path until it is written)"
    )?;
    for f in found {
        let ops = hpa_lint_rules::mutate::mutation(&f.object, &MemoryIndex::default(), &mutation);
        let value = apply(&f.object, &ops);
        let yaml = serde_saphyr::to_string(&value).context("writing YAML")?;
        write!(out, "---\n# from {}\n{yaml}", f.file)?;
    }
    Ok(())
}

/// Applies the mutation's `add` operations to a copy of the object.
fn apply(object: &Object, ops: &[PatchOp]) -> Value {
    let mut value = object.value.clone();
    for op in ops {
        if let PatchOp::Add { path, value: added } = op {
            let pointer = path.pointer();
            let (parent, key) = pointer.rsplit_once('/').unwrap_or(("", &pointer));
            let key = key.replace("~1", "/").replace("~0", "~");
            if let Some(Value::Object(map)) = value.pointer_mut(parent) {
                map.insert(key, added.clone());
            }
        }
    }
    value
}
