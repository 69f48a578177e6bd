//! `hpa-lint rules` and `hpa-lint explain`: documentation from the registry.

use std::io::{self, Write};

use anyhow::{Result, bail};
use hpa_lint_rules::registry::{self, ALL};

pub fn rules() -> Result<u8> {
    let mut out = io::stdout().lock();
    let width = ALL.iter().map(|r| r.name.len()).max().unwrap_or(0);
    for rule in ALL {
        let default = match rule.category {
            registry::Category::Pedantic => "off".to_owned(),
            _ => rule.severity.to_string(),
        };
        writeln!(
            out,
            "{:width$}  {:8}  {:12}  {}",
            rule.name,
            default,
            rule.category.as_str(),
            rule.summary,
        )?;
    }
    Ok(0)
}

pub fn explain(name: &str) -> Result<u8> {
    let Some(rule) = registry::by_name(name) else {
        let hint = registry::closest_name(name)
            .map(|n| format!(" (did you mean `{n}`?)"))
            .unwrap_or_default();
        bail!("unknown rule `{name}`{hint}; `hpa-lint rules` lists them all");
    };
    let mut out = io::stdout().lock();
    writeln!(out, "# {}\n", rule.name)?;
    writeln!(
        out,
        "Category: {}. Default severity: {}.\n\n{}\n",
        rule.category, rule.severity, rule.summary
    )?;
    writeln!(out, "{}", rule.docs.trim_end())?;
    Ok(0)
}
