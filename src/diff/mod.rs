//! `hpa-lint diff BASE [HEAD]`: what a change to a repository does to its
//! HPAs. Every HPA added, removed or changed between the two trees (matched
//! by namespace and name, wherever its file is), with its behavior before and
//! after and the comparison of both specs on the standard loads (and a trace).

mod report;
mod tree;

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, ValueEnum};
use hpa_lint::prometheus::replay::ReplayArgs;
use hpa_lint::prometheus::time::{TimeArg, parse_time_arg};
use hpa_lint::report::TROUBLE;
use hpa_lint_rules::Settings;
use hpa_lint_rules::controller::velocity::{self, End};
use hpa_lint_rules::controller::{Autoscaler, ControllerFlags, Millis};
use hpa_lint_rules::model::hpa::Hpa;
use rayon::prelude::*;
use serde_json::Value;

use hpa_lint::compare::{self, Comparison, Demand, Side};
use hpa_lint::hpas::{self, ControllerArgs, Found, PickArgs, Refused};
use hpa_lint::loads::{Load, NotApplicable};
use hpa_lint::simulate::{self, ModelArgs};
use tree::Tree;

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The tree before: a git revision of the repository here (`origin/main`,
    /// `HEAD~1`), or a directory.
    pub base: String,
    /// The tree after, likewise [default: the work tree].
    pub head: Option<String>,
    /// Only these files and directories of each tree (after `--`).
    #[arg(last = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub pick: PickArgs,
    #[command(flatten)]
    pub controller: ControllerArgs,
    /// The standard loads to compare each changed HPA on (repeatable; see
    /// `compare --load`) [default: step, spike, ramp and daily].
    #[arg(long, value_name = "KIND[:KEY=VALUE,…]")]
    pub load: Vec<Load>,
    /// Also compare on this load history (needs --hpa: a trace is one
    /// workload's), as `simulate --trace` reads it.
    #[arg(
        long,
        value_name = "[METRIC=]FILE",
        requires = "hpa",
        conflicts_with = "prometheus"
    )]
    pub trace: Vec<String>,
    /// Also compare each changed HPA on its history from Prometheus, as
    /// `simulate --prometheus` replays it (the base's target).
    #[command(flatten)]
    pub replay: ReplayArgs,
    /// Until this time: a duration from the start, or (with Prometheus) an
    /// RFC 3339 time, the replay's end only [default: each load's end; with
    /// --prometheus, now].
    #[arg(long, value_name = "DURATION|TIME", value_parser = parse_time_arg)]
    pub until: Option<TimeArg>,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    pub format: DiffFormat,
    /// Draw each changed HPA's comparisons into DIR/NAMESPACE/NAME.svg.
    #[arg(long, value_name = "DIR")]
    pub plot_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiffFormat {
    Text,
    /// One JSON object; see docs/diff.md for the contract.
    Json,
    /// For a pull-request comment or GitHub's job summary.
    Markdown,
}

/// An HPA on one side.
pub enum Spec {
    Valid(Box<Found>),
    Refused(Refused),
}

impl Spec {
    fn file(&self) -> &str {
        match self {
            Spec::Valid(found) => &found.file,
            Spec::Refused(refused) => &refused.file,
        }
    }

    fn value(&self) -> &Value {
        match self {
            Spec::Valid(found) => &found.object.value,
            Spec::Refused(refused) => &refused.object.value,
        }
    }
}

/// What a side of a changed HPA is, as the report shows it.
pub struct Shown {
    pub file: String,
    /// `minReplicas to maxReplicas`, the fastest scale-up and scale-down, and
    /// the behavior report as JSON; or the API server's errors.
    pub view: std::result::Result<View, Vec<String>>,
}

pub struct View {
    pub min: i32,
    pub max: i32,
    pub paths: [String; 2],
    /// The fastest paths' times (`None`: never, or not within the horizon).
    pub times: [Option<Millis>; 2],
    pub json: Value,
}

/// Why a changed HPA has no comparison.
pub struct Failure {
    pub message: String,
    /// An error (exit code 2), not a limit of the standard loads (an HPA
    /// whose metrics none of them can drive).
    pub trouble: bool,
}

