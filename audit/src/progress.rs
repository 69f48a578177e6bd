//! Progress of the listings on standard error: one line, redrawn in place a
//! few times a second, only on a terminal and without `--quiet`; gone when
//! the listings end, so it never mixes with the report.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How many objects of each resource were read, and how many there are.
#[derive(Default)]
pub struct Progress {
    enabled: bool,
    /// (resource, read, total when the server said).
    counts: Mutex<Vec<(String, usize, Option<usize>)>>,
}

impl Progress {
    /// Progress shown on standard error when it is a terminal and not `quiet`.
    pub fn new(quiet: bool) -> Arc<Self> {
        Arc::new(Self {
            enabled: !quiet && std::io::stderr().is_terminal(),
            counts: Mutex::default(),
        })
    }

    /// `read` objects of `resource` so far; `remaining` more, when the
    /// server counted them (`remainingItemCount`).
    pub fn update(&self, resource: &str, read: usize, remaining: Option<usize>) {
        let total = remaining.map(|r| read + r);
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        match counts.iter_mut().find(|(name, ..)| name == resource) {
            Some(entry) => *entry = (resource.to_owned(), read, total),
            None => counts.push((resource.to_owned(), read, total)),
        }
    }

    /// The line shown: every object read so far, and the lists still
    /// paging with their totals: `reading 6850 objects · deployments 800/20000`
    /// (short enough for a terminal line).
    pub fn line(&self) -> String {
        let counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let read: usize = counts.iter().map(|(_, read, _)| read).sum();
        let mut line = format!("reading {read} objects");
        for (name, read, total) in counts.iter() {
            if let Some(total) = total.filter(|total| total > read) {
                line.push_str(&format!(" · {name} {read}/{total}"));
            }
        }
        line
    }

    /// Redraws the line until `done` resolves, then erases it.
    pub async fn show_until<T>(self: &Arc<Self>, done: impl Future<Output = T>) -> T {
        if !self.enabled {
            return done.await;
        }
        let progress = Arc::clone(self);
        let ticker = tokio::spawn(async move {
            const SPINNER: [char; 4] = ['|', '/', '-', '\\'];
            for tick in 0.. {
                // Carriage return and erase-line: redraw in place.
                let frame = format!(
                    "\r\x1b[2K{} {}",
                    SPINNER[tick % SPINNER.len()],
                    progress.line()
                );
                let mut stderr = std::io::stderr();
                let _ = stderr.write_all(frame.as_bytes());
                let _ = stderr.flush();
                tokio::time::sleep(Duration::from_millis(125)).await;
            }
        });
        let result = done.await;
        ticker.abort();
        let _ = ticker.await;
        let _ = std::io::stderr().write_all(b"\r\x1b[2K");
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_each_resource_once_with_its_total() {
        let progress = Progress::default();
        progress.update("horizontalpodautoscalers", 500, Some(4500));
        assert_eq!(
            progress.line(),
            "reading 500 objects · horizontalpodautoscalers 500/5000"
        );
        progress.update("horizontalpodautoscalers", 5000, None);
        progress.update("deployments", 1500, Some(18_500));
        assert_eq!(
            progress.line(),
            "reading 6500 objects · deployments 1500/20000"
        );
    }
}
