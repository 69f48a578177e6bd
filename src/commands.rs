//! `hpa-lint rules` and `hpa-lint explain`: documentation from the registry.

use std::io::Write;

use anyhow::{Result, bail};
use hpa_lint_rules::registry::{Category, FixAvailability, Rule};
use hpa_lint_rules::rules::{self, ALL};

use crate::args::RulesFormat;

/// The severity a rule has without configuration (pedantic rules are off;
/// live rules run in `kubectl hpa-lint` only).
fn default_level(rule: &Rule) -> String {
    match rule.category {
        Category::Pedantic => format!("off ({})", rule.severity),
        Category::Live => format!("{} (audit)", rule.severity),
        _ => rule.severity.to_string(),
    }
}

/// Whether findings come with a fix (`hpa-lint explain` says whether it is safe).
fn fix_column(rule: &Rule) -> &'static str {
    match rule.fix {
        FixAvailability::None => "",
        available => available.as_str(),
    }
}

pub fn rules(format: RulesFormat) -> Result<u8> {
    let mut out = hpa_lint::report::stdout();
    match format {
        RulesFormat::Text => {
            let header = ["RULE", "DEFAULT", "CATEGORY", "FIX", "SUMMARY"].map(String::from);
            let rows = ALL.iter().map(|rule| {
                [
                    rule.name.to_owned(),
                    default_level(rule),
                    rule.category.as_str().to_owned(),
                    fix_column(rule).to_owned(),
                    rule.summary.to_owned(),
                ]
            });
            let rows: Vec<[String; 5]> = std::iter::once(header).chain(rows).collect();
            let width = |column: usize| rows.iter().map(|row| row[column].len()).max();
            let [w0, w1, w2, w3] = [0, 1, 2, 3].map(|column| width(column).unwrap_or(0));
            for [name, level, category, fix, summary] in &rows {
                writeln!(
                    out,
                    "{name:w0$}  {level:w1$}  {category:w2$}  {fix:w3$}  {summary}"
                )?;
            }
        }
        RulesFormat::Markdown => {
            writeln!(out, "| Rule | Category | Default | Fix | Reports |")?;
            writeln!(out, "|---|---|---|---|---|")?;
            for rule in ALL {
                writeln!(
                    out,
                    "| `{}` | {} | {} | {} | {} |",
                    rule.name,
                    rule.category.as_str(),
                    default_level(rule),
                    fix_column(rule),
                    rule.summary.replace('|', "\\|"),
                )?;
            }
        }
    }
    Ok(0)
}

pub fn explain(name: &str) -> Result<u8> {
    let Some(rule) = rules::by_name(name) else {
        let hint = hpa_lint_rules::suggest::did_you_mean(rules::closest_name(name));
        bail!("unknown rule `{name}`{hint}; `hpa-lint rules` lists them all");
    };
    let mut out = hpa_lint::report::stdout();
    writeln!(out, "# {}\n", rule.name)?;
    // Whether a fix is safe is told in the docs' `## Fix safety`.
    writeln!(
        out,
        "Category: {}. Default severity: {}. Fix: {}.\n\n{}\n",
        rule.category,
        rule.severity,
        rule.fix.as_str(),
        rule.summary
    )?;
    writeln!(out, "{}", rule.docs.trim_end())?;
    Ok(0)
}
