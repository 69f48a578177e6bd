//! The diff as text, Markdown (a pull-request comment, GitHub's job summary)
//! and JSON (the stable contract documented in docs/diff.md), and its plots.

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;
use hpa_lint_rules::controller::flags::format_duration;
use serde_json::{Value, json};

use super::tree::Tree;
use super::{Change, Diff, Shown, View};
use hpa_lint::compare::output::{self as compare_output, Row};
use hpa_lint::compare::{About, Comparison, plot};

/// The sides as the JSON names them.
pub const SIDES: [&str; 2] = ["base", "head"];

/// GitHub refuses comments longer than 65,536 characters: the Markdown
/// stops adding HPAs' details before that.
const MARKDOWN_BUDGET: usize = 60_000;

impl Change {
    fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// `changed`, `added`, `removed`.
    fn kind(&self) -> &'static str {
        match &self.sides {
            [Some(_), Some(_)] => "changed",
            [None, _] => "added",
            [_, None] => "removed",
        }
    }

    fn file(&self) -> &str {
        self.sides
            .iter()
            .rev()
            .flatten()
            .map(|s| s.file.as_str())
            .next()
            .unwrap_or("")
    }

    /// `a.yaml`, or `a.yaml → b.yaml` when it moved.
    fn files(&self) -> String {
        match &self.sides {
            [Some(a), Some(b)] if a.file != b.file => format!("{} → {}", a.file, b.file),
            _ => self.file().to_owned(),
        }
    }
}

/// `a → b`, or `a` when they are equal.
fn arrow(values: [&str; 2]) -> String {
    if values[0] == values[1] {
        values[0].to_owned()
    } else {
        format!("{} → {}", values[0], values[1])
    }
}

fn path_time(time: Option<i64>) -> String {
    time.map_or_else(|| "never".to_owned(), format_duration)
}

/// A side's cell for a view field: the value, `refused`, or `-`.
fn cell(side: &Option<Shown>, field: impl Fn(&View) -> String) -> String {
    match side {
        None => "-".to_owned(),
        Some(Shown { view: Ok(view), .. }) => field(view),
        Some(Shown { view: Err(_), .. }) => "refused".to_owned(),
    }
}

/// The overview line of one change: replicas, fastest paths (times), cost.
fn overview(change: &Change) -> [String; 5] {
    let both = |f: &dyn Fn(&View) -> String| {
        let [a, b] = &change.sides;
        match (a, b) {
            (Some(_), Some(_)) => arrow([&cell(a, f), &cell(b, f)]),
            (Some(_), None) => cell(a, f),
            _ => cell(b, f),
        }
    };
    let cost = match &change.comparisons {
        Ok(comparisons) => comparisons
            .iter()
            .find(|c| c.demand.name() == "daily")
            .or(comparisons.first())
            .map(|c| {
                let rows = compare_output::rows([&c.runs[0].summary, &c.runs[1].summary]);
                format!("{}: {}", c.demand.name(), change_cell(&rows[0]))
            })
            .unwrap_or_default(),
        Err(_) => "–".to_owned(),
    };
    [
        change.kind().to_owned(),
        both(&|v| format!("{} to {}", v.min, v.max)),
        both(&|v| path_time(v.times[0])),
        both(&|v| path_time(v.times[1])),
        cost,
    ]
}

/// A summary row's cell: `old → new (difference)`, or the value when equal.
fn change_cell(row: &Row) -> String {
    match &row.relative {
        _ if row.short[0] == row.short[1] => row.short[0].clone(),
        Some(relative) => format!("{} → {} ({relative})", row.short[0], row.short[1]),
        None => format!("{} → {}", row.short[0], row.short[1]),
    }
}