/// One HPA that differs between the trees.
pub struct Change {
    pub namespace: String,
    pub name: String,
    pub sides: [Option<Shown>; 2],
    /// `(field, before, after)`: the spec's fields that differ, and the
    /// target's requests when they do.
    pub fields: Vec<(String, String, String)>,
    /// The comparisons on each demand, or why there are none.
    pub comparisons: std::result::Result<Vec<Comparison>, Failure>,
    /// The specs' `[Side]`s, for the plot and the tables.
    pub specs: Option<[Side; 2]>,
    /// Where its plot is, when one was drawn.
    pub plot: Option<PathBuf>,
}

/// The whole diff.
pub struct Diff {
    pub trees: [Tree; 2],
    pub counts: [usize; 2],
    pub unchanged: usize,
    pub changes: Vec<Change>,
}

impl Diff {
    /// Whether the head side has an HPA the API server would reject, or a
    /// comparison could not run: exit code 2. (Removing a rejected HPA is
    /// no trouble.)
    pub fn troubled(&self) -> bool {
        self.changes.iter().any(|c| {
            c.comparisons.as_ref().is_err_and(|f| f.trouble)
                || c.sides[1].as_ref().is_some_and(|s| s.view.is_err())
        })
    }
}

/// The spec fields that decide what the controller does.
fn same_spec(a: &Hpa, b: &Hpa) -> bool {
    a.scale_target_ref == b.scale_target_ref
        && a.min_replicas == b.min_replicas
        && a.max_replicas == b.max_replicas
        && a.metrics == b.metrics
        && a.behavior == b.behavior
}

/// An HPA's `(namespace, name)`.
type Key = (String, String);

/// The HPAs of a tree's manifests by `namespace/name`, and their keys in the
/// order of the tree's files.
fn specs(
    tree: &Tree,
    sources: &[hpa_lint::input::SourceFile],
    args: &DiffArgs,
    settings: &Settings,
) -> Result<(BTreeMap<Key, Spec>, Vec<Key>)> {
    let selection = hpas::select(sources, settings, args.pick.hpa.as_deref())
        .map_err(|e| e.context(format!("reading {}", tree.label())))?;
    let key = |o: &hpa_lint_rules::Object| (o.key.namespace.clone(), o.key.name.clone());
    let mut specs = BTreeMap::new();
    for found in selection.found {
        specs.insert(key(&found.object), Spec::Valid(Box::new(found)));
    }
    for refused in selection.refused {
        specs.insert(key(&refused.object), Spec::Refused(refused));
    }
    let order = selection
        .keys
        .iter()
        .filter_map(|k| k.split_once('/'))
        .map(|(namespace, name)| (namespace.to_owned(), name.to_owned()))
        .collect();
    Ok((specs, order))
}

/// The keys of both trees in file order, as `git diff` lists files: by the
/// file each HPA is in (the head's, or the base's for one removed), then by
/// its place in that tree.
fn file_order(specs: [&BTreeMap<Key, Spec>; 2], orders: [&Vec<Key>; 2]) -> Vec<Key> {
    let mut places: BTreeMap<&Key, (&str, usize)> = BTreeMap::new();
    for (tree, order) in orders.iter().enumerate() {
        for (position, key) in order.iter().enumerate() {
            if let Some(spec) = specs[tree].get(key) {
                places.insert(key, (spec.file(), position));
            }
        }
    }
    let mut keys: Vec<(&Key, (&str, usize))> = places.into_iter().collect();
    keys.sort_by(|a, b| a.1.cmp(&b.1));
    keys.into_iter().map(|(key, _)| key.clone()).collect()
}

/// The fastest path's time: `None` when it never arrives (or not within the horizon).
fn path_time(autoscaler: &Autoscaler, up: bool) -> Option<Millis> {
    match velocity::fastest(autoscaler, up).end {
        End::Arrived(time) => Some(time),
        End::Stuck(_) | End::Unfinished(_) => None,
    }
}

fn shown(spec: &Spec, flags: &ControllerFlags, settings: &Settings) -> Shown {
    let view = match spec {
        Spec::Valid(found) => {
            let autoscaler = Autoscaler::new(&found.hpa, flags.clone(), &settings.cluster);
            let times = [path_time(&autoscaler, true), path_time(&autoscaler, false)];
            let (min, max) = (autoscaler.min_replicas, autoscaler.max_replicas);
            let (paths, json) = crate::behavior::describe(found, autoscaler);
            Ok(View {
                min,
                max,
                paths,
                times,
                json,
            })
        }
        Spec::Refused(refused) => Err(refused.errors.clone()),
    };
    Shown {
        file: spec.file().to_owned(),
        view,
    }
}

