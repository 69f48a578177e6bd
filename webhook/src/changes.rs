//! Which namespaces changed since the reporting mode last evaluated them:
//! the watchers note every change of a cached object that the rules can see,
//! and the evaluation loop takes the set when the changes settle. Rules read
//! an HPA's namespace and cluster-wide objects only, so a change in one
//! namespace re-evaluates that namespace, and a change of an `APIService` (or
//! a relist) every namespace.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// What changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Dirty {
    /// Everything may have changed.
    pub all: bool,
    /// These namespaces changed.
    pub namespaces: BTreeSet<String>,
}

impl Dirty {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        !self.all && self.namespaces.is_empty()
    }

    /// Whether `namespace` is to be evaluated again.
    pub fn covers(&self, namespace: &str) -> bool {
        self.all || self.namespaces.contains(namespace)
    }
}

/// The changes noted since the last [`Changes::settled`].
#[derive(Default)]
pub struct Changes {
    dirty: Mutex<Dirty>,
    noted: Notify,
}

impl Changes {
    /// Notes a change in `namespace`.
    pub fn namespace(&self, namespace: &str) {
        let mut dirty = self.dirty.lock().unwrap_or_else(|e| e.into_inner());
        if !dirty.all && !dirty.namespaces.contains(namespace) {
            dirty.namespaces.insert(namespace.to_owned());
        }
        drop(dirty);
        self.noted.notify_one();
    }

    /// Notes a change that may concern every namespace.
    pub fn everything(&self) {
        let mut dirty = self.dirty.lock().unwrap_or_else(|e| e.into_inner());
        dirty.all = true;
        dirty.namespaces.clear();
        drop(dirty);
        self.noted.notify_one();
    }

    /// Asks for a round without a change (leadership changed, say).
    pub fn nudge(&self) {
        self.noted.notify_one();
    }

    /// Takes what changed.
    pub fn take(&self) -> Dirty {
        std::mem::take(&mut *self.dirty.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Waits for a change, then until no change came for `quiet` or `most`
    /// passed since the first one (so that constant churn cannot hold the
    /// evaluation back), or until `deadline` with nothing noted; then takes
    /// what changed.
    pub async fn settled(&self, quiet: Duration, most: Duration, deadline: Instant) -> Dirty {
        if tokio::time::timeout_at(deadline, self.noted.notified())
            .await
            .is_err()
        {
            return self.take();
        }
        let last = Instant::now() + most;
        loop {
            let wait = (Instant::now() + quiet).min(last);
            if tokio::time::timeout_at(wait, self.noted.notified())
                .await
                .is_err()
                || Instant::now() >= last
            {
                return self.take();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn changes_settle_after_a_quiet_spell_or_at_most_after_a_while() {
        let changes = std::sync::Arc::new(Changes::default());
        let far = Instant::now() + Duration::from_secs(3600);
        changes.namespace("shop");
        changes.namespace("shop");
        let started = Instant::now();
        let dirty = changes
            .settled(Duration::from_millis(100), Duration::from_secs(1), far)
            .await;
        assert_eq!(started.elapsed(), Duration::from_millis(100));
        assert_eq!(dirty.namespaces, BTreeSet::from(["shop".to_owned()]));
        assert!(changes.take().is_empty());

        // Constant churn: settled after `most`.
        let churn = std::sync::Arc::clone(&changes);
        let noisy = tokio::spawn(async move {
            loop {
                churn.namespace("batch");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        });
        let started = Instant::now();
        let dirty = changes
            .settled(Duration::from_millis(100), Duration::from_secs(1), far)
            .await;
        noisy.abort();
        assert!(
            started.elapsed() <= Duration::from_millis(1050),
            "{:?}",
            started.elapsed()
        );
        assert!(dirty.covers("batch") && !dirty.covers("shop"));

        // Nothing noted: the deadline (the periodic evaluation).
        let changes = Changes::default();
        let deadline = Instant::now() + Duration::from_secs(5);
        let dirty = changes
            .settled(Duration::from_millis(100), Duration::from_secs(1), deadline)
            .await;
        assert_eq!(Instant::now(), deadline);
        assert!(dirty.is_empty());
        changes.everything();
        changes.namespace("shop");
        assert_eq!(
            changes.take(),
            Dirty {
                all: true,
                namespaces: BTreeSet::new()
            }
        );
    }
}