/// The rows of a change's comparisons: each figure, one cell per demand.
fn comparison_rows(comparisons: &[Comparison]) -> Vec<(&'static str, Vec<String>)> {
    let tables: Vec<Vec<Row>> = comparisons
        .iter()
        .map(|c| compare_output::rows([&c.runs[0].summary, &c.runs[1].summary]))
        .collect();
    let Some(first) = tables.first() else {
        return Vec::new();
    };
    (0..first.len())
        .map(|r| {
            (
                first[r].label,
                tables.iter().map(|t| change_cell(&t[r])).collect(),
            )
        })
        .collect()
}

/// What each demand was.
fn demand_notes(comparisons: &[Comparison]) -> Vec<String> {
    comparisons
        .iter()
        .map(|c| {
            let mut note = c.demand.label();
            if let About::Load(load) = &c.demand.about {
                let spans: Vec<String> = load
                    .spans
                    .iter()
                    .filter_map(|(name, span)| {
                        let (low, high) = (*span)?;
                        Some(format!(
                            "{name} {} to {}",
                            compare_output::quantity(low),
                            compare_output::quantity(high)
                        ))
                    })
                    .collect();
                let _ = write!(note, " ({} in total)", spans.join(", "));
            }
            if let Some(assumption) = c.demand.assumption() {
                let _ = write!(note, "; {assumption}");
            }
            if let Some(fidelity) = c.fidelity() {
                let _ = write!(note, "; {}", compare_output::fidelity_text(&fidelity));
            }
            note
        })
        .collect()
}

fn header(diff: &Diff) -> String {
    let [base, head] = [&diff.trees[0], &diff.trees[1]].map(Tree::label);
    let kinds = ["changed", "added", "removed"].map(|kind| {
        let n = diff.changes.iter().filter(|c| c.kind() == kind).count();
        format!("{n} {kind}")
    });
    format!(
        "{base} → {head}: {} HorizontalPodAutoscaler{} before, {} after; {}, {} unchanged.",
        diff.counts[0],
        if diff.counts[0] == 1 { "" } else { "s" },
        diff.counts[1],
        kinds.join(", "),
        diff.unchanged,
    )
}

pub fn text(diff: &Diff, out: &mut impl Write) -> Result<()> {
    writeln!(out, "{}", header(diff))?;
    for change in &diff.changes {
        writeln!(out)?;
        writeln!(
            out,
            "HorizontalPodAutoscaler {} ({}): {}",
            change.key(),
            change.files(),
            change.kind()
        )?;
        for (field, before, after) in &change.fields {
            writeln!(out, "  {field}: {before} → {after}")?;
        }
        for (label, side) in ["before", "after"].iter().zip(&change.sides) {
            let Some(side) = side else { continue };
            match &side.view {
                Ok(view) => {
                    writeln!(out, "  {label}: {} to {} replicas", view.min, view.max)?;
                    writeln!(out, "    fastest scale-up:   {}", view.paths[0])?;
                    writeln!(out, "    fastest scale-down: {}", view.paths[1])?;
                }
                Err(errors) => {
                    writeln!(out, "  {label}: refused, the API server would reject it:")?;
                    for error in errors {
                        writeln!(out, "    {error}")?;
                    }
                }
            }
        }
        match &change.comparisons {
            Ok(comparisons) if !comparisons.is_empty() => {
                let rows = comparison_rows(comparisons);
                let names: Vec<&str> = comparisons.iter().map(|c| c.demand.name()).collect();
                let label = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
                let widths: Vec<usize> = (0..names.len())
                    .map(|i| {
                        rows.iter()
                            .map(|r| r.1[i].chars().count())
                            .chain([names[i].len()])
                            .max()
                            .unwrap_or(0)
                    })
                    .collect();
                writeln!(out, "  on the same demand, before → after:")?;
                let mut line = format!("    {:label$}", "");
                for (name, width) in names.iter().zip(&widths) {
                    line += &format!("  {name:<width$}");
                }
                writeln!(out, "{}", line.trim_end())?;
                for (name, cells) in &rows {
                    let mut line = format!("    {name:label$}");
                    for (cell, width) in cells.iter().zip(&widths) {
                        line += &format!("  {cell:<width$}");
                    }
                    writeln!(out, "{}", line.trim_end())?;
                }
                for note in demand_notes(comparisons) {
                    writeln!(out, "    {note}")?;
                }
            }
            Ok(_) => {}
            Err(failure) => writeln!(out, "  no comparison: {}", failure.message)?,
        }
        if let Some(plot) = &change.plot {
            writeln!(out, "  plot: {}", plot.display())?;
        }
    }
    Ok(())
}