/// The leaves of `spec` that differ: `(path, before, after)`, values as
/// compact JSON (`unset` when absent); lists of different lengths whole.
fn field_changes(
    path: &str,
    before: Option<&Value>,
    after: Option<&Value>,
    out: &mut Vec<(String, String, String)>,
) {
    match (before, after) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                field_changes(&format!("{path}.{key}"), a.get(key), b.get(key), out);
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                field_changes(&format!("{path}[{i}]"), Some(x), Some(y), out);
            }
        }
        _ if before == after => {}
        _ => {
            let text = |v: Option<&Value>| match v {
                None => "unset".to_owned(),
                Some(Value::String(text)) => text.clone(),
                Some(other) => other.to_string(),
            };
            out.push((path.to_owned(), text(before), text(after)));
        }
    }
}

/// The pods' requests the controller divides by, per metric: `None` when
/// they cannot be known (the target is not in the tree).
fn requests(
    found: &Found,
    flags: &ControllerFlags,
    settings: &Settings,
    given: &[String],
) -> Option<Vec<std::result::Result<i64, String>>> {
    let autoscaler = Autoscaler::new(&found.hpa, flags.clone(), &settings.cluster);
    let columns = simulate::trace::Columns::Metrics(
        simulate::trace::MetricColumns::of(&[&autoscaler]).keys(),
    );
    simulate::requests(found, &autoscaler, given, &columns).ok()
}

/// The requests that differ between two request lists, as fields.
fn request_changes(
    found: &Found,
    flags: &ControllerFlags,
    settings: &Settings,
    lists: [&Option<Vec<std::result::Result<i64, String>>>; 2],
) -> Vec<(String, String, String)> {
    let autoscaler = Autoscaler::new(&found.hpa, flags.clone(), &settings.cluster);
    let text = |list: &Option<Vec<std::result::Result<i64, String>>>, m: usize| match list
        .as_ref()
        .and_then(|l| l.get(m))
    {
        Some(Ok(milli)) => compare::output::quantity(*milli as f64),
        Some(Err(error)) => error.clone(),
        None => "unknown".to_owned(),
    };
    let mut changes = Vec::new();
    for (m, metric) in autoscaler.metrics.iter().enumerate() {
        if !hpa_lint::simulate::output::has_utilization(metric) {
            continue;
        }
        let (before, after) = (text(lists[0], m), text(lists[1], m));
        if before != after {
            changes.push((
                format!("requests of the target ({})", metric.name()),
                before,
                after,
            ));
        }
    }
    changes
}

/// The demands a pair of specs runs on.
fn demands(args: &DiffArgs, loads: &[Load], sides: [&Side; 2]) -> Result<Vec<Demand>> {
    let mut demands = Vec::new();
    // A time (not a duration) is the history's end; the loads keep theirs.
    let load_until = args.until.filter(|u| matches!(u, TimeArg::Span(_)));
    for load in loads {
        demands.push(Demand::load(load, &sides, load_until)?);
    }
    if !args.trace.is_empty() || args.replay.client.prometheus.is_some() {
        demands.push(Demand::history(
            &args.trace,
            &args.replay,
            &sides,
            args.until,
        )?);
    }
    Ok(demands)
}

/// Builds the sides of a pair and runs them on every demand.
fn comparisons(
    args: &DiffArgs,
    loads: &[Load],
    found: [&Found; 2],
    flags: &ControllerFlags,
    settings: &Settings,
) -> std::result::Result<([Side; 2], Vec<Comparison>), Failure> {
    let run = || -> Result<([Side; 2], Vec<Comparison>)> {
        let given = &args.model.requests;
        let [old, new] = compare::sides(found[0], found[1], flags, settings, given)?;
        let comparisons = demands(args, loads, [&old, &new])?
            .into_iter()
            .map(|demand| compare::compare([&old, &new], demand, &args.model))
            .collect::<Result<Vec<_>>>()?;
        Ok(([old, new], comparisons))
    };
    run().map_err(|error| Failure {
        trouble: error.downcast_ref::<NotApplicable>().is_none(),
        message: format!("{error:#}"),
    })
}