/// Text in a Markdown table cell.
fn md(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn markdown_change(change: &Change) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "### `{}` ({})\n", change.key(), change.kind());
    let _ = writeln!(s, "`{}`\n", change.files());
    if !change.fields.is_empty() {
        let _ = writeln!(s, "| changed | before | after |\n|---|---|---|");
        for (field, before, after) in &change.fields {
            let _ = writeln!(
                s,
                "| `{}` | `{}` | `{}` |",
                md(field),
                md(before),
                md(after)
            );
        }
        s.push('\n');
    }
    let views = change.sides.each_ref().map(|side| match side {
        None => ["-".to_owned(), "-".to_owned(), "-".to_owned()],
        Some(Shown { view: Ok(v), .. }) => [
            format!("{} to {}", v.min, v.max),
            v.paths[0].clone(),
            v.paths[1].clone(),
        ],
        Some(Shown {
            view: Err(errors), ..
        }) => {
            let refused = format!("**refused** by the API server: {}", errors.join("; "));
            [refused, String::new(), String::new()]
        }
    });
    let _ = writeln!(s, "| behavior | before | after |\n|---|---|---|");
    for (i, label) in ["replicas", "fastest scale-up", "fastest scale-down"]
        .iter()
        .enumerate()
    {
        let _ = writeln!(
            s,
            "| {label} | {} | {} |",
            md(&views[0][i]),
            md(&views[1][i])
        );
    }
    s.push('\n');
    match &change.comparisons {
        Ok(comparisons) if !comparisons.is_empty() => {
            let names: Vec<&str> = comparisons.iter().map(|c| c.demand.name()).collect();
            let _ = writeln!(
                s,
                "On the same demand, before → after (one value: the same):\n"
            );
            let _ = writeln!(s, "| | {} |", names.join(" | "));
            let _ = writeln!(s, "|---|{}", "---|".repeat(names.len()));
            for (label, cells) in comparison_rows(comparisons) {
                let cells: Vec<String> = cells.iter().map(|c| md(c)).collect();
                let _ = writeln!(s, "| {label} | {} |", cells.join(" | "));
            }
            s.push('\n');
            let _ = writeln!(s, "<details><summary>The demands</summary>\n");
            for note in demand_notes(comparisons) {
                let _ = writeln!(s, "- {}", md(&note));
            }
            let _ = writeln!(s, "\n</details>\n");
        }
        Ok(_) => {}
        Err(failure) => {
            let _ = writeln!(s, "No comparison: {}\n", md(&failure.message));
        }
    }
    if let Some(plot) = &change.plot {
        let _ = writeln!(s, "Plot: `{}`\n", plot.display());
    }
    s
}

pub fn markdown(diff: &Diff, out: &mut impl Write) -> Result<()> {
    let count = diff.changes.len();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "## hpa-lint diff: {count} HorizontalPodAutoscaler{} changed\n",
        if count == 1 { "" } else { "s" }
    );
    let _ = writeln!(s, "{}\n", header(diff));
    if count > 0 {
        let _ = writeln!(
            s,
            "| HPA | | replicas | fastest scale-up | fastest scale-down | pod-hours |\n|---|---|---|---|---|---|"
        );
        for change in &diff.changes {
            let [kind, replicas, up, down, cost] = overview(change);
            let _ = writeln!(
                s,
                "| `{}` | {kind} | {} | {} | {} | {} |",
                change.key(),
                md(&replicas),
                md(&up),
                md(&down),
                md(&cost)
            );
        }
        s.push('\n');
    }
    let mut left_out = 0;
    for change in &diff.changes {
        let section = markdown_change(change);
        if left_out > 0 || s.len() + section.len() > MARKDOWN_BUDGET {
            left_out += 1;
        } else {
            s.push_str(&section);
        }
    }
    if left_out > 0 {
        let _ = writeln!(
            s,
            "The details of {left_out} more HPAs are left out: a comment holds at most 65,536 characters. `--format json` or `--format text` has them all.\n"
        );
    }
    let _ = writeln!(
        s,
        "<sub>Simulated with the HPA controller of Kubernetes 1.36 by hpa-lint. Fastest paths: from `minReplicas` to `maxReplicas` and back under sustained demand. Demands in pods at target: 0 % is what `minReplicas` serves, 100 % what needs `maxReplicas`.</sub>"
    );
    out.write_all(s.as_bytes())?;
    Ok(())
}

fn tree_json(tree: &Tree) -> Value {
    match tree {
        Tree::Revision { name, commit } => json!({"revision": name, "commit": commit}),
        Tree::Directory(dir) => json!({"directory": dir.display().to_string()}),
    }
}

fn side_json(side: &Option<Shown>) -> Value {
    match side {
        None => Value::Null,
        Some(Shown {
            file,
            view: Ok(view),
        }) => json!({"file": file, "behavior": view.json}),
        Some(Shown {
            file,
            view: Err(errors),
        }) => json!({"file": file, "refused": errors}),
    }
}

pub fn json(diff: &Diff, out: &mut impl Write) -> Result<()> {
    let hpas: Vec<Value> = diff
        .changes
        .iter()
        .map(|change| {
            let mut entry = json!({
                "namespace": change.namespace,
                "name": change.name,
                "change": change.kind(),
                SIDES[0]: side_json(&change.sides[0]),
                SIDES[1]: side_json(&change.sides[1]),
                "fields": change.fields.iter().map(|(field, before, after)| json!({"field": field, "before": before, "after": after})).collect::<Vec<_>>(),
            });
            match &change.comparisons {
                Ok(comparisons) => {
                    entry["comparisons"] = comparisons.iter().map(compare_output::comparison_json).collect();
                }
                Err(failure) => entry["error"] = json!(failure.message),
            }
            if let Some(plot) = &change.plot {
                entry["plot"] = json!(plot.display().to_string());
            }
            entry
        })
        .collect();
    let document = json!({
        SIDES[0]: tree_json(&diff.trees[0]),
        SIDES[1]: tree_json(&diff.trees[1]),
        "counts": {
            SIDES[0]: diff.counts[0],
            SIDES[1]: diff.counts[1],
            "unchanged": diff.unchanged,
        },
        "hpas": hpas,
    });
    serde_json::to_writer(&mut *out, &document)?;
    writeln!(out)?;
    Ok(())
}

/// Draws a changed HPA's comparisons into `dir/NAMESPACE/NAME.svg`; `None`
/// when there is nothing to draw.
pub fn plot(change: &Change, trees: &[Tree; 2], dir: &Path) -> Result<Option<PathBuf>> {
    let (Some(specs), Ok(comparisons)) = (&change.specs, &change.comparisons) else {
        return Ok(None);
    };
    if comparisons.is_empty() {
        return Ok(None);
    }
    let folder = dir.join(&change.namespace);
    std::fs::create_dir_all(&folder)
        .map_err(|e| anyhow::anyhow!("--plot-dir {}: {e}", folder.display()))?;
    let path = folder.join(format!("{}.svg", change.name));
    let title = format!(
        "HorizontalPodAutoscaler {}: {} → {}",
        change.key(),
        trees[0].label(),
        trees[1].label()
    );
    let svg = plot::render(
        &title,
        [&specs[0], &specs[1]],
        ["before", "after"],
        comparisons,
    )?;
    plot::File::new(&path)?.write(&svg)?;
    Ok(Some(path))
}