pub fn run(args: &DiffArgs) -> Result<u8> {
    let flags = args.controller.flags()?;
    let (settings, ignore_paths, config_dir) = hpas::resolve(&args.pick)?;
    let ignore = (ignore_paths.as_slice(), config_dir.as_path());
    let trees = [
        Tree::resolve(&args.base)?,
        match &args.head {
            Some(head) => Tree::resolve(head)?,
            None => Tree::Directory(PathBuf::from(".")),
        },
    ];
    if let Some(dir) = &args.plot_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("--plot-dir {}: {e}", dir.display()))?;
    }
    let loads = if args.load.is_empty() {
        Load::standard()
    } else {
        args.load.clone()
    };
    let [base, head] = tree::read_both(&trees, &args.paths, ignore)?;
    let (mut before, before_order) = specs(&trees[0], &base, args, &settings)?;
    let (mut after, after_order) = specs(&trees[1], &head, args, &settings)?;
    drop((base, head));
    let counts = [before.len(), after.len()];
    let keys = file_order([&before, &after], [&before_order, &after_order]);
    let mut pairs = Vec::new();
    let mut unchanged = 0;
    for key in keys {
        let pair = [before.remove(&key), after.remove(&key)];
        let same = match &pair {
            [Some(Spec::Valid(a)), Some(Spec::Valid(b))] => {
                same_spec(&a.hpa, &b.hpa)
                    && requests(a, &flags, &settings, &args.model.requests)
                        == requests(b, &flags, &settings, &args.model.requests)
            }
            [Some(Spec::Refused(a)), Some(Spec::Refused(b))] => {
                a.object.value.get("spec") == b.object.value.get("spec")
            }
            _ => false,
        };
        if same {
            unchanged += 1;
        } else {
            pairs.push((key, pair));
        }
    }
    let mut changes: Vec<Change> = pairs
        .into_par_iter()
        .map(|((namespace, name), pair)| {
            let mut fields = Vec::new();
            if let [Some(a), Some(b)] = &pair {
                field_changes(
                    "spec",
                    a.value().get("spec"),
                    b.value().get("spec"),
                    &mut fields,
                );
            }
            let (specs, comparisons) = match &pair {
                [Some(Spec::Valid(a)), Some(Spec::Valid(b))] => {
                    // Each side with the target it runs with: one side's
                    // may be the other's.
                    let [a_run, b_run] = [
                        compare::with_target(a, Some(b)),
                        compare::with_target(b, Some(a)),
                    ];
                    let lists = [
                        &requests(&a_run, &flags, &settings, &args.model.requests),
                        &requests(&b_run, &flags, &settings, &args.model.requests),
                    ];
                    fields.extend(request_changes(b, &flags, &settings, lists));
                    match comparisons(args, &loads, [a, b], &flags, &settings) {
                        Ok((specs, comparisons)) => (Some(specs), Ok(comparisons)),
                        Err(error) => (None, Err(error)),
                    }
                }
                [Some(_), Some(_)] => (
                    None,
                    Err(Failure {
                        message: "refused by the API server: nothing to compare".to_owned(),
                        trouble: true,
                    }),
                ),
                _ => (None, Ok(Vec::new())),
            };
            Change {
                sides: pair
                    .each_ref()
                    .map(|s| s.as_ref().map(|s| shown(s, &flags, &settings))),
                namespace,
                name,
                fields,
                comparisons,
                specs,
                plot: None,
            }
        })
        .collect();
    if let Some(dir) = &args.plot_dir {
        for change in &mut changes {
            change.plot = report::plot(change, &trees, dir)?;
        }
    }
    let diff = Diff {
        trees,
        counts,
        unchanged,
        changes,
    };
    let mut out = io::BufWriter::new(hpa_lint::report::stdout());
    match args.format {
        DiffFormat::Text => report::text(&diff, &mut out)?,
        DiffFormat::Json => report::json(&diff, &mut out)?,
        DiffFormat::Markdown => report::markdown(&diff, &mut out)?,
    }
    out.flush()?;
    for change in &diff.changes {
        for (label, side) in report::SIDES.iter().zip(&change.sides) {
            if let Some(Shown {
                view: Err(errors),
                file,
            }) = side
            {
                hpa_lint::tell!(
                    "hpa-lint: {label}: HorizontalPodAutoscaler {}/{} ({file}): refused, the API server would reject it:\n  {}",
                    change.namespace,
                    change.name,
                    errors.join("\n  ")
                );
            }
        }
        if let Err(failure) = &change.comparisons
            && failure.trouble
            && change.sides.iter().flatten().all(|s| s.view.is_ok())
        {
            hpa_lint::tell!(
                "hpa-lint: HorizontalPodAutoscaler {}/{}: no comparison: {}",
                change.namespace,
                change.name,
                failure.message
            );
        }
    }
    Ok(if diff.troubled() { TROUBLE } else { 0 })
}
